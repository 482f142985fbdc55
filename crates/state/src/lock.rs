//! Lock information: who holds a workspace's lock, for what, since when,
//! and whether that holder provably died. A leaf module: stores and
//! errors both name a [`LockInfo`].

use std::fmt;

/// Who holds a lock, for what, since when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockInfo {
    /// A UUID naming this lock (what `force-unlock` takes).
    pub id: String,
    /// The operation, e.g. `OperationTypeApply`.
    pub operation: String,
    /// Free text from the caller.
    pub info: String,
    /// `user@host`.
    pub who: String,
    /// RFC 3339 time the lock was taken.
    pub created: String,
    /// The holder's process id and host, to spot holders that died.
    pub pid: u32,
    pub host: String,
    /// The holder process's start time (`/proc/PID/stat` field 22, clock
    /// ticks since boot), so a PID reused by another process is not taken
    /// for the holder. None when unknown (other systems, older locks).
    pub start_time: Option<u64>,
}

/// This host's name, as locks record it.
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|f| {
            std::fs::read_to_string(f)
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "localhost".into())
}

/// The fields of `/proc/PID/stat` after the command name (field 3, the
/// state, first); None when there is no such process (or no /proc).
fn proc_stat(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or
    // parentheses itself: count fields from the last ')'.
    Some(
        stat[stat.rfind(')')? + 1..]
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    )
}

/// When process `pid` started (clock ticks since boot; field 22 of
/// `/proc/PID/stat`); None when there is no such process (or no /proc).
pub fn process_start_time(pid: u32) -> Option<u64> {
    proc_stat(pid)?.get(19)?.parse().ok()
}

impl LockInfo {
    /// A new lock description for this process.
    pub fn new(operation: &str, info: &str) -> LockInfo {
        let host = host_name();
        let pid = std::process::id();
        let user = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
        LockInfo {
            id: uuid::Uuid::new_v4().to_string(),
            operation: operation.into(),
            info: info.into(),
            who: format!("{user}@{host}"),
            created: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            pid,
            host,
            start_time: process_start_time(pid),
        }
    }

    /// Whether the holder provably died: it ran on this host, and its PID
    /// is gone or now belongs to a process that started at another time.
    /// A lock from another host is never judged dead (its PID means
    /// nothing here); nor is one on a system without `/proc`.
    pub fn holder_is_dead(&self) -> bool {
        if self.pid == 0
            || self.host != host_name()
            || !std::path::Path::new("/proc/self/stat").exists()
        {
            return false;
        }
        match proc_stat(self.pid) {
            None => !std::path::Path::new(&format!("/proc/{}", self.pid)).exists(),
            // Exited but not yet reaped (a zombie): it holds nothing.
            Some(f) if matches!(f.first().map(String::as_str), Some("Z" | "X" | "x")) => true,
            Some(f) => match (
                f.get(19).and_then(|t| t.parse::<u64>().ok()),
                self.start_time,
            ) {
                (Some(now), Some(recorded)) => now != recorded,
                _ => false,
            },
        }
    }
}

impl fmt::Display for LockInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Lock Info:")?;
        writeln!(f, "  ID:        {}", self.id)?;
        writeln!(f, "  Operation: {}", self.operation)?;
        writeln!(f, "  Who:       {}", self.who)?;
        writeln!(f, "  Created:   {}", self.created)?;
        if !self.info.is_empty() {
            writeln!(f, "  Info:      {}", self.info)?;
        }
        if self.holder_is_dead() {
            write!(f, "The holder (process {}) is no longer running; if no operation is in progress, run `terrane force-unlock {}`.", self.pid, self.id)
        } else {
            write!(f, "Terraform-compatible tools acquire a state lock to protect it from being written by multiple users at once. Wait for the other operation to finish, or use `terrane force-unlock {}` if it is stuck.", self.id)
        }
    }
}
