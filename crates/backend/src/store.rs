//! terrane's [`StateStore`] over any [`Backend`]: every run holds the
//! backend's own lock, reads the workspace's v4 JSON, and keeps the
//! store's promise that an acknowledged change survives SIGKILL although
//! the backend only stores whole snapshots.
//!
//! Durability: a local journal per workspace (`<dir>/<workspace>.journal`,
//! 0600 in a 0700 directory). Its first line names the remote object; its
//! second holds the base snapshot (the state as last uploaded); each
//! further line is one acknowledged change set with its serial, written
//! and fsynced before [`Run::persist`] returns. A snapshot is uploaded
//! when the upload interval has passed since the last one and when the run
//! finishes; after each upload the journal restarts from the uploaded
//! state, and it is removed when the run ends. A journal found when a run
//! starts (the previous one was killed) is replayed onto its base and
//! uploaded before anything else, under the lock, so nothing acknowledged
//! is lost. A torn last line (killed while writing it) was never
//! acknowledged and is dropped.

use crate::{Backend, BackendError, RemoteClient, RemoteLock};
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use terrane_state::{
    model::changes_for, tfstate, Change, InstanceAddr, LockInfo, Run, Snapshot, StateError,
    StateStore,
};

type StateResult<T> = terrane_state::Result<T>;

/// How often a run uploads a snapshot while it persists changes, unless
/// [`BackendStore::upload_every`] says otherwise.
pub const DEFAULT_UPLOAD_INTERVAL: Duration = Duration::from_secs(5);

/// A [`StateStore`] kept on a Terraform backend.
pub struct BackendStore {
    backend: Box<dyn Backend>,
    journal_dir: PathBuf,
    upload_every: Duration,
}

/// A backend failure as a state error (locks keep their holder).
pub fn state_error(workspace: &str, e: BackendError) -> StateError {
    match e {
        BackendError::Locked { holder, .. } => StateError::Locked {
            workspace: workspace.into(),
            holder: Box::new(LockInfo {
                id: holder.id,
                operation: holder.operation,
                info: if holder.path.is_empty() {
                    holder.info
                } else if holder.info.is_empty() {
                    format!("path {}", holder.path)
                } else {
                    format!("{} (path {})", holder.info, holder.path)
                },
                who: holder.who,
                created: holder.created,
                pid: 0,
                host: String::new(),
                start_time: None,
            }),
        },
        BackendError::NoWorkspace(w) => StateError::NoWorkspace(w),
        other => StateError::Backend(other.to_string()),
    }
}

/// Compares dotted version numbers (`1.15.5` against `1.9.0`); anything
/// after a `-` is ignored.
fn version_newer(theirs: &str, ours: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        v.split('-')
            .next()
            .unwrap_or("")
            .split('.')
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    parts(theirs) > parts(ours)
}

/// Reads a stored state document: None when there is none (no object or
/// an empty one, as Terraform's local backend leaves when it locks a new
/// file); an error naming the object when it is corrupt or was written by
/// a newer Terraform.
pub fn parse_remote(path: &str, data: &[u8]) -> StateResult<Option<Snapshot>> {
    if data.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let corrupt = |detail: String| {
        StateError::Backend(format!(
            "{path}: the stored state is not a usable Terraform state ({detail}); nothing was changed"
        ))
    };
    let top: Json =
        serde_json::from_slice(data).map_err(|e| corrupt(format!("not valid JSON: {e}")))?;
    if let Some(v) = top.get("terraform_version").and_then(Json::as_str) {
        if version_newer(v, terrane_state::TERRAFORM_VERSION) {
            return Err(StateError::Backend(format!(
                "{path}: the state was written by Terraform v{v}, newer than the v{} terrane is compatible with; terrane will not read or overwrite it",
                terrane_state::TERRAFORM_VERSION
            )));
        }
    }
    tfstate::import(data)
        .map(Some)
        .map_err(|e| corrupt(e.to_string()))
}

fn read_remote(client: &dyn RemoteClient, ws: &str) -> StateResult<Option<Snapshot>> {
    match client.get().map_err(|e| state_error(ws, e))? {
        None => Ok(None),
        Some(p) => parse_remote(&client.path(), &p.data),
    }
}

impl BackendStore {
    /// The store over `backend`, journalling into `journal_dir` (created
    /// 0700 when first needed).
    pub fn new(backend: Box<dyn Backend>, journal_dir: PathBuf) -> BackendStore {
        BackendStore {
            backend,
            journal_dir,
            upload_every: DEFAULT_UPLOAD_INTERVAL,
        }
    }

