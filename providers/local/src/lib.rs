//! The local provider on terrane's SDK, with the names, arguments and
//! behaviour users know from the widely used `local` provider:
//! `local_file` and `local_sensitive_file` (content, content_base64 or
//! source; filename; permissions; computed id and content hashes) and the
//! `local_file` and `local_sensitive_file` data sources.
//!
//! Drift: reading a file that was deleted or edited outside Terraform
//! removes it from state, so the next plan creates it again. Import takes
//! the file's path.

use async_trait::async_trait;
use base64::Engine as _;
use sha2::Digest;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::sync::Arc;
use terrane_sdk::validate::{Matches, OneOfAttributes};
use terrane_sdk::{
    Applied, Attr, Ctx, DataSource, DataSourceType, Diagnostics, Function, FunctionError, Param,
    Path, Provider, Resource, ResourceSchema, ResourceType, SimpleDataSource, SimpleResource,
    Value,
};

pub struct LocalProvider;

impl Provider for LocalProvider {
    type Data = ();
    fn type_name(&self) -> &str {
        "local"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn resources(&self) -> Vec<Arc<dyn ResourceType>> {
        vec![
            Arc::new(SimpleResource {
                name: "local_file",
                schema: file_schema,
                resource: LocalFile { sensitive: false },
            }),
            Arc::new(SimpleResource {
                name: "local_sensitive_file",
                schema: sensitive_file_schema,
                resource: LocalFile { sensitive: true },
            }),
        ]
    }
    fn data_sources(&self) -> Vec<Arc<dyn DataSourceType>> {
        vec![
            Arc::new(SimpleDataSource {
                name: "local_file",
                schema: data_schema,
                source: DataFile,
            }),
            Arc::new(SimpleDataSource {
                name: "local_sensitive_file",
                schema: sensitive_data_schema,
                source: DataFile,
            }),
        ]
    }
    fn functions(&self) -> Vec<Arc<dyn Function>> {
        vec![Arc::new(DirExists)]
    }
}

/// `provider::local::direxists(path)`: whether a directory exists there.
struct DirExists;

impl Function for DirExists {
    fn name(&self) -> &str {
        "direxists"
    }
    fn summary(&self) -> &str {
        "Determines whether a directory exists at a given path."
    }
    fn params(&self) -> Vec<Param> {
        vec![Param::new("path", terrane_sdk::Type::String)
            .describe("Relative or absolute path to check for the existence of a directory")]
    }
    fn return_type(&self) -> terrane_sdk::Type {
        terrane_sdk::Type::Bool
    }
    fn call(&self, args: &[Value]) -> Result<Value, FunctionError> {
        let path = args.first().and_then(Value::as_str).unwrap_or_default();
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Ok(Value::bool(true)),
            Ok(_) => Err(FunctionError::argument(
                0,
                format!("Invalid file mode detected: {path:?} was found, but is not a directory"),
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::bool(false)),
            Err(e) => Err(FunctionError::argument(
                0,
                format!("Error checking for directory: {e}"),
            )),
        }
    }
}

const HASHES: [&str; 6] = [
    "content_md5",
    "content_sha1",
    "content_sha256",
    "content_sha512",
    "content_base64sha256",
    "content_base64sha512",
];

fn hashes_into(s: ResourceSchema) -> ResourceSchema {
    HASHES.iter().fold(s, |s, h| {
        s.attr(h, Attr::string().computed().use_state_for_unknown())
    })
}

fn resource_schema(sensitive: bool) -> ResourceSchema {
    let octal = || {
        Matches(
            regex::Regex::new("^[0-7]{3,4}$").expect("static regex"),
            "must be a string of 3 or 4 octal digits, like \"0644\"".into(),
        )
    };
    let perm = if sensitive { "0700" } else { "0777" };
    let content = Attr::string().optional().requires_replace();
    let b64 = Attr::string().optional().requires_replace();
    let (content, b64) = if sensitive {
        (content.sensitive(), b64.sensitive())
    } else {
        (content, b64)
    };
    let one = || OneOfAttributes {
        names: vec!["content".into(), "content_base64".into(), "source".into()],
        exactly: true,
    };
    hashes_into(
        ResourceSchema::new(0)
            .attr("content", content.validate(one()))
            .attr("content_base64", b64)
            .attr("source", Attr::string().optional().requires_replace())
            .attr("filename", Attr::string().required().requires_replace())
            .attr(
                "file_permission",
                Attr::string()
                    .default(Value::string(perm))
                    .requires_replace()
                    .validate(octal()),
            )
            .attr(
                "directory_permission",
                Attr::string()
                    .default(Value::string(perm))
                    .requires_replace()
                    .validate(octal()),
            )
            .attr("id", Attr::string().computed().use_state_for_unknown()),
    )
}

fn file_schema() -> ResourceSchema {
    resource_schema(false)
}

fn sensitive_file_schema() -> ResourceSchema {
    resource_schema(true)
}

fn data_schema() -> ResourceSchema {
    hashes_into(
        ResourceSchema::new(0)
            .attr("filename", Attr::string().required())
            .attr("content", Attr::string().computed())
            .attr("content_base64", Attr::string().computed())
            .attr("id", Attr::string().computed()),
    )
}

/// `data "local_sensitive_file"`: `local_file`'s reader with the content
/// sensitive.
fn sensitive_data_schema() -> ResourceSchema {
    hashes_into(
        ResourceSchema::new(0)
            .attr("filename", Attr::string().required())
            .attr("content", Attr::string().computed().sensitive())
            .attr("content_base64", Attr::string().computed().sensitive())
            .attr("id", Attr::string().computed()),
    )
}

/// The computed attributes for `bytes`: id (SHA-1 hex) and the hashes.
fn hash_attrs(bytes: &[u8]) -> BTreeMap<String, Value> {
    let b64 = |d: &[u8]| base64::engine::general_purpose::STANDARD.encode(d);
    let mut m = BTreeMap::new();
    let sha1 = hex::encode(sha1::Sha1::digest(bytes));
    m.insert("id".into(), Value::string(sha1.clone()));
    m.insert(
        "content_md5".into(),
        Value::string(hex::encode(md5::Md5::digest(bytes))),
    );
    m.insert("content_sha1".into(), Value::string(sha1));
    m.insert(
        "content_sha256".into(),
        Value::string(hex::encode(sha2::Sha256::digest(bytes))),
    );
    m.insert(
        "content_sha512".into(),
        Value::string(hex::encode(sha2::Sha512::digest(bytes))),
    );
    m.insert(
        "content_base64sha256".into(),
        Value::string(b64(&sha2::Sha256::digest(bytes))),
    );
    m.insert(
        "content_base64sha512".into(),
        Value::string(b64(&sha2::Sha512::digest(bytes))),
    );
    m
}

fn merge(base: &Value, extra: BTreeMap<String, Value>) -> Value {
    let mut m = base.entries().map(|e| (*e).clone()).unwrap_or_default();
    m.extend(extra);
    Value::object_of(m)
}

fn io_error(path: &str, what: &str, e: std::io::Error) -> Diagnostics {
    Diagnostics::attr_error(
        Path::root().attr("filename"),
        format!("Unable to {what} file"),
        format!("{path}: {e}"),
    )
}

/// Opens `path` for writing with nothing written yet, never readable
/// beyond `mode` (local_sensitive_file's content must not be readable by
/// others for a moment): a new file gets `mode` (less the umask) from the
/// open call itself, and the file, new or existing, is set to exactly
/// `mode` through its descriptor before a byte is written.
fn open_for_write(path: &std::path::Path, mode: u32) -> std::io::Result<std::fs::File> {
    let file = create_file(path, mode)?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    Ok(file)
}

/// The open call: create (or truncate) with `mode`.
fn create_file(path: &std::path::Path, mode: u32) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
}

