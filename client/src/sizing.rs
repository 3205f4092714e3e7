//! How many IDs to ask for at once, adapted to the rate of use as Meituan Leaf's segment step
//! is: a block that lasted less than half the target doubles the next one, one that lasted
//! more than twice the target halves it, always within the limits given.

#[derive(Debug, Clone)]
pub struct Sizing {
    size: usize,
    min: usize,
    max: usize,
    /// How long a block should last, in ms.
    target_ms: u64,
    /// When the last block was asked for.
    last_ask_ms: Option<u64>,
    /// How long the last block lasted (from its ask to the next).
    lasted_ms: Option<u64>,
}

impl Sizing {
    /// Starts at `min`; `min` is at least 1 and `max` at least `min`.
    pub fn new(min: usize, max: usize, target_ms: u64) -> Self {
        let min = min.max(1);
        Sizing {
            size: min,
            min,
            max: max.max(min),
            target_ms: target_ms.max(1),
            last_ask_ms: None,
            lasted_ms: None,
        }
    }

    #[cfg(test)]
    pub fn size(&self) -> usize {
        self.size
    }

    /// With prefetch, the IDs held below which the next block is asked for, given how long
    /// the last block took to come: half a block, so that it arrives before the stock runs out
    /// when a block lasts longer than two round trips; a whole block when the size is at its
    /// largest and a block lasts no longer than that (a caller on one thread uses a block of
    /// 100,000 faster than a server at its 4,096 IDs a millisecond makes it), so that the
    /// refill has a whole block's time, not half of it. Below the largest size the next block
    /// doubles instead: holding more ahead then would only hold more IDs at a failover.
    pub fn low_watermark(&self, round_trip_ms: u64) -> usize {
        match self.lasted_ms {
            Some(lasted) if self.size == self.max && round_trip_ms.saturating_mul(2) >= lasted => {
                self.size
            }
            _ => self.size / 2,
        }
    }

    /// A block is about to be asked for at `now_ms`: the time since the last ask is how long
    /// the last block lasted. Answers the size to ask for.
    pub fn ask(&mut self, now_ms: u64) -> usize {
        if let Some(last) = self.last_ask_ms {
            let lasted = now_ms.saturating_sub(last);
            self.lasted_ms = Some(lasted);
            if lasted < self.target_ms / 2 {
                self.size = self.size.saturating_mul(2).min(self.max);
            } else if lasted > self.target_ms.saturating_mul(2) {
                self.size = (self.size / 2).max(self.min);
            }
        }
        self.last_ask_ms = Some(now_ms);
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_under_load_up_to_the_limit() {
        let mut sizing = Sizing::new(16, 100, 1000);
        assert_eq!(sizing.ask(0), 16, "the first block is the smallest");
        assert_eq!(sizing.ask(100), 32, "lasted 100 ms of a 1000 ms target");
        assert_eq!(sizing.ask(200), 64);
        assert_eq!(sizing.ask(300), 100, "capped at max");
        assert_eq!(sizing.ask(400), 100);
    }

    #[test]
    fn keeps_its_size_near_the_target_and_shrinks_when_idle() {
        let mut sizing = Sizing::new(16, 1024, 1000);
        let mut now = 0;
        for _ in 0..4 {
            sizing.ask(now);
            now += 10;
        }
        assert_eq!(sizing.size(), 128);
        now += 1000;
        assert_eq!(sizing.ask(now), 128, "lasted the target: unchanged");
        now += 1999;
        assert_eq!(sizing.ask(now), 128, "under twice the target: unchanged");
        now += 2001;
        assert_eq!(sizing.ask(now), 64, "over twice the target: halved");
        now += 60_000;
        sizing.ask(now);
        now += 60_000;
        sizing.ask(now);
        now += 60_000;
        assert_eq!(sizing.ask(now), 16, "never below min");
    }

    /// Half a block ahead while a block outlasts two round trips; a whole block once it does
    /// not, and half again when it does; only at the largest size.
    #[test]
    fn the_next_block_is_asked_for_a_whole_block_ahead_when_one_lasts_two_round_trips() {
        let mut growing = Sizing::new(16, 100, 1000);
        growing.ask(0);
        growing.ask(1);
        assert_eq!(
            growing.low_watermark(5),
            16,
            "below the largest size: it doubles"
        );
        let mut sizing = Sizing::new(100, 100, 1000);
        sizing.ask(0);
        assert_eq!(
            sizing.low_watermark(1),
            50,
            "one block: nothing known of its life"
        );
        sizing.ask(10);
        assert_eq!(
            sizing.low_watermark(4),
            50,
            "lasted 10 ms, round trips of 4 ms"
        );
        assert_eq!(
            sizing.low_watermark(5),
            100,
            "lasted 10 ms, round trips of 5 ms"
        );
        sizing.ask(10);
        assert_eq!(
            sizing.low_watermark(0),
            100,
            "used within the millisecond it came"
        );
        sizing.ask(1000);
        assert_eq!(sizing.low_watermark(5), 50);
    }

    #[test]
    fn limits_are_sane() {
        let sizing = Sizing::new(0, 0, 0);
        assert_eq!(sizing.size(), 1);
        let mut sizing = Sizing::new(8, 4, 0);
        assert_eq!(sizing.ask(0), 8);
        assert_eq!(sizing.ask(0), 8, "max below min is min");
    }
}
