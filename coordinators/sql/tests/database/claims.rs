//! Claims under concurrency: sixteen forked processes, a namespace of four node IDs, a forked
//! child leasing anew.

use super::*;

/// Forks 16 children that each lease anew from `parent` (a new holder and connection,
/// nothing inherited from the parent's connection thread) and claim at once, all together;
/// returns the indexes they got.
fn claims_of_sixteen_forked_children(parent: &SqlCoordinator, kind: Kind) -> Vec<u64> {
    let mut children = Vec::new();
    for _ in 0..16 {
        let mut fds = [0; 2];
        // SAFETY: a pipe, then fork; the child only claims, writes and leaves by _exit.
        unsafe { libc::pipe(fds.as_mut_ptr()) };
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let report = match parent
                .reopen()
                .and_then(|mut c| c.claim(1024, soon(20_000)))
            {
                Ok(claim) => format!("{}", claim.index),
                Err(err) => format!("error {}: {}", err.code(), err.message()),
            };
            unsafe {
                libc::write(fds[1], report.as_ptr().cast(), report.len());
                libc::_exit(0);
            }
        }
        unsafe { libc::close(fds[1]) };
        children.push((pid, fds[0]));
    }
    let mut indexes = Vec::new();
    for (pid, fd) in children {
        let mut buf = [0u8; 512];
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        unsafe {
            libc::close(fd);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        let report = String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned();
        indexes.push(
            report
                .parse()
                .unwrap_or_else(|_| panic!("{kind:?} child: {report}")),
        );
    }
    indexes
}

fn assert_lowest_distinct(kind: Kind, indexes: &[u64]) {
    let mut distinct = indexes.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        indexes.len(),
        "{kind:?}: duplicates among {indexes:?}"
    );
    let lowest: Vec<u64> = (0..indexes.len() as u64).collect();
    assert_eq!(distinct, lowest, "{kind:?}: not the lowest");
}

#[test]
fn sixteen_forked_processes_get_sixteen_distinct_node_ids() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        // New rows: the primary key decides between inserting holders.
        let namespace = format!("sixteen-{}", kind.arg());
        let mut parent = coordinator(&url, &namespace, 10_000);
        let held = parent.claim(1024, soon(5000)).unwrap();
        let mut indexes = claims_of_sixteen_forked_children(&parent, kind);
        indexes.push(held.index);
        assert_lowest_distinct(kind, &indexes);
        // Existing free rows: row locks (SKIP LOCKED) decide.
        let namespace = format!("sixteen-free-rows-{}", kind.arg());
        let mut holders: Vec<SqlCoordinator> = (0..24)
            .map(|_| coordinator(&url, &namespace, 10_000))
            .collect();
        let claims: Vec<_> = holders
            .iter_mut()
            .map(|h| h.claim(1024, soon(5000)).unwrap())
            .collect();
        for (holder, claim) in holders.iter_mut().zip(claims) {
            holder.release(claim, None, soon(5000));
        }
        let parent = coordinator(&url, &namespace, 10_000);
        assert_lowest_distinct(kind, &claims_of_sixteen_forked_children(&parent, kind));
    });
}

#[test]
fn a_two_bit_namespace_has_four_node_ids_and_the_fifth_holder_is_refused() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        let namespace = format!("two-bits-{}", kind.arg());
        let mut holders: Vec<SqlCoordinator> = Vec::new();
        let mut claims = Vec::new();
        for _ in 0..4 {
            let mut holder = coordinator(&url, &namespace, 10_000);
            claims.push(holder.claim(4, soon(5000)).unwrap().index);
            holders.push(holder);
        }
        assert_eq!(claims, vec![0, 1, 2, 3]);
        let mut fifth = coordinator(&url, &namespace, 10_000);
        let err = fifth.claim(4, soon(5000)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::WorkerIdsExhausted,
            "{kind:?}: {}",
            err.message()
        );
        assert!(
            err.message().contains("all 4 node IDs"),
            "{}",
            err.message()
        );
        // A holder that gives its index back makes room at once.
        let mut second = holders.remove(1);
        let claim = second.claim(4, soon(5000)).unwrap(); // its own row again
        assert_eq!(claim.index, 1);
        second.release(claim, Some(1_000), soon(5000));
        assert_eq!(fifth.claim(4, soon(5000)).unwrap().index, 1);
    });
}

