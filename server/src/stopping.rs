//! The server's background loops (the identity probe, gRPC health's mirror of `/readyz`) and
//! how they stop. `watch::Receiver::changed()` returns at once, every time, once its sender is
//! gone: a loop that went round again on it spun a worker thread through the lease's release.
//! Each loop waits on `Ticks::next`, which answers "stop" for a stop sent and for a sender
//! gone alike; and `Background::stop` ends every loop before the caller releases the lease.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A loop's turns: one every `every` until the stop.
pub struct Ticks {
    stop: watch::Receiver<bool>,
    every: Duration,
}

impl Ticks {
    pub fn new(stop: watch::Receiver<bool>, every: Duration) -> Ticks {
        Ticks { stop, every }
    }

    /// Waits for the next turn: `false` once stopping (a stop sent, or its sender dropped).
    pub async fn next(&mut self) -> bool {
        let stopped = tokio::select! {
            _ = tokio::time::sleep(self.every) => false,
            // Ok: the stop was sent; Err: the sender is gone. Either way, no more turns.
            _ = self.stop.wait_for(|stop| *stop) => true,
        };
        // Both may be ready at once (tokio picks either): the stop wins.
        !stopped && !self.stopping()
    }

    /// Whether the stop was sent or its sender is gone, without waiting.
    fn stopping(&self) -> bool {
        *self.stop.borrow() || self.stop.has_changed().is_err()
    }
}

/// The server's background tasks and the stop they share.
pub struct Background {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Background {
    pub fn new() -> Background {
        Background {
            stop: watch::channel(false).0,
            tasks: Vec::new(),
        }
    }

    /// Turns every `every` for a loop of its own, until `stop`.
    pub fn ticks(&self, every: Duration) -> Ticks {
        Ticks::new(self.stop.subscribe(), every)
    }

    pub fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.push(tokio::spawn(task));
    }

    /// Ends every task, and returns once each has: nothing of them runs while the lease is
    /// released after this. A task inside an await (a probe on a blocking thread) is cut off
    /// there instead of being waited for: what it awaited finishes without it.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::task::Poll;

    /// More turns, or polls, than a stop may take: a loop that spins reaches it at once.
    const SPINNING: u64 = 10_000;

    /// Turns of `ticks` until it says stop, at most `SPINNING`.
    async fn turns(ticks: &mut Ticks) -> u64 {
        let mut n = 0;
        while n < SPINNING && ticks.next().await {
            n += 1;
        }
        n
    }

    /// After the stop, a loop takes no turn however often it asks, whether the stop was sent
    /// or its sender was dropped (what `serve` returning did while the lease was released:
    /// gRPC health's mirror went round again at once, for the whole release).
    #[tokio::test]
    async fn a_stop_sent_or_a_sender_gone_ends_the_turns_at_once() {
        for drop_sender in [false, true] {
            let (tx, rx) = watch::channel(false);
            let mut ticks = Ticks::new(rx, Duration::from_millis(1));
            assert!(ticks.next().await, "a turn before the stop");
            if !drop_sender {
                tx.send(true).unwrap();
                assert!(!ticks.next().await, "the stop sent");
            }
            drop(tx);
            assert_eq!(turns(&mut ticks).await, 0, "drop_sender: {drop_sender}");
        }
    }

    /// Sets its flag when dropped: when the task that holds it has ended.
    struct Ended(Arc<AtomicBool>);

    impl Drop for Ended {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// `stop` returns only once every task has ended, one inside an await that never
    /// completes included (a probe waiting on a lease), so nothing of them runs while the
    /// lease is released after it; and it needs a bounded number of polls (a count, not a
    /// time: one that waited for that task would never be ready).
    #[tokio::test]
    async fn stop_returns_once_every_task_has_ended() {
        let mut background = Background::new();
        let ended = Arc::new(AtomicBool::new(false));
        let (_never_sent, never) = tokio::sync::oneshot::channel::<()>();
        let guard = Ended(Arc::clone(&ended));
        background.spawn(async move {
            let _guard = guard;
            let _ = never.await;
        });
        let mut ticks = background.ticks(Duration::from_secs(3600));
        background.spawn(async move { while ticks.next().await {} });
        tokio::task::yield_now().await;
        let mut stop = std::pin::pin!(background.stop());
        let mut polls = 0;
        while std::future::poll_fn(|cx| Poll::Ready(stop.as_mut().poll(cx)))
            .await
            .is_pending()
        {
            polls += 1;
            assert!(polls < SPINNING, "stop waited for a task inside an await");
            tokio::task::yield_now().await;
        }
        assert!(
            ended.load(Ordering::SeqCst),
            "stop returned before a task ended"
        );
    }
}
