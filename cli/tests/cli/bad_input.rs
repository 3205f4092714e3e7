//! Bad input: one clear line with a stable code, never a panic.

use super::*;

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
        "--worker-id 32 does not fit in 5 bits (0 to 31)",
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

#[test]
fn node_ids_out_of_range_get_flakerys_message_with_the_fields_range() {
    // Read by flakery, not clap: exit 1 and the range the layout gives the field.
    for (args, needle) in [
        (
            &["next", "--worker-id", "-1"][..],
            "--worker-id -1 does not fit in 5 bits (0 to 31)",
        ),
        (
            &["next", "--layout", "instagram", "--worker-id", "-1"][..],
            "--worker-id -1 does not fit in 13 bits (0 to 8191)",
        ),
        (
            &["next", "--datacenter-id", "99999999999999999999"][..],
            "--datacenter-id 99999999999999999999 does not fit in 5 bits (0 to 31)",
        ),
        (
            &["next", "--layout", "instagram", "--datacenter-id", "1"][..],
            "so --datacenter-id must be 0, not 1",
        ),
        (
            &["next", "--worker-id", "seven"][..],
            "--worker-id='seven' is not a non-negative integer in plain decimal",
        ),
        (
            &[
                "compose",
                "--timestamp-ms",
                "1700000000000",
                "--sequence",
                "-4",
            ][..],
            "--sequence -4 does not fit in 12 bits (0 to 4095)",
        ),
    ] {
        fails_with(args, "invalid_argument", needle);
        assert_eq!(flakery(args).status.code(), Some(1), "{args:?}");
    }
}
#[test]
fn integer_flags_and_ids_are_canonical_decimal_only() {
    for bad in flakery::decimal::REFUSED_EXAMPLES {
        // The too-large value is well written: node fields name their range instead.
        let too_large = bad.len() > 19;
        for (args, flag) in [
            (vec!["next", "--worker-id", bad], "--worker-id"),
            (vec!["next", "--datacenter-id", bad], "--datacenter-id"),
            (vec!["next", "-n", bad], "--count"),
            (
                vec!["compose", "--timestamp-ms", bad, "--worker-id", "1"],
                "--timestamp-ms",
            ),
            (
                vec![
                    "compose",
                    "--timestamp-ms",
                    "1700000000000",
                    "--sequence",
                    bad,
                ],
                "--sequence",
            ),
            (
                vec![
                    "compose",
                    "--layout",
                    "time:41,v:3,sequence:12;epoch=0",
                    "--timestamp-ms",
                    "1700000000000",
                    "--field",
                    &format!("v={bad}"),
                ],
                "--field v",
            ),
        ] {
            let needle =
                if too_large && ["--worker-id", "--datacenter-id", "--sequence"].contains(&flag) {
                    format!("{flag} {bad} does not fit")
                } else {
                    flag.to_string()
                };
            fails_with(&args, "invalid_argument", &needle);
            assert_eq!(flakery(&args).status.code(), Some(1), "{args:?}");
        }
        fails_with(&["decode", bad], "invalid_argument", "ID");
    }
}
/// A node ID out of the layout's range is named as the caller wrote it: the flag, or the
/// variable it came from (docs/spec.md#names-per-surface), never the other.
#[test]
fn a_node_id_out_of_range_is_named_where_it_came_from() {
    fails_with(
        &["next", "--worker-id", "99999"],
        "invalid_argument",
        "--worker-id 99999 does not fit",
    );
    for (variable, other) in [
        ("FLAKERY_WORKER_ID", ("FLAKERY_DATACENTER_ID", "1")),
        ("FLAKERY_DATACENTER_ID", ("FLAKERY_WORKER_ID", "1")),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_flakery"))
            .args(["next"])
            .env_remove("FLAKERY_LAYOUT")
            .env(variable, "99999")
            .env(other.0, other.1)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            stderr.trim(),
            format!("flakery: invalid_argument: {variable} 99999 does not fit in 5 bits (0 to 31)")
        );
    }
}
