//! The 128-bit time-ordered IDs (UUIDv7, ULID), set beside the 64-bit ones for scale.

use crate::peer::{loop_batch, ms_meta, uuid_ms, Meta, Peer};

pub struct UuidV7;
impl Peer for UuidV7 {
    const META: Meta = Meta {
        ceiling_per_s: None,
        ..ms_meta(
            "uuid-v7",
            "uuid (v7)",
            "uuid",
            "Uuid::now_v7() (features [\"v7\"])",
            "UUIDv7, 128 bits: ms timestamp 48 | counter and random",
            "128-bit IDs, not 64",
        )
    };
    type Gen = ();
    type Shared = ();
    fn make() {}
    #[inline(always)]
    fn next(_: &mut ()) -> u128 {
        uuid::Uuid::now_v7().as_u128()
    }
    type Batch = Vec<uuid::Uuid>;
    fn batch(_: &mut (), n: usize) -> Vec<uuid::Uuid> {
        loop_batch(n, uuid::Uuid::now_v7)
    }
    fn ids(batch: Vec<uuid::Uuid>) -> Vec<u128> {
        batch.into_iter().map(|u| u.as_u128()).collect()
    }
    fn make_shared() -> Option<()> {
        Some(())
    }
    fn next_shared(_: &()) -> u128 {
        uuid::Uuid::now_v7().as_u128()
    }
    fn ts(id: u128) -> i64 {
        uuid_ms(id)
    }
}

pub struct Ulid;
impl Peer for Ulid {
    const META: Meta = Meta {
        ceiling_per_s: None,
        ..ms_meta(
            "ulid",
            "ulid",
            "ulid",
            "Ulid::generate()",
            "ULID, 128 bits: ms timestamp 48 | random 80",
            "128-bit IDs, random within a millisecond: not ordered within a millisecond",
        )
    };
    type Gen = ();
    type Shared = ();
    fn make() {}
    #[inline(always)]
    fn next(_: &mut ()) -> u128 {
        ulid::Ulid::generate().0
    }
    type Batch = Vec<ulid::Ulid>;
    fn batch(_: &mut (), n: usize) -> Vec<ulid::Ulid> {
        loop_batch(n, ulid::Ulid::generate)
    }
    fn ids(batch: Vec<ulid::Ulid>) -> Vec<u128> {
        batch.into_iter().map(|u| u.0).collect()
    }
    fn make_shared() -> Option<()> {
        Some(())
    }
    fn next_shared(_: &()) -> u128 {
        ulid::Ulid::generate().0
    }
    fn ts(id: u128) -> i64 {
        uuid_ms(id)
    }
}
