//! The coordinator trait: the few requests a lease of node IDs needs from a shared service
//! (ZooKeeper, a SQL database, memory for tests). The keeper (`lease::keeper`) owns the
//! timing, the state and the fencing; a backend only answers requests, each once, by a
//! deadline.
//!
//! # The contract a backend keeps
//!
//! A backend is one holder's connection to the coordinator. Its records, per namespace, are
//! one slot per node index `0..count`, each with a holder (or none), the time the holder's
//! claim expires *in the coordinator's own clock*, and a high-water mark (a Unix millisecond,
//! or none). In ZooKeeper a slot is the ephemeral `nodes/<index>` znode (holder: the session;
//! expiry: the session timeout after the server last heard from it) and the persistent
//! `hwm/<index>` znode (mark, with its version for compare-and-set). In SQL it is one row per
//! index: `holder`, `expires_at` computed from the database's `now()`, `mark`.
//!
//! 1. **Exclusive claims.** [`Coordinator::claim`] takes the lowest index that no live
//!    holder has, atomically: two holders never get the same index while the first one's
//!    claim has not expired (a unique znode, a row lock or `SKIP LOCKED` in one transaction).
//!    Before it answers, the claim is renewed: it expires no sooner than [`Coordinator::term_ms`] after the
//!    request was *sent*, measured by the coordinator's clock.
//! 2. **A term the keeper can rely on.** [`Coordinator::term_ms`] is the shortest time, from
//!    the sending of a request that the coordinator answered with success, before the index
//!    can pass to another holder. The keeper issues IDs for at most half of it after each
//!    confirmed request, so clocks that run at slightly different rates stay safe.
//! 3. **A strict mark.** A mark that cannot be read as a time (garbage, too long, data of
//!    another kind) is never read as "no mark": `claim` skips that index, and when no
//!    index is left it fails with `worker_ids_exhausted` naming the unreadable records. Use
//!    `node::read_mark` for stored text. A mark past the keeper's `mark_limit_ms`
//!    ([`Coordinator::claim_within`]) is skipped and named in the same way. A record with
//!    no mark (new, or deleted and made again) is reported as it is, `floor_ms: None`: the
//!    keeper decides what that costs (`keeper::FRESH_RECORD_WAIT_MS`); a backend never
//!    fills in a floor of its own.
//! 4. **Compare-and-set marks.** [`Coordinator::write_mark`] writes `new_ms` only if the
//!    index is still this holder's and the stored mark is `expected_ms` (or already `new_ms`:
//!    a retry of a write whose answer was lost). Anything else is [`Failure::Lost`]: another
//!    holder has the index, and the keeper stops issuing under it at once. A successful
//!    write also proves and extends the claim as a renewal does (5): the keeper counts it as
//!    one, and a busy generator's renewals are mark writes.
//! 5. **Renewal proves the claim.** [`Coordinator::renew`] succeeds only if the index is
//!    still held by this holder (the ephemeral node's owner is this session; the row's holder
//!    is this holder and it has not expired), and extends it as in 1.
//! 6. **Deadlines are arguments.** Every request takes `deadline_ms`, an instant of the clock
//!    the backend was made with (the keeper's clock), and answers by then: when it cannot, it
//!    answers [`Failure::Unanswered`] (the request may or may not have been applied).
//! 7. **Fork.** [`Coordinator::reopen`] makes a backend with the same settings and a new
//!    holder identity that shares nothing with this one: no connection, thread, lock or
//!    runtime state, so that a forked child can call it. Dropping a backend in a forked child
//!    must not touch the parent's connection (hold it in `ManuallyDrop` or check the pid).
//! 8. **Secrets stay out.** Messages name the coordinator with [`Coordinator::describe`],
//!    which never contains a password.
//!
//! Backends answer [`Failure::Lost`] only when the claim is certainly gone (another holder,
//! an expired session, a deleted row); any doubt is [`Failure::Unanswered`], and the keeper's
//! deadline does the rest.

use std::fmt;
use std::sync::Arc;

use crate::error::Error;
use crate::lease::node::NodeSource;

/// A node index held by this holder, as the coordinator confirmed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub index: u64,
    /// The stored mark when the index was claimed: the last time a previous holder could
    /// use. IDs under this claim use time strictly after it. `None`: no mark was ever stored.
    pub floor_ms: Option<i64>,
    /// The coordinator's clock (Unix ms) as the answer to the claim arrives (its clock when
    /// it answered, plus half the round trip), for the check that the local clock is not far
    /// behind the coordinator's (`None`: not known).
    pub server_ms: Option<i64>,
    /// What the backend needs to prove the claim later (a session ID and the mark's
    /// version, a holder token); opaque to the keeper.
    pub token: Token,
}

