//! A ZooKeeper namespace counted without taking a lease (`flakery doctor`): one session,
//! reads only. A node index is held while its ephemeral znode `nodes/<index>` exists; a free
//! one whose mark `hwm/<index>` cannot be read, or is further ahead than a claim accepts, is
//! one a claim skips, so it counts as held and is named unreadable. Ages and the rate come
//! from each ephemeral znode's `ctime`: the ZooKeeper server's clock when it was created,
//! that is when its node ID was claimed.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flakery::clock::{Clock, SystemClock};
use flakery::doctor::census::{Census, Holder};
use flakery::error::Result;
use flakery::lease::keeper::MAX_MARK_AHEAD_MS;
use flakery::lease::node::{mark_ahead, read_mark};
use flakery::{CoordinatorKind, CoordinatorPlan, Layout};

use crate::connect::{self, Backoff, KeeperTime, Time};
use crate::proto::ZkError;
use crate::settings::Settings;
use crate::transport::Client;

/// The most znodes read one by one (holders' ages, free indexes' marks): beyond, the census
/// counts names only and says so.
const MAX_READS: usize = 4096;

const HOUR_MS: i64 = 3_600_000;

/// `plan`'s settings, read as a start reads them, or the refusal a start gets: marked as
/// the connect string's fault (the same parse, its CA and key files read), so that the
/// doctor says it is refused.
fn settings(plan: &CoordinatorPlan, layout: &Layout) -> Result<Settings> {
    let CoordinatorKind::ZooKeeper { connect } = &plan.kind else {
        return Err(flakery::lease::connector::not_installed(&plan.kind));
    };
    Settings::parse(connect, &plan.namespace, plan.session_timeout_ms, layout)
        .map_err(|e| e.about("zookeeper"))
}

/// The refusal a generator's start gets for `plan`, before connecting (`Connector::check`).
pub fn check(plan: &CoordinatorPlan, layout: &Layout) -> Result<()> {
    settings(plan, layout).map(|_| ())
}

/// The census of `plan`'s namespace within `timeout`.
pub fn census(plan: &CoordinatorPlan, layout: &Layout, timeout: Duration) -> Result<Census> {
    let settings = settings(plan, layout)?;
    let time = KeeperTime(Arc::new(SystemClock));
    let deadline_ms = time
        .now_ms()
        .saturating_add(i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX));
    let zk = connect::connect(
        &settings,
        deadline_ms,
        &time,
        &mut Backoff::default(),
        Arc::new(|| {}),
    )?;
    let by = Instant::now() + timeout;
    let counted = count(&zk, &settings, by, SystemClock.now_ms());
    let _ = zk.close(by);
    counted
}

/// The names of `dir`'s children that are node indexes below `count` (none when the
/// namespace was never used), and the others, for the report.
fn indexes(zk: &Client, settings: &Settings, by: Instant, dir: &str) -> Result<Vec<String>> {
    match zk.get_children(by, dir) {
        Ok(names) => Ok(names),
        Err(ZkError::NoNode) => Ok(Vec::new()),
        Err(err) => Err(settings.failed(&format!("list {dir}"), err)),
    }
}

/// What a holder's znode says of it, shown: printable, at most 64 characters.
fn shown(data: &[u8]) -> String {
    let text = String::from_utf8_lossy(&data[..data.len().min(256)]);
    let text: String = text.escape_debug().collect();
    text.chars().take(64).collect()
}

fn count(zk: &Client, settings: &Settings, by: Instant, now_ms: i64) -> Result<Census> {
    let range = settings.layout.capacity().node_ids;
    let mut census = Census {
        range,
        held: 0,
        unreadable: Vec::new(),
        unreadable_count: 0,
        oldest: Ok(None),
        taken_last_hour: Ok(0),
        basis: String::new(),
    };
    let mut held = HashSet::new();
    let mut strays = 0u64;
    for name in indexes(zk, settings, by, &settings.nodes_dir())? {
        match name.parse::<u64>() {
            Ok(index) if index < range => {
                held.insert(index);
            }
            // A claim never makes these nor counts them: they hold no node ID.
            _ => strays += 1,
        }
    }
    census.held = held.len() as u64;
    let (mut read, mut ahead, mut taken) = (0usize, 0u64, 0u64);
    let mut oldest: Option<Holder> = None;
    let mut sorted: Vec<u64> = held.iter().copied().collect();
    sorted.sort_unstable();
    for &index in sorted.iter().take(MAX_READS) {
        let path = settings.node_path(index);
        let (data, stat) = match zk.get_data(by, &path) {
            Ok(found) => found,
            // Given back since it was listed: free now, but the count stays as listed.
            Err(ZkError::NoNode) => continue,
            Err(err) => return Err(settings.failed(&format!("read {path}"), err)),
        };
        read += 1;
        let held_ms = now_ms.saturating_sub(stat.ctime);
        if held_ms < 0 {
            // The server's clock is ahead of this host's: no age to trust.
            ahead += 1;
            continue;
        }
        if held_ms <= HOUR_MS {
            taken += 1;
        }
        if oldest.as_ref().is_none_or(|o| held_ms > o.held_ms) {
            oldest = Some(Holder {
                node_index: index,
                held_ms,
                name: shown(&data),
            });
        }
    }
    census.oldest = Ok(oldest);
    census.taken_last_hour = Ok(taken);
    // A free index whose mark a claim would refuse is not free.
    let limit_ms = now_ms.saturating_add(MAX_MARK_AHEAD_MS);
    let marked: Vec<u64> = indexes(zk, settings, by, &settings.hwm_dir())?
        .iter()
        .filter_map(|name| name.parse::<u64>().ok())
        .filter(|index| *index < range && !held.contains(index))
        .collect();
    let mut unchecked = 0usize;
    for (n, index) in marked.into_iter().enumerate() {
        if n >= MAX_READS {
            unchecked += 1;
            continue;
        }
        let path = settings.hwm_path(index);
        let data = match zk.get_data(by, &path) {
            Ok((data, _)) => data,
            Err(ZkError::NoNode) => continue,
            Err(err) => return Err(settings.failed(&format!("read {path}"), err)),
        };
        let why = match read_mark(&data) {
            Ok(Some(mark)) if mark > limit_ms => mark_ahead(mark, limit_ms),
            Ok(_) => continue,
            Err(why) => why,
        };
        census.held += 1;
        census.note_unreadable(format!("{path}: {why}"));
    }
    let mut basis = "ages and the rate from each holder's ephemeral znode's ctime (the \
                     ZooKeeper server's clock when the node ID was claimed) against this host's \
                     clock; the rate counts the last hour's claims still held (ZooKeeper keeps \
                     nothing of a znode deleted, so a node ID taken and given back within the \
                     hour is not seen)"
        .to_string();
    if read < sorted.len() {
        basis.push_str(&format!(
            "; {} holders not read (at most {MAX_READS} are)",
            sorted.len() - read
        ));
    }
    if ahead > 0 {
        basis.push_str(&format!(
            "; {ahead} holders' ctime is ahead of this host's clock (check both clocks): left \
             out of the ages and the rate"
        ));
    }
    if strays > 0 {
        basis.push_str(&format!(
            "; {strays} znodes under {} are not node indexes of this layout (no node ID is held \
             by them)",
            settings.nodes_dir()
        ));
    }
    if unchecked > 0 {
        basis.push_str(&format!(
            "; the marks of {unchecked} free node IDs not read (at most {MAX_READS} are)"
        ));
    }
    census.basis = basis;
    Ok(census)
}
