//! Notices `fork()`, and keeps it from happening while a thread holds one of flakery's locks.
//!
//! A counter that only a child process sees change tells a generator it was forked: it
//! remembers the value it was made under, and its hot path compares it with one relaxed load,
//! which is far cheaper than `getpid()` (a system call, since glibc stopped caching it).
//!
//! A child has only the thread that forked; a lock another thread held at that moment stays
//! held in the child forever. So every place that takes one of flakery's locks (making the
//! default generator, a generator's identity, a lease's state) does it inside a `Section`,
//! and the `pthread_atfork` prepare handler waits until no thread is inside one and lets none
//! in until the fork is done. None of these is on the hot path.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

static GENERATION: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();
/// A fork is being prepared: no new section may start.
static FORKING: AtomicBool = AtomicBool::new(false);
/// Threads inside a section.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

#[cfg(not(loom))]
thread_local! {
    /// How deep this thread is in nested sections (only the outermost counts in ACTIVE).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

// A loom model's threads share one OS thread: each needs a depth of its own.
#[cfg(loom)]
loom::thread_local! {
    static DEPTH: Cell<usize> = Cell::new(0);
}

/// Registers the handlers with `pthread_atfork` once per process. Any `fork()` that goes
/// through the C library runs them: Python's `os.fork()`, `multiprocessing`, C's `fork()`.
pub fn install() {
    INSTALL.call_once(|| {
        #[cfg(unix)]
        // SAFETY: plain extern "C" functions with no captured state, living forever.
        unsafe {
            libc::pthread_atfork(
                Some(before_fork),
                Some(parent_after_fork),
                Some(child_after_fork),
            );
        }
    });
}

#[cfg(unix)]
extern "C" fn before_fork() {
    while FORKING
        .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        std::thread::yield_now(); // another thread is forking
    }
    // A fork from inside a section (this thread's own) cannot wait for itself.
    let mine = usize::from(DEPTH.with(Cell::get) > 0);
    let mut spins = 0u32;
    while ACTIVE.load(Ordering::SeqCst) > mine {
        spins += 1;
        if spins < 100 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}

#[cfg(unix)]
extern "C" fn parent_after_fork() {
    FORKING.store(false, Ordering::SeqCst);
}

#[cfg(unix)]
extern "C" fn child_after_fork() {
    note_fork_in_child();
    FORKING.store(false, Ordering::SeqCst);
}

/// Tells flakery that this process is a fork's child. The `pthread_atfork` handler calls it;
/// a binding whose runtime forks without the C library's `fork()` may call it too.
pub fn note_fork_in_child() {
    crate::clock::after_fork_in_child();
    GENERATION.fetch_add(1, Ordering::SeqCst);
    crate::generator::fence::shut_all_after_fork();
}

/// How many threads are inside a section now: what a `fork()` would wait for.
#[cfg(test)]
pub(crate) fn sections_active() -> usize {
    ACTIVE.load(Ordering::SeqCst)
}

#[inline(always)]
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// While one exists on a thread, no `fork()` happens; drop it to let forks go on.
pub struct Section {
    /// Tied to the thread whose count it holds.
    _thread: std::marker::PhantomData<*const ()>,
}

/// Starts a section, waiting for a fork being prepared to finish first.
pub fn enter() -> Section {
    install();
    DEPTH.with(|depth| {
        if depth.get() == 0 {
            loop {
                while FORKING.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                ACTIVE.fetch_add(1, Ordering::SeqCst);
                if !FORKING.load(Ordering::SeqCst) {
                    break;
                }
                ACTIVE.fetch_sub(1, Ordering::SeqCst);
            }
        }
        depth.set(depth.get() + 1);
    });
    Section {
        _thread: std::marker::PhantomData,
    }
}

impl Drop for Section {
    fn drop(&mut self) {
        DEPTH.with(|depth| {
            depth.set(depth.get() - 1);
            if depth.get() == 0 {
                ACTIVE.fetch_sub(1, Ordering::SeqCst);
            }
        });
    }
}

/// A mutex guard that keeps forks out while it is held.
pub struct Locked<'a, T> {
    // Dropped first (fields drop in order): the lock is free before forks may go on.
    guard: MutexGuard<'a, T>,
    _section: Section,
}

/// Locks `mutex` inside a section. A panic while it was held leaves nothing half-done in
/// flakery's locked state (every field is replaced whole), so poisoning is ignored.
pub fn lock<T>(mutex: &Mutex<T>) -> Locked<'_, T> {
    let section = enter();
    Locked {
        guard: mutex.lock().unwrap_or_else(|e| e.into_inner()),
        _section: section,
    }
}

impl<T> Deref for Locked<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for Locked<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}
