//! The engine of this process. A `fork()`'s child finds the parent's engine (its stock, its
//! connections, its locks, whose holders may be threads the child does not have) and makes one
//! of its own instead, so it never hands out an ID of the parent's blocks. The parent's engine
//! is left as it is in the child, never used or freed: it costs the child its memory, once.

use std::sync::atomic::{AtomicPtr, Ordering::Acquire, Ordering::Release};
use std::sync::{Arc, Mutex};

use flakery::fork;

use crate::engine::Engine;

pub struct Current {
    /// From `Box::into_raw`; an engine replaced is never freed, so a reference to one stays
    /// valid as long as `self`.
    engine: AtomicPtr<Arc<Engine>>,
    /// Serialises replacing it; taken inside a fork section, so no fork happens while held.
    replacing: Mutex<()>,
}

impl Current {
    pub fn new(engine: Arc<Engine>) -> Self {
        fork::install();
        Current {
            engine: AtomicPtr::new(Box::into_raw(Box::new(engine))),
            replacing: Mutex::new(()),
        }
    }

    /// This process's engine, made by `make` (given the fork generation) if this process has
    /// none yet.
    #[inline]
    pub fn get(&self, make: impl FnOnce(u64) -> Arc<Engine>) -> &Arc<Engine> {
        let engine = self.load();
        if engine.generation == fork::generation() {
            return engine;
        }
        self.replace(make)
    }

    #[inline]
    fn load(&self) -> &Arc<Engine> {
        // SAFETY: the pointer is from `Box::into_raw` and is freed only by `drop`, which has
        // `&mut self`; a replaced one is never freed.
        unsafe { &*self.engine.load(Acquire) }
    }

    #[cold]
    fn replace(&self, make: impl FnOnce(u64) -> Arc<Engine>) -> &Arc<Engine> {
        let _replacing = fork::lock(&self.replacing);
        let engine = self.load();
        let generation = fork::generation();
        if engine.generation == generation {
            return engine;
        }
        // The parent's engine is leaked: references from `load` may still point at it.
        let fresh = Box::into_raw(Box::new(make(generation)));
        self.engine.store(fresh, Release);
        self.load()
    }

    /// This process's engine, if it has made one.
    pub fn own(&self) -> Option<&Arc<Engine>> {
        let engine = self.load();
        (engine.generation == fork::generation()).then_some(engine)
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let raw = *self.engine.get_mut();
        // SAFETY: from `Box::into_raw`; `&mut self`: no reference from `get` is alive.
        let engine = unsafe { Box::from_raw(raw) };
        if engine.generation == fork::generation() {
            // The refiller holds its own `Arc` and ends by itself: nothing here waits.
            drop(engine.stop());
            drop(engine);
        } else {
            // The parent's: its refiller is not in this process; leave it untouched.
            std::mem::forget(engine);
        }
    }
}
