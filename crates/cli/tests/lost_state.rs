//! Issue 12 item 2: an apply that can no longer record state stops starting
//! new work, lets what is in flight finish, and writes every object —
//! recorded and not — to `errored.tfstate` (Terraform's state v4, mode
//! 0600, sealed when state encryption is on). `terrane state push
//! errored.tfstate` then restores the state so the next plan creates
//! nothing twice.
//!
//! Each case runs the real `terrane` binary applying many `local_file`
//! resources (every created file is a real object on disk) and breaks the
//! store from outside in the middle. A gate keeps the apply from finishing
//! before the break, however the machine schedules the two processes:
//! `terraform_data.gate` runs a `local-exec` provisioner that waits for the
//! test to create `release`, and `local_file.after` depends on the gate, so
//! work is always left to start once the store is broken. The store is
//! broken in one of three ways:
//!
//! * the lock is taken away by `terrane force-unlock -force ID`;
//! * the PostgreSQL session of the store is ended by
//!   `pg_terminate_backend` (shared test server, `TERRANE_TEST_PG_URL`);
//! * the disk of the SQLite store fills up (a tmpfs mounted on
//!   `.terrane`, filled by the test; needs root to mount).

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use terrane_state::{Encryption, LockInfo, PgStore, SqliteStore, StateError, StateStore};

/// `local_file.f`, created from the start.
const N: usize = 500;
/// `local_file.after`, which waits for the gate.
const AFTER: usize = 1000;
const PASSPHRASE: &str = "item2 test passphrase";
/// The variable the encrypted case's state block names for its key.
const KEY_VAR: &str = "ITEM2_STATE_KEY";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Break {
    /// `terrane force-unlock -force ID` from outside.
    ForceUnlock,
    /// `pg_terminate_backend` of the store's session.
    TerminateBackend,
    /// The store's filesystem fills up.
    FillDisk,
}

struct Case {
    name: &'static str,
    brk: Break,
    encrypted: bool,
}

/// Where the state lives for one case.
struct Env {
    dir: tempfile::TempDir,
    pg_url: Option<String>,
    encrypted: bool,
    mounted: Option<PathBuf>,
    /// The store, opened once (with encryption every open derives the key).
    store: std::cell::OnceCell<Box<dyn StateStore>>,
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(m) = &self.mounted {
            let _ = Command::new("umount").arg(m).status();
        }
    }
}

impl Env {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn terrane(&self) -> Command {
        let mut c = terrane_testkit::isolated(env!("CARGO_BIN_EXE_terrane"), self.path());
        c.env("TF_CLI_CONFIG_FILE", self.path().join("empty.tfrc"))
            .env_remove(KEY_VAR);
        if let Some(u) = &self.pg_url {
            c.env("TERRANE_PG_URL", u);
        }
        if self.encrypted {
            c.env(KEY_VAR, PASSPHRASE);
        }
        c
    }

    fn store(&self) -> Option<&dyn StateStore> {
        if self.store.get().is_none() {
            let _ = self.store.set(self.open_store().ok()?);
        }
        self.store.get().map(|b| b.as_ref())
    }

    fn open_store(&self) -> Result<Box<dyn StateStore>, StateError> {
        let enc = self.encrypted.then(|| Encryption::new(PASSPHRASE));
        Ok(match &self.pg_url {
            Some(u) => Box::new(PgStore::open(u, "terrane", enc.as_ref())?),
            None => {
                let path = SqliteStore::default_path(self.path());
                if !path.exists() {
                    return Err(StateError::NoWorkspace("default".into()));
                }
                Box::new(SqliteStore::open(&path, enc.as_ref())?)
            }
        })
    }

    /// Addresses of the objects the store has recorded.
    fn recorded(&self) -> Option<BTreeSet<String>> {
        let snap = self.store()?.snapshot("default").ok()?;
        Some(addresses(&snap))
    }

    /// The holder of the workspace lock, if any: its ID and whether its
    /// process is gone.
    fn lock_holder(&self) -> Option<(String, bool)> {
        let store = self.store()?;
        match store.lock("default", LockInfo::new("test", "probe")) {
            Ok(run) => {
                let _ = run.finish();
                None
            }
            Err(StateError::Locked { holder, .. }) => {
                Some((holder.id.clone(), holder.holder_is_dead()))
            }
            Err(e) => panic!("probing the lock: {e}"),
        }
    }

