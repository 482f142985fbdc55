//! `terrane`: Terraform's workflow over terrane's engine. This binary is
//! glue: argument parsing ([`args`]), input variables ([`vars`]), the
//! state store and its lock; what it prints is rendered by terrane-render
//! and the work is in terrane-engine.

// First: its print!/println!/eprint!/eprintln! shadow std's in every
// module below (a closed pipe is not a panic).
#[macro_use]
mod out;

mod args;
mod backendconf;
mod cmdspec;
mod commands;
mod errored;
mod install;
mod modinstall;
mod session;
mod stateconf;
mod vars;

use std::process::ExitCode;

// The engine allocates and frees many small values per instance; glibc's
// malloc spent about a fifth of a 5,000-instance plan in malloc/free.
// The `system-alloc` feature keeps glibc's malloc, so a heap profiler
// (heaptrack, valgrind's massif) sees every allocation.
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// log, log2 and pow defined in this executable rather than loaded from
// libm.so.6 (see the crate).
use terrane_mathfns as _;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let a = match args::parse(&argv) {
        Ok(args::Parsed::Run(a)) => a,
        Ok(args::Parsed::Help(c)) => {
            print!("{}", c.map(cmdspec::help).unwrap_or_else(cmdspec::overview));
            return ExitCode::SUCCESS;
        }
        // Terraform prints this one on standard output.
        Err(e @ args::ArgError::BeforeCommand(_)) => {
            print!("{}", commands::arg_error(&e));
            return ExitCode::from(1);
        }
        Err(e) => {
            eprint!("{}", commands::arg_error(&e));
            return ExitCode::from(1);
        }
    };
    if let Some(dir) = &a.chdir {
        if let Err(e) = std::env::set_current_dir(dir) {
            eprintln!("Error handling -chdir option: {e}");
            return ExitCode::from(1);
        }
    }
    // One thread runs the whole walk: its tasks are short and wake each
    // other all the time, which a thread pool turns into cross-thread
    // wake-ups (a 5,000-long chain planned 2.7x slower on the default
    // pool). Blocking work (state writes) has its own threads, provider
    // functions their own runtime (see the engine's provider host). While
    // a plugin call awaits its answer the thread polls the plugin sockets
    // before it sleeps (terrane_plugin::spin).
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(terrane_plugin::spin::before_park)
        .on_thread_unpark(terrane_plugin::spin::after_unpark)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = rt.block_on(commands::dispatch(a));
    ExitCode::from(code)
}
