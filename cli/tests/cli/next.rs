//! `flakery next`: increasing IDs, streaming, the layout, the margin warning, the text forms.

use super::*;

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
fn next_warns_once_when_the_layout_has_less_than_the_margin_left() {
    let next = |layout: &str, margin: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_flakery"));
        command
            .args(["next", "--worker-id", "1", "--layout", layout])
            .env_remove("FLAKERY_DATACENTER_ID");
        match margin {
            Some(days) => command.env("FLAKERY_EXHAUSTION_WARNING_DAYS", days),
            None => command.env_remove("FLAKERY_EXHAUSTION_WARNING_DAYS"),
        };
        String::from_utf8(command.output().unwrap().stderr).unwrap()
    };
    // twitter runs out in 2080: no warning by default, one with a margin of a century.
    assert!(!next("twitter", None).contains("warning"));
    let warned = next("twitter", Some("36500"));
    assert_eq!(
        warned
            .matches("flakery: warning: layout 'twitter' runs out at 2080")
            .count(),
        1,
        "{warned}"
    );
    // Run out: the time_exhausted error is the one line.
    assert!(!next("baidu", Some("0")).contains("warning"));
    assert!(next("twitter", Some("soon")).contains("FLAKERY_EXHAUSTION_WARNING_DAYS='soon'"));
}

#[test]
fn next_writes_the_text_forms_and_decode_reads_them() {
    let env = [("FLAKERY_WORKER_ID", "3")];
    for (format, len) in [("base32", 13), ("base62", 11)] {
        let out = Command::new(env!("CARGO_BIN_EXE_flakery"))
            .args(["next", "-n", "5000", "--format", format])
            .envs(env)
            .env_remove("FLAKERY_LAYOUT")
            .env_remove("FLAKERY_DATACENTER_ID")
            .output()
            .expect("run flakery");
        let out = stdout(&out);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5000);
        assert!(lines.iter().all(|l| l.len() == len), "{format}");
        // Generated in increasing order, and the strings sort the same way.
        assert!(lines.windows(2).all(|w| w[0] < w[1]), "{format}");
        let ids: Vec<i64> = lines
            .iter()
            .map(|l| flakery::IdFormat::parse(format.parse().unwrap(), l).unwrap())
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let decoded = stdout(&flakery(&[
            "decode", "--format", format, "--json", lines[0],
        ]));
        assert!(
            decoded.contains(&format!("\"id\":\"{}\"", ids[0])),
            "{decoded}"
        );
        assert!(decoded.contains("\"worker_id\":3"), "{decoded}");
    }
    assert_eq!(
        stdout(&flakery(&[
            "decode",
            "--format",
            "base32",
            "04w86bb0g4007",
            "--layout",
            "discord"
        ]))
        .split_whitespace()
        .next(),
        Some("175928847299117063")
    );
    fails_with(
        &["decode", "--format", "base32", "04W86BB0G400U"],
        "invalid_argument",
        "character 13 ('U')",
    );
    fails_with(
        &["decode", "--format", "base62", "0Czks0tP37"],
        "invalid_argument",
        "exactly 11",
    );
    fails_with(
        &["next", "--format", "hex"],
        "invalid_argument",
        "--format 'hex'",
    );
}
