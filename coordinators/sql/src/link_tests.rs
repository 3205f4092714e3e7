//! The bound on given-up connection threads, against a server that never answers (a
//! listener never accepted from: the kernel completes each connection, no byte comes back)
//! and against connections that answer late.

use std::net::TcpListener;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::time::Duration;

use flakery::clock::FakeClock;
use flakery::error::ErrorCode;
use flakery::lease::coordinator::{Claim, Coordinator, Failure, Token};
use flakery::DatabaseUrl;

use super::*;
use crate::coordinator::SqlCoordinator;

/// Taken by every test that counts this process's link threads: another test's would be
/// counted too.
static COUNTING: Mutex<()> = Mutex::new(());

fn counting() -> MutexGuard<'static, ()> {
    COUNTING.lock().unwrap_or_else(|e| e.into_inner())
}

/// This process's threads named as the links name theirs.
fn link_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter(|task| {
            let comm = task.as_ref().unwrap().path().join("comm");
            std::fs::read_to_string(comm).is_ok_and(|name| name.trim() == "flakery-sql")
        })
        .count()
}

/// Makes `MAX_GIVEN_UP + 3` attempts with `attempt` (which returns its error's message)
/// against a hung server of each kind: each ends with its error at its deadline (its message
/// says it did not answer within 50 ms) or, past the bound, at once saying why; the
/// process keeps at most `MAX_GIVEN_UP` link threads a server (the kernel's count, and the
/// server's own); a forked child counts none of them.
pub(crate) fn bounded_against_a_hung_server(mut attempt: impl FnMut(&DatabaseUrl) -> String) {
    let _counting = counting();
    let hung = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hung.local_addr().unwrap().port();
    let before = link_threads();
    for (servers, scheme) in (1..).zip(["postgres", "mysql"]) {
        let url = DatabaseUrl::parse(&format!("{scheme}://flakery@127.0.0.1:{port}/db")).unwrap();
        let mut refused = 0;
        for call in 0..MAX_GIVEN_UP + 3 {
            let message = attempt(&url);
            if message.contains("given up at their deadline and still wait") {
                refused += 1;
            } else {
                assert!(message.contains("within 50 ms"), "{message}");
            }
            // Threads of an earlier test may still be ending: they only go.
            let threads = link_threads();
            assert!(
                threads <= before + servers * MAX_GIVEN_UP,
                "{scheme} call {call}: {threads}"
            );
            let given_up = given_up_threads(&url).load(Ordering::SeqCst);
            assert!(given_up <= MAX_GIVEN_UP, "{scheme} call {call}: {given_up}");
        }
        assert!(refused >= 3, "{scheme}: {refused} refused");
        // A forked child has none of these threads: it is not refused.
        // SAFETY: the child only reads a count and leaves with _exit.
        match unsafe { libc::fork() } {
            0 => unsafe {
                let given_up = given_up_threads(&url).load(Ordering::SeqCst);
                libc::_exit(i32::from(given_up != 0));
            },
            child => {
                let mut status = 0;
                // SAFETY: a child of this process, waited for once.
                assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
                assert_eq!(status, 0, "the child counted its parent's threads");
            }
        }
    }
}

fn coordinator(url: &DatabaseUrl) -> SqlCoordinator {
    SqlCoordinator::new(url.clone(), "hung", 10_000, Arc::new(FakeClock::new(1_000))).unwrap()
}

/// A process that keeps retrying a generator (a new coordinator each, claiming).
#[test]
fn new_holders_of_a_hung_database_keep_a_bounded_number_of_threads() {
    bounded_against_a_hung_server(|url| {
        let err = coordinator(url).claim(1024, 1_050).expect_err("no answer");
        assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
        err.message().to_string()
    });
}