fn parse_mode(s: &str) -> u32 {
    u32::from_str_radix(s, 8).unwrap_or(0o777)
}

#[derive(Clone)]
struct LocalFile {
    sensitive: bool,
}

impl LocalFile {
    /// The bytes the configuration asks for.
    fn content(&self, planned: &Value) -> Result<Vec<u8>, Diagnostics> {
        if let Some(c) = terrane_sdk::str_attr(planned, "content") {
            return Ok(c.into_bytes());
        }
        if let Some(b) = terrane_sdk::str_attr(planned, "content_base64") {
            return base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .map_err(|e| {
                    Diagnostics::attr_error(
                        Path::root().attr("content_base64"),
                        "Invalid base64",
                        e.to_string(),
                    )
                });
        }
        if let Some(src) = terrane_sdk::str_attr(planned, "source") {
            return std::fs::read(&src).map_err(|e| {
                Diagnostics::attr_error(
                    Path::root().attr("source"),
                    "Unable to read source file",
                    format!("{src}: {e}"),
                )
            });
        }
        Err(Diagnostics::error(
            "Missing content",
            "One of content, content_base64 or source must be set.",
        ))
    }
}

#[async_trait]
impl Resource for LocalFile {
    async fn create(
        &self,
        _ctx: &Ctx,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let bytes = self.content(planned)?;
        let filename = terrane_sdk::str_attr(planned, "filename").unwrap_or_default();
        let path = std::path::Path::new(&filename);
        if let Some(dir) = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty() && !d.exists())
        {
            // Created with their mode (less the umask), not opened up first.
            let mode = parse_mode(
                &terrane_sdk::str_attr(planned, "directory_permission")
                    .unwrap_or_else(|| "0777".into()),
            );
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(mode)
                .create(dir)
                .map_err(|e| io_error(&filename, "create the directory of", e))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
                .map_err(|e| io_error(&filename, "set permissions on the directory of", e))?;
        }
        let mode = parse_mode(
            &terrane_sdk::str_attr(planned, "file_permission").unwrap_or_else(|| "0777".into()),
        );
        let mut file = open_for_write(path, mode).map_err(|e| io_error(&filename, "write", e))?;
        file.write_all(&bytes)
            .map_err(|e| io_error(&filename, "write", e))?;
        Ok(Applied::new(merge(planned, hash_attrs(&bytes))))
    }

    async fn read(
        &self,
        _ctx: &Ctx,
        state: &Value,
        private: &[u8],
    ) -> Result<Option<Applied>, Diagnostics> {
        let filename = terrane_sdk::str_attr(state, "filename").unwrap_or_default();
        let bytes = match std::fs::read(&filename) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&filename, "read", e)),
        };
        // Edited outside Terraform: drop it from state so it is re-created.
        let id = hex::encode(sha1::Sha1::digest(&bytes));
        if terrane_sdk::str_attr(state, "id").as_deref() != Some(id.as_str()) {
            return Ok(None);
        }
        Ok(Some(Applied {
            state: state.clone(),
            private: private.to_vec(),
        }))
    }

    async fn update(
        &self,
        _ctx: &Ctx,
        prior: &Value,
        planned: &Value,
        _config: &Value,
    ) -> Result<Applied, Diagnostics> {
        let mut m = planned.entries().map(|e| (*e).clone()).unwrap_or_default();
        for (k, v) in prior.entries().map(|e| (*e).clone()).unwrap_or_default() {
            if m.get(&k).is_some_and(|cur| !cur.is_known()) {
                m.insert(k, v);
            }
        }
        Ok(Applied::new(Value::object_of(m)))
    }

    async fn delete(&self, _ctx: &Ctx, prior: &Value) -> Result<(), Diagnostics> {
        let filename = terrane_sdk::str_attr(prior, "filename").unwrap_or_default();
        match std::fs::remove_file(&filename) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error(&filename, "delete", e)),
        }
    }

    async fn import(&self, _ctx: &Ctx, id: &str) -> Result<Value, Diagnostics> {
        let bytes = std::fs::read(id)
            .map_err(|e| Diagnostics::error("Cannot import file", format!("{id}: {e}")))?;
        let mode = std::fs::metadata(id)
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0o777);
        let dir_mode = std::path::Path::new(id)
            .parent()
            .and_then(|p| {
                std::fs::metadata(if p.as_os_str().is_empty() {
                    std::path::Path::new(".")
                } else {
                    p
                })
                .ok()
            })
            .map(|m| m.permissions().mode() & 0o7777)
            .unwrap_or(0o777);
        let schema = resource_schema(self.sensitive);
        let mut m = schema
            .block_schema()
            .empty_value()
            .entries()
            .map(|e| (*e).clone())
            .unwrap_or_default();
        match String::from_utf8(bytes.clone()) {
            Ok(text) => m.insert("content".into(), Value::string(text)),
            Err(_) => m.insert(
                "content_base64".into(),
                Value::string(base64::engine::general_purpose::STANDARD.encode(&bytes)),
            ),
        };
        m.insert("filename".into(), Value::string(id));
        m.insert(
            "file_permission".into(),
            Value::string(format!("{mode:04o}")),
        );
        m.insert(
            "directory_permission".into(),
            Value::string(format!("{dir_mode:04o}")),
        );
        m.extend(hash_attrs(&bytes));
        Ok(Value::object_typed_of(
            &schema.block_schema().implied_type(),
            m,
        ))
    }
}

