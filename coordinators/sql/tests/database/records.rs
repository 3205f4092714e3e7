//! The lease rows: an expired holder's successor, marks written with compare-and-set, a
//! garbled mark, a restart with the clock set back, a table of other column types.

use super::*;

#[test]
fn an_expired_holder_loses_its_row_to_a_successor_that_starts_after_its_mark() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        let namespace = format!("expiry-{}", kind.arg());
        let term = 1200;
        let mut first = coordinator(&url, &namespace, term);
        let mut claim = first.claim(4, soon(5000)).unwrap();
        let mark = SystemClock.now_ms() + 500;
        first
            .write_mark(&mut claim, None, mark, soon(5000))
            .unwrap();
        let mut second = coordinator(&url, &namespace, term);
        // The first holder stops renewing (a paused process) past its expiry. (That the row is
        // not another's before then is the next test's, on a term no pause of a loaded machine
        // reaches: here the 1.2 s term could pass before a second claim.)
        std::thread::sleep(Duration::from_millis(term as u64 + 200));
        let taken = second.claim(4, soon(5000)).unwrap();
        assert_eq!(taken.index, claim.index, "{kind:?}");
        assert_eq!(
            taken.floor_ms,
            Some(mark),
            "{kind:?}: the successor must start after it"
        );
        // The first holder, resuming, learns it lost the row; its writes change nothing.
        assert!(matches!(
            first.renew(&mut claim, soon(5000)),
            Err(Failure::Lost(_))
        ));
        assert!(matches!(
            first.write_mark(&mut claim, Some(mark), mark + 10_000, soon(5000)),
            Err(Failure::Lost(_))
        ));
        let stored = shared(kind).sql(&format!(
            "SELECT mark FROM flakery_node_leases WHERE namespace = '{namespace}' \
             AND node_index = {}",
            claim.index
        ));
        assert_eq!(stored.trim(), mark.to_string());
    });
}

#[test]
fn a_held_row_is_not_another_s_to_take_before_its_expiry() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        let namespace = format!("held-{}", kind.arg());
        // A term far longer than any pause between the two claims.
        let term = 600_000;
        let mut first = coordinator(&url, &namespace, term);
        let claim = first.claim(4, soon(5000)).unwrap();
        let mut second = coordinator(&url, &namespace, term);
        let other = second.claim(4, soon(5000)).unwrap();
        assert_ne!(other.index, claim.index, "{kind:?}");
        second.release(other, None, soon(5000));
        first.release(claim, None, soon(5000));
    });
}

#[test]
fn marks_are_written_with_compare_and_set_and_kept_for_the_next_holder() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        let namespace = format!("marks-{}", kind.arg());
        let mut holder = coordinator(&url, &namespace, 10_000);
        let mut claim = holder.claim(4, soon(5000)).unwrap();
        assert_eq!(claim.floor_ms, None);
        let t = SystemClock.now_ms();
        holder
            .write_mark(&mut claim, None, t + 500, soon(5000))
            .unwrap();
        // A retry of an applied write is fine; a write expecting a mark that is not there is not.
        holder
            .write_mark(&mut claim, None, t + 500, soon(5000))
            .unwrap();
        assert!(matches!(
            holder.write_mark(&mut claim, Some(t), t + 900, soon(5000)),
            Err(Failure::Lost(_))
        ));
        holder
            .write_mark(&mut claim, Some(t + 500), t + 1000, soon(5000))
            .unwrap();
        holder.renew(&mut claim, soon(5000)).unwrap();
        holder.release(claim, Some(t + 700), soon(5000));
        let mut next = coordinator(&url, &namespace, 10_000);
        let claim = next.claim(4, soon(5000)).unwrap();
        assert_eq!(
            (claim.index, claim.floor_ms),
            (0, Some(t + 700)),
            "{kind:?}"
        );
    });
}

