//! `flakery decode`, `compose` and `layouts`.

use super::*;

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
    // A string, as the server answers it: a JSON number this large loses digits in
    // JavaScript (core/src/decoded_json.rs).
    assert_eq!(v["id"], "175928847299117063");
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
    assert!(baidu.ends_with("| 0 days left"), "{baidu}");
    // The time left counts down from now: twitter's end minus today, to the day.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let end = flakery::Layout::twitter().capacity().exhausted_at_ms;
    let twitter = out.lines().find(|l| l.starts_with("twitter")).unwrap();
    let days: i64 = twitter
        .rsplit("| ")
        .next()
        .and_then(|t| t.strip_suffix(" days left"))
        .unwrap()
        .parse()
        .unwrap();
    assert!((end - now) / 86_400_000 - days <= 1 && days <= (end - now) / 86_400_000);
}

#[test]
fn discord_ids_above_2_pow_63_decode_and_compose() {
    // tests/vectors/unsigned.json, from @sapphire/snowflake.
    let out = stdout(&flakery(&[
        "decode",
        "10401578640998539267",
        "--layout",
        "discord",
    ]));
    assert_eq!(
        out,
        "10401578640998539267  time 2093-08-01T21:20:00.000Z  datacenter 1  worker 2  sequence 3\n"
    );
    let out = stdout(&flakery(&[
        "compose",
        "--layout",
        "discord",
        "--timestamp-ms",
        "3900000000000",
        "--datacenter-id",
        "1",
        "--worker-id",
        "2",
        "--sequence",
        "3",
    ]));
    assert_eq!(out, "10401578640998539267\n");
    fails_with(
        &["decode", "10401578640998539267"],
        "invalid_argument",
        "signed",
    );
}

#[test]
fn compose_defaults_to_twitter() {
    let args = ["compose", "--timestamp-ms", "1656432460105"];
    let out = stdout(&flakery(
        &[&args[..], &["--datacenter-id", "11", "--worker-id", "26"]].concat(),
    ));
    assert_eq!(out.trim(), "1541815603606036480");
}
