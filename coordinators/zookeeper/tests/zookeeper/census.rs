//! `flakery doctor`'s census of a namespace (issue 36): filled by real claims to one free
//! node ID, then to none, then a mark garbled by hand; the report is the JSON `flakery doctor
//! --json` prints (`Report::to_json`, the same call).

use super::*;
use flakery::doctor::{report, Checks, Level, Report, Request};

/// The doctor's report on `options`' node identity, as JSON, its exit status, and itself.
fn doctor(options: &Options) -> (serde_json::Value, i32, Report) {
    let mut request = Request::for_options(options.clone()).unwrap();
    request.checks = Checks::parse("node").unwrap();
    let report = report(&request).unwrap();
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["exit_code"], report.exit_code());
    (json, report.exit_code(), report)
}

#[test]
fn a_namespace_filled_to_one_free_node_id_warns_and_full_is_refused() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    // Four node IDs; credentials, so the report says they are on and never shows them.
    let layout = Layout::parse("time:41,worker:2,sequence:12;epoch=0").unwrap();
    let options = Options {
        layout: Some(layout),
        zookeeper: Some(format!("census:s3cret@{}", server.connect)),
        ..options(&server, "census", 4000)
    };
    let (json, code, _) = doctor(&options);
    let ids = &json["node"]["coordinator"]["node_ids"];
    assert_eq!(
        (ids["range"].as_u64(), ids["free"].as_u64()),
        (Some(4), Some(4)),
        "{json:#}"
    );
    assert_eq!(ids["oldest_holder"], "none: no node ID is held", "{json:#}");
    assert_eq!(code, 0, "{json:#}");

    let claiming = std::time::Instant::now();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(Generator::new(options.clone()).unwrap());
        // Claims a millisecond apart at least: each znode's ctime orders them.
        std::thread::sleep(Duration::from_millis(20));
    }
    let (json, code, report) = doctor(&options);
    let text = json.to_string();
    let coordinator = &json["node"]["coordinator"];
    let ids = &coordinator["node_ids"];
    assert_eq!(ids["held"], 3, "{json:#}");
    assert_eq!(ids["free"], 1, "{json:#}");
    assert_eq!(ids["unreadable"], 0, "{json:#}");
    assert_eq!(
        ids["oldest_holder"]["node_index"].as_u64(),
        Some(held[0].worker_id()),
        "the first claim is the oldest: {json:#}"
    );
    // Held since a claim this test made: no longer than the test has been claiming.
    let held_s = ids["oldest_holder"]["held_s"].as_u64().unwrap();
    assert!(held_s <= claiming.elapsed().as_secs(), "{json:#}");
    // The holder's znode names this process.
    let pid = std::process::id().to_string();
    assert!(
        ids["oldest_holder"]["holder"]
            .as_str()
            .unwrap()
            .contains(&pid),
        "{json:#}"
    );
    // All three were taken within the hour: one free is gone at that rate in 20 minutes.
    assert_eq!(ids["taken_last_hour"], 3, "{json:#}");
    assert_eq!(ids["none_free_in"], "0.3 hours", "{json:#}");
    assert!(ids["basis"].as_str().unwrap().contains("ctime"), "{json:#}");
    assert_eq!(coordinator["credentials"], true);
    assert!(!text.contains("s3cret"), "{text}");
    assert_eq!(code, 1, "{json:#}");
    assert!(
        report
            .findings_of(Level::Warning)
            .any(|w| w.text.contains("only 1 of 4 node IDs")),
        "{json:#}"
    );
    assert_eq!(json["status"], "warnings");

    held.push(Generator::new(options.clone()).unwrap());
    let (json, code, report) = doctor(&options);
    let ids = &json["node"]["coordinator"]["node_ids"];
    assert_eq!(
        (ids["held"].as_u64(), ids["free"].as_u64()),
        (Some(4), Some(0))
    );
    assert_eq!(ids["none_free_in"], "none is free now", "{json:#}");
    assert_eq!(code, 2, "{json:#}");
    assert!(
        report
            .findings_of(Level::Refused)
            .any(|r| r.text.contains("all 4 node IDs") && r.text.contains("worker_ids_exhausted")),
        "{json:#}"
    );
    // As the report says: a fifth generator is refused.
    let err = Generator::new(options.clone()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");

    // One given back, its mark garbled by hand: still not free, and named.
    let garbled = held[1].worker_id();
    held[1].close();
    let zk = server.client();
    zk.add_auth("digest", b"census:s3cret".to_vec()).unwrap();
    let path = format!("/flakery/census/hwm/{garbled}");
    zk.set_data(&path, b"12:30 yesterday".to_vec(), None)
        .unwrap();
    let (json, code, report) = doctor(&options);
    let ids = &json["node"]["coordinator"]["node_ids"];
    assert_eq!(
        (ids["held"].as_u64(), ids["free"].as_u64()),
        (Some(4), Some(0))
    );
    assert_eq!(ids["unreadable"], 1, "{json:#}");
    let named = ids["unreadable_records"][0].as_str().unwrap();
    assert!(
        named.starts_with(&path) && named.contains("12:30 yesterday"),
        "{json:#}"
    );
    assert_eq!(code, 2, "{json:#}");
    assert!(
        report
            .findings_of(Level::Warning)
            .any(|w| w.text.contains("1 record(s)") && w.text.contains("cannot be read")),
        "{json:#}"
    );
    // Repaired: free again.
    zk.set_data(&path, b"1700000000000".to_vec(), None).unwrap();
    let (json, code, _) = doctor(&options);
    assert_eq!(
        json["node"]["coordinator"]["node_ids"]["free"], 1,
        "{json:#}"
    );
    assert_eq!(code, 1, "{json:#}");
}

