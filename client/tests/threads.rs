//! `close()` ends the client's thread (the refiller) before it returns, unless that thread is
//! in a request: a program that makes and closes clients in a loop keeps the threads it had,
//! however late the threads would end by themselves (a loaded machine). Every binding's
//! `close()` is this one. A test binary of its own: the harness's threads would be counted.

use std::net::TcpListener;
use std::sync::Arc;

#[path = "fake/mod.rs"]
mod fake;

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn no_thread_outlives_close() {
    // One connection at a time, on one thread started before the count: a client's pooled
    // connection closes when it is dropped, and the next client's is accepted then.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let answering = format!("http://{}", listener.local_addr().unwrap());
    let served = Arc::new(fake::Fake::default());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = fake::answer(stream, &served);
        }
    });
    let refused = "http://127.0.0.1:1".to_string();
    let baseline = threads();
    for round in 0..20 {
        for (url, answers) in [(&answering, true), (&refused, false)] {
            let client = fake::client_of_blocks(url, 10);
            // Starts the refiller, which then waits: for the next call, or to retry.
            assert_eq!(client.next_id().is_ok(), answers, "{url}");
            client.close();
            let now = threads();
            assert_eq!(
                now, baseline,
                "{now} threads after close() in round {round} ({url}), {baseline} before"
            );
        }
        // Never made a thread.
        fake::client_of_blocks(&answering, 10).close();
        assert_eq!(threads(), baseline);
    }
}
