//! One database connection on a thread of its own. The client crates wait for an answer
//! without a time limit (a paused server keeps the connection open and never answers), so
//! every request goes to the connection's thread and the caller waits only until its
//! deadline; a link whose request timed out is given up (its thread ends when the request
//! does) and the next request opens a new one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

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

/// The most connection threads one count (a holder's, or a server's one-shot links') keeps
/// alive.
pub(crate) const MAX_THREADS: usize = 4;

/// Counts a connection thread alive until it ends.
struct Alive(Arc<AtomicUsize>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

pub(crate) struct Link {
    jobs: mpsc::Sender<Job>,
}

impl Link {
    /// Opens a connection with `connect` on a new thread, waiting at most `timeout`.
    /// `threads` counts the connection threads alive (given up ones whose request still
    /// waits included); at `MAX_THREADS` no new one is opened, so that a server that never
    /// answers costs a bounded number of threads.
    pub(crate) fn open(
        connect: Box<dyn FnOnce() -> Result<Box<dyn Dialect>, String> + Send>,
        timeout: Duration,
        threads: &Arc<AtomicUsize>,
    ) -> Result<Link, Unanswered> {
        // Checked and counted at once: callers sharing a count may open at the same time.
        let counted = threads.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |alive| {
            (alive < MAX_THREADS).then_some(alive + 1)
        });
        if counted.is_err() {
            return Err(Unanswered::Failed(format!(
                "{MAX_THREADS} earlier connections are open and still wait for an answer (one \
                 given up at its deadline ends only when the database answers or closes it): \
                 no new one is opened until one ends"
            )));
        }
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, opened) = mpsc::channel();
        let alive = Alive(Arc::clone(threads));
        std::thread::Builder::new()
            .name("flakery-sql".into())
            .spawn(move || {
                let _alive = alive;
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
        // (A thread that failed to start dropped its `Alive` with the closure.)
        match opened.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(Link { jobs }),
            Ok(Err(why)) => Err(Unanswered::Failed(why)),
            Err(_) => Err(Unanswered::Timeout),
        }
    }

    /// Runs `request` on the connection, waiting at most `timeout` for its answer.
    pub(crate) fn call<T: Send + 'static>(
        &self,
        timeout: Duration,
        request: impl FnOnce(&mut dyn Dialect) -> Result<T, String> + Send + 'static,
    ) -> Result<T, Unanswered> {
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
            Err(mpsc::RecvTimeoutError::Timeout) => Err(Unanswered::Timeout),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err(Unanswered::Failed("the connection thread ended".into()))
            }
        }
    }
}
