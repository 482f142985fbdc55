//! Shared by the engine's integration tests: building and finding the
//! real provider plugin binaries, and small value helpers.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use terrane_engine::provider::{Provider, ProviderAddr, ProviderSchema, ProviderSource};
use terrane_value::Value;

/// Builds `bin` of `package` into this test's target directory (a no-op
/// when it is up to date) and returns its path. The bin belongs to another
/// package, so `CARGO_BIN_EXE_*` cannot name it.
pub fn plugin_binary(package: &str, bin: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    // target/<profile>/deps/<test> -> target/<profile>
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>")
        .to_path_buf();
    let target_dir = profile_dir.parent().expect("target dir").to_path_buf();
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        package,
        "--bin",
        bin,
        "--target-dir",
    ])
    .arg(&target_dir);
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("run cargo build");
    assert!(
        status.success(),
        "cargo build -p {package} --bin {bin} failed"
    );
    let path = profile_dir.join(bin);
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// An object of `type_name`'s type: the given attributes, the rest null.
pub fn object(schema: &ProviderSchema, type_name: &str, attrs: &[(&str, Value)]) -> Value {
    let block = &schema.resource(type_name).expect("resource type").block;
    let mut m = block
        .empty_value()
        .entries()
        .map(|e| (*e).clone())
        .unwrap_or_default();
    for (k, v) in attrs {
        m.insert((*k).to_string(), v.clone());
    }
    Value::object_typed_of(&block.implied_type(), m)
}

pub fn null_of(schema: &ProviderSchema, type_name: &str) -> Value {
    Value::null(
        schema
            .resource(type_name)
            .expect("resource type")
            .block
            .implied_type(),
    )
}

pub fn empty_config(p: &Arc<ProviderSchema>) -> Value {
    p.provider.block.empty_value()
}

pub async fn configure(p: &dyn Provider) {
    let s = p.get_schema().await.unwrap();
    let cfg = empty_config(&s);
    assert!(!p.validate_provider_config(&cfg).await.unwrap().has_errors());
    let d = p.configure_provider("1.10.0", &cfg).await.unwrap();
    assert!(!d.has_errors(), "{d}");
}

/// The `terrane` binary's in-process provider for `addr`.
pub fn builtin(addr: &ProviderAddr) -> ProviderSource {
    let b = terrane_builtins::standard().for_addr(addr).cloned();
    ProviderSource::Builtin(b.unwrap_or_else(|| panic!("no built-in provider for {addr}")))
}