    /// Addresses of the files that exist on disk (every `local_file`
    /// created).
    fn created(&self) -> BTreeSet<String> {
        let mut all = BTreeSet::new();
        for name in ["f", "after"] {
            let Ok(rd) = std::fs::read_dir(self.path().join("out").join(name)) else {
                continue;
            };
            all.extend(rd.filter_map(|e| {
                let file = e.ok()?.file_name().to_string_lossy().into_owned();
                Some(format!("local_file.{name}[{}]", file.strip_suffix(".txt")?))
            }));
        }
        all
    }
}

/// Addresses of the `local_file` objects a state holds (the gate is
/// checked on its own).
fn addresses(s: &terrane_state::Snapshot) -> BTreeSet<String> {
    s.resources
        .iter()
        .filter(|(r, _)| r.to_string().starts_with("local_file."))
        .flat_map(|(r, rs)| {
            rs.instances
                .iter()
                .filter(|(_, i)| i.current.is_some())
                .map(move |(k, _)| r.instance(k.clone()).to_string())
        })
        .collect()
}

/// The configuration: `local_file.f` ([`N`]), the gate, and
/// `local_file.after` ([`AFTER`]). The gate's provisioner announces that it
/// waits (`gate.waiting`), then waits for `release` (five minutes at most,
/// so a failed test leaves no process behind for long).
fn config() -> String {
    let files = |name: &str, count: usize, extra: &str| {
        format!("resource \"local_file\" \"{name}\" {{\n  count    = {count}\n  filename = \"${{path.module}}/out/{name}/${{count.index}}.txt\"\n  content  = \"{name} ${{count.index}}\"\n{extra}}}\n")
    };
    let wait = "touch gate.waiting; i=0; while [ ! -e release ]; do i=$((i+1)); [ $i -gt 6000 ] && exit 1; sleep 0.05; done";
    format!(
        "{}\nresource \"terraform_data\" \"gate\" {{\n  provisioner \"local-exec\" {{\n    command = \"{wait}\"\n  }}\n}}\n\n{}",
        files("f", N, ""),
        files("after", AFTER, "  depends_on = [terraform_data.gate]\n"),
    )
}

fn setup(case: &Case) -> Option<Env> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.tfrc"), "").unwrap();
    // The encrypted case names its key in the state block, as a project
    // would: the emergency file must be sealed with that key.
    let block = if case.encrypted {
        format!("terraform {{\n  state \"sqlite\" {{\n    encryption_key_env = \"{KEY_VAR}\"\n  }}\n}}\n\n")
    } else {
        String::new()
    };
    std::fs::write(dir.path().join("main.tf"), format!("{block}{}", config())).unwrap();
    let mut env = Env {
        dir,
        pg_url: None,
        encrypted: case.encrypted,
        mounted: None,
        store: std::cell::OnceCell::new(),
    };
    if case.encrypted {
        // The store is made here with a small KDF work factor (later opens
        // use the store's own), so opening it in a debug build is quick
        // enough for the apply to be still running when it is broken.
        let path = SqliteStore::default_path(env.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let enc = Encryption {
            passphrase: PASSPHRASE.into(),
            iterations: 1000,
        };
        let store = SqliteStore::open(&path, Some(&enc)).expect("encrypted store");
        store
            .lock("default", LockInfo::new("test", "create"))
            .unwrap()
            .finish()
            .unwrap();
    }
    match case.brk {
        Break::ForceUnlock => {}
        Break::TerminateBackend => {
            let Some(admin) = std::env::var("TERRANE_TEST_PG_URL")
                .ok()
                .filter(|u| !u.is_empty())
            else {
                terrane_testkit::skip(&format!("{}: TERRANE_TEST_PG_URL is not set", case.name));
                return None;
            };
            // A database of this test's own, so other tests never meet it.
            let db = format!("h_apply_item2_{}", std::process::id());
            let mut c = terrane_state::pg_connect(&admin).expect("test server");
            c.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
                .expect("drop an old test database");
            c.batch_execute(&format!("CREATE DATABASE {db}"))
                .expect("create the test database");
            let (base, _) = admin
                .rsplit_once('/')
                .expect("database in TERRANE_TEST_PG_URL");
            env.pg_url = Some(format!("{base}/{db}"));
        }
        Break::FillDisk => {
            let mnt = env.path().join(".terrane");
            std::fs::create_dir_all(&mnt).unwrap();
            let ok = Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=64m,mode=0700", "tmpfs"])
                .arg(&mnt)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                terrane_testkit::skip(&format!("{}: cannot mount a tmpfs (needs root)", case.name));
                return None;
            }
            env.mounted = Some(mnt);
        }
    }
    Some(env)
}

