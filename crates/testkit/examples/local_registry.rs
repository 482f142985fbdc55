//! The testkit's local HTTPS provider registry as a process of its own,
//! for `bench/init.sh`: publishes one provider binary under N names
//! (`registry.terrane.test/test/p0` ... `pN-1`, version 1.0.0, protocol
//! 6), writes the environment both tools need (`SSL_CERT_FILE`,
//! `TF_CLI_CONFIG_FILE`) as `KEY=VALUE` lines to a file, and serves until
//! its standard input closes. It also publishes N registry modules
//! (`registry.terrane.test/test/m0/null` ... `mN-1`, version 1.0.0), module
//! `mI` requiring provider `pI` (`>= 1.0`), so an init installs N modules
//! and solves each provider's constraints across two modules.
//!
//! Usage: local_registry BINARY N ENV_FILE [EXTRA_CLI_CONFIG_FILE]

use std::io::Read;
use terrane_testkit::registry::Registry;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [binary, n, env_file, rest @ ..] = args.as_slice() else {
        eprintln!("usage: local_registry BINARY N ENV_FILE [EXTRA_CLI_CONFIG_FILE]");
        std::process::exit(2);
    };
    let bin = std::fs::read(binary).unwrap_or_else(|e| {
        eprintln!("cannot read {binary}: {e}");
        std::process::exit(1)
    });
    let n: usize = n.parse().unwrap_or_else(|_| {
        eprintln!("N must be a number, not {n:?}");
        std::process::exit(2)
    });
    let reg = Registry::start();
    for i in 0..n {
        reg.publish("test", &format!("p{i}"), "1.0.0", &bin, &["6.0"]);
        let main = format!(
            "terraform {{\n  required_providers {{\n    p{i} = {{\n      source  = \"registry.terrane.test/test/p{i}\"\n      version = \">= 1.0\"\n    }}\n  }}\n}}\n\noutput \"name\" {{\n  value = \"m{i}\"\n}}\n"
        );
        reg.publish_module(
            "test",
            &format!("m{i}"),
            "null",
            "1.0.0",
            &[("main.tf", main.as_str())],
        );
    }
    if let Some(extra) = rest.first() {
        let text = std::fs::read_to_string(extra).unwrap_or_else(|e| {
            eprintln!("cannot read {extra}: {e}");
            std::process::exit(1)
        });
        reg.write_cli_config(&text);
    }
    let env: String = reg
        .env()
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    std::fs::write(env_file, env).unwrap_or_else(|e| {
        eprintln!("cannot write {env_file}: {e}");
        std::process::exit(1)
    });
    // Serve until the parent closes our standard input.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(reg);
}
