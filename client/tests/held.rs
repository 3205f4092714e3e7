//! The block a thread holds for its lock-free calls is claimed from by its own client only,
//! and never in a `fork()`'s child: two clients taking turns on one thread, and a child forked
//! by the thread that holds its parent's block (the fake servers count the IDs they gave).

use flakery_client::Client;
use std::sync::atomic::Ordering::SeqCst;

#[path = "child/mod.rs"]
mod child;
#[path = "fake/mod.rs"]
mod fake;

fn client_of(url: &str) -> Client {
    fake::client_of_blocks(url, 100)
}

/// Two clients of two servers whose IDs do not overlap, taking turns on one thread: each
/// thread holds one block at a time, and a client never claims from the other's.
#[test]
fn clients_taking_turns_on_a_thread_each_hand_out_their_own_ids() {
    let (first_url, _first) = fake::fake_server();
    let (second_url, second) = fake::fake_server();
    second.next.store(1 << 40, SeqCst);
    let (first, second) = (client_of(&first_url), client_of(&second_url));
    for turn in 0..300 {
        let (a, b) = (first.next_id().unwrap(), second.next_id().unwrap());
        assert!(a < 1 << 40, "turn {turn}: the first client handed out {a}");
        assert!(b > 1 << 40, "turn {turn}: the second client handed out {b}");
    }
}

/// The parent's thread holds a block (its second call took it up); the child it forks calls
/// on that thread and gets an ID of a block of its own, asked for after the fork.
#[test]
fn a_forked_child_never_claims_from_its_parents_held_block() {
    let (url, fake) = fake::fake_server();
    let client = client_of(&url);
    client.next_id().unwrap();
    let parents = client.next_id().unwrap();
    assert!(client.stats().held > 0, "the parent holds a block");
    // Every ID of the parent's blocks is at or below this.
    let given_before_fork = fake.next.load(SeqCst);
    let childs =
        child::in_child(|| client.next_id().unwrap_or(-1)).expect("the child answered nothing");
    assert!(
        childs > given_before_fork,
        "the child handed out {childs}, of the parent's blocks (up to {given_before_fork}; \
         the parent's last was {parents})"
    );
    // The parent goes on with its own block.
    assert_eq!(client.next_id().unwrap(), parents + 1);
}