#[derive(Clone)]
struct DataFile;

#[async_trait]
impl DataSource for DataFile {
    async fn read(&self, _ctx: &Ctx, config: &Value) -> Result<Value, Diagnostics> {
        let filename = terrane_sdk::str_attr(config, "filename").unwrap_or_default();
        let bytes = std::fs::read(&filename).map_err(|e| io_error(&filename, "read", e))?;
        let mut extra = hash_attrs(&bytes);
        extra.insert(
            "content".into(),
            Value::string(String::from_utf8_lossy(&bytes).into_owned()),
        );
        extra.insert(
            "content_base64".into(),
            Value::string(base64::engine::general_purpose::STANDARD.encode(&bytes)),
        );
        Ok(merge(config, extra))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode_of(p: &std::path::Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    /// item 14: a local_sensitive_file is never readable beyond its mode,
    /// not even between creation and chmod. Under umask 0 the open call
    /// alone must give the file its mode (a default open gives 0666); an
    /// existing, wider file is narrowed before anything is written.
    #[test]
    fn item14_sensitive_file_created_with_its_final_mode() {
        let dir = terrane_testkit::temp_dir();
        let old = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
        let result = std::panic::catch_unwind(|| {
            let cases = [
                ("new_0600", 0o600, None),
                ("new_0700_sensitive_default", 0o700, None),
                ("new_0640", 0o640, None),
                ("existing_0666_narrowed", 0o600, Some(0o666)),
            ];
            for (name, mode, existing) in cases {
                let path = dir.path().join(name);
                if let Some(m) = existing {
                    std::fs::write(&path, "old").unwrap();
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap();
                } else {
                    let f = create_file(&path, mode).unwrap();
                    assert_eq!(mode_of(&path), mode, "case {name}: mode from the open call");
                    drop(f);
                    std::fs::remove_file(&path).unwrap();
                }
                let f = open_for_write(&path, mode).unwrap();
                assert_eq!(
                    (mode_of(&path), f.metadata().unwrap().len()),
                    (mode, 0),
                    "case {name}: mode before the first byte"
                );
            }
        });
        nix::sys::stat::umask(old);
        result.unwrap();
    }

    /// The resource still writes the content with the configured mode.
    #[tokio::test]
    async fn sensitive_file_resource_writes_content_with_its_mode() {
        let dir = terrane_testkit::temp_dir();
        let path = dir.path().join("sub/secret.txt");
        let schema = sensitive_file_schema();
        let mut m = schema
            .block_schema()
            .empty_value()
            .entries()
            .map(|e| (*e).clone())
            .unwrap_or_default();
        m.insert("content".into(), Value::string("s3cret"));
        m.insert("filename".into(), Value::string(path.display().to_string()));
        m.insert("file_permission".into(), Value::string("0600"));
        m.insert("directory_permission".into(), Value::string("0700"));
        let planned = Value::object_typed_of(&schema.block_schema().implied_type(), m);
        LocalFile { sensitive: true }
            .create(&Ctx::default(), &planned, &planned)
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "s3cret",
            "case content"
        );
        assert_eq!(mode_of(&path), 0o600, "case file_mode");
        assert_eq!(
            mode_of(path.parent().unwrap()),
            0o700,
            "case directory_mode"
        );
    }
}
