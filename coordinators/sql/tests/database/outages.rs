//! A database down at start, paused or killed, a holder paused: fail closed, no duplicate, and
//! no password in any message.

use super::*;

#[test]
fn a_database_down_at_start_is_coordinator_unavailable_naming_the_host_not_the_password() {
    let _guard = serial();
    if !servers_available() {
        return;
    }
    let port = dbserver(&["closed-port"]).trim().to_string();
    for scheme in ["postgres", "mysql"] {
        let url = DatabaseUrl::parse(&format!(
            "{scheme}://app:pw-never-shown@127.0.0.1:{port}/ids"
        ))
        .unwrap();
        let mut holder = coordinator(&url, "down", 10_000);
        let err = holder.claim(1024, soon(3000)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::CoordinatorUnavailable,
            "{}",
            err.message()
        );
        assert!(
            err.message().contains(&format!("127.0.0.1:{port}")),
            "{}",
            err.message()
        );
        for shown in [
            err.message().to_string(),
            format!("{holder:?}"),
            holder.describe(),
        ] {
            assert!(!shown.contains("pw-never-shown"), "{shown}");
        }
    }
    // A wrong password: refused by the server, and not shown either.
    for kind in [Kind::Postgres, Kind::MariaDb] {
        let server = shared(kind);
        let wrong = server.url.replace(&server.password, "wrong-secret-pw");
        let mut holder = coordinator(&DatabaseUrl::parse(&wrong).unwrap(), "down", 10_000);
        let err = holder.claim(1024, soon(5000)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::CoordinatorUnavailable,
            "{}",
            err.message()
        );
        assert!(
            !err.message().contains("wrong-secret-pw"),
            "{}",
            err.message()
        );
        assert!(!format!("{holder:?}").contains(&server.password));
    }
}

/// What `call` returns, called on a thread of its own while the test's database is paused (the
/// test resumes it only after this returns). The wait is a safety net against a call that
/// waits on the paused server, not a measure.
fn answered_while_paused<T: Send + 'static>(call: impl FnOnce() -> T + Send + 'static) -> T {
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || answer.send(call()));
    answered
        .recv_timeout(SAFETY_NET)
        .expect("no answer while the database was paused: the call waits on the server")
}