    /// Uploads a snapshot at most this often while changes are persisted
    /// (and always when a run finishes).
    pub fn upload_every(mut self, every: Duration) -> BackendStore {
        self.upload_every = every;
        self
    }

    /// The backend this store keeps state on.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    fn journal_path(&self, ws: &str) -> PathBuf {
        self.journal_dir.join(format!("{ws}.journal"))
    }
}

/// A journal read back: the object it is for, its base, and the state
/// with every complete change set applied.
struct Replayed {
    path: String,
    base_serial: u64,
    state: Snapshot,
}

fn journal_error(file: &Path, detail: impl std::fmt::Display) -> StateError {
    StateError::Backend(format!(
        "{}: the state journal (changes not yet uploaded) cannot be read: {detail}; it was left as it is",
        file.display()
    ))
}

fn encode_change(c: &Change) -> Json {
    match c {
        Change::SetObject { .. } => {
            let mut s = Snapshot::empty();
            s.apply(c.clone());
            json!({ "set": serde_json::from_str::<Json>(&tfstate::export(&s)).unwrap_or(Json::Null) })
        }
        Change::SetOutput { name, output } => {
            let mut s = Snapshot::empty();
            s.outputs.insert(name.clone(), output.clone());
            json!({ "set": serde_json::from_str::<Json>(&tfstate::export(&s)).unwrap_or(Json::Null) })
        }
        Change::RemoveObject { addr, deposed } => {
            json!({ "remove": addr.to_string(), "deposed": deposed })
        }
        Change::Depose { addr, key } => json!({ "depose": addr.to_string(), "key": key }),
        Change::RemoveOutput { name } => json!({ "remove_output": name }),
    }
}

fn decode_change(j: &Json) -> Result<Vec<Change>, String> {
    let addr = |v: &Json| -> Result<InstanceAddr, String> {
        InstanceAddr::parse(v.as_str().ok_or("an address must be a string")?)
            .map_err(|e| e.to_string())
    };
    if let Some(set) = j.get("set") {
        let bytes = serde_json::to_vec(set).map_err(|e| e.to_string())?;
        let s = tfstate::import(&bytes).map_err(|e| e.to_string())?;
        return Ok(changes_for(&s));
    }
    if let Some(a) = j.get("remove") {
        return Ok(vec![Change::RemoveObject {
            addr: addr(a)?,
            deposed: j.get("deposed").and_then(Json::as_str).map(Into::into),
        }]);
    }
    if let Some(a) = j.get("depose") {
        return Ok(vec![Change::Depose {
            addr: addr(a)?,
            key: j
                .get("key")
                .and_then(Json::as_str)
                .ok_or("a depose record needs a key")?
                .into(),
        }]);
    }
    if let Some(n) = j.get("remove_output").and_then(Json::as_str) {
        return Ok(vec![Change::RemoveOutput { name: n.into() }]);
    }
    Err(format!("unknown change record {j}"))
}

fn read_journal(file: &Path) -> StateResult<Option<Replayed>> {
    let text = match std::fs::read(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(journal_error(file, e)),
    };
    let text = String::from_utf8(text).map_err(|e| journal_error(file, e))?;
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    // A last line without its newline was being written when the process
    // died: never acknowledged, dropped.
    if lines.last().is_some_and(|l| !l.ends_with('\n')) {
        lines.pop();
    }
    if lines.len() < 2 {
        // Killed while the journal itself was being started: it holds no
        // acknowledged change.
        return Ok(None);
    }
    let header: Json = serde_json::from_str(lines[0]).map_err(|e| journal_error(file, e))?;
    if header.get("terrane_journal").and_then(Json::as_u64) != Some(1) {
        return Err(journal_error(file, "not a terrane state journal"));
    }
    let path = header
        .get("path")
        .and_then(Json::as_str)
        .ok_or_else(|| journal_error(file, "no object path"))?
        .to_string();
    let base: Json = serde_json::from_str(lines[1]).map_err(|e| journal_error(file, e))?;
    let base_bytes = serde_json::to_vec(&base).map_err(|e| journal_error(file, e))?;
    let mut state = tfstate::import(&base_bytes).map_err(|e| journal_error(file, e))?;
    let base_serial = state.serial;
    for (n, line) in lines[2..].iter().enumerate() {
        let rec: Json = serde_json::from_str(line)
            .map_err(|e| journal_error(file, format!("record {}: {e}", n + 1)))?;
        let serial = rec
            .get("serial")
            .and_then(Json::as_u64)
            .ok_or_else(|| journal_error(file, format!("record {} has no serial", n + 1)))?;
        for c in rec
            .get("changes")
            .and_then(Json::as_array)
            .ok_or_else(|| journal_error(file, format!("record {} has no changes", n + 1)))?
        {
            for change in decode_change(c)
                .map_err(|e| journal_error(file, format!("record {}: {e}", n + 1)))?
            {
                state.apply(change);
            }
        }
        state.serial = serial;
    }
    Ok(Some(Replayed {
        path,
        base_serial,
        state,
    }))
}

