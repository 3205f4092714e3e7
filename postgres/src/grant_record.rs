//! The lease worker's grant in shared memory: one record that the worker's main loop writes
//! (the only writer) and every backend reads without blocking, as a seqlock: the worker makes
//! the sequence odd, writes, makes it even again; a reader that saw it odd, or changed, reads
//! again. Nothing here calls PostgreSQL.
//!
//! Backends write only the want (`want`): the furthest tick a generator asked for, and a
//! count of the asks, which the worker hands to the keeper.

use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering::SeqCst};

use flakery::{Error, ErrorCode, Grant, NodeId};

/// The longest refusal message kept (bytes of UTF-8; a longer one is cut at a character).
pub const MESSAGE_BYTES: usize = 480;
const MESSAGE_WORDS: usize = MESSAGE_BYTES / 8;

#[repr(C)]
pub struct GrantRecord {
    seq: AtomicU64,
    /// Counts node IDs the worker published (0: none yet in this run of the server).
    generation: AtomicU64,
    /// `datacenter_id << 32 | worker_id`.
    node: AtomicU64,
    after_ms: AtomicI64,
    /// `i64::MIN`: nothing may be issued now.
    until_ms: AtomicI64,
    /// The furthest `until_ms` ever published in this run of the server: a new node ID
    /// starts after it, so that the IDs of the cluster keep increasing.
    covered_ms: AtomicI64,
    /// Counts refusals; the latest one's code (an index of `ErrorCode::ALL`) and message.
    refusals: AtomicU64,
    code: AtomicU32,
    message_len: AtomicU32,
    message: [AtomicU64; MESSAGE_WORDS],
    /// How long the worker said the keeper answers a want within (ms; 0: not said yet).
    within_ms: AtomicI64,
    /// Written by backends.
    want_ms: AtomicI64,
    wants: AtomicU64,
    /// The worker's latch (`*mut pg_sys::Latch`, in shared memory), 0 while none runs.
    latch: AtomicUsize,
}

// SAFETY: atomics only, no pointer into a process's own memory (the latch is in shared memory).
unsafe impl pgrx::PGRXSharedMemory for GrantRecord {}

impl Default for GrantRecord {
    fn default() -> Self {
        GrantRecord {
            seq: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            node: AtomicU64::new(0),
            after_ms: AtomicI64::new(i64::MIN),
            until_ms: AtomicI64::new(i64::MIN),
            covered_ms: AtomicI64::new(i64::MIN),
            refusals: AtomicU64::new(0),
            code: AtomicU32::new(0),
            message_len: AtomicU32::new(0),
            message: std::array::from_fn(|_| AtomicU64::new(0)),
            within_ms: AtomicI64::new(0),
            want_ms: AtomicI64::new(i64::MIN),
            wants: AtomicU64::new(0),
            latch: AtomicUsize::new(0),
        }
    }
}

/// What a backend reads of the record, in one piece.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub generation: u64,
    pub grant: Option<Grant>,
    pub refusals: u64,
    pub refusal: Option<Error>,
    pub within_ms: i64,
}

impl GrantRecord {
    /// The record as the worker last left it (never half of one write and half of another).
    pub fn read(&self) -> Snapshot {
        loop {
            let before = self.seq.load(SeqCst);
            if before & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let node = self.node.load(SeqCst);
            let until_ms = self.until_ms.load(SeqCst);
            let snapshot = Snapshot {
                generation: self.generation.load(SeqCst),
                grant: (until_ms != i64::MIN).then(|| Grant {
                    node: NodeId {
                        datacenter_id: node >> 32,
                        worker_id: node & 0xffff_ffff,
                    },
                    floor_ms: self.after_ms.load(SeqCst),
                    until_ms,
                }),
                refusals: self.refusals.load(SeqCst),
                refusal: None,
                within_ms: self.within_ms.load(SeqCst),
            };
            let code = self.code.load(SeqCst);
            let len = (self.message_len.load(SeqCst) as usize).min(MESSAGE_BYTES);
            let mut bytes = [0u8; MESSAGE_BYTES];
            for (word, chunk) in self.message.iter().zip(bytes.chunks_mut(8)) {
                chunk.copy_from_slice(&word.load(SeqCst).to_le_bytes());
            }
            if self.seq.load(SeqCst) != before {
                continue;
            }
            let refusal = (snapshot.refusals > 0).then(|| {
                Error::new(
                    crate::settings::code_of(code),
                    String::from_utf8_lossy(&bytes[..len]).into_owned(),
                )
            });
            return Snapshot {
                refusal,
                ..snapshot
            };
        }
    }

