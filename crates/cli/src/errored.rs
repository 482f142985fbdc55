//! The emergency state file, as Terraform's `errored.tfstate`: when an
//! apply changed real objects it could not record (the lock was taken
//! away, the disk filled, the database connection dropped), the complete
//! state — recorded and unrecorded objects — is written to the working
//! directory in Terraform's state v4 format, mode 0600, so
//! `terrane state push errored.tfstate` restores it and the next plan
//! creates nothing twice.
//!
//! With state encryption on (the state block's `encryption_key_env`, or
//! `TERRANE_STATE_PASSPHRASE`) the file is sealed: [`SEALED_MAGIC`], a
//! 16-byte salt, the PBKDF2 iteration count (4 bytes, big-endian), then
//! AES-256-GCM ciphertext (bound to [`SEALED_MAGIC`] as associated data)
//! under a key derived from the state's passphrase and the fresh salt. It
//! needs nothing from the store, which may be the thing that is gone;
//! `state push` opens it with the same passphrase.

use crate::session::Ui;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use terrane_config::Diagnostic;
use terrane_state::crypt::{check_iterations, new_salt, Cipher, DEFAULT_ITERATIONS};
use terrane_state::{Encryption, Snapshot};

/// The state's key and the variable it came from (named in messages).
#[derive(Clone, Copy)]
pub struct Key<'a> {
    pub enc: &'a Encryption,
    pub var: &'a str,
}

/// The variable holding the state key under `settings`.
pub fn key_var(settings: Option<&terrane_config::StateSettings>) -> &str {
    settings
        .and_then(|s| s.encryption_key_env.as_deref())
        .unwrap_or("TERRANE_STATE_PASSPHRASE")
}

/// First bytes of a sealed emergency state file.
pub const SEALED_MAGIC: &[u8] = b"terrane sealed state v1\n";

/// The file's bytes: Terraform's format, sealed when encryption is on.
fn contents(state: &Snapshot, enc: Option<&Encryption>) -> Vec<u8> {
    let text = terrane_state::tfstate::export(&terrane_engine::with_closure_dependencies(state));
    match enc {
        None => text.into_bytes(),
        Some(enc) => {
            let salt = new_salt();
            let iterations = if enc.iterations == 0 {
                DEFAULT_ITERATIONS
            } else {
                enc.iterations
            };
            let cipher = Cipher::derive(&enc.passphrase, &salt, iterations);
            let mut out = SEALED_MAGIC.to_vec();
            out.extend_from_slice(&salt);
            out.extend_from_slice(&iterations.to_be_bytes());
            out.extend_from_slice(&cipher.seal(text.as_bytes(), SEALED_MAGIC));
            out
        }
    }
}

/// `bytes` as state JSON: opened with the state's key when sealed, as
/// they are otherwise. A sealed file without the key, or with another
/// one, is an error (never read as something else).
pub fn open(bytes: Vec<u8>, key: Option<Key>) -> Result<Vec<u8>, String> {
    let Some(rest) = bytes.strip_prefix(SEALED_MAGIC) else {
        return Ok(bytes);
    };
    let Some(key) = key else {
        return Err("the file is a sealed terrane state file, and this state is not encrypted: set the state's key (the state block's encryption_key_env, or TERRANE_STATE_PASSPHRASE) to the passphrase of the state it came from".into());
    };
    if rest.len() < 20 {
        return Err("the sealed state file is truncated".into());
    }
    let (salt, rest) = rest.split_at(16);
    let (iter, sealed) = rest.split_at(4);
    let iterations = u32::from_be_bytes([iter[0], iter[1], iter[2], iter[3]]);
    let iterations =
        check_iterations(iterations, "the sealed state file").map_err(|e| e.to_string())?;
    Cipher::derive(&key.enc.passphrase, salt, iterations)
        .open(sealed, SEALED_MAGIC)
        .ok_or_else(|| format!("the sealed state file does not open with the key in {} (another passphrase, or the file was altered)", key.var))
}

