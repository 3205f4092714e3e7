//! Node identity kept by leases: the high-water marks they store, and a node ID fixed for
//! the life of a generator. The types a generator shares with its lease (`NodeId`,
//! `NodeSource`, `Grant`, `NodeLease`, `Fence`) live beside the generator
//! (`generator/fence.rs`) and are re-exported here, at their old path.

use crate::error::{Error, ErrorCode, Result};
pub use crate::generator::fence::{Asked, Fence, Grant, NodeId, NodeLease, NodeSource};

/// How far ahead of use a lease writes its high-water mark: one write per this much time under
/// sustained generation, and the longest a successor of a crashed holder may have to wait on
/// one host. It stays below the default backwards tolerance (1 s), so that a generator that
/// takes back its own ZooKeeper index right after losing it waits instead of failing.
pub const LOOKAHEAD_MS: i64 = 500;

/// The longest text a stored high-water mark may have: 20 digits and sign, padding, a newline.
pub const MAX_MARK_BYTES: usize = 64;

/// A stored high-water mark, read strictly: `Ok(None)` for no mark (empty, or only white
/// space), `Ok(Some(ms))` for a decimal Unix millisecond, and `Err(reason)` for anything else
/// (not UTF-8, not a number, too long). A lease must treat `Err` as "this node ID's floor is
/// unknown" and refuse the node ID, never as "no floor".
pub fn read_mark(data: &[u8]) -> std::result::Result<Option<i64>, String> {
    if data.len() > MAX_MARK_BYTES {
        return Err(format!(
            "{} bytes, more than a high-water mark ever has ({MAX_MARK_BYTES})",
            data.len()
        ));
    }
    let text = std::str::from_utf8(data).map_err(|_| "not text".to_string())?;
    let text = text.trim_matches(|c| c == ' ' || c == '\n');
    if text.is_empty() {
        return Ok(None);
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{}' is not a decimal Unix millisecond",
            text.escape_debug()
        ));
    }
    text.parse::<i64>()
        .map(Some)
        .map_err(|_| format!("'{text}' is out of range"))
}

/// Writes a high-water mark at the start of `file` and waits until it is on disk: a mark
/// must be durable before any ID under it is issued.
#[cfg(unix)]
pub fn write_mark(file: &std::fs::File, ms: i64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    // Fixed width, so a shorter number never leaves digits of a longer one behind.
    let text = format!("{ms:>20}\n");
    file.write_all_at(text.as_bytes(), 0)?;
    file.sync_data()
}

/// Why a claim skips an index whose stored mark `mark_ms` is past the keeper's
/// `limit_ms` (`keeper::MAX_MARK_AHEAD_MS` past the clock), for `worker_ids_exhausted`.
pub fn mark_ahead(mark_ms: i64, limit_ms: i64) -> String {
    let ahead_ms = mark_ms
        .saturating_sub(limit_ms)
        .saturating_add(crate::lease::keeper::MAX_MARK_AHEAD_MS);
    format!(
        "its high-water mark {mark_ms} ({}) is {ahead_ms} ms ahead of this host's clock (more \
         than the {} ms a holder writes it ahead; written under a clock far ahead, or this \
         clock was set back?): a generator under it could issue nothing until then",
        crate::timestamp::format_rfc3339_ms(mark_ms),
        crate::lease::keeper::MAX_MARK_AHEAD_MS
    )
}

/// A node ID fixed for the life of the generator: explicit or from the environment.
#[derive(Debug, Clone)]
pub struct FixedNode {
    node: NodeId,
    source: NodeSource,
}

impl FixedNode {
    pub fn new(node: NodeId, source: NodeSource) -> Self {
        FixedNode { node, source }
    }
}

impl NodeLease for FixedNode {
    fn source(&self) -> NodeSource {
        self.source
    }

    fn grant(&self, _want_ms: i64, _now_ms: i64) -> Result<Grant> {
        Ok(Grant {
            node: self.node,
            floor_ms: i64::MIN,
            until_ms: i64::MAX,
        })
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        let how = match self.source {
            NodeSource::Explicit => "passed to the constructor",
            NodeSource::Environment => "taken from FLAKERY_WORKER_ID / FLAKERY_DATACENTER_ID",
            _ => "taken from the host name",
        };
        Err(Error::new(
            ErrorCode::Forked,
            format!(
                "this generator was made before fork() with a fixed node ID (datacenter {}, \
                 worker {}, {how}); the child would repeat its parent's IDs. Make a new \
                 generator in the child with a node ID of its own, or leave the node ID \
                 unset so that flakery leases one",
                self.node.datacenter_id, self.node.worker_id
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::read_mark;

    #[test]
    fn marks_are_read_strictly() {
        assert_eq!(read_mark(b""), Ok(None));
        assert_eq!(read_mark(b"   \n"), Ok(None));
        assert_eq!(read_mark(b"1700000000000"), Ok(Some(1_700_000_000_000)));
        assert_eq!(
            read_mark(b"       1700000000000\n"),
            Ok(Some(1_700_000_000_000))
        );
        assert_eq!(read_mark(b"-5"), Ok(Some(-5)));
        for bad in [
            &b"garbage"[..],
            b"+5",
            b"1e3",
            b"12 34",
            b"\xff",
            b"-",
            b"99999999999999999999",
        ] {
            assert!(read_mark(bad).is_err(), "{bad:?} was read as a mark");
        }
        assert!(read_mark(&[b'1'; 65]).is_err());
    }
}
