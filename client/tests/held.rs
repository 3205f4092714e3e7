//! The block a thread holds for its lock-free calls is claimed from by its own client only,
//! and never in a `fork()`'s child: two clients taking turns on one thread, and a child forked
//! by the thread that holds its parent's block (the fake servers count the IDs they gave).

use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use flakery_client::Client;

#[path = "fake/mod.rs"]
mod fake;

fn client_of(url: &str) -> Client {
    Client::builder()
        .server(url)
        .block_sizes(100, 100)
        .prefetch(false)
        .max_age(Duration::from_secs(600))
        .build()
        .unwrap()
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
    let mut pipe = [0; 2];
    // SAFETY: a pipe of two descriptors, for the child's answer.
    assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
    // SAFETY: the child calls the client, writes to the pipe and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let id = client.next_id().unwrap_or(-1);
        let bytes = id.to_le_bytes();
        // SAFETY: writes 8 bytes from a live buffer; `_exit` runs no destructor of the parent's.
        unsafe {
            libc::write(pipe[1], bytes.as_ptr().cast(), bytes.len());
            libc::_exit(0);
        }
    }
    // SAFETY: closes the parent's copy of the write end, so a child that died closes the pipe.
    unsafe { libc::close(pipe[1]) };
    let mut bytes = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a live buffer; reaps the child.
    let read = unsafe { libc::read(pipe[0], bytes.as_mut_ptr().cast(), bytes.len()) };
    let mut status = 0;
    unsafe {
        libc::close(pipe[0]);
        libc::waitpid(pid, &mut status, 0);
    }
    assert_eq!(read, 8, "the child answered nothing (status {status})");
    let childs = i64::from_le_bytes(bytes);
    assert!(
        childs > given_before_fork,
        "the child handed out {childs}, of the parent's blocks (up to {given_before_fork}; \
         the parent's last was {parents})"
    );
    // The parent goes on with its own block.
    assert_eq!(client.next_id().unwrap(), parents + 1);
}
