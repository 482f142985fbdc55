//! `backend "local"`: Terraform's state files.
//!
//! Layout (Terraform's): the default workspace in `path` (default
//! `terraform.tfstate`), workspace `W` in
//! `<workspace_dir>/W/terraform.tfstate` (default `terraform.tfstate.d`),
//! the state as first read kept in `<state>.backup` before the first write.
//! Lock: as Terraform's, a POSIX write lock (fcntl) on the whole state
//! file, with the holder described in `.<state file name>.lock.info`
//! beside it. terrane takes an open-file-description lock, which conflicts
//! with Terraform's process lock and is released by the kernel when the
//! holder dies. The state is written in place under that lock (a new file
//! would not carry it); the journal of [`crate::store`] covers a kill
//! during the write.

use crate::{check_known, string_setting, Backend, BackendError, Payload, RemoteClient, Result};
use crate::{RemoteLock, Settings};
use nix::fcntl::{fcntl, FcntlArg};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The settings of Terraform's local backend (its schema's attributes).
pub const ATTRIBUTES: &[&str] = &["path", "workspace_dir"];

/// The local backend's settings, resolved.
pub struct LocalBackend {
    path: PathBuf,
    workspace_dir: PathBuf,
}

impl LocalBackend {
    /// `path` and `workspace_dir`, relative to `dir` (the working
    /// directory) unless absolute.
    pub fn new(settings: &Settings, dir: &Path) -> Result<LocalBackend> {
        check_known("local", settings, ATTRIBUTES)?;
        let path = string_setting("local", settings, "path")?
            .unwrap_or_else(|| "terraform.tfstate".into());
        let workspace_dir = string_setting("local", settings, "workspace_dir")?
            .unwrap_or_else(|| "terraform.tfstate.d".into());
        for (name, v) in [("path", &path), ("workspace_dir", &workspace_dir)] {
            if v.is_empty() {
                return Err(BackendError::Settings {
                    backend: "local".into(),
                    detail: format!("{name} must not be empty"),
                });
            }
        }
        Ok(LocalBackend {
            path: dir.join(path),
            workspace_dir: dir.join(workspace_dir),
        })
    }

    fn state_path(&self, workspace: &str) -> PathBuf {
        if workspace == "default" {
            self.path.clone()
        } else {
            self.workspace_dir.join(workspace).join("terraform.tfstate")
        }
    }
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> BackendError {
    BackendError::Io {
        backend: "local".into(),
        detail: format!("{}: {e}", path.display()),
    }
}

impl Backend for LocalBackend {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn workspaces(&self) -> Result<Vec<String>> {
        let mut out = vec!["default".to_string()];
        match std::fs::read_dir(&self.workspace_dir) {
            Ok(entries) => {
                for e in entries.flatten() {
                    if e.path().is_dir() {
                        if let Some(n) = e.file_name().to_str() {
                            out.push(n.to_string());
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&self.workspace_dir, e)),
        }
        out[1..].sort();
        Ok(out)
    }

    fn delete_workspace(&self, name: &str) -> Result<()> {
        let dir = self.workspace_dir.join(name);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(BackendError::NoWorkspace(name.into()))
            }
            Err(e) => Err(io_err(&dir, e)),
        }
    }

    fn client(&self, workspace: &str) -> Result<Box<dyn RemoteClient>> {
        let path = self.state_path(workspace);
        Ok(Box::new(LocalClient {
            backup: PathBuf::from(format!("{}.backup", path.display())),
            lock_info: lock_info_path(&path),
            path,
            held: Mutex::new(None),
        }))
    }
}

/// `.<name>.lock.info` beside the state file, where Terraform describes
/// the lock holder.
fn lock_info_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("terraform.tfstate");
    path.with_file_name(format!(".{name}.lock.info"))
}

/// One state file; while locked, the open file holding the lock (every
/// read and write goes through it).
struct LocalClient {
    path: PathBuf,
    backup: PathBuf,
    lock_info: PathBuf,
    held: Mutex<Option<Held>>,
}

struct Held {
    file: std::fs::File,
    id: String,
    backed_up: bool,
}