#[test]
fn a_garbled_mark_fails_closed_for_that_node_id() {
    each_kind(|kind| {
        let server = shared(kind);
        let url = server.database_url();
        let namespace = format!("garbled-{}", kind.arg());
        coordinator(&url, &namespace, 10_000)
            .claim(1, soon(5000))
            .unwrap(); // creates the table
        server.sql(&format!(
            "UPDATE flakery_node_leases SET holder = NULL, expires_ms = 0, mark = '12x45' \
             WHERE namespace = '{namespace}' AND node_index = 0"
        ));
        let mut holder = coordinator(&url, &namespace, 10_000);
        assert_eq!(holder.claim(4, soon(5000)).unwrap().index, 1, "{kind:?}");
        let err = coordinator(&url, &namespace, 10_000)
            .claim(1, soon(5000))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted);
        assert!(
            err.message().contains("node index 0") && err.message().contains("12x45"),
            "{kind:?}: {}",
            err.message()
        );
    });
}

#[test]
fn a_restart_with_the_clock_set_back_reuses_no_time() {
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("clock-back-{}", kind.arg());
        let now = SystemClock.now_ms();
        // A row used before (its mark long past): the generators' clocks here stand still,
        // and a row with no mark would make the first wait 3.5 s of clock time.
        coordinator(&server.database_url(), &namespace, 10_000)
            .claim(1, soon(5000))
            .unwrap();
        server.sql(&format!(
            "UPDATE flakery_node_leases SET holder = NULL, expires_ms = 0, mark = '{}' \
             WHERE namespace = '{namespace}'",
            now - 120_000
        ));
        let first = Generator::builder()
            .options(options(&server.url, &namespace, 10_000))
            .clock(FakeClock::new(now))
            .build()
            .unwrap();
        let used = first.next_ids(100).unwrap();
        let last = *used.last().unwrap();
        first.close(); // gives the row back with its mark at the time used
                       // A restart whose clock is 300 ms behind: it waits past the mark.
        let clock = FakeClock::new(now - 300);
        let second = Generator::builder()
            .options(options(&server.url, &namespace, 10_000))
            .clock(clock.clone())
            .build()
            .unwrap();
        assert_eq!(
            second.worker_id(),
            first.worker_id(),
            "{kind:?}: the same row"
        );
        let next = second.next_id().unwrap();
        assert!(next > last, "{kind:?}: {next} reuses time up to {last}");
        second.close();
        // A minute behind: refused, never an ID at reused time.
        let third = Generator::builder()
            .options(options(&server.url, &namespace, 10_000))
            .clock(FakeClock::new(now - 60_000))
            .build();
        match third.map(|g| g.next_id()) {
            Err(err) | Ok(Err(err)) => {
                assert_eq!(
                    err.code(),
                    ErrorCode::ClockMovedBackwards,
                    "{}",
                    err.message()
                )
            }
            Ok(Ok(id)) => panic!("{kind:?}: {id} issued a minute back"),
        }
    });
}

/// A lease table made by hand with other column types (here `mark` as a number): MariaDB's
/// rows are converted with the client's checked reads, so the start fails with a message
/// instead of a panic in the client crate's conversion. A private server: the shared ones'
/// tables stay as flakery makes them.
#[test]
fn a_lease_table_of_other_column_types_is_an_error_not_a_panic() {
    let _guard = serial();
    if !servers_available() {
        return;
    }
    let server = Server::start(Kind::MariaDb);
    server.sql(
        "CREATE TABLE flakery_node_leases (
             namespace VARCHAR(64) NOT NULL, node_index BIGINT NOT NULL, holder BIGINT NULL,
             holder_name VARCHAR(255) NOT NULL DEFAULT '', expires_ms BIGINT NOT NULL DEFAULT 0,
             mark BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (namespace, node_index));
         INSERT INTO flakery_node_leases (namespace, node_index, mark) VALUES ('typed', 0, 5);",
    );
    let result = std::panic::catch_unwind(|| {
        Generator::new(options(&server.url, "typed", 3000)).map(|_| ())
    });
    let err = result
        .expect("no panic on a row of other column types")
        .unwrap_err();
    assert!(err.message().contains("column types"), "{}", err.message());
}