    /// Worker only: one change, seen whole by readers.
    fn write(&self, change: impl FnOnce(&Self)) {
        self.seq.fetch_add(1, SeqCst);
        change(self);
        self.seq.fetch_add(1, SeqCst);
    }

    /// Worker only: `grant` may be issued now, under generation `generation`.
    pub fn publish(&self, generation: u64, grant: Grant) {
        self.write(|r| {
            r.generation.store(generation, SeqCst);
            r.node.store(
                (grant.node.datacenter_id << 32) | (grant.node.worker_id & 0xffff_ffff),
                SeqCst,
            );
            r.after_ms.store(grant.floor_ms, SeqCst);
            r.until_ms.store(grant.until_ms, SeqCst);
            r.covered_ms.fetch_max(grant.until_ms, SeqCst);
        });
    }

    /// The furthest tick any grant of this run of the server covered, and the generation.
    pub fn covered(&self) -> (i64, u64) {
        (self.covered_ms.load(SeqCst), self.generation.load(SeqCst))
    }

    /// Worker only: nothing may be issued now (the lease may be lost).
    pub fn withdraw(&self) {
        self.write(|r| r.until_ms.store(i64::MIN, SeqCst));
    }

    /// Worker only: a want is refused with `error` (the grant is withdrawn too).
    pub fn refuse(&self, error: &Error) {
        let message = bounded(error.message());
        let mut bytes = [0u8; MESSAGE_BYTES];
        bytes[..message.len()].copy_from_slice(message.as_bytes());
        self.write(|r| {
            r.until_ms.store(i64::MIN, SeqCst);
            r.code
                .store(crate::settings::index_of(error.code()), SeqCst);
            r.message_len.store(message.len() as u32, SeqCst);
            for (word, chunk) in r.message.iter().zip(bytes.chunks(8)) {
                word.store(
                    u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])),
                    SeqCst,
                );
            }
            r.refusals.fetch_add(1, SeqCst);
        });
    }

    /// Worker only: how long the keeper answers a want within.
    pub fn set_within_ms(&self, ms: i64) {
        self.within_ms.store(ms, SeqCst);
    }

    /// Backends: a generator wants the tick starting at `want_ms`.
    pub fn want(&self, want_ms: i64) {
        self.want_ms.fetch_max(want_ms, SeqCst);
        self.wants.fetch_add(1, SeqCst);
    }

    /// Worker: the asks so far, and the furthest tick wanted.
    pub fn wanted(&self) -> (u64, i64) {
        (self.wants.load(SeqCst), self.want_ms.load(SeqCst))
    }

    pub fn set_latch(&self, latch: usize) {
        self.latch.store(latch, SeqCst);
    }

    pub fn latch(&self) -> usize {
        self.latch.load(SeqCst)
    }
}

/// `message` cut to `MESSAGE_BYTES` at a character boundary.
fn bounded(message: &str) -> &str {
    if message.len() <= MESSAGE_BYTES {
        return message;
    }
    let mut end = MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

/// The refusal a backend raises when the worker answered nothing in time.
pub fn no_answer(describe: &str, want_ms: i64, waited_ms: i64) -> Error {
    Error::new(
        ErrorCode::CoordinatorUnavailable,
        format!(
            "the flakery lease worker published no grant of a node ID from {describe} for {} \
             within {waited_ms} ms (flakery.zookeeper / flakery.database_url in \
             postgresql.conf); see the server log for the worker's last error",
            flakery::timestamp::format_rfc3339_ms(want_ms)
        ),
    )
}
