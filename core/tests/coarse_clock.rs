//! A generator on `CoarseSystemClock` makes its IDs without the clock thread (for hosts of
//! many processes, such as PostgreSQL's backends). Alone in its test binary: any generator on
//! `SystemClock` in this process would start the thread.

#[cfg(target_os = "linux")]
#[test]
fn no_clock_thread_starts() {
    let generator = flakery::Generator::builder()
        .worker_id(1)
        .clock(flakery::CoarseSystemClock)
        .build()
        .unwrap();
    let ids: Vec<i64> = (0..20_000).map(|_| generator.next_id().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "IDs did not increase");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let threads: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .map(|task| {
            std::fs::read_to_string(task.unwrap().path().join("comm"))
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect();
    assert!(
        !threads.iter().any(|name| name == "flakery-clock"),
        "a clock thread started: {threads:?}"
    );
}
