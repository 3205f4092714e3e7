//! Every timing policy of a coordinator lease, in one place: the keeper steps by these, so
//! the deterministic simulation (`core/tests/keeper_sim`) and the proptest model
//! (`core/tests/keeper_properties.rs`) see each of them. The driver (`lease::kept`) only
//! waits as long as the keeper says (`Keeper::grant_wait_ms`, `Keeper::release_wait_ms`).

/// How far ahead of use the mark is written, plus the recent round trip, at most
/// `MAX_AHEAD_MS`. A coordinator hands a node ID to a successor only a term after its
/// holder's last request, by when the mark has passed, so the look-ahead costs a successor
/// nothing. The mark moves only while the claim is held and not suspect, at least half a term
/// before the claim can be lost, so a holder that takes back its own node ID after losing it
/// finds its mark at most `MAX_AHEAD_MS` less half a term (and the retry pause) ahead: within
/// the generator's default backwards tolerance (1 s) for any term, so it waits, never fails.
pub const AHEAD_MS: i64 = 1100;

/// The longest look-ahead.
pub const MAX_AHEAD_MS: i64 = 1500;

/// How far past the generator's clock a claim that finds **no mark** starts (a new row, a new
/// znode, a record deleted or recreated by hand): such a record cannot say what a previous
/// holder, still running unaware, may issue. That holder issues only up to a mark it had
/// confirmed, written at most the longest look-ahead past a tick it wanted, which is at most
/// the default borrowing (1 s) past its clock, and its clock may be the clock tolerance
/// (1 s, `MAX_CLOCK_BEHIND_MS`) ahead of ours. Its next write fails on the new record, so it
/// stops there. The generator waits this long before its first ID (`Refusal::Wait`).
pub const FRESH_RECORD_WAIT_MS: i64 =
    MAX_AHEAD_MS + crate::options::DEFAULT_MAX_BORROW_MS as i64 + MAX_CLOCK_TOLERANCE_MS;

/// The clock tolerance between two holders' clocks that the fresh-record wait covers (the
/// same as the generator's default backwards tolerance and the claim's clock check).
pub const MAX_CLOCK_TOLERANCE_MS: i64 = 1000;

/// How far the local wall clock may be behind the coordinator's when a claim is answered:
/// further behind, the claim is given back and refused with `clock_moved_backwards` (IDs
/// stamped with our clock could reuse time another host used). The tolerance the
/// fresh-record wait covers.
pub const MAX_CLOCK_BEHIND_MS: i64 = MAX_CLOCK_TOLERANCE_MS;

/// The furthest a stored mark may be past the generator's clock and still be used: as far as
/// a holder that started on a fresh record can have written it (the fresh-record wait, a
/// look-ahead, borrowing). A mark further ahead was written by a clock far ahead (a run
/// under faketime, a clock set back since): a generator under it could issue nothing until
/// then, so a claim skips that index and takes the next (as the host lease does), and
/// `worker_ids_exhausted` names it when none is left.
pub const MAX_MARK_AHEAD_MS: i64 =
    FRESH_RECORD_WAIT_MS + MAX_AHEAD_MS + crate::options::DEFAULT_MAX_BORROW_MS as i64;

/// A busy generator's mark is written again when it is this close to use, or the recent round
/// trip and a margin when that is longer: a round trip that grows suddenly from nothing to
/// half the look-ahead costs nothing, and a steady one up to about 750 ms neither.
pub const MIN_LEAD_MS: i64 = 800;

/// What the keeper thread's wake-up and a loaded machine may add to a round trip.
pub(super) const LEAD_MARGIN_MS: i64 = 100;

/// The pause before a failed request is tried again.
pub const RETRY_PAUSE_MS: i64 = 200;

/// How long a claim may take past the coordinator's term (connecting, a few round trips).
pub const CLAIM_SLACK_MS: i64 = 1500;

/// The longest a grant waits for the mark to move: a quarter term, at least this. (A slow
/// coordinator makes the generator wait, never issue past its mark.)
pub const GRANT_WAIT_MIN_MS: i64 = 1000;

/// The longest a release (and so a close) waits for the index to be given back; a claim not
/// given back by then expires by itself, and the written mark stays.
pub const RELEASE_WAIT_MS: i64 = 2000;

/// How long a generator waits for a mark the coordinator has not confirmed before the lease's
/// status says IDs cannot be issued (`Keeper::mark_awaited_ms`; the waiting call itself keeps
/// waiting up to the grant's wait). A mark write answers in a few ms on a healthy coordinator,
/// and is normally sent long before the generator needs it (`MIN_LEAD_MS`).
pub const MARK_STALL_MS: i64 = 250;

/// How long the generator keeps counting as busy after it asked for a grant: while busy, its
/// mark is kept ahead of it.
pub(super) const BUSY_FOR_MS: i64 = 2 * AHEAD_MS;

/// How long a start under a claimed record whose mark is `mark` would wait at `now_ms`: until
/// the mark has passed, or `FRESH_RECORD_WAIT_MS` for a record with none. A coordinator's claim
/// takes the free index where this is least (the lowest index among equals), so that a
/// recycled worker starts at once on another index instead of after its predecessor's mark
/// (issue 37); the keeper still starts past whatever mark the index taken has.
pub fn claim_wait_ms(mark: Option<i64>, now_ms: i64) -> i64 {
    match mark {
        Some(mark_ms) => mark_ms.saturating_sub(now_ms).max(0),
        None => FRESH_RECORD_WAIT_MS,
    }
}
