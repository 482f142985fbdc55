//! What the object-store backends (s3, gcs, azurerm) share: the small
//! runtime that runs their async clients behind the blocking
//! [`crate::RemoteClient`] calls, settings helpers, error mapping, and the
//! lock-object protocol (a lock document created only if absent).

use std::future::Future;
use std::sync::Arc;

use object_store::path::Path as ObjPath;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};

use crate::{BackendError, RemoteLock, Result, Settings};

/// A one-worker tokio runtime owned by a backend and shared by its
/// clients. Blocking calls enter it with `block_on`; callers are plain
/// threads (a `spawn_blocking` thread included), never a runtime worker.
#[derive(Clone)]
pub(crate) struct Rt(Arc<RtInner>);

struct RtInner(Option<tokio::runtime::Runtime>);

impl Drop for RtInner {
    fn drop(&mut self) {
        // shutdown_background never blocks, so dropping the last client
        // inside an async context does not panic.
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

impl Rt {
    pub(crate) fn new(backend: &str) -> Result<Rt> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("terrane-{backend}"))
            .enable_all()
            .build()
            .map_err(|e| io(backend, format!("starting the client runtime: {e}")))?;
        Ok(Rt(Arc::new(RtInner(Some(rt)))))
    }

    /// Runs `fut` to completion on the backend's runtime.
    pub(crate) fn run<F>(&self, fut: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let rt = self.0 .0.as_ref().expect("runtime lives until dropped");
        if tokio::runtime::Handle::try_current().is_ok() {
            // Called from inside a runtime (which the trait forbids): move
            // to a plain thread rather than panic.
            return std::thread::scope(|s| {
                s.spawn(|| rt.block_on(fut))
                    .join()
                    .expect("backend call thread")
            });
        }
        rt.block_on(fut)
    }
}

/// HTTP client options: timeouts, and the CA certificates `SSL_CERT_FILE`
/// names (as Terraform's Go runtime and OpenSSL read it) trusted besides
/// the system's, for endpoints behind a private CA.
pub(crate) fn client_options(backend: &str) -> Result<object_store::ClientOptions> {
    let mut o = object_store::ClientOptions::new()
        .with_timeout(std::time::Duration::from_secs(60))
        .with_connect_timeout(std::time::Duration::from_secs(5));
    if let Some(path) = std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) {
        let shown = std::path::Path::new(&path).display().to_string();
        let pem =
            std::fs::read(&path).map_err(|e| io(backend, format!("SSL_CERT_FILE {shown}: {e}")))?;
        let certs = object_store::Certificate::from_pem_bundle(&pem)
            .map_err(|e| io(backend, format!("SSL_CERT_FILE {shown}: {e}")))?;
        for c in certs {
            o = o.with_root_certificate(c);
        }
    }
    Ok(o)
}

pub(crate) fn io(backend: &str, detail: impl Into<String>) -> BackendError {
    BackendError::Io {
        backend: backend.into(),
        detail: detail.into(),
    }
}

pub(crate) fn settings_err(backend: &str, detail: impl Into<String>) -> BackendError {
    BackendError::Settings {
        backend: backend.into(),
        detail: detail.into(),
    }
}

/// A required string setting: an error naming it when missing or empty.
pub(crate) fn required(backend: &str, settings: &Settings, name: &str) -> Result<String> {
    match crate::string_setting(backend, settings, name)? {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(settings_err(
            backend,
            format!("The argument {name:?} is required, but no definition was found."),
        )),
    }
}

/// A boolean setting (false when absent); an error naming it otherwise.
pub(crate) fn bool_setting(backend: &str, settings: &Settings, name: &str) -> Result<bool> {
    match settings.get(name) {
        None | Some(serde_json::Value::Null) => Ok(false),
        Some(serde_json::Value::Bool(b)) => Ok(*b),
        Some(other) => Err(settings_err(
            backend,
            format!("{name}: a bool is required, got {other}"),
        )),
    }
}

/// A cloud backend's settings checked by name: one neither `served` nor
/// `refused` is unknown (Terraform's error for it), a `refused` one is
/// named by [`refuse`].
pub(crate) fn check_settings(
    backend: &str,
    settings: &Settings,
    served: &[&str],
    refused: &[&str],
) -> Result<()> {
    let known: Vec<&str> = served.iter().chain(refused).copied().collect();
    crate::check_known(backend, settings, &known)?;
    refuse(backend, settings, refused)
}

/// Settings Terraform knows that terrane does not serve yet: an error
/// naming the setting, never a silent fallback to a weaker store.
fn refuse(backend: &str, settings: &Settings, names: &[&str]) -> Result<()> {
    for name in names {
        if settings.get(*name).is_some_and(|v| !v.is_null()) {
            return Err(settings_err(
                backend,
                format!(
                    "{name}: terrane does not support this setting of the {backend} backend yet"
                ),
            ));
        }
    }
    Ok(())
}

