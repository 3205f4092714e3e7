//! A generator on a state word it does not own (`SharedWord`, in memory shared by processes,
//! as PostgreSQL's shared memory is): a parent and its forked children advance one state, so
//! none repeats another's IDs, while the fork rules of a fixed node ID stay as they are.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::sync::atomic::AtomicU64;

use flakery::node::{FixedNode, Grant, NodeId, NodeLease, NodeSource};
use flakery::{ErrorCode, Generator, Result, SharedWord};

const CHILDREN: usize = 3;
const IDS_PER_PROCESS: usize = 50_000;

/// A word in an anonymous shared mapping: a fork shares it instead of copying it.
fn shared_word() -> &'static AtomicU64 {
    // SAFETY: a fresh anonymous mapping, zeroed, aligned to a page, never unmapped.
    unsafe {
        let page = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert_ne!(page, libc::MAP_FAILED);
        &*(page as *const AtomicU64)
    }
}

/// One node ID for every process that shares the word (as one PostgreSQL cluster's backends
/// do): a forked child keeps it, because the state it issues under is shared.
#[derive(Debug, Clone)]
struct ClusterNode(NodeId);

impl NodeLease for ClusterNode {
    fn source(&self) -> NodeSource {
        NodeSource::Explicit
    }
    fn grant(&self, _want_ms: i64, _now_ms: i64) -> Result<Grant> {
        Ok(Grant {
            node: self.0,
            floor_ms: i64::MIN,
            until_ms: i64::MAX,
        })
    }
    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        Ok(Box::new(self.clone()))
    }
}

const NODE: NodeId = NodeId {
    datacenter_id: 1,
    worker_id: 2,
};

/// Runs `work` in a forked child, whose result comes back through a pipe.
fn in_child(work: impl FnOnce() -> Vec<i64>) -> (libc::pid_t, std::fs::File) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    use std::os::fd::FromRawFd;
    match unsafe { libc::fork() } {
        0 => {
            unsafe { libc::close(fds[0]) };
            let mut out = unsafe { std::fs::File::from_raw_fd(fds[1]) };
            let ids = work();
            let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
            let _ = out.write_all(&bytes);
            drop(out);
            unsafe { libc::_exit(0) }
        }
        pid => {
            assert!(pid > 0);
            unsafe { libc::close(fds[1]) };
            (pid, unsafe { std::fs::File::from_raw_fd(fds[0]) })
        }
    }
}

fn read_ids(mut pipe: std::fs::File, pid: libc::pid_t) -> Vec<i64> {
    let mut bytes = Vec::new();
    pipe.read_to_end(&mut bytes).unwrap();
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn one_at_a_time(generator: &Generator<flakery::SystemClock, SharedWord>) -> Vec<i64> {
    (0..IDS_PER_PROCESS)
        .map(|_| generator.next_id().unwrap())
        .collect()
}

#[test]
fn forked_processes_on_one_shared_word_never_repeat_an_id() {
    let generator = Generator::builder()
        .lease(Box::new(ClusterNode(NODE)))
        .build_on(SharedWord::new(shared_word()))
        .unwrap();
    // The parent issues before the forks too: the children must start after those.
    let before: Vec<i64> = generator.next_ids(1000).unwrap();
    let children: Vec<_> = (0..CHILDREN)
        .map(|_| in_child(|| one_at_a_time(&generator)))
        .collect();
    let mut all = vec![before.clone(), one_at_a_time(&generator)];
    for (pid, pipe) in children {
        let ids = read_ids(pipe, pid);
        assert_eq!(ids.len(), IDS_PER_PROCESS, "a child did not finish");
        assert!(
            ids[0] > *before.last().unwrap(),
            "a child went back to the parent's state"
        );
        all.push(ids);
    }
    for ids in &all {
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "IDs decreased within one process"
        );
    }
    let total: usize = all.iter().map(Vec::len).sum();
    let distinct: HashSet<i64> = all.into_iter().flatten().collect();
    assert_eq!(
        total - distinct.len(),
        0,
        "duplicates among processes that share one word"
    );
}

#[test]
fn a_fixed_node_id_on_a_shared_word_still_refuses_in_a_forked_child() {
    let generator = Generator::builder()
        .lease(Box::new(FixedNode::new(NODE, NodeSource::Explicit)))
        .build_on(SharedWord::new(shared_word()))
        .unwrap();
    generator.next_id().unwrap();
    let (pid, pipe) = in_child(|| match generator.next_id() {
        Err(e) if e.code() == ErrorCode::Forked => vec![1],
        _ => vec![0],
    });
    assert_eq!(
        read_ids(pipe, pid),
        vec![1],
        "the child did not refuse with 'forked'"
    );
}

mod marks {
    use super::*;
    use flakery::lease::shared_mark::{read_floor, SharedMark};
    use flakery::{decode, FakeClock, Layout};

    const START_MS: i64 = 1_800_000_000_000;

    fn temp_mark(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "flakery-test-shared-mark-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("flakery.mark")
    }

    /// One run of the processes that share a word: a fresh (zeroed) word, the floor read at
    /// its start, as PostgreSQL's postmaster does on each start.
    fn start_run(
        path: &std::path::Path,
        clock: &FakeClock,
    ) -> flakery::Result<Generator<FakeClock, SharedWord>> {
        let floor_ms = read_floor(path)?;
        Generator::builder()
            .clock(clock.clone())
            .lease(Box::new(SharedMark::open(path, NODE, floor_ms)?))
            .build_on(SharedWord::new(shared_word()))
    }

    fn stored(path: &std::path::Path) -> i64 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn the_mark_is_written_ahead_of_every_id_issued() {
        let path = temp_mark("ahead");
        let clock = FakeClock::new(START_MS);
        let generator = start_run(&path, &clock).unwrap();
        for _ in 0..20 {
            let id = generator.next_id().unwrap();
            let used_ms = decode(id, &Layout::twitter()).unwrap().timestamp_ms;
            assert!(
                stored(&path) >= used_ms,
                "an ID was issued past the stored mark"
            );
            clock.advance(137);
        }
    }

    #[test]
    fn a_restart_with_the_clock_set_back_never_repeats_nor_lowers_an_id() {
        let path = temp_mark("restart");
        let clock = FakeClock::new(START_MS);
        let first = start_run(&path, &clock).unwrap();
        let mut last = 0;
        for _ in 0..1000 {
            last = first.next_id().unwrap();
            clock.advance(1);
        }
        drop(first); // a crash: nothing is written down on the way out
                     // Back by 10 s, far more than the tolerance: refused, not a lower ID.
        clock.set(START_MS - 10_000);
        let second = start_run(&path, &clock).unwrap();
        assert_eq!(
            second.next_id().unwrap_err().code(),
            ErrorCode::ClockMovedBackwards
        );
        drop(second);
        // Back to the last ID's time: the next run waits past the mark and goes on above.
        clock.set(START_MS + 999);
        let third = start_run(&path, &clock).unwrap();
        let next = third.next_id().unwrap();
        assert!(
            next > last,
            "{next} is not above {last}, issued before the restart"
        );
    }

    #[test]
    fn an_unreadable_mark_refuses_the_run() {
        let path = temp_mark("garbled");
        std::fs::write(&path, "yesterday\n").unwrap();
        let clock = FakeClock::new(START_MS);
        let error = start_run(&path, &clock).unwrap_err();
        assert_eq!(error.code(), ErrorCode::LeaseLost);
        assert!(error.message().contains("unreadable"), "{error}");
    }
}