/// Creates `dir` 0700 if absent.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Writes `data` to `path` atomically: a 0600 temporary file, fsynced,
/// renamed over `path`, and the directory fsynced.
pub(crate) fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("state"),
        std::process::id()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(data)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

impl StateStore for BackendStore {
    fn cipher(&self) -> Option<&terrane_state::Cipher> {
        None
    }

    fn rotate_key(&mut self, _new: Option<&terrane_state::Encryption>) -> StateResult<()> {
        Err(StateError::Backend(format!(
            "the {} backend stores Terraform's state JSON, which terrane does not encrypt; move the state to a terrane store (init -migrate-state) to encrypt it",
            self.backend.kind()
        )))
    }

    fn snapshot(&self, workspace: &str) -> StateResult<Snapshot> {
        // Changes acknowledged but not yet uploaded are part of the state.
        if let Some(j) = read_journal(&self.journal_path(workspace))? {
            return Ok(j.state);
        }
        let client = self
            .backend
            .client(workspace)
            .map_err(|e| state_error(workspace, e))?;
        Ok(read_remote(client.as_ref(), workspace)?.unwrap_or_else(Snapshot::empty))
    }

    fn lock(&self, workspace: &str, info: LockInfo) -> StateResult<Box<dyn Run>> {
        let client = self
            .backend
            .client(workspace)
            .map_err(|e| state_error(workspace, e))?;
        let path = client.path();
        let lock_id = client
            .lock(&RemoteLock::from_info(&info, &path))
            .map_err(|e| state_error(workspace, e))?;
        let mut run = BackendRun {
            workspace: workspace.into(),
            client,
            lock_id,
            info,
            state: Snapshot::empty(),
            journal_file: self.journal_path(workspace),
            journal: None,
            dirty: false,
            last_upload: Instant::now(),
            upload_every: self.upload_every,
            done: false,
        };
        // From here on, a failure drops the run, which releases the lock.
        run.state = run.recover()?;
        Ok(Box::new(run))
    }

    fn force_unlock(&self, workspace: &str, id: &str) -> StateResult<()> {
        let client = self
            .backend
            .client(workspace)
            .map_err(|e| state_error(workspace, e))?;
        client.unlock(id).map_err(|e| state_error(workspace, e))
    }

    fn workspaces(&self) -> StateResult<Vec<String>> {
        self.backend
            .workspaces()
            .map_err(|e| state_error("default", e))
    }

    fn delete_workspace(&self, workspace: &str) -> StateResult<()> {
        if workspace == "default" {
            return Err(StateError::DefaultWorkspace);
        }
        if !self.workspaces()?.iter().any(|w| w == workspace) {
            return Err(StateError::NoWorkspace(workspace.into()));
        }
        // Deleting takes the lock, so a workspace in use is not deleted.
        let run = self.lock(workspace, LockInfo::new("OperationTypeDeleteWorkspace", ""))?;
        let journal = self.journal_path(workspace);
        run.finish()?;
        self.backend
            .delete_workspace(workspace)
            .map_err(|e| state_error(workspace, e))?;
        let _ = std::fs::remove_file(journal);
        Ok(())
    }
}

/// One locked workspace on a backend.
struct BackendRun {
    workspace: String,
    client: Box<dyn RemoteClient>,
    lock_id: String,
    info: LockInfo,
    state: Snapshot,
    journal_file: PathBuf,
    journal: Option<std::fs::File>,
    /// Changes persisted since the last upload.
    dirty: bool,
    last_upload: Instant,
    upload_every: Duration,
    done: bool,
}