/// Writes `bytes` to a new file in `dir`: `errored.tfstate`, or
/// `errored.N.tfstate` when an earlier one is still there (never
/// overwritten: it may hold the only record of other objects).
fn write_new(dir: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    for n in 0..1000 {
        let name = if n == 0 {
            "errored.tfstate".to_string()
        } else {
            format!("errored.{n}.tfstate")
        };
        let path = dir.join(name);
        let mut f = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        let written = f.write_all(bytes).and_then(|_| f.sync_all());
        if let Err(e) = written {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        return Ok(path);
    }
    Err(std::io::Error::other(
        "errored.tfstate through errored.999.tfstate all exist",
    ))
}

/// Writes the emergency state file for `state` (holding `unrecorded`
/// changes the store lacks) and reports it with the way back. When the
/// file cannot be written (the disk the state was on may be the full
/// one), the contents go to standard output instead, as Terraform does.
pub fn save(ui: &Ui, dir: &Path, state: &Snapshot, unrecorded: usize, key: Option<Key>) {
    let enc = key.map(|k| k.enc);
    let bytes = contents(state, enc);
    let sealed = match key {
        Some(k) => format!(" It is sealed with the state's key from {} (state encryption is on); `state push` opens it with the same key.", k.var),
        None => String::new(),
    };
    let what = format!(
        "{unrecorded} change(s) to real infrastructure could not be recorded in the state store."
    );
    match write_new(dir, &bytes) {
        Ok(path) => {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            ui.diags(&[Diagnostic::error(
                "Failed to persist state to backend",
                format!("{what} To allow for recovery, the complete state (what was recorded and what was not) has been written to {name} in the working directory (mode 0600).{sealed}\n\nRunning apply again before restoring it would create those objects a second time. Once the state store works again (and no one else holds its lock), restore it with:\n\n    terrane state push {name}\n\nThen run plan: nothing is created twice. Keep {name} until then: it is the only record of those objects."),
                None,
            )]);
        }
        Err(e) => {
            ui.diags(&[Diagnostic::error(
                "Failed to persist state to backend",
                format!("{what} Writing the emergency state file in the working directory failed too: {e}. The complete state follows on standard output{}; save it to a file and restore it with `terrane state push FILE` once the state store works again.", if enc.is_some() { " (sealed, base64-encoded: decode it with `base64 -d`)" } else { "" }),
                None,
            )]);
            let mut out = std::io::stdout();
            let _ = if enc.is_some() {
                use base64::Engine as _;
                writeln!(
                    out,
                    "{}",
                    base64::engine::general_purpose::STANDARD.encode(&bytes)
                )
            } else {
                out.write_all(&bytes)
            };
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> Snapshot {
        let mut s = Snapshot::empty();
        s.serial = 7;
        s.outputs.insert(
            "secret".into(),
            terrane_state::OutputState {
                value: serde_json::json!("hunter2-value"),
                ty: serde_json::json!("string"),
                sensitive: true,
            },
        );
        s
    }

    #[test]
    fn item2_emergency_file_sealed_and_opened() {
        let right = Encryption {
            passphrase: "right".into(),
            iterations: 1000,
        };
        let wrong = Encryption {
            passphrase: "wrong".into(),
            iterations: 1000,
        };
        let enc = Key {
            enc: &right,
            var: "MY_STATE_KEY",
        };
        let wrong = Key {
            enc: &wrong,
            var: "MY_STATE_KEY",
        };
        let s = state();
        let plain = contents(&s, None);
        let sealed = contents(&s, Some(&right));
        assert!(
            String::from_utf8_lossy(&plain).contains("hunter2-value"),
            "case plain_is_state_json"
        );
        assert!(sealed.starts_with(SEALED_MAGIC), "case sealed_is_marked");
        assert!(
            !sealed.windows(7).any(|w| w == b"hunter2"),
            "case sealed_hides_values"
        );
        assert_eq!(
            open(sealed.clone(), Some(enc)).unwrap(),
            plain,
            "case opens_with_passphrase"
        );
        assert!(
            open(sealed.clone(), Some(wrong)).is_err(),
            "case wrong_passphrase_refused"
        );
        assert!(
            open(sealed.clone(), None)
                .unwrap_err()
                .contains("not encrypted"),
            "case no_passphrase_refused"
        );
        assert!(
            open(sealed[..SEALED_MAGIC.len() + 10].to_vec(), Some(enc)).is_err(),
            "case truncated_refused"
        );
        let count_at = SEALED_MAGIC.len() + 16;
        let mut slow = sealed.clone();
        slow[count_at..count_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(
            open(slow, Some(enc)).is_err(),
            "case tampered_work_factor_refused_before_deriving"
        );
        let mut flipped = sealed.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(
            open(flipped, Some(enc))
                .unwrap_err()
                .contains("MY_STATE_KEY"),
            "case altered_refused_naming_the_key_variable"
        );
        assert_eq!(
            open(plain.clone(), Some(enc)).unwrap(),
            plain,
            "case plain_passes_through"
        );
        let s = terrane_state::tfstate::import(&plain).unwrap();
        assert_eq!(s.serial, 7, "case serial_kept");
    }

    #[test]
    fn item2_emergency_file_never_overwritten() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let first = write_new(dir.path(), b"one").unwrap();
        let second = write_new(dir.path(), b"two").unwrap();
        assert_eq!(
            first.file_name().unwrap(),
            "errored.tfstate",
            "case first_name"
        );
        assert_eq!(
            second.file_name().unwrap(),
            "errored.1.tfstate",
            "case second_name"
        );
        assert_eq!(std::fs::read(&first).unwrap(), b"one", "case first_kept");
        assert_eq!(
            std::fs::metadata(&second).unwrap().permissions().mode() & 0o777,
            0o600,
            "case mode_0600"
        );
        assert!(
            write_new(&dir.path().join("missing"), b"x").is_err(),
            "case unwritable_dir_is_an_error"
        );
    }
}
