//! A clock's reading "at hand" (`Clock::now_ms_at_hand`: the system clock's published word as
//! it is) may be negative, meaning "not at hand": unread by any caller yet, or nothing
//! published (core/src/clock/ticker.rs). The generator's hot path takes it through its check
//! against the layout's origin, with no test of its own, so such a word must fail that check
//! for every layout and send the call the long way (`now_ms_coarse`), never become a tick.

use flakery::{Clock, FakeClock, Generator, Layout};

/// A clock whose reading at hand is always `at_hand` (a word of the ticker's shape), while
/// its real readings come from a fake clock.
struct NotAtHand {
    time: FakeClock,
    at_hand: i64,
}

impl Clock for NotAtHand {
    fn now_ms(&self) -> i64 {
        self.time.now_ms()
    }
    fn now_ms_at_hand(&self) -> i64 {
        self.at_hand
    }
    fn wait_until_ms(&self, target_ms: i64) {
        self.time.wait_until_ms(target_ms)
    }
}

/// `1 << 63 | ms`: the ticker's unread word for `ms`, as an i64.
fn unread(ms: i64) -> i64 {
    (1u64 << 63 | ms as u64) as i64
}

#[test]
fn a_reading_not_at_hand_is_never_taken_for_the_time() {
    let now = 1_700_000_000_123;
    let layouts = [
        "twitter",                                                    // ms ticks, epoch 2010
        "time:41,worker:10,sequence:12;epoch=0",                      // ms ticks, the Unix epoch
        "time:39,sequence:8,worker:16;unit=10ms;epoch=1409529600000", // 10 ms ticks
    ];
    // Nothing published (the ticker's empty word), unread words of 1970, of now, of a few
    // milliseconds ahead (taken for the time, they would show in the IDs) and of a reading
    // far ahead, and plain negatives.
    let words = [
        i64::MIN,
        unread(1),
        unread(now),
        unread(now + 5),
        unread(now + 20_000),
        unread((1 << 62) - 1),
        -1,
    ];
    for spec in layouts {
        let layout = Layout::parse(spec).unwrap();
        for at_hand in words {
            let time = FakeClock::new(now);
            let generator = Generator::builder()
                .layout(layout.clone())
                .worker_id(1)
                .clock(NotAtHand { time, at_hand })
                .build()
                .unwrap();
            for _ in 0..3 {
                let id = generator.next_id().unwrap();
                let decoded = flakery::decode(id, &layout).unwrap();
                let unit = layout.unit().millis();
                assert_eq!(
                    decoded.timestamp_ms,
                    now - (now - layout.epoch_ms()).rem_euclid(unit),
                    "layout {spec}, word at hand {at_hand:#x}"
                );
            }
        }
    }
}
