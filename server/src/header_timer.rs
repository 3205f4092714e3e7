//! HTTP/1's header-read timeout (`--header-timeout-s`) with one tokio timer per connection,
//! armed lazily. hyper starts the timeout anew for every request head it waits for: with
//! tokio's timer that was a boxed sleep made, put in the timer wheel under its lock and taken
//! out again for every request, about a tenth of the instructions of a `GET /v1/id`
//! (bench/server/profile.sh). Here hyper's sleep only notes its deadline and waker in the
//! connection's slot; `watch` sleeps until the deadline noted (or a whole timeout while none
//! is), and at a deadline passed wakes hyper, whose sleep then reports it passed. When the
//! timeout is measured from, and what passing it does, stay hyper's.
//!
//! The same watcher also cuts off a connection whose answers could not be written for a
//! whole timeout (`Watched`): hyper stops reading heads while it cannot write, so a client
//! that pipelines and never reads would otherwise keep its slot with no timer running. And it
//! ends with its connection (`ended`), so that watchers do not pile up with the connection
//! rate.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

/// One connection's header-read timer: hyper's `Timer` for its HTTP/1 side.
#[derive(Clone)]
pub struct HeaderTimer {
    shared: Arc<Shared>,
}

struct Shared {
    slot: Mutex<Slot>,
    /// Nanoseconds from `born` to the first write that could not go out since the last one
    /// that did (at least 1), or 0 while writes go out. Written only on a change, so a write
    /// that goes out costs one relaxed load.
    write_blocked: AtomicU64,
    born: Instant,
    /// Set by `watch` once no request has begun for a whole timeout; the connection's task
    /// (woken by `idle_waker`) then asks it to end gracefully (`serve::serve_until_done`).
    idle: AtomicBool,
    idle_waker: Mutex<Option<Waker>>,
}

impl Default for HeaderTimer {
    fn default() -> Self {
        HeaderTimer {
            shared: Arc::new(Shared {
                slot: Mutex::default(),
                write_blocked: AtomicU64::new(0),
                born: Instant::now(),
                idle: AtomicBool::new(false),
                idle_waker: Mutex::default(),
            }),
        }
    }
}

#[derive(Default)]
struct Slot {
    /// The deadline of the sleep hyper is polling, if any.
    deadline: Option<Instant>,
    waker: Option<Waker>,
    /// Set by `watch` once `deadline` has passed.
    passed: bool,
}

impl HeaderTimer {
    fn slot(&self) -> MutexGuard<'_, Slot> {
        // Nothing here panics while holding it; a poisoned slot is still a slot.
        self.shared.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Since when the connection's writes have not gone out, if they have not.
    fn write_blocked_since(&self) -> Option<Instant> {
        match self.shared.write_blocked.load(Ordering::Relaxed) {
            0 => None,
            nanos => Some(self.shared.born + Duration::from_nanos(nanos)),
        }
    }

    fn note_write(&self, went_out: bool) {
        let blocked = &self.shared.write_blocked;
        let was = blocked.load(Ordering::Relaxed);
        if went_out && was != 0 {
            blocked.store(0, Ordering::Relaxed);
        } else if !went_out && was == 0 {
            let since = u64::try_from(self.shared.born.elapsed().as_nanos()).unwrap_or(u64::MAX);
            blocked.store(since.max(1), Ordering::Relaxed);
        }
    }

    /// Whether the connection has been found idle. The first call (`registered` false) also
    /// notes whom to wake when it is: the connection's task, whose waker does not change.
    pub fn is_idle(&self, cx: &Context<'_>, registered: &mut bool) -> bool {
        if !*registered {
            *self
                .shared
                .idle_waker
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(cx.waker().clone());
            *registered = true;
        }
        self.shared.idle.load(Ordering::Relaxed)
    }

