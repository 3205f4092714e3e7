//! The bound on given-up connection threads, against a server that never answers (a
//! listener never accepted from: the kernel completes each connection, no byte comes back)
//! and against connections that answer late.

use std::net::TcpListener;
#[cfg(feature = "postgres")]
use std::net::TcpStream;
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

/// A PostgreSQL server that lets each connection in (no TLS, no password) and then never
/// answers a query: its thread keeps the connections open until the returned sockets are
/// shut down, and ends at the first connection that leaves before it is let in.
#[cfg(feature = "postgres")]
fn postgres_that_stops_answering() -> (u16, mpsc::Receiver<TcpStream>) {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (accepted, sockets) = mpsc::channel();
    std::thread::spawn(move || {
        let let_in = |socket: &mut TcpStream| -> std::io::Result<()> {
            // Each message the client sends first is a length and a body: an SSLRequest
            // (refused with 'N'), then the StartupMessage (let in at once, ready for queries).
            for reply in [&b"N"[..], b"R\0\0\0\x08\0\0\0\0Z\0\0\0\x05I"] {
                let mut length = [0; 4];
                socket.read_exact(&mut length)?;
                let length = u32::from_be_bytes(length).clamp(4, 1 << 16) as usize;
                socket.read_exact(&mut vec![0; length - 4])?;
                socket.write_all(reply)?;
            }
            Ok(())
        };
        for socket in listener.incoming() {
            let mut socket = socket.unwrap();
            if let_in(&mut socket).is_err() || accepted.send(socket).is_err() {
                return;
            }
        }
    });
    (port, sockets)
}

/// A database that stops answering mid-session: each request times out on a connection
/// already open (the holder's renewal of a lease it holds, a census's query), and those
/// threads are given up and bounded alike.
#[cfg(feature = "postgres")]
#[test]
fn requests_timing_out_on_open_connections_keep_a_bounded_number_of_threads() {
    let _counting = counting();
    let before = link_threads();
    let (port, sockets) = postgres_that_stops_answering();
    let url = DatabaseUrl::parse(&format!("postgres://f@127.0.0.1:{port}/db")).unwrap();
    let mut refused = 0;
    for call in 0..MAX_GIVEN_UP + 3 {
        // The open has a safety net only (the server lets each connection in at once).
        match crate::coordinator::open_link(&url, Duration::from_secs(60)) {
            Ok(link) => {
                let asked = link.call(Duration::from_millis(50), |db| db.now_ms());
                assert!(matches!(asked, Err(Unanswered::Timeout)), "{asked:?}");
            }
            Err(Unanswered::Failed(why)) if why.contains("still wait") => refused += 1,
            Err(other) => panic!("{other:?}"),
        }
        let threads = link_threads();
        assert!(threads <= before + MAX_GIVEN_UP, "call {call}: {threads}");
    }
    assert_eq!(refused, 3);
    // The server's thread ends at a connection that leaves at once; the links' threads when
    // their sockets close.
    drop(TcpStream::connect(("127.0.0.1", port)).unwrap());
    for socket in sockets.iter() {
        let _ = socket.shutdown(std::net::Shutdown::Both);
    }
}