/// A holder whose database hangs mid-lease: each renewal that times out gives up its
/// connection, and the next opens another. The holder is told at once when refused, so its
/// keeper still counts down to its lease's end and fences it then.
#[test]
fn renewals_against_a_hung_database_keep_a_bounded_number_of_threads() {
    let mut holders: Vec<(DatabaseUrl, SqlCoordinator)> = Vec::new();
    bounded_against_a_hung_server(|url| {
        if holders.last().is_none_or(|(held, _)| held != url) {
            holders.push((url.clone(), coordinator(url)));
        }
        let holder = &mut holders.last_mut().unwrap().1;
        let mut claim = Claim {
            index: 3,
            floor_ms: None,
            server_ms: None,
            token: Token {
                holder: holder.holder(),
                version: 0,
            },
        };
        match holder.renew(&mut claim, 1_050) {
            Err(Failure::Unanswered(why)) => why,
            other => panic!("{other:?}"),
        }
    });
}

/// Threads whose caller still waits are never counted: however many connections of one
/// server are under way at once, none is refused, even while another server's given-up
/// threads are at the bound (the count is each server's); given-up threads that end are
/// uncounted.
#[test]
fn connections_under_way_are_not_refused_by_given_up_ones() {
    let _counting = counting();
    let server = |port| DatabaseUrl::parse(&format!("postgres://f@127.0.0.1:{port}/db")).unwrap();
    let (hung, healthy) = (server(1), server(2));
    // Connections that answer only when told to; the hung ones are told at the end.
    let late = |started: mpsc::Sender<()>, answer: mpsc::Receiver<()>| {
        Box::new(move || {
            started.send(()).unwrap();
            let _ = answer.recv();
            Err("answered late".to_string())
        }) as Box<dyn FnOnce() -> Result<Box<dyn Dialect>, String> + Send>
    };
    let (started, starts) = mpsc::channel();
    let mut answers = Vec::new();
    for _ in 0..MAX_GIVEN_UP {
        let (answer, wait) = mpsc::channel();
        answers.push(answer);
        let opened = Link::open(
            late(started.clone(), wait),
            Duration::from_millis(10),
            &hung,
        );
        assert!(matches!(opened, Err(Unanswered::Timeout)));
    }
    let refused = Link::open(
        late(started.clone(), mpsc::channel().1),
        Duration::ZERO,
        &hung,
    );
    assert!(
        matches!(&refused, Err(Unanswered::Failed(why)) if why.contains("still wait")),
        "{:?}",
        refused.err()
    );
    // Twice the bound of holders of the healthy server connecting at once.
    let mut callers = Vec::new();
    for _ in 0..2 * MAX_GIVEN_UP {
        let (answer, wait) = mpsc::channel();
        answers.push(answer);
        let (connect, refused) = (late(started.clone(), wait), started.clone());
        let healthy = healthy.clone();
        // A safety net only: each is answered as soon as all are under way.
        let timeout = Duration::from_secs(60);
        callers.push(std::thread::spawn(move || {
            let opened = Link::open(connect, timeout, &healthy).err();
            if !matches!(&opened, Some(Unanswered::Failed(why)) if why == "answered late") {
                refused.send(()).unwrap(); // never under way: counted as its end
            }
            opened
        }));
    }
    for _ in 0..3 * MAX_GIVEN_UP {
        starts.recv().unwrap();
    }
    // Held from before the answers: a count nobody holds is dropped from the map.
    let given_up = given_up_threads(&hung);
    assert_eq!(given_up.load(Ordering::SeqCst), MAX_GIVEN_UP);
    for answer in answers {
        let _ = answer.send(());
    }
    for caller in callers {
        let opened = caller.join().unwrap();
        assert!(
            matches!(&opened, Some(Unanswered::Failed(why)) if why == "answered late"),
            "{opened:?}"
        );
    }
    // The hung server answered its given-up threads: as they end they are uncounted, and it
    // is connected to again. (A bounded wait for the threads' ends, a safety net only.)
    for _ in 0..1000 {
        if given_up.load(Ordering::SeqCst) == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(given_up.load(Ordering::SeqCst), 0, "given-up threads ended");
    let (answer, wait) = mpsc::channel();
    answer.send(()).unwrap();
    let opened = Link::open(late(started, wait), Duration::from_secs(60), &hung);
    assert!(
        matches!(&opened, Err(Unanswered::Failed(why)) if why == "answered late"),
        "{:?}",
        opened.err()
    );
}
