//! Claiming a node index is one READ COMMITTED transaction: it reads the database's clock,
//! lists the rows that look claimable (free, expired, or this holder's own) and the lowest
//! index that has no row yet, and takes the one a start would wait least for
//! (`keeper::claim_wait_ms`: a mark passed, else the oldest, a record with none costing the
//! fresh-record wait; the lowest index among equals): an existing row only after
//! locking it with `SELECT ... FOR UPDATE SKIP LOCKED` and seeing it still claimable (both
//! databases re-read a locked row's newest committed version), a missing one by inserting it
//! (the primary key lets one of two inserting holders win; the other tries again). So two
//! holders never hold one index while the first one's expiry has not passed.

use flakery::lease::keeper::claim_wait_ms;
use flakery::lease::node::{mark_ahead, read_mark};

use super::dialect::Dialect;

/// Claimable rows looked at per attempt.
const CANDIDATES: i64 = 256;

/// Attempts of one claim when other holders' claims collide with it.
const CLAIM_ATTEMPTS: u32 = 64;

/// What a claim came to: an index (with its stored mark, and the database's clock), or
/// none left (naming the free rows whose marks could not be read).
pub(super) enum Claimed {
    Index {
        index: i64,
        floor_ms: Option<i64>,
        now_ms: i64,
    },
    Exhausted {
        unreadable: Vec<String>,
    },
}

/// A mark as stored: decimal Unix ms, or empty for none.
pub(super) fn mark_text(mark: Option<i64>) -> String {
    mark.map(|ms| ms.to_string()).unwrap_or_default()
}

/// What a claim asks for: an index from `from` to below `to` of `namespace` for `holder`.
pub(super) struct ClaimRequest {
    pub namespace: String,
    pub from: i64,
    pub to: i64,
    pub holder: i64,
    pub holder_name: String,
    pub term_ms: i64,
    /// Marks past this (Unix ms) are skipped: the keeper's bound.
    pub mark_limit_ms: i64,
}

/// The mark of a claimable row, if it can be used: `Err` names why not (unreadable, or past
/// the keeper's limit).
fn usable_mark(mark: &[u8], index: i64, limit_ms: i64) -> Result<Option<i64>, String> {
    match read_mark(mark) {
        Ok(Some(ms)) if ms > limit_ms => Err(mark_ahead(ms, limit_ms)),
        Ok(mark) => Ok(mark),
        Err(why) => Err(why),
    }
    .map_err(|why| format!("node index {index}: {why}"))
}

/// One attempt of a claim, inside a transaction; `None` when another holder's claim
/// collided with it.
fn try_claim(db: &mut dyn Dialect, ask: &ClaimRequest) -> Result<Option<Claimed>, String> {
    let (namespace, to, holder, holder_name) = (
        ask.namespace.as_str(),
        ask.to,
        ask.holder,
        ask.holder_name.as_str(),
    );
    let term_ms = ask.term_ms;
    let now_ms = db.now_ms()?;
    let expires_ms = now_ms.saturating_add(term_ms);
    let candidates = db.candidates(namespace, ask.from, to, holder, now_ms, CANDIDATES)?;
    let missing = db.lowest_missing(namespace, ask.from)?;
    let mut unreadable = Vec::new();
    let insert_missing = |db: &mut dyn Dialect| -> Result<Option<Claimed>, String> {
        if !db.insert_held(namespace, missing, holder, holder_name, expires_ms)? {
            return Ok(None);
        }
        db.note_claimed(namespace, missing, now_ms)?;
        Ok(Some(Claimed::Index {
            index: missing,
            floor_ms: None,
            now_ms,
        }))
    };
    // Ordered by the wait a start under each would have (the mark as listed; the one taken
    // is the mark as locked, whatever it has become): `None` is the missing index.
    let mut order = Vec::with_capacity(candidates.len() + 1);
    for candidate in candidates {
        match usable_mark(&candidate.mark, candidate.index, ask.mark_limit_ms) {
            Ok(mark) => order.push((
                claim_wait_ms(mark, now_ms),
                candidate.index,
                Some(candidate),
            )),
            Err(why) => unreadable.push(why),
        }
    }
    if missing < to {
        order.push((claim_wait_ms(None, now_ms), missing, None));
    }
    order.sort_by_key(|&(wait_ms, index, _)| (wait_ms, index));
    for (_, _, candidate) in order {
        let Some(candidate) = candidate else {
            return insert_missing(db);
        };
        let Some(mark) = db.lock_claimable(namespace, candidate.index, holder, now_ms)? else {
            continue; // taken or being taken by another holder
        };
        match usable_mark(&mark, candidate.index, ask.mark_limit_ms) {
            Ok(floor_ms) => {
                db.take(
                    namespace,
                    candidate.index,
                    holder,
                    holder_name,
                    expires_ms,
                    &mark_text(floor_ms),
                )?;
                db.note_claimed(namespace, candidate.index, now_ms)?;
                return Ok(Some(Claimed::Index {
                    index: candidate.index,
                    floor_ms,
                    now_ms,
                }));
            }
            Err(why) => unreadable.push(why),
        }
    }
    Ok(Some(Claimed::Exhausted { unreadable }))
}

/// The claim, retried while other holders' claims collide with it.
pub(super) fn claim_in(db: &mut dyn Dialect, ask: &ClaimRequest) -> Result<Claimed, String> {
    for _ in 0..CLAIM_ATTEMPTS {
        db.begin()?;
        match try_claim(db, ask) {
            Ok(Some(claimed @ Claimed::Index { .. })) => {
                db.commit()?;
                return Ok(claimed);
            }
            Ok(Some(exhausted)) => {
                db.rollback()?;
                return Ok(exhausted);
            }
            Ok(None) => db.rollback()?,
            Err(why) => {
                let _ = db.rollback();
                return Err(why);
            }
        }
    }
    Err(format!(
        "{CLAIM_ATTEMPTS} attempts to claim collided with other holders' claims"
    ))
}