/// A workspace name as Terraform accepts it for object keys.
pub(crate) fn check_workspace(backend: &str, name: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') {
        return Err(settings_err(
            backend,
            format!("workspace name {name:?} is not valid: it must be non-empty and hold no \"/\""),
        ));
    }
    Ok(())
}

/// An object_store failure as a backend error naming the object; the
/// store's own message carries the reason (never a credential).
pub(crate) fn store_err(backend: &str, what: &str, e: object_store::Error) -> BackendError {
    io(backend, format!("{what}: {e}"))
}

/// Outcome of creating a lock object only if it is absent.
pub(crate) enum Created {
    Yes,
    AlreadyThere,
}

/// Creates `path` holding `data` only if no object is there (S3
/// `If-None-Match: *`, GCS `ifGenerationMatch=0`).
pub(crate) async fn create_object(
    store: &dyn ObjectStore,
    backend: &str,
    url: &str,
    path: &ObjPath,
    data: &[u8],
    mut opts: PutOptions,
) -> Result<Created> {
    opts.mode = PutMode::Create;
    match store
        .put_opts(path, PutPayload::from(data.to_vec()), opts)
        .await
    {
        Ok(_) => Ok(Created::Yes),
        Err(object_store::Error::AlreadyExists { .. })
        | Err(object_store::Error::Precondition { .. }) => Ok(Created::AlreadyThere),
        Err(e) => Err(store_err(backend, &format!("creating the lock {url}"), e)),
    }
}

/// Terraform's lock JSON read back from a lock object or attribute; a
/// clear error when it is not a JSON object. Missing fields read as empty
/// (other tools write lock files too).
pub(crate) fn parse_lock(url: &str, data: &[u8]) -> Result<RemoteLock> {
    let v: serde_json::Value = serde_json::from_slice(data).map_err(|e| BackendError::Corrupt {
        path: url.into(),
        detail: format!("the lock information is not Terraform's lock JSON: {e}"),
    })?;
    let Some(o) = v.as_object() else {
        return Err(BackendError::Corrupt {
            path: url.into(),
            detail: "the lock information is not a JSON object".into(),
        });
    };
    let f = |k: &str| o.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    Ok(RemoteLock {
        id: f("ID"),
        operation: f("Operation"),
        info: f("Info"),
        who: f("Who"),
        version: f("Version"),
        created: f("Created"),
        path: f("Path"),
    })
}

/// The lock error Terraform shows: the lock is held by `holder`.
pub(crate) fn locked(path: &str, holder: RemoteLock) -> BackendError {
    BackendError::Locked {
        path: path.into(),
        holder: Box::new(holder),
    }
}

/// A holder we could not read (the lock vanished between our failed
/// create and our read): still a lock error, saying so.
pub(crate) fn unknown_holder(path: &str) -> RemoteLock {
    RemoteLock {
        path: path.into(),
        info: "the lock was released while terrane read it; try again".into(),
        ..Default::default()
    }
}

/// Lock JSON for a lock stored by terrane, with `path` as Terraform sets it.
pub(crate) fn lock_json(lock: &RemoteLock, id: &str, path: &str) -> Vec<u8> {
    let mut l = lock.clone();
    l.id = id.into();
    l.path = path.into();
    serde_json::to_vec(&l).expect("lock info serializes")
}

/// A fresh lock ID (Terraform uses a random UUID when the caller has none).
pub(crate) fn new_lock_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_json_is_read_leniently_but_never_silently() {
        type Want = std::result::Result<(&'static str, &'static str), &'static str>;
        let cases: &[(&str, &str, Want)] = &[
            (
                "terraform's",
                r#"{"ID":"a","Operation":"OperationTypePlan","Info":"","Who":"u@h","Version":"1.15.5","Created":"t","Path":"b/k"}"#,
                Ok(("a", "u@h")),
            ),
            ("missing fields", r#"{"ID":"b"}"#, Ok(("b", ""))),
            ("not json", "garbage", Err("not Terraform's lock JSON")),
            ("not an object", "[1]", Err("not a JSON object")),
        ];
        for (name, data, want) in cases {
            match (parse_lock("s3://b/k.tflock", data.as_bytes()), want) {
                (Ok(l), Ok((id, who))) => {
                    assert_eq!((l.id.as_str(), l.who.as_str()), (*id, *who), "case {name}")
                }
                (Err(e), Err(msg)) => assert!(e.to_string().contains(msg), "case {name}: {e}"),
                (got, _) => panic!("case {name}: {got:?}"),
            }
        }
    }
}
