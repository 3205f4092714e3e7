//! One database connection on a thread of its own. The client crates wait for an answer
//! without a time limit (a paused server keeps the connection open and never answers), so
//! every request goes to the connection's thread and the caller waits only until its
//! deadline; a link whose request timed out is given up (its thread ends when the request
//! does) and the next request opens a new one.
//!
//! Given-up threads are the only ones that can pile up, so they alone are bounded, and per
//! server across the process: every holder, census and `WORKER_NODE` start of one server
//! shares one count, so retries (a new generator each, a renewal each) cannot add threads
//! without bound, while threads whose caller still waits or holds the link (one a holder)
//! are never counted and never refused.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, LazyLock, Mutex};
use std::time::Duration;

use flakery::DatabaseUrl;

use super::dialect::Dialect;

type Job = Box<dyn FnOnce(&mut dyn Dialect) + Send>;

/// Why a request got no answer.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// Not by the deadline: it may still be applied.
    Timeout,
    /// The database answered with an error, or the connection broke (the message is the
    /// client crate's, not yet scrubbed of secrets).
    Failed(String),
}

/// The most given-up connection threads (still blocked in a request) of one server; past
/// them no new connection to it is opened until one ends.
pub(crate) const MAX_GIVEN_UP: usize = 4;

/// A connection thread's state: its caller waits or holds it, it was given up at a deadline
/// while a request was under way, or it ended.
const RUNNING: u8 = 0;
const GIVEN_UP: u8 = 1;
const ENDED: u8 = 2;

/// Each server's (`kind://host` as written) count of given-up threads. `pid`: the process
/// that counted them (a forked child has none of its parent's threads).
#[derive(Default)]
struct GivenUpThreads {
    pid: u32,
    by_server: HashMap<String, Arc<AtomicUsize>>,
}

static GIVEN_UP_THREADS: LazyLock<Mutex<GivenUpThreads>> = LazyLock::new(Mutex::default);

/// `url`'s server's count of given-up connection threads.
pub(crate) fn given_up_threads(url: &DatabaseUrl) -> Arc<AtomicUsize> {
    // Taken with forks kept out: a child would find a lock held by a thread it does not have.
    let mut counts = flakery::fork::lock(&GIVEN_UP_THREADS);
    let pid = std::process::id();
    if counts.pid != pid {
        *counts = GivenUpThreads {
            pid,
            by_server: HashMap::new(),
        };
    }
    // A count held by no thread and no caller is dropped: the map keeps only servers with
    // threads alive, however many servers a process asks over its life.
    counts
        .by_server
        .retain(|_, count| Arc::strong_count(count) > 1);
    let server = format!("{}://{}", url.kind().name(), url.host());
    Arc::clone(counts.by_server.entry(server).or_default())
}

/// One connection thread's state, and its server's count of given-up ones.
struct Thread {
    state: AtomicU8,
    given_up: Arc<AtomicUsize>,
}

impl Thread {
    /// Called by the caller whose deadline passed while the thread works: counted once.
    fn give_up(&self) {
        // Counted before the state says so: the thread's own uncount (at its end) then
        // always follows this count, and the count never wraps below zero.
        self.given_up.fetch_add(1, Ordering::SeqCst);
        let marked =
            self.state
                .compare_exchange(RUNNING, GIVEN_UP, Ordering::SeqCst, Ordering::SeqCst);
        if marked.is_err() {
            self.given_up.fetch_sub(1, Ordering::SeqCst); // ended, or given up already
        }
    }
}

/// Ends the thread's state when the thread ends, uncounting it if it was given up.
struct Ends(Arc<Thread>);

impl Drop for Ends {
    fn drop(&mut self) {
        if self.0.state.swap(ENDED, Ordering::SeqCst) == GIVEN_UP {
            self.0.given_up.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

pub(crate) struct Link {
    jobs: mpsc::Sender<Job>,
    thread: Arc<Thread>,
}

impl Link {
    /// Opens a connection to `server` with `connect` on a new thread, waiting at most
    /// `timeout`. Refused at once while `MAX_GIVEN_UP` given-up threads of `server` still
    /// wait, so that a server that never answers costs a bounded number of threads.
    pub(crate) fn open(
        connect: Box<dyn FnOnce() -> Result<Box<dyn Dialect>, String> + Send>,
        timeout: Duration,
        server: &DatabaseUrl,
    ) -> Result<Link, Unanswered> {
        let given_up = given_up_threads(server);
        // Callers opening at the same moment may each pass and each be given up: the bound
        // is then passed by at most the number of callers still waiting, each its own.
        if given_up.load(Ordering::SeqCst) >= MAX_GIVEN_UP {
            return Err(Unanswered::Failed(format!(
                "{MAX_GIVEN_UP} earlier connections to this server were given up at their \
                 deadline and still wait for an answer (each ends only when the database \
                 answers or closes it): no new one is opened until one ends"
            )));
        }
        let thread = Arc::new(Thread {
            state: AtomicU8::new(RUNNING),
            given_up,
        });
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, opened) = mpsc::channel();
        let ends = Ends(Arc::clone(&thread));
        std::thread::Builder::new()
            .name("flakery-sql".into())
            .spawn(move || {
                let _ends = ends;
                match connect() {
                    Ok(mut conn) => {
                        if ready.send(Ok(())).is_err() {
                            return; // the caller gave up: close at once
                        }
                        for job in queue {
                            job(conn.as_mut());
                        }
                    }
                    Err(why) => {
                        let _ = ready.send(Err(why));
                    }
                }
            })
            .map_err(|e| Unanswered::Failed(format!("cannot start a connection thread: {e}")))?;
        // (A thread that failed to start ended its state with the closure.)
        match opened.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(Link { jobs, thread }),
            Ok(Err(why)) => Err(Unanswered::Failed(why)),
            Err(_) => {
                thread.give_up();
                Err(Unanswered::Timeout)
            }
        }
    }

    /// Runs `request` on the connection, waiting at most `timeout` for its answer. A link
    /// whose request timed out is given up: it takes no more requests.
    pub(crate) fn call<T: Send + 'static>(
        &self,
        timeout: Duration,
        request: impl FnOnce(&mut dyn Dialect) -> Result<T, String> + Send + 'static,
    ) -> Result<T, Unanswered> {
        if self.thread.state.load(Ordering::SeqCst) != RUNNING {
            return Err(Unanswered::Failed("the connection was given up".into()));
        }
        let (reply, answer) = mpsc::channel();
        let job: Job = Box::new(move |conn| {
            let _ = reply.send(request(conn));
        });
        self.jobs
            .send(job)
            .map_err(|_| Unanswered::Failed("the connection is closed".into()))?;
        match answer.recv_timeout(timeout) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(why)) => Err(Unanswered::Failed(why)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.thread.give_up();
                Err(Unanswered::Timeout)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(Unanswered::Failed("the connection thread ended".into()))
            }
        }
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
pub(crate) mod tests;
