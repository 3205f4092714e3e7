//! The clock thread takes none of the process's signals: a host that handles them
//! (PostgreSQL's backends, whose handlers set their own flags and latches) expects them on its
//! own threads.

#[cfg(target_os = "linux")]
#[test]
fn the_clock_thread_blocks_every_signal() {
    let generator = flakery::Generator::builder().worker_id(1).build().unwrap();
    generator.next_id().unwrap();
    let mut found = None;
    for _ in 0..1000 {
        for task in std::fs::read_dir("/proc/self/task").unwrap() {
            let dir = task.unwrap().path();
            let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            if name.trim() == "flakery-clock" {
                found = std::fs::read_to_string(dir.join("status")).ok();
            }
        }
        if found.is_some() {
            break;
        }
        generator.next_id().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let status = found.expect("no flakery-clock thread started");
    let blocked = status
        .lines()
        .find_map(|line| line.strip_prefix("SigBlk:"))
        .unwrap()
        .trim();
    let mask = u64::from_str_radix(blocked, 16).unwrap();
    // Every standard signal (1-31) is blocked; the kernel keeps SIGKILL and SIGSTOP anyway.
    let unblockable = (1u64 << (libc::SIGKILL - 1)) | (1u64 << (libc::SIGSTOP - 1));
    let standard = (1u64 << 31) - 1;
    assert_eq!(
        mask & standard | unblockable,
        standard,
        "the clock thread takes signals: SigBlk {blocked}"
    );
}
