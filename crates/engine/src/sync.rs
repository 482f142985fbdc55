//! Locking that survives a panic elsewhere: a poisoned mutex still holds
//! consistent data here (every critical section is a plain update), so
//! the guard is taken rather than the walk aborted.
//!
//! Layering: imports nothing from the engine.

use std::sync::{Mutex, MutexGuard};

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