fn start_apply(env: &Env) -> Child {
    env.terrane()
        .args(["apply", "-auto-approve", "-input=false", "-no-color"])
        .stdout(std::fs::File::create(env.path().join("apply.out")).unwrap())
        .stderr(std::fs::File::create(env.path().join("apply.err")).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .expect("terrane starts")
}

fn log(env: &Env) -> String {
    let tail = |f: &str| {
        let s = std::fs::read_to_string(env.path().join(f)).unwrap_or_default();
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    };
    format!(
        "--- stdout (tail)\n{}\n--- stderr (tail)\n{}",
        tail("apply.out"),
        tail("apply.err")
    )
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("terrane did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn plan_counts(out: &Output) -> (usize, usize, usize) {
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(line) = text.lines().find(|l| l.starts_with("Plan: ")) else {
        panic!(
            "no plan summary in:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let nums: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    (nums[0], nums[1], nums[2])
}

/// Breaks the store while the apply runs.
fn break_store(case: &Case, env: &Env, child: &mut Child) {
    match case.brk {
        Break::ForceUnlock => {
            // Released through the store right after the probe, as
            // `force-unlock` does: spawning the CLI here would leave a window
            // in which a loaded machine lets the apply finish first.
            let (id, _) = env
                .lock_holder()
                .unwrap_or_else(|| panic!("{}: the apply holds no lock", case.name));
            if let Err(e) = env.store().unwrap().force_unlock("default", &id) {
                panic!(
                    "{}: force-unlock of {id}: {e} (apply finished: {})",
                    case.name,
                    child.try_wait().unwrap().is_some()
                );
            }
        }
        Break::TerminateBackend => {
            let url = env.pg_url.as_deref().unwrap();
            let db = url.rsplit('/').next().unwrap();
            let mut c = terrane_state::pg_connect(url).unwrap();
            let n = c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", &[&db]).unwrap().len();
            assert!(n > 0, "{}: no session of the store to end", case.name);
        }
        Break::FillDisk => {
            // Fill what is left of the store's filesystem. SQLite goes on
            // reusing the space its write-ahead log already holds (about two
            // hundred of these objects), well short of `AFTER`.
            use std::io::Write;
            let mut f = std::fs::File::create(env.path().join(".terrane/filler")).unwrap();
            let block = vec![0u8; 64 * 1024];
            while f.write_all(&block).is_ok() {}
            let _ = f.flush();
        }
    }
}

/// Makes the store usable again, as an operator would.
fn repair_store(case: &Case, env: &Env) {
    if case.brk == Break::FillDisk {
        std::fs::remove_file(env.path().join(".terrane/filler")).unwrap();
        let mnt = env.mounted.as_ref().unwrap();
        let st = Command::new("mount")
            .args(["-o", "remount,size=256m"])
            .arg(mnt)
            .status()
            .unwrap();
        assert!(st.success(), "remount");
    }
    // A lock left behind by the failed apply (its release could not be
    // written) belongs to a process that is gone: released as a user would.
    if let Some((id, dead)) = env.lock_holder() {
        assert!(dead, "{}: a live process holds the lock {id}", case.name);
        let out = env
            .terrane()
            .args(["force-unlock", "-force", &id])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: force-unlock of the dead holder: {}",
            case.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn check(case: Case) {
    let Some(env) = setup(&case) else { return };
    let mut child = start_apply(&env);
    // Let a good part of the apply be recorded first, and the gate hold it
    // open: the apply cannot end before the store is broken.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        // The store is read only once the apply has made it and started
        // creating (two processes creating the same new SQLite store at
        // once can race on its tables).
        let creating = std::fs::read_to_string(env.path().join("apply.out"))
            .is_ok_and(|o| o.contains("Creating..."));
        if creating
            && env.path().join("gate.waiting").exists()
            && env.recorded().is_some_and(|r| r.len() >= 200)
        {
            break;
        }
        if let Some(s) = child.try_wait().unwrap() {
            panic!(
                "{}: apply ended ({s}) before 200 objects were recorded:\n{}",
                case.name,
                log(&env)
            );
        }
        assert!(Instant::now() < deadline, "{}: apply too slow", case.name);
        std::thread::sleep(Duration::from_millis(20));
    }
    break_store(&case, &env, &mut child);
    std::fs::write(env.path().join("release"), "").unwrap();
    let status = wait_exit(&mut child, Duration::from_secs(120));
    let err = std::fs::read_to_string(env.path().join("apply.err")).unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "{}: the apply must fail:\n{}",
        case.name,
        log(&env)
    );
    assert!(
        err.contains("Failed to persist state"),
        "{}: no persist failure reported:\n{}",
        case.name,
        log(&env)
    );
    assert!(
        err.contains("terrane state push errored.tfstate"),
        "{}: no way back given:\n{}",
        case.name,
        log(&env)
    );

    let created = env.created();
    let after = created
        .iter()
        .filter(|a| a.starts_with("local_file.after"))
        .count();
    assert!(
        after < AFTER,
        "{}: the apply went on after the failure (all {AFTER} of local_file.after created)",
        case.name
    );
    let file = env.path().join("errored.tfstate");
    let meta = std::fs::metadata(&file)
        .unwrap_or_else(|_| panic!("{}: no errored.tfstate:\n{}", case.name, log(&env)));
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o600,
        "{}: errored.tfstate mode",
        case.name
    );
    let bytes = std::fs::read(&file).unwrap();
    if case.encrypted {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("local_file")
                && !text.contains("\"version\"")
                && !text.contains("file 1"),
            "{}: errored.tfstate is plaintext",
            case.name
        );
    } else {
        let s = terrane_state::tfstate::import(&bytes).unwrap_or_else(|e| {
            panic!(
                "{}: errored.tfstate is not Terraform state v4: {e}",
                case.name
            )
        });
        assert!(
            String::from_utf8_lossy(&bytes).contains("\"version\": 4"),
            "{}: not state v4",
            case.name
        );
        // The whole state: every object that exists, recorded or not.
        assert_eq!(
            addresses(&s),
            created,
            "{}: errored.tfstate must hold exactly the objects created",
            case.name
        );
        assert!(
            s.resources
                .keys()
                .any(|r| r.to_string() == "terraform_data.gate"),
            "{}: errored.tfstate lost the gate",
            case.name
        );
    }

    repair_store(&case, &env);
    let recorded = env.recorded().expect("store readable once repaired");
    let unrecorded: BTreeSet<&String> = created.difference(&recorded).collect();
    assert!(
        !unrecorded.is_empty(),
        "{}: nothing was left unrecorded, the failure came too late to test anything",
        case.name
    );
    assert!(
        recorded.is_subset(&created),
        "{}: recorded objects that do not exist",
        case.name
    );

    if case.encrypted {
        // Without the key the sealed file is refused, never misread.
        let out = env
            .terrane()
            .env_remove(KEY_VAR)
            .args(["state", "push", "errored.tfstate"])
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "{}: a sealed file pushed without the passphrase",
            case.name
        );
    }
    let out = env
        .terrane()
        .args(["state", "push", "errored.tfstate"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: state push: {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        env.recorded().unwrap(),
        created,
        "{}: after push the state holds exactly what exists",
        case.name
    );

    let out = env
        .terrane()
        .args(["plan", "-input=false", "-no-color", "-detailed-exitcode"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}: plan after push:\n{}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        plan_counts(&out),
        (N + AFTER - created.len(), 0, 0),
        "{}: the plan must create only what does not exist",
        case.name
    );
    eprintln!(
        "{}: {} recorded, {} unrecorded kept in errored.tfstate ({after} of local_file.after), {} left to create",
        case.name,
        recorded.len(),
        unrecorded.len(),
        N + AFTER - created.len()
    );
}

#[test]
fn item2_lock_lost_mid_apply_keeps_unrecorded_objects() {
    check(Case {
        name: "lock_lost",
        brk: Break::ForceUnlock,
        encrypted: false,
    });
}

#[test]
fn item2_lock_lost_mid_apply_encrypted_file_is_sealed() {
    check(Case {
        name: "lock_lost_encrypted",
        brk: Break::ForceUnlock,
        encrypted: true,
    });
}

#[test]
fn item2_postgres_connection_lost_mid_apply() {
    check(Case {
        name: "postgres_terminated",
        brk: Break::TerminateBackend,
        encrypted: false,
    });
}

#[test]
fn item2_disk_full_mid_apply() {
    check(Case {
        name: "disk_full",
        brk: Break::FillDisk,
        encrypted: false,
    });
}
