//! `terrane`: Terraform's workflow over terrane's engine. This binary is
//! glue: argument parsing ([`args`]), input variables ([`vars`]), the
//! state store and its lock, and rendering ([`render`], [`json`]); the
//! work is in terrane-engine.

mod args;
mod commands;
mod json;
mod planfile;
mod render;
mod statecmd;
mod stream;
mod vars;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let a = args::parse(&argv);
    if let Some(dir) = &a.chdir {
        if let Err(e) = std::env::set_current_dir(dir) {
            eprintln!("Error handling -chdir option: {e}");
            return ExitCode::from(1);
        }
    }
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = rt.block_on(commands::dispatch(a));
    ExitCode::from(code)
}