#[test]
fn a_paused_database_is_answered_by_the_deadline_and_a_killed_one_recovers() {
    each_kind(|kind| {
        let server = Server::start(kind);
        let url = server.database_url();
        let mut holder = coordinator(&url, "restart", 10_000);
        let mut claim = holder.claim(1024, soon(5000)).unwrap();
        server.control("pause");
        // The server stays paused until every renewal below has returned: each is answered
        // by its own deadline, never by the server (an order of events; the deadline itself
        // is kept on the fake clock in keeper.rs).
        let (mut holder, mut claim, paused) = answered_while_paused(move || {
            let paused = holder.renew(&mut claim, soon(1500));
            (holder, claim, paused)
        });
        assert!(
            matches!(paused, Err(Failure::Unanswered(_))),
            "{kind:?}: {paused:?}"
        );
        // Requests given up on do not pile up threads: past a few, none is even sent.
        for _ in 0..6 {
            let renewed;
            (holder, claim, renewed) = answered_while_paused(move || {
                let renewed = holder.renew(&mut claim, soon(300));
                (holder, claim, renewed)
            });
            assert!(
                matches!(renewed, Err(Failure::Unanswered(_))),
                "{kind:?}: {renewed:?}"
            );
        }
        let stuck = holder.renew(&mut claim, soon(300));
        assert!(
            matches!(&stuck, Err(Failure::Unanswered(why)) if why.contains("still wait")),
            "{kind:?}: {stuck:?}"
        );
        server.control("resume");
        let until = Instant::now() + SAFETY_NET;
        while let Err(failure) = holder.renew(&mut claim, soon(3000)) {
            assert!(
                Instant::now() < until,
                "{kind:?}: no renewal after resume: {failure:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server.control("kill");
        assert!(matches!(
            holder.renew(&mut claim, soon(3000)),
            Err(Failure::Unanswered(_))
        ));
        server.control("restart");
        // The row committed before the kill survived it, still held.
        let held = server.sql(&format!(
            "SELECT COUNT(*) FROM flakery_node_leases WHERE namespace = 'restart' \
             AND node_index = {} AND holder IS NOT NULL",
            claim.index
        ));
        assert_eq!(held.trim(), "1", "{kind:?}");
        // The holder reaches the restarted server. Its renewal succeeds while the row is
        // within its term in the database's clock, and is refused (fail closed) only once
        // that clock passed it: how long the restart took is not the test's to assume (a
        // loaded machine restarts a server in seconds, not the quiet 0.2 s).
        let expired_before = server.row_is_free("restart", claim.index);
        let until = Instant::now() + SAFETY_NET;
        let renewed = loop {
            match holder.renew(&mut claim, soon(10_000)) {
                Err(Failure::Unanswered(why)) => {
                    assert!(
                        Instant::now() < until,
                        "{kind:?}: no answer after restart: {why}"
                    );
                    std::thread::sleep(Duration::from_millis(100));
                }
                other => break other,
            }
        };
        match renewed {
            Ok(()) => assert!(!expired_before, "{kind:?}: renewed after its expiry"),
            Err(Failure::Lost(why)) => assert!(
                server.row_is_free("restart", claim.index),
                "{kind:?}: refused while the row was within its term: {why}"
            ),
            Err(other) => panic!("{kind:?}: {other:?}"),
        }
        // Either way the holder has its row again: kept, or claimed anew (the only one).
        assert_eq!(holder.claim(1024, soon(5000)).unwrap().index, claim.index);
        assert_eq!(server.kind, kind);
    });
}

#[test]
fn a_paused_holder_is_lease_lost_before_its_row_passes_on_and_issues_no_duplicate() {
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("paused-holder-{}", kind.arg());
        let term: u64 = 2000;
        let mut child = common::spawn(
            rerun("db-streamer", &server.url, &namespace, term)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped()),
        );
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let reader = {
            let lines = Arc::clone(&lines);
            let stdout = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
                    lines.lock().unwrap().push(line.unwrap());
                }
            })
        };
        let wait_for = |what: &str, seen: &dyn Fn(&[String]) -> bool| {
            let until = Instant::now() + SAFETY_NET;
            while !seen(&lines.lock().unwrap()) {
                assert!(Instant::now() < until, "{kind:?}: no {what} from the child");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        wait_for("ID", &|lines| lines.iter().any(|l| l.starts_with("ID ")));
        std::thread::sleep(Duration::from_millis(500));
        let pid = child.id() as i32;
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        // What the child wrote before it stopped is read from the pipe first.
        std::thread::sleep(Duration::from_millis(300));
        let stopped_at = lines.lock().unwrap().len();
        // Past the holder's expiry in the database's clock (not a term of our sleeping: a
        // renewal it sent just before the stop may be applied later), a successor takes its
        // row.
        server.await_free_row(&namespace, 0);
        let successor = Generator::new(options(&server.url, &namespace, term)).unwrap();
        assert_eq!(
            successor.worker_id(),
            0,
            "{kind:?}: the successor takes the row"
        );
        let mut theirs = successor.next_ids(200).unwrap();
        unsafe { libc::kill(pid, libc::SIGCONT) };
        // The child runs until it issues under a new lease (the checks below hold it to
        // refusing first): an order of events, however long a loaded machine takes for it.
        let layout = Layout::twitter();
        let worker = |id: i64| decode(id, &layout).unwrap().worker_id;
        wait_for("ID under a new lease", &|lines| {
            lines[stopped_at.min(lines.len())..]
                .iter()
                .filter_map(|l| l.strip_prefix("ID ")?.parse().ok())
                .any(|id| worker(id) != 0)
        });
        theirs.extend(successor.next_ids(200).unwrap());
        drop(child.stdin.take());
        let status = child.wait().unwrap();
        reader.join().unwrap();
        assert!(status.success(), "{kind:?}: the child failed");
        let lines = lines.lock().unwrap().clone();
        let ids = |part: &[String]| -> Vec<i64> {
            part.iter()
                .filter_map(|l| l.strip_prefix("ID ")?.parse().ok())
                .collect()
        };
        let after = &lines[stopped_at..];
        // Resumed, it refuses (lease_lost) before issuing under anything but a new lease; the
        // one thing it may still do first is finish IDs below the fence it held before the
        // stop (the clock thread was stopped too, so a first call can read the time published
        // before SIGSTOP: docs/spec.md#the-clock-thread). Those are below the mark the
        // successor starts after, which the checks below hold it to.
        let first_refusal = after.iter().position(|l| l.starts_with("ERR "));
        assert!(
            first_refusal.is_some(),
            "{kind:?}: never refused: {after:?}"
        );
        let mine = ids(&lines);
        let floor = theirs.iter().min().copied().unwrap();
        let refused_at = first_refusal.unwrap();
        for id in ids(&after[refused_at..]) {
            assert_ne!(
                worker(id),
                0,
                "{kind:?}: issued under the row that passed on after refusing"
            );
        }
        for &id in mine.iter().filter(|&&id| worker(id) == 0) {
            assert!(
                id < floor,
                "{kind:?}: {id} not below the successor's {floor}"
            );
        }
        assert!(
            ids(after).iter().any(|&id| worker(id) == 1),
            "{kind:?}: never re-leased"
        );
        let mut all: Vec<i64> = mine.into_iter().chain(theirs).collect();
        let total = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), total, "{kind:?}: duplicate IDs");
    });
}

#[test]
fn options_and_messages_never_show_the_password() {
    let url = "postgres://app:pw-in-options@127.0.0.1:1/ids";
    let shown = format!("{:?}", options(url, "x", 1000));
    assert!(
        !shown.contains("pw-in-options") && shown.contains("app:***@"),
        "{shown}"
    );
    let err = Generator::new(options(url, "x", 1000)).unwrap_err();
    assert_eq!(
        err.code(),
        ErrorCode::CoordinatorUnavailable,
        "{}",
        err.message()
    );
    assert!(err.message().contains("127.0.0.1:1"), "{}", err.message());
    assert!(
        !err.message().contains("pw-in-options"),
        "{}",
        err.message()
    );
}