impl BackendRun {
    /// The state to start from: a journal left by a run that was killed is
    /// replayed and uploaded first; otherwise the stored state.
    fn recover(&mut self) -> StateResult<Snapshot> {
        let path = self.client.path();
        let Some(j) = read_journal(&self.journal_file)? else {
            let _ = std::fs::remove_file(&self.journal_file);
            return Ok(
                read_remote(self.client.as_ref(), &self.workspace)?.unwrap_or_else(Snapshot::empty)
            );
        };
        if j.path != path {
            return Err(journal_error(
                &self.journal_file,
                format!("it holds changes for {}, not for {path}; configure that backend again to upload them", j.path),
            ));
        }
        // The stored state may be anything the journal allows: missing,
        // the base, an earlier upload of this run, or torn by a kill
        // during an in-place write. A state of another lineage, or newer
        // than the journal, was written by someone else since.
        match read_remote(self.client.as_ref(), &self.workspace) {
            Ok(Some(r)) if r.lineage == j.state.lineage && r.serial >= j.state.serial => {
                // The upload finished; only the journal's removal did not.
                let _ = std::fs::remove_file(&self.journal_file);
                return Ok(r);
            }
            Ok(Some(r)) if r.lineage != j.state.lineage || r.serial < j.base_serial => {
                return Err(journal_error(
                    &self.journal_file,
                    format!("{path} now holds lineage {} serial {}, written by someone else after the journal's base (lineage {} serial {}); upload neither over the other without checking", r.lineage, r.serial, j.state.lineage, j.base_serial),
                ));
            }
            _ => {}
        }
        self.state = j.state.clone();
        self.upload()?;
        let _ = std::fs::remove_file(&self.journal_file);
        self.journal = None;
        Ok(j.state)
    }

    /// Starts a journal whose base is the current state.
    fn start_journal(&mut self) -> StateResult<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let fail = |e: std::io::Error| journal_error(&self.journal_file, e);
        let dir = self.journal_file.parent().unwrap_or(Path::new("."));
        private_dir(dir).map_err(fail)?;
        let header = json!({ "terrane_journal": 1, "path": self.client.path(), "workspace": self.workspace });
        let base: Json = serde_json::from_str(&tfstate::export(&self.state))
            .map_err(|e| journal_error(&self.journal_file, e))?;
        let text = format!("{header}\n{base}\n");
        write_atomic(&self.journal_file, text.as_bytes()).map_err(fail)?;
        let f = std::fs::OpenOptions::new()
            .append(true)
            .mode(0o600)
            .open(&self.journal_file)
            .map_err(fail)?;
        self.journal = Some(f);
        Ok(())
    }

    /// Uploads the current state whole and restarts the journal from it
    /// (lazily: the next persist starts it).
    fn upload(&mut self) -> StateResult<()> {
        let data = tfstate::export(&self.state);
        self.client
            .put(data.as_bytes())
            .map_err(|e| state_error(&self.workspace, e))?;
        self.dirty = false;
        self.last_upload = Instant::now();
        self.journal = None;
        let _ = std::fs::remove_file(&self.journal_file);
        Ok(())
    }

    fn release(&mut self) -> StateResult<()> {
        if self.done {
            return Ok(());
        }
        let uploaded = if self.dirty { self.upload() } else { Ok(()) };
        self.done = true;
        let unlocked = self
            .client
            .unlock(&self.lock_id)
            .map_err(|e| state_error(&self.workspace, e));
        uploaded.and(unlocked)
    }
}

impl Run for BackendRun {
    fn lock_info(&self) -> &LockInfo {
        &self.info
    }

    fn snapshot(&mut self) -> StateResult<Snapshot> {
        Ok(self.state.clone())
    }

    fn persist(&mut self, changes: &[Change]) -> StateResult<u64> {
        if self.journal.is_none() {
            self.start_journal()?;
        }
        let serial = self.state.serial + 1;
        let record = json!({
            "serial": serial,
            "changes": changes.iter().map(encode_change).collect::<Vec<_>>(),
        });
        let line = format!("{record}\n");
        let file = &self.journal_file;
        let f = self.journal.as_mut().expect("journal started");
        f.write_all(line.as_bytes())
            .and_then(|()| f.sync_data())
            .map_err(|e| journal_error(file, e))?;
        for c in changes {
            self.state.apply(c.clone());
        }
        self.state.serial = serial;
        self.dirty = true;
        if self.last_upload.elapsed() >= self.upload_every {
            self.upload()?;
        }
        Ok(serial)
    }

    fn replace(&mut self, snapshot: &Snapshot) -> StateResult<u64> {
        self.state = snapshot.clone();
        self.upload()?;
        Ok(self.state.serial)
    }

    fn finish(mut self: Box<Self>) -> StateResult<()> {
        self.release()
    }
}

impl Drop for BackendRun {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_number() {
        let cases = [
            ("same", "1.15.5", "1.15.5", false),
            ("older", "1.9.0", "1.15.5", false),
            ("newer_minor", "1.16.0", "1.15.5", true),
            ("newer_major", "2.0.0", "1.15.5", true),
            ("prerelease", "1.16.0-alpha1", "1.15.5", true),
        ];
        for (name, theirs, ours, want) in cases {
            assert_eq!(version_newer(theirs, ours), want, "case {name}");
        }
    }
}