#[test]
fn a_forked_child_leases_anew() {
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("fork-{}", kind.arg());
        let output = common::output(&mut rerun("db-forker", &server.url, &namespace, 10_000));
        let report = common::report(&output, "FORK");
        assert_eq!(common::field(&report, "parent"), "0", "{kind:?}: {report}");
        assert_eq!(
            common::child_words(&report),
            vec!["1"],
            "{kind:?}: {report}"
        );
    });
}

/// Issue 37: a claim takes the free row a start waits least for, as the database's clock
/// reads when it claims. Row 0 is left free with its mark a year ahead (ahead of that clock on
/// any machine: the claim's `server_ms` shows it), row 1 with its mark passed: a new holder
/// takes row 1, the next a row never used (the fresh-record wait is shorter than a year), and
/// row 0 goes only to a claim with no other row to take, with its mark as the floor: a mark
/// ahead is waited for, never skipped. A mark ahead by less than the fresh-record wait beats a
/// row never used, however late the claim comes (its wait only shrinks).
#[test]
fn a_claim_takes_the_free_row_whose_mark_has_passed_before_one_ahead() {
    use flakery::lease::keeper::FRESH_RECORD_WAIT_MS;
    const YEAR_MS: i64 = 365 * 24 * 3600 * 1000;
    each_kind(|kind| {
        let url = shared(kind).database_url();
        let namespace = format!("oldest-mark-{}", kind.arg());
        let mut first = coordinator(&url, &namespace, 10_000);
        let mut second = coordinator(&url, &namespace, 10_000);
        let (zero, one) = (
            first.claim(4, soon(5000)).unwrap(),
            second.claim(4, soon(5000)).unwrap(),
        );
        assert_eq!((zero.index, one.index), (0, 1), "{kind:?}");
        let now = SystemClock.now_ms();
        let (ahead, passed) = (now + YEAR_MS, now - 1000);
        first.release(zero, Some(ahead), soon(5000));
        second.release(one, Some(passed), soon(5000));

        let mut recycled = coordinator(&url, &namespace, 10_000);
        let claim = recycled.claim(4, soon(5000)).unwrap();
        assert!(claim.server_ms.unwrap() < ahead, "{kind:?}: {claim:?}");
        assert_eq!(
            (claim.index, claim.floor_ms),
            (1, Some(passed)),
            "{kind:?}: took the row whose mark is still ahead"
        );
        let mut next = coordinator(&url, &namespace, 10_000);
        let claim = next.claim(4, soon(5000)).unwrap();
        assert_eq!(
            (claim.index, claim.floor_ms),
            (2, None),
            "{kind:?}: a row never used, before a mark a year ahead"
        );
        let mut last = coordinator(&url, &namespace, 10_000);
        let claim = last.claim(3, soon(5000)).unwrap();
        assert_eq!(
            (claim.index, claim.floor_ms),
            (0, Some(ahead)),
            "{kind:?}: the only free row, with its mark as the floor"
        );

        let namespace = format!("near-mark-{}", kind.arg());
        let mut first = coordinator(&url, &namespace, 10_000);
        let mut holder = coordinator(&url, &namespace, 10_000);
        let zero = first.claim(4, soon(5000)).unwrap();
        assert_eq!(holder.claim(4, soon(5000)).unwrap().index, 1, "{kind:?}");
        let near = SystemClock.now_ms() + FRESH_RECORD_WAIT_MS - 500;
        first.release(zero, Some(near), soon(5000));
        let mut next = coordinator(&url, &namespace, 10_000);
        let claim = next.claim(4, soon(5000)).unwrap();
        assert_eq!(
            (claim.index, claim.floor_ms),
            (0, Some(near)),
            "{kind:?}: the row whose mark is ahead by less than the fresh-record wait"
        );
    });
}