/// A whole-file write lock on `file` (an open-file-description lock);
/// false when someone else holds one.
fn try_lock(file: &std::fs::File) -> std::io::Result<bool> {
    let lock = nix::libc::flock {
        l_type: nix::libc::F_WRLCK as _,
        l_whence: nix::libc::SEEK_SET as _,
        l_start: 0,
        l_len: 0,
        l_pid: 0,
    };
    match fcntl(file, FcntlArg::F_OFD_SETLK(&lock)) {
        Ok(_) => Ok(true),
        Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EACCES) => Ok(false),
        Err(e) => Err(std::io::Error::from(e)),
    }
}

fn read_all(file: &mut std::fs::File) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(0))?;
    let mut data = Vec::new();
    file.read_to_end(&mut data)?;
    Ok(data)
}

impl LocalClient {
    fn open(&self) -> Result<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        }
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&self.path)
            .map_err(|e| io_err(&self.path, e))
    }

    fn holder(&self) -> RemoteLock {
        std::fs::read(&self.lock_info)
            .ok()
            .and_then(|d| serde_json::from_slice(&d).ok())
            .unwrap_or_else(|| RemoteLock {
                path: self.path.display().to_string(),
                info: format!(
                    "no lock description in {} (held by a process that wrote none)",
                    self.lock_info.display()
                ),
                ..Default::default()
            })
    }
}

impl RemoteClient for LocalClient {
    fn path(&self) -> String {
        self.path.display().to_string()
    }

    fn get(&self) -> Result<Option<Payload>> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let data = match held.as_mut() {
            Some(h) => read_all(&mut h.file).map_err(|e| io_err(&self.path, e))?,
            None => match std::fs::read(&self.path) {
                Ok(d) => d,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(io_err(&self.path, e)),
            },
        };
        if data.is_empty() {
            return Ok(None);
        }
        Ok(Some(Payload {
            data,
            md5: Vec::new(),
        }))
    }

    fn put(&self, data: &[u8]) -> Result<()> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let Some(h) = held.as_mut() else {
            // Unlocked writes (-lock=false): a file of its own, replaced.
            return crate::store::write_atomic(&self.path, data).map_err(|e| io_err(&self.path, e));
        };
        let fail = |e: std::io::Error| io_err(&self.path, e);
        if !h.backed_up {
            // As Terraform: the state as found, before this run's first write.
            let before = read_all(&mut h.file).map_err(fail)?;
            if !before.is_empty() {
                crate::store::write_atomic(&self.backup, &before)
                    .map_err(|e| io_err(&self.backup, e))?;
            }
            h.backed_up = true;
        }
        h.file.set_len(0).map_err(fail)?;
        h.file.seek(SeekFrom::Start(0)).map_err(fail)?;
        h.file.write_all(data).map_err(fail)?;
        h.file.sync_all().map_err(fail)
    }

    fn delete(&self) -> Result<()> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(&self.path, e)),
        }
    }

    fn lock(&self, lock: &RemoteLock) -> Result<String> {
        let file = self.open()?;
        if !try_lock(&file).map_err(|e| io_err(&self.path, e))? {
            return Err(BackendError::Locked {
                path: self.path(),
                holder: Box::new(self.holder()),
            });
        }
        let mut info = lock.clone();
        info.path = self.path();
        let text = serde_json::to_vec(&info).unwrap_or_default();
        crate::store::write_atomic(&self.lock_info, &text)
            .map_err(|e| io_err(&self.lock_info, e))?;
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(Held {
            file,
            id: lock.id.clone(),
            backed_up: false,
        });
        Ok(lock.id.clone())
    }

    fn unlock(&self, id: &str) -> Result<()> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        match held.as_ref() {
            Some(h) if h.id == id => {
                let _ = std::fs::remove_file(&self.lock_info);
                // Closing the file releases the lock.
                *held = None;
                Ok(())
            }
            _ => {
                // force-unlock: a file lock belongs to its holder's open
                // file and ends with it; only a stale description remains.
                let holder = self.holder();
                if holder.id == id {
                    let file = self.open()?;
                    if try_lock(&file).map_err(|e| io_err(&self.path, e))? {
                        let _ = std::fs::remove_file(&self.lock_info);
                        return Ok(());
                    }
                    return Err(BackendError::Io {
                        backend: "local".into(),
                        detail: format!("{} is locked by a running process (lock {id}); a local state lock ends when its holder exits", self.path.display()),
                    });
                }
                Err(BackendError::Io {
                    backend: "local".into(),
                    detail: format!("{}: no lock with ID {id:?} is held", self.path.display()),
                })
            }
        }
    }
}
