//! HTTP/1's header-read timeout (`--header-timeout-s`) with one tokio timer per connection,
//! armed lazily. hyper starts the timeout anew for every request head it waits for: with
//! tokio's timer that was a boxed sleep made, put in the timer wheel under its lock and taken
//! out again for every request, about a tenth of the instructions of a `GET /v1/id`
//! (bench/server/profile.sh). Here hyper's sleep only notes its deadline and waker in the
//! connection's slot; `watch` sleeps until the deadline noted (or a whole timeout while none
//! is), and at a deadline passed wakes hyper, whose sleep then reports it passed. When the
//! timeout is measured from, and what passing it does, stay hyper's.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::task::AbortHandle;

/// One connection's header-read timer: hyper's `Timer` for its HTTP/1 side.
#[derive(Clone, Default)]
pub struct HeaderTimer {
    slot: Arc<Mutex<Slot>>,
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
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes hyper when the deadline of its header read passes, until `connection` ends.
    async fn watch(&self, connection: &AbortHandle, timeout: Duration) {
        while !connection.is_finished() {
            let next = self.slot().deadline;
            match next {
                Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                // No head awaited now: one look a timeout later (a deadline set meanwhile
                // is at most a timeout from now, and slept to exactly from there).
                None => tokio::time::sleep(timeout).await,
            }
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
/// within `timeout` of hyper starting to wait for it (`HeaderTimer`).
pub async fn watch(
    timer: HeaderTimer,
    connection: AbortHandle,
    asked: Arc<AtomicBool>,
    first_request_by: tokio::time::Instant,
    timeout: Duration,
) {
    tokio::time::sleep_until(first_request_by).await;
    if !asked.load(Ordering::Relaxed) {
        connection.abort();
        return;
    }
    timer.watch(&connection, timeout).await;
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