/// A census that fails is a finding, not a crash: a paused server accepts the TCP connection
/// (the probe passes) and never starts a session.
#[test]
fn a_census_that_fails_is_a_finding() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let options = Options {
        zookeeper: Some(format!("{}/no/such?secure=false", server.connect)),
        ..options(&server, "failing", 4000)
    };
    server.pause();
    let (json, code, report) = doctor(&options);
    server.resume();
    let ids = json["node"]["coordinator"]["node_ids"].as_str().unwrap();
    assert!(
        ids.starts_with("not counted: coordinator_unavailable"),
        "{json:#}"
    );
    assert!(
        report
            .findings_of(Level::Warning)
            .any(|w| w.text.contains("could not be counted")),
        "{json:#}"
    );
    assert_eq!(code, 1, "{json:#}");
    assert!(json["node"]["coordinator"]["tls"]
        .as_str()
        .unwrap()
        .starts_with("off"));
}

/// A connect string a generator refuses at its start (its TLS parameters, a CA file that is
/// not there, a raw `@` in a parameter) is refused by the doctor too, exit 2, with the
/// generator's own message: the census parses it as a start does. It was a warning (exit 1)
/// that the node IDs could not be counted. A listener that accepts and never answers stands
/// for the ensemble: the probe passes, and nothing is counted.
#[test]
fn a_connect_string_a_generator_refuses_is_refused_by_the_census() {
    let _serial = serial();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let host = listener.local_addr().unwrap();
    for (query, says) in [
        ("?secure=maybe", "secure=maybe"),
        ("?secure=true&cafile=/ca.pem", "unknown parameter 'cafile'"),
        ("?secure=true&ca=", "ca= names no file"),
        (
            "?secure=true&ca=/nonexistent/flakery-census-ca.pem",
            "flakery-census-ca.pem",
        ),
        // The credentials end at the last '@': the probe's address would be 'orders:2181'.
        ("?secure=true&ca=/run/flakery@orders/ca.pem", "%40"),
    ] {
        let options = Options {
            zookeeper: Some(format!("census:s3cret@{host}{query}")),
            namespace: Some("census-refused".into()),
            session_timeout_ms: Some(1000),
            ..Options::default()
        };
        let err = Generator::new(options.clone()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{query}: {err}");
        assert!(err.message().contains(says), "{query}: {err}");
        let (json, code, report) = doctor(&options);
        assert_eq!(code, 2, "{query}: {json:#}");
        assert!(
            report
                .findings_of(Level::Refused)
                .any(|r| r.text.contains(err.message())),
            "{query}: the generator's '{err}' is not refused in {json:#}"
        );
        assert!(!json.to_string().contains("s3cret"), "{json:#}");
    }
}
