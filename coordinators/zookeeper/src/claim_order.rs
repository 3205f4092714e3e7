//! Which free index a claim tries first (issue 37): the one a start under it waits least for
//! (`keeper::claim_wait_ms`: a mark passed, else the oldest, an index with no mark costing the
//! fresh-record wait), the lowest among equals. So a pre-fork server's new worker starts at
//! once on another free index instead of after the mark its predecessor left. The marks read
//! here only order the tries: the claim reads the mark of the index it takes again, strictly,
//! under its own ephemeral node, and that mark is the floor the keeper starts after.

use std::collections::HashSet;

use flakery::lease::keeper::claim_wait_ms;

/// Marks read per claim at most (one request each): the lowest free indexes that have a mark
/// node, until one whose mark has passed. Past them, indexes with a mark keep their order.
pub(crate) const MARK_PROBES: usize = 64;

/// The free indexes (`free`, lowest first) in the order a claim tries them. `marked` are the
/// indexes with a mark node; `probe` reads one's mark (`None`: unreadable or not answered, so
/// tried last, where the claim reports it).
pub(crate) fn claim_order(
    free: impl Iterator<Item = u64>,
    marked: &HashSet<u64>,
    now_ms: i64,
    mut probe: impl FnMut(u64) -> Option<Option<i64>>,
) -> Vec<u64> {
    let (mut probes, mut passed) = (0, false);
    let mut order: Vec<(i64, u64)> = free
        .map(|index| {
            if !marked.contains(&index) {
                return (claim_wait_ms(None, now_ms), index);
            }
            if passed || probes == MARK_PROBES {
                return (i64::MAX - 1, index); // not read: after every index known
            }
            probes += 1;
            match probe(index) {
                Some(mark) => {
                    let wait_ms = claim_wait_ms(mark, now_ms);
                    passed = wait_ms == 0;
                    (wait_ms, index)
                }
                None => (i64::MAX, index),
            }
        })
        .collect();
    order.sort_unstable();
    order.into_iter().map(|(_, index)| index).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakery::lease::keeper::FRESH_RECORD_WAIT_MS;

    const NOW: i64 = 1_000_000;

    fn order(marks: &[(u64, Option<Option<i64>>)], free: &[u64], read: &mut Vec<u64>) -> Vec<u64> {
        let marked = marks.iter().map(|m| m.0).collect();
        claim_order(free.iter().copied(), &marked, NOW, |index| {
            read.push(index);
            marks.iter().find(|m| m.0 == index).unwrap().1
        })
    }

    #[test]
    fn a_passed_mark_comes_before_one_ahead_and_before_no_mark() {
        let mut read = Vec::new();
        // 0: a predecessor's look-ahead; 1: no mark node (fresh); 2: passed; 3: passed.
        let marks = [
            (0, Some(Some(NOW + 500))),
            (2, Some(Some(NOW - 10))),
            (3, Some(Some(NOW - 99))),
        ];
        assert_eq!(order(&marks, &[0, 1, 2, 3], &mut read), [2, 0, 1, 3]);
        assert_eq!(read, [0, 2], "reads stop at the first passed mark");
    }

    #[test]
    fn with_no_mark_passed_the_oldest_ahead_then_the_fresh_wait() {
        let mut read = Vec::new();
        let ahead = FRESH_RECORD_WAIT_MS + 1;
        let marks = [
            (0, Some(Some(NOW + 900))),
            (1, Some(Some(NOW + 300))),
            (2, Some(Some(NOW + ahead))),
            (3, None), // unreadable: last
        ];
        assert_eq!(order(&marks, &[0, 1, 2, 3, 4], &mut read), [1, 0, 4, 2, 3]);
        assert_eq!(read, [0, 1, 2, 3]);
    }

    #[test]
    fn marks_are_read_at_most_mark_probes_times() {
        let mut read = Vec::new();
        let marks: Vec<_> = (0..200)
            .map(|i| (i, Some(Some(NOW + 1000 + i as i64))))
            .collect();
        let free: Vec<u64> = (0..200).collect();
        let got = order(&marks, &free, &mut read);
        assert_eq!(read.len(), MARK_PROBES);
        assert_eq!(
            got, free,
            "the ones read first, oldest first; then the rest in order"
        );
    }
}
