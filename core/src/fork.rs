//! Notices `fork()`: a counter that only a child process sees change. A generator remembers
//! the value it was made under, and its hot path compares it with one relaxed load, which is
//! far cheaper than `getpid()` (a system call, since glibc stopped caching it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

static GENERATION: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();

/// Registers the child handler with `pthread_atfork` once per process. Any `fork()` that goes
/// through the C library runs it: Python's `os.fork()`, `multiprocessing`, C's `fork()`.
pub fn install() {
    INSTALL.call_once(|| {
        #[cfg(unix)]
        // SAFETY: the handler is async-signal-safe (one atomic add) and lives forever.
        unsafe {
            libc::pthread_atfork(None, None, Some(child_after_fork));
        }
    });
}

#[cfg(unix)]
extern "C" fn child_after_fork() {
    note_fork_in_child();
}

/// Tells flakery that this process is a fork's child. The `pthread_atfork` handler calls it;
/// a binding whose runtime forks without the C library's `fork()` may call it too.
pub fn note_fork_in_child() {
    GENERATION.fetch_add(1, Ordering::SeqCst);
}

#[inline(always)]
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}