    fn found_idle(&self) {
        self.shared.idle.store(true, Ordering::Relaxed);
        let waker = self
            .shared
            .idle_waker
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Wakes hyper when the deadline of its header read passes, cuts `connection` off once
    /// its writes have been blocked for `timeout`, and marks it idle once a look a timeout
    /// after the last finds no request begun since (`asked`, set by every request: so an idle
    /// connection is found between one and two timeouts after its last request), until it
    /// ends. HTTP/2 needs the last: its keep-alive PINGs are answered by any client library.
    async fn watch(&self, connection: &AbortHandle, asked: &AtomicBool, timeout: Duration) {
        let mut idle_look = Some(Instant::now());
        while !connection.is_finished() {
            let stalled_until = self.write_blocked_since().map(|since| since + timeout);
            let now = Instant::now();
            if stalled_until.is_some_and(|at| at <= now) {
                connection.abort();
                return;
            }
            if idle_look.is_some_and(|look| look <= now) {
                if asked.swap(false, Ordering::Relaxed) {
                    idle_look = Some(now + timeout);
                } else {
                    self.found_idle();
                    idle_look = None;
                }
            }
            // No head awaited nor write blocked now: one look a timeout later (a deadline set
            // meanwhile is at most a timeout from now, and slept to exactly from there).
            // A deadline already fired is hyper's to act on: not slept to again.
            let noted = {
                let slot = self.slot();
                slot.deadline.filter(|_| !slot.passed)
            };
            let next = [noted, stalled_until, idle_look]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or_else(|| Instant::now() + timeout);
            tokio::time::sleep_until(next.into()).await;
            self.fire_if_passed(Instant::now());
        }
    }

    /// Marks the deadline noted passed, and wakes its connection, if it is at or before `now`.
    fn fire_if_passed(&self, now: Instant) {
        let mut slot = self.slot();
        if slot.deadline.is_some_and(|d| d <= now) {
            slot.passed = true;
            if let Some(waker) = slot.waker.take() {
                waker.wake();
            }
        }
    }
}

/// A connection's deadlines, on a task of their own beside the connection's: the first
/// request by `first_request_by` (else the connection is cut off), then each request head
/// within `timeout` of hyper starting to wait for it, and no write blocked for `timeout`
/// (`HeaderTimer`). Returns as soon as `ended` does (its sender is dropped with the
/// connection's task): a watcher left sleeping to its deadline held its timer and memory for
/// up to a timeout after its connection, however many connections came and went meanwhile.
pub async fn watch(
    timer: HeaderTimer,
    connection: AbortHandle,
    ended: oneshot::Receiver<()>,
    asked: Arc<AtomicBool>,
    first_request_by: tokio::time::Instant,
    timeout: Duration,
) {
    let deadlines = async {
        tokio::time::sleep_until(first_request_by).await;
        if !asked.load(Ordering::Relaxed) {
            connection.abort();
            return;
        }
        timer.watch(&connection, &asked, timeout).await;
    };
    tokio::select! {
        _ = ended => {}
        _ = deadlines => {}
    }
}

/// A connection's socket, which tells its `HeaderTimer` whether its writes go out.
pub struct Watched<S> {
    stream: S,
    timer: HeaderTimer,
}

impl<S> Watched<S> {
    pub fn new(stream: S, timer: &HeaderTimer) -> Self {
        Watched {
            stream,
            timer: timer.clone(),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.timer.note_write(written.is_ready());
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.timer.note_write(written.is_ready());
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl hyper::rt::Timer for HeaderTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(HeaderSleep {
            timer: self.clone(),
            deadline,
        })
    }
}

struct HeaderSleep {
    timer: HeaderTimer,
    deadline: Instant,
}

impl Future for HeaderSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut slot = self.timer.slot();
        if slot.deadline == Some(self.deadline) && slot.passed {
            return Poll::Ready(());
        }
        if slot.deadline != Some(self.deadline) {
            slot.deadline = Some(self.deadline);
            slot.passed = false;
        }
        match &slot.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl hyper::rt::Sleep for HeaderSleep {}

impl Drop for HeaderSleep {
    fn drop(&mut self) {
        let mut slot = self.timer.slot();
        if slot.deadline == Some(self.deadline) {
            *slot = Slot::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::rt::Timer;
    use std::sync::atomic::AtomicUsize;

    /// A sleep reports its deadline passed only once `watch` has seen it pass (and its
    /// connection is woken then), and a sleep dropped (the head came) leaves nothing to fire.
    #[test]
    fn a_deadline_passes_only_while_its_sleep_is_polled() {
        let timer = HeaderTimer::default();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut sleep = timer.sleep_until(deadline);
        let (waker, woken) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(sleep.as_mut().poll(&mut cx).is_pending());
        timer.fire_if_passed(deadline - Duration::from_millis(1));
        assert_eq!(
            woken.load(Ordering::Relaxed),
            0,
            "woken before its deadline"
        );
        assert!(
            sleep.as_mut().poll(&mut cx).is_pending(),
            "passed before its deadline"
        );
        timer.fire_if_passed(deadline);
        assert_eq!(
            woken.load(Ordering::Relaxed),
            1,
            "not woken at its deadline"
        );
        assert!(
            sleep.as_mut().poll(&mut cx).is_ready(),
            "not passed at its deadline"
        );
        drop(sleep);
        // The next head's sleep starts afresh, and dropped before its deadline (the head
        // came), nothing is left to fire.
        let later = deadline + Duration::from_secs(10);
        let mut sleep = timer.sleep_until(later);
        assert!(
            sleep.as_mut().poll(&mut cx).is_pending(),
            "the last deadline's pass kept"
        );
        drop(sleep);
        timer.fire_if_passed(later + Duration::from_secs(60));
        assert_eq!(
            woken.load(Ordering::Relaxed),
            1,
            "a dropped sleep's connection woken"
        );
        let slot = timer.slot();
        assert!(slot.deadline.is_none() && !slot.passed && slot.waker.is_none());
    }

    /// Lets every task that can run, run (a current-thread runtime: a bounded number of
    /// turns, no clock).
    async fn settle() {
        for _ in 0..64 {
            tokio::task::yield_now().await;
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    /// A watcher is finished as soon as its connection is, long before any of its deadlines,
    /// both while the first request is awaited and after it: one left sleeping held its timer
    /// and memory for a timeout after its connection, so their number grew with the
    /// connection rate whatever `--max-connections` said.
    #[test]
    fn a_watcher_ends_with_its_connection_before_its_deadlines() {
        runtime().block_on(async {
            let hour = Duration::from_secs(3600);
            let now = tokio::time::Instant::now();
            for first_request_by in [now + hour, now] {
                let (ended, watch_ended) = oneshot::channel::<()>();
                let (close, closed) = oneshot::channel::<()>();
                let connection = tokio::spawn(async move {
                    let _ended = ended;
                    let _ = closed.await;
                });
                let watcher = tokio::spawn(watch(
                    HeaderTimer::default(),
                    connection.abort_handle(),
                    watch_ended,
                    Arc::new(AtomicBool::new(true)),
                    first_request_by,
                    hour,
                ));
                settle().await;
                assert!(
                    !watcher.is_finished(),
                    "the watcher ended before its connection"
                );
                close.send(()).unwrap();
                settle().await;
                assert!(connection.is_finished());
                assert!(
                    watcher.is_finished(),
                    "the watcher outlived its connection (first request by {:?} from now)",
                    first_request_by - now
                );
            }
        });
    }

    /// A connection whose writes stay blocked is cut off once they have been for the
    /// timeout, not before; one whose blocked write then went out is not.
    #[test]
    fn a_connection_whose_writes_stay_blocked_is_cut_off_after_the_timeout() {
        runtime().block_on(async {
            let timeout = Duration::from_millis(200);
            let timer = HeaderTimer::default();
            let connection = tokio::spawn(std::future::pending::<()>());
            let (_ended, watch_ended) = oneshot::channel::<()>();
            timer.note_write(false);
            let blocked_at = Instant::now();
            let watcher = tokio::spawn(watch(
                timer.clone(),
                connection.abort_handle(),
                watch_ended,
                Arc::new(AtomicBool::new(true)),
                tokio::time::Instant::now(),
                timeout,
            ));
            // A guard against a hang when the cut-off is broken, not a measure: fail, not wait.
            let cut = tokio::select! {
                ended = connection => ended,
                _ = tokio::time::sleep(Duration::from_secs(120)) => panic!("never cut off"),
            };
            assert!(cut.unwrap_err().is_cancelled());
            assert!(
                blocked_at.elapsed() >= timeout,
                "cut off before the timeout"
            );
            watcher.await.unwrap();

            // A write that went out clears it; a block keeps the moment it began.
            let timer = HeaderTimer::default();
            timer.note_write(false);
            timer.note_write(true);
            assert!(timer.write_blocked_since().is_none());
            timer.note_write(true);
            assert!(timer.write_blocked_since().is_none());
            timer.note_write(false);
            let since = timer.write_blocked_since().unwrap();
            timer.note_write(false);
            assert_eq!(
                timer.write_blocked_since(),
                Some(since),
                "a later block moved it"
            );
        });
    }

    fn counting_waker() -> (Waker, Arc<AtomicUsize>) {
        struct Counting(Arc<AtomicUsize>);
        impl std::task::Wake for Counting {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let woken = Arc::new(AtomicUsize::new(0));
        (Waker::from(Arc::new(Counting(Arc::clone(&woken)))), woken)
    }
}
