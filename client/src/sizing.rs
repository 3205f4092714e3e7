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
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// A block is about to be asked for at `now_ms`: the time since the last ask is how long
    /// the last block lasted. Answers the size to ask for.
    pub fn ask(&mut self, now_ms: u64) -> usize {
        if let Some(last) = self.last_ask_ms {
            let lasted = now_ms.saturating_sub(last);
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

    #[test]
    fn limits_are_sane() {
        let sizing = Sizing::new(0, 0, 0);
        assert_eq!(sizing.size(), 1);
        let mut sizing = Sizing::new(8, 4, 0);
        assert_eq!(sizing.ask(0), 8);
        assert_eq!(sizing.ask(0), 8, "max below min is min");
    }
}