/// A backend's own proof of a claim.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Token {
    /// The holder (a ZooKeeper session ID, a database holder ID).
    pub holder: i64,
    /// The version of the stored mark this holder last wrote or read, for compare-and-set.
    pub version: i64,
}

/// Why a request on a held claim failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The claim is certainly gone: another holder has the index, the session expired, the
    /// row was taken. The message says which.
    Lost(String),
    /// No answer by the deadline, or the connection broke: the request may or may not have
    /// been applied.
    Unanswered(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Lost(why) | Failure::Unanswered(why) => f.write_str(why),
        }
    }
}

/// What a backend may call, from any thread, when it learns between requests that its
/// claim may be lost (a ZooKeeper client's disconnect event): the keeper then refuses at
/// once instead of at its deadline.
#[derive(Clone)]
pub struct Alarm(pub(crate) Arc<dyn Fn() + Send + Sync>);

impl Alarm {
    pub fn new(raise: impl Fn() + Send + Sync + 'static) -> Alarm {
        Alarm(Arc::new(raise))
    }

    pub fn raise(&self) {
        (self.0)()
    }
}

impl fmt::Debug for Alarm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Alarm")
    }
}

/// One holder's connection to a coordinator of node IDs. See the module's documentation for
/// the contract every implementation keeps.
pub trait Coordinator: Send + fmt::Debug + 'static {
    /// The node source a generator reports for leases of this backend.
    fn source(&self) -> NodeSource;

    /// Names the coordinator and namespace for messages, without secrets
    /// ("ZooKeeper namespace 'default' at zk1:2181").
    fn describe(&self) -> String;

    /// The shortest time from the sending of a successful request until the coordinator may
    /// give the index to another holder (see the module's documentation, 2).
    fn term_ms(&self) -> i64;

    /// Claims the lowest free index of `0..count` for this holder (1, 3) whose stored mark is
    /// not past `mark_limit_ms` (Unix ms; the keeper's bound, `keeper::MAX_MARK_AHEAD_MS`
    /// past its clock). Fails with `worker_ids_exhausted` when none is free, naming the free
    /// ones skipped for an unreadable mark or one past the limit, and with
    /// `coordinator_unavailable` naming the coordinator when it cannot be reached by
    /// `deadline_ms`.
    fn claim_within(
        &mut self,
        count: u64,
        mark_limit_ms: i64,
        deadline_ms: i64,
    ) -> Result<Claim, Error>;

    /// `claim_within` with no limit on the mark (for tests and tools that look at records).
    fn claim(&mut self, count: u64, deadline_ms: i64) -> Result<Claim, Error> {
        self.claim_within(count, i64::MAX, deadline_ms)
    }

    /// Proves the claim still this holder's and extends it (5).
    fn renew(&mut self, claim: &mut Claim, deadline_ms: i64) -> Result<(), Failure>;

    /// Writes the mark with compare-and-set (4); on success the claim's token is updated.
    fn write_mark(
        &mut self,
        claim: &mut Claim,
        expected_ms: Option<i64>,
        new_ms: i64,
        deadline_ms: i64,
    ) -> Result<(), Failure>;

    /// Gives the index back: the mark set to `mark_ms` when it is `Some` (the time really
    /// used, brought down from the look-ahead, never below the claim's floor), then the claim
    /// ended so the index is free at once. Best effort: a claim that is not given back
    /// expires by itself.
    fn release(&mut self, claim: Claim, mark_ms: Option<i64>, deadline_ms: i64);

    /// Forgets a claim that may still exist on the coordinator but that this holder gave up
    /// on (its connection broke): the next `claim` must not see the index as held by a
    /// live holder only because of it (ZooKeeper deletes the old session's ephemeral node).
    /// Default: nothing to do (a SQL row of this holder is simply claimed again).
    fn abandon(&mut self, claim: &Claim) {
        let _ = claim;
    }

    /// Called once with the keeper's alarm, for backends that learn of a broken connection
    /// between requests. Default: none.
    fn set_alarm(&mut self, alarm: Alarm) {
        let _ = alarm;
    }

    /// A backend with the same settings and a new holder identity, for a forked child (7).
    fn reopen(&self) -> Result<Box<dyn Coordinator>, Error>;
}
