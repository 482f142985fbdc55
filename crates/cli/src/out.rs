//! Standard output and error that survive a closed reader.
//!
//! `std`'s `print!` family panics when a write fails, and Rust ignores
//! SIGPIPE, so `terrane plan | head -1` used to die with "failed printing to
//! stdout: Broken pipe" (and a backtrace under `RUST_BACKTRACE=1`). The
//! macros below shadow `print!`, `println!`, `eprint!` and `eprintln!` for
//! the whole crate (they are defined before every module), so every command,
//! including ones added later, writes through [`write`], which drops what a
//! closed (or otherwise failing) stream cannot take, as Go's `fmt.Print`
//! does for Terraform.
//!
//! Terraform itself is then killed by SIGPIPE. terrane instead finishes the
//! command quietly: an apply is never cut short between a provider's answer
//! and the state write because nobody reads its progress lines any more.

use std::fmt::Arguments;
use std::io::Write;

/// The stream a macro writes to.
#[derive(Clone, Copy)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Writes `args` (and a newline when `newline`) to `stream`, ignoring a
/// failure: a reader that went away (EPIPE) or a full disk behind a
/// redirection must not turn into a panic.
pub fn write(stream: Stream, args: Arguments<'_>, newline: bool) {
    fn to(mut w: impl Write, args: Arguments<'_>, newline: bool) {
        let _ = w.write_fmt(args);
        if newline {
            let _ = w.write_all(b"\n");
        }
    }
    match stream {
        Stream::Stdout => to(std::io::stdout().lock(), args, newline),
        Stream::Stderr => to(std::io::stderr().lock(), args, newline),
    }
}

/// `print!` that never panics on a closed standard output.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::out::write($crate::out::Stream::Stdout, format_args!($($arg)*), false)
    };
}

/// `println!` that never panics on a closed standard output.
macro_rules! println {
    () => {
        $crate::out::write($crate::out::Stream::Stdout, format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::out::write($crate::out::Stream::Stdout, format_args!($($arg)*), true)
    };
}

/// `eprint!` that never panics on a closed standard error.
#[allow(unused_macros)]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::out::write($crate::out::Stream::Stderr, format_args!($($arg)*), false)
    };
}

/// `eprintln!` that never panics on a closed standard error.
macro_rules! eprintln {
    () => {
        $crate::out::write($crate::out::Stream::Stderr, format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::out::write($crate::out::Stream::Stderr, format_args!($($arg)*), true)
    };
}
