//! flakery itself, as a peer: the generator the table is about.

use flakery::{Generator, SequencePolicy};

use crate::peer::{ms_meta, twitter_ms, Meta, Peer, TWITTER_LAYOUT};

/// flakery on the `twitter` layout, worker 1: `Flakery<true>` in borrow mode (24 hours of
/// borrowing), `Flakery<false>` in wait mode (the default policy).
pub struct Flakery<const BORROW: bool>;
pub type FlakeryBorrow = Flakery<true>;
pub type FlakeryWait = Flakery<false>;

impl<const BORROW: bool> Peer for Flakery<BORROW> {
    const META: Meta = if BORROW {
        Meta {
            flakery: true,
            ..ms_meta(
                "flakery-borrow",
                "flakery (borrow)",
                "flakery",
                "Generator::builder().worker_id(1).sequence_policy(Borrow).max_borrow_ms(86_400_000); batch: next_ids(n)",
                TWITTER_LAYOUT,
                "borrow: when a millisecond's 4,096 sequence numbers are used up it takes the next millisecond's, up to max_borrow_ms ahead of the clock",
            )
        }
    } else {
        Meta {
            flakery: true,
            ..ms_meta(
                "flakery-wait",
                "flakery (wait)",
                "flakery",
                "Generator::builder().worker_id(1).build() (sequence_policy Wait, the default); batch: next_ids(n)",
                TWITTER_LAYOUT,
                "wait: when a millisecond's 4,096 sequence numbers are used up it waits for the next millisecond",
            )
        }
    };
    type Gen = Generator;
    type Shared = Generator;
    fn make() -> Generator {
        Generator::builder()
            .worker_id(1)
            .sequence_policy(if BORROW {
                SequencePolicy::Borrow
            } else {
                SequencePolicy::Wait
            })
            .max_borrow_ms(24 * 3_600_000)
            .build()
            .expect("flakery generator")
    }
    #[inline(always)]
    fn next(g: &mut Generator) -> u128 {
        Self::next_shared(g)
    }
    type Batch = Vec<i64>;
    fn batch(g: &mut Generator, n: usize) -> Vec<i64> {
        g.next_ids(n).expect("next_ids")
    }
    fn ids(batch: Vec<i64>) -> Vec<u128> {
        batch.into_iter().map(|id| id as u128).collect()
    }
    fn make_shared() -> Option<Generator> {
        Some(Self::make())
    }
    #[inline(always)]
    fn next_shared(g: &Generator) -> u128 {
        g.next_id().expect("next_id") as u128
    }
    fn ts(id: u128) -> i64 {
        twitter_ms(id)
    }
    fn slow_path(g: &Generator) -> Option<serde_json::Value> {
        let counts = g.slow_path_counts();
        Some(serde_json::json!({
            "sequence_waits": counts.sequence_waits,
            "ticks_borrowed": counts.ticks_borrowed,
        }))
    }
}
