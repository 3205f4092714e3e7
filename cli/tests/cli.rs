//! The `flakery` binary as a user runs it.

use std::process::{Command, Output};

fn flakery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flakery"))
        .args(args)
        .env_remove("FLAKERY_LAYOUT")
        .env_remove("FLAKERY_WORKER_ID")
        .env_remove("FLAKERY_DATACENTER_ID")
        .output()
        .expect("run flakery")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A failure is one line naming the problem, a non-zero exit, and never a panic.
fn fails_with(args: &[&str], code: &str, needle: &str) {
    let output = flakery(args);
    assert!(!output.status.success(), "{args:?} succeeded");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    assert!(
        stderr.contains(code) && stderr.contains(needle),
        "{args:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn next_prints_increasing_ids_with_the_given_node() {
    let out = stdout(&flakery(&[
        "next",
        "-n",
        "5000",
        "--datacenter-id",
        "3",
        "--worker-id",
        "9",
    ]));
    let ids: Vec<i64> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 5000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let decoded = stdout(&flakery(&["decode", &ids[0].to_string(), "--json"]));
    let v: serde_json::Value = serde_json::from_str(decoded.trim()).unwrap();
    assert_eq!(v["datacenter_id"], 3);
    assert_eq!(v["worker_id"], 9);
}

/// A count larger than memory streams out; a reader that stops reading ends it with the
/// one-line error, not a panic.
#[test]
fn next_streams_any_count() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_flakery"))
        .args(["next", "-n", &u64::MAX.to_string(), "--worker-id", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run flakery");
    let ids: Vec<i64> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .take(10_000)
        .map(|line| line.unwrap().parse().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn next_follows_the_layout() {
    let out = stdout(&flakery(&[
        "next",
        "--layout",
        "instagram",
        "--worker-id",
        "8000",
    ]));
    let id = out.trim();
    let decoded = stdout(&flakery(&["decode", id, "--layout", "instagram", "--json"]));
    let v: serde_json::Value = serde_json::from_str(decoded.trim()).unwrap();
    assert_eq!(v["worker_id"], 8000);
}

#[test]
fn decode_json_has_the_documented_keys() {
    let out = stdout(&flakery(&[
        "decode",
        "175928847299117063",
        "--layout",
        "discord",
        "--json",
    ]));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["id"], 175928847299117063i64);
    assert_eq!(v["timestamp_ms"], 1462015105796i64);
    assert_eq!(v["time"], "2016-04-30T11:18:25.796Z");
    assert_eq!(v["datacenter_id"], 1);
    assert_eq!(v["worker_id"], 0);
    assert_eq!(v["sequence"], 7);
    let fields: Vec<&String> = v["fields"].as_object().unwrap().keys().collect();
    assert_eq!(fields, ["time", "datacenter", "worker", "sequence"]);
}

#[test]
fn decode_is_readable_by_default_and_shows_constants() {
    let out = stdout(&flakery(&["decode", "1541815603606036480"]));
    assert!(out.contains("2022-06-28T16:07:40.105Z"), "{out}");
    assert!(
        out.contains("datacenter 11") && out.contains("worker 26"),
        "{out}"
    );
    let out = stdout(&flakery(&[
        "decode",
        "6930907535275728894",
        "--layout",
        "vesta-min-granularity",
    ]));
    assert!(out.contains("type 1") && out.contains("method 2"), "{out}");
}

#[test]
fn compose_inverts_decode() {
    let out = stdout(&flakery(&[
        "compose",
        "--layout",
        "twitter",
        "--timestamp-ms",
        "1656432460105",
        "--datacenter-id",
        "11",
        "--worker-id",
        "26",
    ]));
    assert_eq!(out.trim(), "1541815603606036480");
    let out = stdout(&flakery(&[
        "compose",
        "--layout",
        "vesta-min-granularity",
        "--timestamp-ms",
        "1420041600000",
        "--worker-id",
        "1",
        "--field",
        "method=2",
    ]));
    let decoded = stdout(&flakery(&[
        "decode",
        out.trim(),
        "--layout",
        "vesta-min-granularity",
        "--json",
    ]));
    assert!(decoded.contains("\"method\":2"), "{decoded}");
}

#[test]
fn layouts_lists_every_preset_with_its_end() {
    let out = stdout(&flakery(&["layouts"]));
    for name in flakery::layout::preset_names() {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name} missing");
    }
    let baidu = out.lines().find(|l| l.starts_with("baidu")).unwrap();
    assert!(baidu.contains("2024-11-20"), "{baidu}");
    assert!(out.contains("4096000 IDs/s"));
}

#[test]
fn bad_input_is_one_clear_line() {
    fails_with(&["decode", "12x"], "invalid_argument", "'12x' is not an ID");
    fails_with(&["decode", "-5"], "invalid_argument", "negative");
    fails_with(
        &["decode", "99999999999999999999"],
        "invalid_argument",
        "larger than",
    );
    fails_with(
        &["decode", "1", "--layout", "time:41"],
        "invalid_layout",
        "time:41",
    );
    fails_with(
        &["next", "--layout", "nope"],
        "invalid_layout",
        "unknown preset 'nope'",
    );
    fails_with(
        &["next", "--worker-id", "32"],
        "invalid_argument",
        "worker_id 32",
    );
    fails_with(
        &["next", "--layout", "baidu", "--worker-id", "1"],
        "time_exhausted",
        "2024-11-20",
    );
    fails_with(
        &["compose", "--layout", "twitter", "--timestamp-ms", "0"],
        "invalid_argument",
        "before the epoch",
    );
    fails_with(
        &[
            "compose",
            "--layout",
            "twitter",
            "--timestamp-ms",
            "1700000000000",
            "--sequence",
            "4096",
        ],
        "invalid_argument",
        "sequence 4096",
    );
    fails_with(
        &[
            "compose",
            "--layout",
            "twitter",
            "--timestamp-ms",
            "1700000000000",
            "--field",
            "x",
        ],
        "invalid_argument",
        "NAME=VALUE",
    );
}
