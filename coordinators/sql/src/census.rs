//! A namespace of the lease table counted without taking a lease (`flakery doctor`): one
//! connection, reads only (a missing table is an empty namespace, never created here). A
//! node index is held while its row has a holder whose `expires_ms` is ahead of the
//! database's clock; a free row whose mark a claim would refuse (unreadable, or further ahead
//! than a claim accepts) is one a claim skips, so it counts as held and is named unreadable,
//! and so is a held row whose expiry is further ahead than any term (edited by hand).
//!
//! The table keeps no claim time: a holder's row is rewritten in place by every renewal, so
//! how long it has been held and how fast node IDs are taken cannot be read; the census says
//! so rather than guess from the expiry.

use std::time::Duration;

use flakery::doctor::census::Census;
use flakery::error::{Error, ErrorCode, Result};
use flakery::lease::keeper::MAX_MARK_AHEAD_MS;
use flakery::lease::node::{mark_ahead, read_mark};
use flakery::{CoordinatorKind, CoordinatorPlan, DatabaseMode, Layout};

use super::coordinator::{datacenter_range, open_link};
use super::dialect::LeaseRow;
use super::link::Unanswered;

/// The most rows read: a namespace with more is not counted (the report says why).
const MAX_ROWS: i64 = 65_536;

/// The longest term a lease may have (`SqlCoordinator::new` refuses longer): an expiry
/// further ahead was not written by flakery.
const MAX_TERM_MS: i64 = 3_600_000;

const NO_CLAIM_TIME: &str = "the lease table keeps no claim time (a holder's row is rewritten \
                             in place by each renewal: holder, expires_ms, mark)";

/// The census of `plan`'s namespace within `timeout`.
pub fn census(plan: &CoordinatorPlan, layout: &Layout, timeout: Duration) -> Result<Census> {
    let CoordinatorKind::Database {
        url,
        mode,
        datacenter_id,
    } = &plan.kind
    else {
        return Err(flakery::lease::connector::not_installed(&plan.kind));
    };
    if *mode == DatabaseMode::Baidu {
        return Err(Error::invalid_argument(
            "uid-generator's WORKER_NODE table gives each start a new worker ID and never takes \
             one back: there are no free node IDs to count",
        ));
    }
    super::tls::split(url.kind(), url.expose_secret())?;
    let count = i64::try_from(layout.capacity().node_ids).unwrap_or(i64::MAX);
    let (from, to) = match datacenter_id {
        Some(id) => {
            let (from, to) = datacenter_range(*id, layout);
            (from, to.min(count))
        }
        None => (0, count),
    };
    let what = format!("{} at {}", url.kind().name(), url.host());
    let unanswered = |why: Unanswered| {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            match why {
                Unanswered::Timeout => {
                    format!("{what} did not answer within {} ms", timeout.as_millis())
                }
                Unanswered::Failed(why) => format!("{what}: {}", url.scrub(&why)),
            },
        )
    };
    let link = open_link(url, timeout).map_err(unanswered)?;
    let namespace = plan.namespace.clone();
    let read = link
        .call(timeout, move |db| {
            if !db.lease_table_exists()? {
                return Ok(None);
            }
            let now_ms = db.now_ms()?;
            let rows = db.census_rows(&namespace, from, to, MAX_ROWS + 1)?;
            Ok(Some((now_ms, rows)))
        })
        .map_err(unanswered)?;
    let range = u64::try_from(to.saturating_sub(from)).unwrap_or(0);
    let Some((now_ms, rows)) = read else {
        return Ok(counted(range, 0, &[]));
    };
    if rows.len() as i64 > MAX_ROWS {
        return Err(Error::invalid_argument(format!(
            "namespace '{}' of {what} has more than {MAX_ROWS} rows: not counted",
            plan.namespace
        )));
    }
    Ok(counted(range, now_ms, &rows))
}

/// The census of `rows` at the database's `now_ms`.
fn counted(range: u64, now_ms: i64, rows: &[LeaseRow]) -> Census {
    let mut census = Census {
        range,
        held: 0,
        unreadable: Vec::new(),
        unreadable_count: 0,
        oldest: Err(NO_CLAIM_TIME.into()),
        taken_last_hour: Err(NO_CLAIM_TIME.into()),
        basis: "held: rows with a holder whose expires_ms is ahead of the database's clock".into(),
    };
    let mark_limit_ms = now_ms.saturating_add(MAX_MARK_AHEAD_MS);
    for row in rows {
        let held = row.holder.is_some() && row.expires_ms > now_ms;
        let why = if held {
            let ahead_ms = row.expires_ms.saturating_sub(now_ms);
            (ahead_ms > MAX_TERM_MS).then(|| {
                format!(
                    "its expiry is {} s ahead, longer than any lease term (an hour at most)",
                    ahead_ms / 1000
                )
            })
        } else {
            match read_mark(&row.mark) {
                Ok(Some(mark)) if mark > mark_limit_ms => Some(mark_ahead(mark, mark_limit_ms)),
                Ok(_) => None,
                Err(why) => Some(why),
            }
        };
        if held || why.is_some() {
            census.held += 1;
        }
        if let Some(why) = why {
            census.note_unreadable(format!("node index {}: {why}", row.index));
        }
    }
    census
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(index: i64, holder: Option<i64>, expires_ms: i64, mark: &str) -> LeaseRow {
        LeaseRow {
            index,
            holder,
            holder_name: "h:1".into(),
            expires_ms,
            mark: mark.as_bytes().to_vec(),
        }
    }

    /// Held, expired, garbled, far ahead: counted as a claim would see them.
    #[test]
    fn rows_are_counted_as_a_claim_sees_them() {
        let now = 1_800_000_000_000;
        let rows = [
            row(0, Some(1), now + 5_000, "1"),
            row(1, Some(2), now - 1, "1"),
            row(2, None, 0, "garbled"),
            row(3, None, 0, &(now + 86_400_000).to_string()),
            row(4, Some(3), now + 86_400_000, "1"),
            row(5, None, 0, ""),
        ];
        let c = counted(8, now, &rows);
        assert_eq!((c.held, c.free(), c.unreadable_count), (4, 4, 3), "{c:?}");
        assert!(c.unreadable[0].starts_with("node index 2:"), "{c:?}");
        assert!(
            c.unreadable[2].contains("longer than any lease term"),
            "{c:?}"
        );
        assert!(c.oldest.is_err() && c.taken_last_hour.is_err());
    }
}
