//! The atomics, lock and condition variable the generator's concurrency rests on: std's, or
//! loom's in a build with `--cfg loom` (core/tests/loom_*.rs, tests/model/loom.sh), as tokio
//! does, so that the models drive this code and not a copy of it. The normal build re-exports
//! std's own types: its code is the same, instruction for instruction.

#[cfg(not(loom))]
pub(crate) use crate::fork::{lock, Locked};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    atomic::{AtomicBool, AtomicU64},
    Condvar, Mutex, MutexGuard,
};

#[cfg(loom)]
pub(crate) use loom::sync::{
    atomic::{AtomicBool, AtomicU64},
    Condvar, Mutex, MutexGuard,
};

/// Waits on `changed` while `condition` holds, for at most `timeout`.
#[cfg(not(loom))]
pub(crate) fn wait_while<T>(
    changed: &Condvar,
    guard: MutexGuard<'_, T>,
    timeout: std::time::Duration,
    condition: impl FnMut(&mut T) -> bool,
) {
    let _ = changed.wait_timeout_while(guard, timeout, condition);
}

/// loom's condition variable never times out: a model makes sure that a publication comes.
#[cfg(loom)]
pub(crate) fn wait_while<T>(
    changed: &Condvar,
    mut guard: MutexGuard<'_, T>,
    timeout: std::time::Duration,
    mut condition: impl FnMut(&mut T) -> bool,
) {
    while condition(&mut guard) {
        guard = match changed.wait_timeout(guard, timeout) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
    }
}

/// `fork::lock` for loom's mutex: the guard, inside a fork section.
#[cfg(loom)]
pub(crate) struct Locked<'a, T> {
    // Dropped first: the lock is free before forks may go on.
    guard: MutexGuard<'a, T>,
    _section: crate::fork::Section,
}

#[cfg(loom)]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> Locked<'_, T> {
    let section = crate::fork::enter();
    Locked {
        guard: mutex.lock().unwrap_or_else(|e| e.into_inner()),
        _section: section,
    }
}

#[cfg(loom)]
impl<T> std::ops::Deref for Locked<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

#[cfg(loom)]
impl<T> std::ops::DerefMut for Locked<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}
