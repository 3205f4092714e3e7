//! A namespace of the lease table counted without taking a lease (`flakery doctor`): one
//! connection, reads only (a missing table is an empty namespace, never created here). A
//! node index is held while its row has a holder whose `expires_ms` is ahead of the
//! database's clock; a free row whose mark a claim would refuse (unreadable, or further ahead
//! than a claim accepts) is one a claim skips, so it counts as held and is named unreadable,
//! and so is a held row whose expiry is further ahead than any term (edited by hand).
//!
//! Ages and the rate come from each row's `claimed_ms`: the database's clock when the row
//! was last claimed (a release keeps it, so the last hour's claims given back since are
//! counted too). A table made before that column was added has no claim times (it is never
//! altered: the role may not own it): the census says so, and how to add it, rather than
//! guess from the expiry, which every renewal rewrites.

use std::time::Duration;

use flakery::doctor::census::{Census, Holder};
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

const NO_CLAIM_TIME: &str = "the lease table has no claimed_ms column (made by a flakery that \
                             kept no claim times; the expiry is rewritten by each renewal): \
                             ALTER TABLE flakery_node_leases ADD COLUMN claimed_ms BIGINT NOT \
                             NULL DEFAULT 0 adds it, and the claims of connections opened \
                             after are timed";

const HOUR_MS: i64 = 3_600_000;

/// A claim time further ahead of the database's clock than this was not written by it.
const CLOCK_SLACK_MS: i64 = 60_000;

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
    // Marked as the URL's fault: a generator is refused for it too, and the doctor says so.
    super::tls::split(url.kind(), url.expose_secret()).map_err(|e| e.about("database_url"))?;
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
            let claimed = db.has_claim_time()?;
            let rows = db.census_rows(&namespace, from, to, MAX_ROWS + 1, claimed)?;
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
    let timed = rows.iter().any(|row| row.claimed_ms.is_some()) || rows.is_empty();
    let (mut oldest, mut taken, mut untimed) = (None::<Holder>, 0u64, 0u64);
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
        // A claim time ahead of the database's clock was not written by a claim.
        let why = why.or_else(|| match row.claimed_ms {
            Some(ms) if ms > now_ms.saturating_add(CLOCK_SLACK_MS) => Some(format!(
                "its claim time is {} s ahead of the database's clock",
                (ms - now_ms) / 1000
            )),
            _ => None,
        });
        if held || why.is_some() {
            census.held += 1;
        }
        if let Some(why) = &why {
            census.note_unreadable(format!("node index {}: {why}", row.index));
        }
        let Some(claimed_ms) = row.claimed_ms.filter(|_| why.is_none()) else {
            continue;
        };
        if claimed_ms <= 0 {
            untimed += u64::from(held);
            continue;
        }
        let age_ms = now_ms.saturating_sub(claimed_ms).max(0);
        if age_ms <= HOUR_MS {
            taken += 1;
        }
        if held && oldest.as_ref().is_none_or(|o| age_ms > o.held_ms) {
            oldest = Some(Holder {
                node_index: u64::try_from(row.index).unwrap_or(0),
                held_ms: age_ms,
                name: row.holder_name.escape_debug().collect(),
            });
        }
    }
    if timed {
        census.oldest = Ok(oldest);
        census.taken_last_hour = Ok(taken);
        census.basis = "held: rows with a holder whose expires_ms is ahead of the database's \
                        clock; ages and the rate from each row's claimed_ms (the database's \
                        clock at its last claim: a node ID claimed twice in the hour counts \
                        once, one given back since counts)"
            .into();
        if untimed > 0 {
            census.basis.push_str(&format!(
                "; {untimed} holders claimed before the claimed_ms column was added: left out \
                 of the ages"
            ));
        }
    }
    census
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Censuses of a server that never answers keep a bounded number of threads.
    #[test]
    fn censuses_of_a_hung_database_keep_a_bounded_number_of_threads() {
        crate::link::tests::bounded_against_a_hung_server(|url| {
            let plan = CoordinatorPlan {
                kind: CoordinatorKind::Database {
                    url: url.clone(),
                    mode: DatabaseMode::Lease,
                    datacenter_id: None,
                },
                namespace: "hung".into(),
                session_timeout_ms: 10_000,
            };
            let err = census(&plan, &Layout::default(), Duration::from_millis(50));
            let err = err.expect_err("a database that never answers");
            assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
            err.message().to_string()
        });
    }

    fn row(index: i64, holder: Option<i64>, expires_ms: i64, mark: &str) -> LeaseRow {
        LeaseRow {
            index,
            holder,
            holder_name: "h:1".into(),
            expires_ms,
            mark: mark.as_bytes().to_vec(),
            claimed_ms: None,
        }
    }

    fn claimed(row: LeaseRow, claimed_ms: i64) -> LeaseRow {
        LeaseRow {
            claimed_ms: Some(claimed_ms),
            ..row
        }
    }

    /// The oldest live holder by its claim time; the last hour's claims, given back or not;
    /// a claim time ahead of the clock, or none (0), left out of both.
    #[test]
    fn ages_and_the_rate_come_from_the_claim_times() {
        let now = 1_800_000_000_000;
        let rows = [
            claimed(row(0, Some(1), now + 5_000, "1"), now - 7_200_000),
            claimed(row(1, Some(2), now + 5_000, "1"), now - 60_000),
            claimed(row(2, None, 0, "1"), now - 120_000),
            claimed(row(3, Some(3), now + 5_000, "1"), now + 86_400_000),
            claimed(row(4, Some(4), now + 5_000, "1"), 0),
            claimed(row(5, Some(5), now - 1, "1"), now - 10_000_000),
        ];
        let c = counted(8, now, &rows);
        let oldest = c.oldest.clone().unwrap().unwrap();
        assert_eq!((oldest.node_index, oldest.held_ms), (0, 7_200_000), "{c:?}");
        assert_eq!(c.taken_last_hour, Ok(2), "{c:?}");
        assert_eq!((c.held, c.unreadable_count), (4, 1), "{c:?}");
        assert!(
            c.unreadable[0].contains("claim time is 86400 s ahead"),
            "{c:?}"
        );
        assert!(c.basis.contains("1 holders claimed before"), "{c:?}");
        // A table without the column says why it cannot tell.
        let old = counted(8, now, &[row(0, Some(1), now + 5_000, "1")]);
        assert!(old.oldest.unwrap_err().contains("ALTER TABLE"));
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
