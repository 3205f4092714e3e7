//! `flakery doctor`: the exit status (0, 1 with each warning's fix, 2 refused) on real
//! configurations, and the shard skew against a simulation written here.

use super::*;

const DAY_MS: i64 = 86_400_000;

/// `flakery doctor --json` with `env`, its exit status and its report.
fn doctor(args: &[&str], env: &[(&str, &str)]) -> (i32, serde_json::Value) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flakery"));
    command.arg("doctor").arg("--json").args(args);
    for name in [
        "FLAKERY_LAYOUT",
        "FLAKERY_WORKER_ID",
        "FLAKERY_DATACENTER_ID",
        "FLAKERY_ZOOKEEPER",
        "FLAKERY_DATABASE_URL",
        "FLAKERY_LEASE_DIR",
        "FLAKERY_EXHAUSTION_WARNING_DAYS",
    ] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let output = command.output().expect("run flakery doctor");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let code = output.status.code().expect("an exit status");
    let text = String::from_utf8(output.stdout).unwrap();
    let report = if text.trim().is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    (code, report)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn findings(report: &serde_json::Value, level: &str) -> Vec<serde_json::Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["level"] == level)
        .cloned()
        .collect()
}

/// A layout whose 30 one-second time bits run out two years from now: a warning with its fix
/// (exit 1); twitter, with decades left, is all well (exit 0).
#[test]
fn a_layout_with_two_years_left_is_a_warning() {
    let end = now_ms() + 730 * DAY_MS;
    let epoch = end - (1i64 << 30) * 1000;
    let layout = format!("time:30,worker:10,sequence:23;epoch={epoch};unit=s");
    let (code, report) = doctor(&["--check", "layout", "--layout", &layout], &[]);
    assert_eq!(code, 1, "{report}");
    let warnings = findings(&report, "warning");
    assert_eq!(warnings.len(), 1, "{report}");
    assert_eq!(warnings[0]["topic"], "layout");
    assert!(
        warnings[0]["text"]
            .as_str()
            .unwrap()
            .contains("in 729 days"),
        "{report}"
    );
    assert!(!warnings[0]["fix"].as_str().unwrap().is_empty());
    let days = report["layout"]["days_left"].as_i64().unwrap();
    assert!((729..=730).contains(&days), "{report}");
    // The same layout with a margin under two years is all well.
    let (code, report) = doctor(
        &["--check", "layout", "--layout", &layout],
        &[("FLAKERY_EXHAUSTION_WARNING_DAYS", "700")],
    );
    assert_eq!(code, 0, "{report}");
    let (code, report) = doctor(&["--check", "layout", "--layout", "twitter"], &[]);
    assert_eq!(code, 0, "{report}");
    // twitter's IDs pass 2^53 25 days after its epoch: a note, not a warning.
    assert_eq!(report["layout"]["passes_2_53"], "2010-11-28T22:14:18.305Z");
    assert_eq!(findings(&report, "note").len(), 1, "{report}");
    // safe53's IDs never pass 2^53: the date is there, as null (not a report missing).
    let (code, safe) = doctor(&["--check", "layout", "--layout", "safe53"], &[]);
    assert_eq!(code, 0, "{safe}");
    let layout = safe["layout"].as_object().expect("a layout section");
    assert_eq!(
        layout.get("passes_2_53"),
        Some(&serde_json::Value::Null),
        "{safe}"
    );
}

/// A configuration a generator would refuse exits 2: a layout that ran out (baidu's, in
/// 2024), a worker ID the layout cannot hold, a layout that does not parse.
#[test]
fn a_refused_configuration_exits_2() {
    let (code, report) = doctor(&["--check", "layout", "--layout", "baidu"], &[]);
    assert_eq!(code, 2, "{report}");
    assert!(findings(&report, "refused")[0]["text"]
        .as_str()
        .unwrap()
        .contains("ran out at 2024-11-20"));
    let (code, report) = doctor(&["--check", "node"], &[("FLAKERY_WORKER_ID", "1024")]);
    assert_eq!(code, 2, "{report}");
    assert_eq!(report["node"]["source"], "refused");
    assert_eq!(findings(&report, "refused")[0]["topic"], "node");
    let (code, _) = doctor(&["--layout", "time:99"], &[]);
    assert_eq!(code, 2);
}

