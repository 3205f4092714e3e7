//! A lease directory that another local user has filled with traps: links, FIFOs, directories,
//! sparse and garbled files, far-future marks, hard links to files elsewhere. The generator
//! must skip each of those node IDs without writing, changing or blocking on anything, and
//! when none is left, say which files are in the way.
//!
//! The traps are laid at both the file names of today (`flakery.<ns>.node-<i>` directly in
//! the directory) and the older per-namespace subdirectory (`<ns>/node-<i>`), so that the
//! same test also catches a lease that reads the old place.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use flakery::{ErrorCode, Generator, Layout, Options};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flakery-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("default")).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Where a lease file of node index `index` is looked for, today's name first.
fn lease_paths(dir: &Path, index: u64) -> [PathBuf; 2] {
    [
        dir.join(format!("flakery.default.node-{index}")),
        dir.join(format!("default/node-{index}")),
    ]
}

/// Builds in a thread, so that a lease that blocks (on a FIFO, say) fails the test instead of
/// hanging it.
fn build_within(options: Options, secs: u64) -> flakery::Result<Generator> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(Generator::new(options));
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("making the generator blocked")
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o666) },
        0,
        "{}",
        path.display()
    );
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A trap of each kind at one node index; what each must leave untouched is checked after.
struct Traps {
    victim: PathBuf,
    linked_victim: PathBuf,
}

fn lay_traps(dir: &Path, outside: &Path) -> Traps {
    let victim = outside.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let linked_victim = outside.join("linked-victim");
    std::fs::write(&linked_victim, "").unwrap();
    std::fs::set_permissions(&linked_victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    for path in lease_paths(dir, 0) {
        std::os::unix::fs::symlink(&victim, path).unwrap();
    }
    for path in lease_paths(dir, 1) {
        mkfifo(&path);
    }
    for path in lease_paths(dir, 2) {
        std::fs::create_dir(path).unwrap();
    }
    for path in lease_paths(dir, 3) {
        let file = std::fs::File::create(path).unwrap();
        file.set_len(1 << 40).unwrap(); // a terabyte of holes
    }
    for path in lease_paths(dir, 4) {
        std::fs::write(path, "not a time at all\n").unwrap();
    }
    let far = now_ms() + 10 * 365 * 86_400_000; // ten years ahead, inside twitter's range
    for path in lease_paths(dir, 5) {
        std::fs::write(path, format!("{far:>20}\n")).unwrap();
    }
    for path in lease_paths(dir, 6) {
        std::fs::hard_link(&linked_victim, path).unwrap();
    }
    for path in lease_paths(dir, 7) {
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    Traps {
        victim,
        linked_victim,
    }
}

fn assert_untouched(traps: &Traps) {
    assert_eq!(
        std::fs::read_to_string(&traps.victim).unwrap(),
        "precious\n"
    );
    let mode = std::fs::metadata(&traps.victim).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o600, "the link's target was chmodded");
    assert_eq!(
        std::fs::read_to_string(&traps.linked_victim).unwrap(),
        "",
        "a mark was written through a hard link"
    );
    let mode = std::fs::metadata(&traps.linked_victim).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o600, "a hard-linked file was chmodded");
}

#[test]
fn every_trap_is_skipped_untouched_and_the_first_clean_index_is_leased() {
    let dir = temp_dir("traps");
    let outside = temp_dir("traps-outside");
    let traps = lay_traps(&dir, &outside);
    let options = Options {
        lease_dir: Some(dir.clone()),
        ..Options::default()
    };
    let generator = build_within(options, 20).unwrap();
    assert_eq!(generator.worker_id(), 8, "indexes 0 to 7 hold traps");
    let ids = generator.next_ids(10_000).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    drop(generator);
    assert_untouched(&traps);
    assert!(std::fs::symlink_metadata(&lease_paths(&dir, 0)[0])
        .unwrap()
        .file_type()
        .is_symlink());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn when_every_index_is_trapped_the_error_names_each_file_and_what_is_wrong() {
    let dir = temp_dir("all-trapped");
    let outside = temp_dir("all-trapped-outside");
    let traps = lay_traps(&dir, &outside);
    // Eight node IDs: every one trapped.
    let layout = Layout::parse("time:41,worker:3,sequence:12;epoch=1288834974657").unwrap();
    let options = Options {
        lease_dir: Some(dir.clone()),
        layout: Some(layout),
        ..Options::default()
    };
    let err = build_within(options, 20).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
    let message = err.message();
    for (index, what) in [
        (0, "a symbolic link"),
        (1, "not a regular file"),
        (2, "a directory"),
        (3, "1099511627776 bytes"),
        (4, "its high-water mark is unreadable"),
        (5, "its high-water mark "),
        (6, "has 3 hard links"),
        (7, "writable by other users"),
    ] {
        let name = format!("flakery.default.node-{index}: {what}");
        assert!(message.contains(&name), "no '{name}' in: {message}");
    }
    assert!(message.contains("Remove the files named"), "{message}");
    assert_untouched(&traps);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn a_far_future_mark_is_named_with_its_file_and_the_next_index_is_used() {
    let dir = temp_dir("far-future");
    let far = now_ms() + 3_600_000;
    for path in lease_paths(&dir, 0) {
        std::fs::write(path, format!("{far:>20}\n")).unwrap();
    }
    let options = Options {
        lease_dir: Some(dir.clone()),
        ..Options::default()
    };
    let generator = build_within(options.clone(), 20).unwrap();
    assert_eq!(generator.worker_id(), 1);
    generator.next_id().unwrap();
    drop(generator);

    let one = Options {
        layout: Some(Layout::parse("time:41,sequence:12;epoch=1288834974657").unwrap()),
        ..options
    };
    let err = build_within(one, 20).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
    let expected = format!("flakery.default.node-0: its high-water mark {far} (");
    assert!(err.message().contains(&expected), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_lease_directory_another_user_could_replace_is_refused() {
    let dir = temp_dir("open");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap(); // no sticky bit
    let options = Options {
        lease_dir: Some(dir.join("leases")),
        ..Options::default()
    };
    let err = build_within(options, 20).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    assert!(err.message().contains("writable by other users"), "{err}");
    assert!(err.message().contains("not sticky"), "{err}");
    assert!(err.message().contains("FLAKERY_LEASE_DIR"), "{err}");
    assert!(!dir.join("leases").exists(), "it made a directory in it");
    let _ = std::fs::remove_dir_all(&dir);
}