/// The node section names its source and the steps to it, and takes no lease unless asked.
#[test]
fn the_node_section_says_where_the_id_comes_from() {
    let (code, report) = doctor(&["--check", "node"], &[("FLAKERY_WORKER_ID", "7")]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["node"]["source"], "environment");
    assert_eq!(report["node"]["worker_id"], 7);
    assert_eq!(report["node"]["variables"]["FLAKERY_WORKER_ID"], "7");
    let steps = report["node"]["steps"].as_array().unwrap();
    assert!(steps.last().unwrap().as_str().unwrap().contains("worker 7"));
    // A host lease in a directory of the test's own: --lease takes one and gives it back.
    let dir = std::env::temp_dir().join(format!("flakery-doctor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_text = dir.to_str().unwrap();
    let (_, report) = doctor(
        &["--check", "node", "--lease"],
        &[("FLAKERY_LEASE_DIR", dir_text)],
    );
    assert_eq!(report["node"]["source"], "host lease", "{report}");
    assert_eq!(report["node"]["lease"]["taken"], true, "{report}");
    assert_eq!(report["node"]["lease"]["worker_id"], 0, "{report}");
    assert!(dir.join("flakery.default.node-0").exists());
    // Held by this test's process: the report names the holder, and leases around it.
    let held = std::fs::File::open(dir.join("flakery.default.node-0")).unwrap();
    // SAFETY: a valid descriptor of a file this test owns.
    assert_eq!(
        unsafe {
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&held),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        },
        0
    );
    let (_, report) = doctor(
        &["--check", "node", "--lease"],
        &[("FLAKERY_LEASE_DIR", dir_text)],
    );
    let holders = report["node"]["host_lease"]["holders"].as_array().unwrap();
    assert_eq!(holders.len(), 1, "{report}");
    assert_eq!(holders[0]["node_index"], "0");
    assert_eq!(holders[0]["pid"], std::process::id());
    assert_eq!(report["node"]["lease"]["worker_id"], 1, "{report}");
    drop(held);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// twitter at 10 IDs a second: every ID opens a tick, its sequence 0, so `id % N` is the
/// time's and the node's bits alone. Counted here from the layout's definition (time since
/// 2010-11-04T01:42:54.657Z above 22 bits, the worker above 12), not by the core.
#[test]
fn the_shard_skew_of_twitter_at_10_per_second_is_the_simulations() {
    // Worker 7 (7·2^12, not a multiple of 10) moves the residues, as the node bits do.
    for shards in [2u64, 3, 7, 10] {
        let shards_text = shards.to_string();
        let (code, report) = doctor(
            &[
                "--check",
                "shards",
                "--shards",
                &shards_text,
                "--rate",
                "10/s",
                "--layout",
                "twitter",
            ],
            &[("FLAKERY_WORKER_ID", "7")],
        );
        let s = &report["shards"];
        let start = s["start_ms"].as_i64().unwrap();
        assert_eq!(s["simulated_ids"], 600);
        assert_eq!(s["worker_id"], 7);
        let mut expected = vec![0u64; shards as usize];
        for i in 0..600i64 {
            let ms = start + i * 100;
            let id = (((ms - 1_288_834_974_657) as u64) << 22) | (7 << 12);
            expected[(id % shards) as usize] += 1;
        }
        let got: Vec<u64> = s["configured"]["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert_eq!(got, expected, "{shards} shards");
        let max = *expected.iter().max().unwrap();
        let skewed = 2 * max * shards > 3 * 600;
        assert_eq!(code, i32::from(skewed), "{report}");
        if skewed {
            let warning = &findings(&report, "warning")[0];
            assert_eq!(warning["topic"], "shards");
            assert!(warning["fix"]
                .as_str()
                .unwrap()
                .contains("random_sequence_start"));
        }
        let random: u64 = s["with_random_sequence_start"]["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(random, 600);
    }
    // With two shards every ID is even: all on shard 0.
    let (code, report) = doctor(
        &["--check", "shards", "--shards", "2", "--rate", "10"],
        &[("FLAKERY_WORKER_ID", "5")],
    );
    assert_eq!(code, 1);
    assert_eq!(
        report["shards"]["configured"]["ids"],
        serde_json::json!([600, 0])
    );
}

/// The host lease directory as another process sees it: the same in a mount namespace of
/// its own that mounts nothing there (all well), a tmpfs mounted over it in that namespace
/// (a warning: generators on either side would lease the same node IDs). Mounts made inside
/// `unshare -m` go with it.
#[test]
#[ignore = "needs root and mount namespaces (unshare -m): run by tests/security/run.sh"]
fn a_lease_dir_another_mount_namespace_does_not_share_is_a_warning() {
    let dir = std::env::temp_dir().join(format!("flakery-doctor-ns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_text = dir.to_str().unwrap().to_string();
    let me = std::process::id().to_string();
    let in_namespace = |mount: bool| {
        let script = format!(
            "{}FLAKERY_LEASE_DIR='{dir_text}' '{}' doctor --check node --json --shared-with {me}",
            if mount {
                format!("mount -t tmpfs flakery-doctor '{dir_text}' && ")
            } else {
                String::new()
            },
            env!("CARGO_BIN_EXE_flakery"),
        );
        let output = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script])
            .env_remove("FLAKERY_WORKER_ID")
            .env_remove("FLAKERY_DATACENTER_ID")
            .env_remove("FLAKERY_ZOOKEEPER")
            .env_remove("FLAKERY_DATABASE_URL")
            .output()
            .expect("run unshare");
        let text = String::from_utf8(output.stdout).unwrap();
        let report: serde_json::Value = serde_json::from_str(text.trim())
            .unwrap_or_else(|e| panic!("{e}: {text} {}", String::from_utf8_lossy(&output.stderr)));
        (output.status.code(), report)
    };
    let (code, shared) = in_namespace(false);
    let (code_apart, apart) = in_namespace(true);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(shared["node"]["host_lease"]["shared"], true, "{shared}");
    assert_eq!(code, Some(0), "{shared}");
    assert_eq!(apart["node"]["host_lease"]["shared"], false, "{apart}");
    assert_eq!(code_apart, Some(1), "{apart}");
    let warning = &findings(&apart, "warning")[0];
    assert_eq!(warning["topic"], "host lease");
    assert!(warning["fix"].as_str().unwrap().contains("mount the same"));
}

/// The kernel's clock status, saved and put back when dropped (also when the test fails).
struct KernelClockStatus(libc::timex);

impl KernelClockStatus {
    fn read() -> libc::timex {
        // SAFETY: a zeroed timex with modes 0 only reads.
        let mut tx: libc::timex = unsafe { std::mem::zeroed() };
        assert!(unsafe { libc::adjtimex(&mut tx) } >= 0);
        tx
    }

    fn set(status: i32, maxerror: libc::c_long) {
        // SAFETY: a zeroed timex with the two fields named in modes set.
        let mut tx: libc::timex = unsafe { std::mem::zeroed() };
        tx.modes = libc::ADJ_STATUS | libc::ADJ_MAXERROR;
        tx.status = status;
        tx.maxerror = maxerror;
        let rc = unsafe { libc::adjtimex(&mut tx) };
        assert!(
            rc >= 0,
            "adjtimex: {} (CAP_SYS_TIME is needed)",
            std::io::Error::last_os_error()
        );
    }
}

impl Drop for KernelClockStatus {
    fn drop(&mut self) {
        KernelClockStatus::set(self.0.status, self.0.maxerror);
    }
}

/// The kernel's own STA_UNSYNC, set and cleared through adjtimex: the doctor reads it back
/// (read-only) as a warning with its fix, and as all well. The status and the maximum error
/// are put back afterwards, also on failure (the guard's Drop).
#[test]
#[ignore = "changes the kernel's clock status (root, CAP_SYS_TIME): run by tests/security/run.sh"]
fn the_kernels_unsynchronised_clock_is_a_warning() {
    let saved = KernelClockStatus(KernelClockStatus::read());
    let status = saved.0.status;
    // A maximum error under the kernel's 16 s limit, or it marks the clock unsynchronised
    // again at the next second.
    KernelClockStatus::set(status & !libc::STA_UNSYNC, 1000);
    let (code, synced) = doctor(&["--check", "clock"], &[]);
    KernelClockStatus::set(status | libc::STA_UNSYNC, 1000);
    let (code_unsynced, unsynced) = doctor(&["--check", "clock"], &[]);
    drop(saved);
    assert_eq!(synced["clock"]["synchronised"], true, "{synced}");
    assert_eq!(code, 0, "{synced}");
    assert_eq!(unsynced["clock"]["synchronised"], false, "{unsynced}");
    assert_eq!(code_unsynced, 1, "{unsynced}");
    assert!(findings(&unsynced, "warning")[0]["fix"]
        .as_str()
        .unwrap()
        .contains("time daemon"));
}

/// A coordinator is probed without a lease: a loopback listener standing in for ZooKeeper
/// accepts the connection, but never answers the census (a warning, exit 1: its node IDs
/// could not be counted); closed, the generator would be refused (exit 2). Credentials are
/// reported as on, never shown. (Counts against real servers: the coordinators' census tests.)
#[test]
fn a_coordinator_is_probed_not_leased() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let connect = format!("app:s3cret@{}/ids", listener.local_addr().unwrap());
    let (code, report) = doctor(&["--check", "node"], &[("FLAKERY_ZOOKEEPER", &connect)]);
    let c = &report["node"]["coordinator"];
    assert_eq!(code, 1, "{report}");
    assert_eq!(c["credentials"], true);
    assert_eq!(c["addresses"][0]["reachable"], true, "{report}");
    assert!(
        c["node_ids"]
            .as_str()
            .unwrap()
            .starts_with("not counted: coordinator_unavailable"),
        "{report}"
    );
    assert!(findings(&report, "warning")[0]["text"]
        .as_str()
        .unwrap()
        .contains("could not be counted"));
    assert!(!report.to_string().contains("s3cret"), "{report}");
    drop(listener);
    let (code, report) = doctor(&["--check", "node"], &[("FLAKERY_ZOOKEEPER", &connect)]);
    assert_eq!(code, 2, "{report}");
    assert_eq!(
        report["node"]["coordinator"]["addresses"][0]["reachable"],
        false
    );
    assert_eq!(findings(&report, "refused")[0]["topic"], "coordinator");
}
