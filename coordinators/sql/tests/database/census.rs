//! `flakery doctor`'s census of a namespace (issue 36), on each database: filled by real
//! claims to one free node ID, then to none, checked through the report's JSON and through
//! the `flakery doctor --json` binary itself; rows edited by hand.

use super::*;
use flakery::doctor::{report, Checks, Level, Report, Request};

const LAYOUT: &str = "time:41,worker:2,sequence:12;epoch=0";

/// The doctor's report on `options`' node identity, as JSON, its exit status, and itself.
fn doctor(options: &Options) -> (serde_json::Value, i32, Report) {
    let mut request = Request::for_options(options.clone()).unwrap();
    request.checks = Checks::parse("node").unwrap();
    let report = report(&request).unwrap();
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    (json, report.exit_code(), report)
}

/// The `flakery` binary the workspace's tests build (tests/db/run.sh builds it first): the
/// test binary is in `<target>/debug/deps/`.
fn flakery_binary() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let binary = exe.parent()?.parent()?.join("flakery");
    if binary.exists() {
        return Some(binary);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true: {} is missing: tests/db/run.sh builds it before the tests",
        binary.display()
    );
    eprintln!(
        "!!!!!!!! SKIPPED the CLI half: {} is not built !!!!!!!!",
        binary.display()
    );
    None
}

/// `flakery doctor --json --check node` with the lease in the environment, as an operator
/// runs it: its JSON (never the password) and exit status.
fn cli_doctor(server: &Server, namespace: &str) -> Option<(serde_json::Value, i32)> {
    let output = Command::new(flakery_binary()?)
        .args(["doctor", "--json", "--check", "node", "--layout", LAYOUT])
        .env("FLAKERY_DATABASE_URL", &server.url)
        .env("FLAKERY_NAMESPACE", namespace)
        .env("FLAKERY_SESSION_TIMEOUT_MS", "4000")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!stdout.contains(&server.password), "{stdout}");
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    Some((json, output.status.code().unwrap()))
}

#[test]
fn a_table_filled_to_one_free_node_id_warns_and_full_is_refused() {
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("census-{}", kind.arg());
        let options = Options {
            layout: Some(Layout::parse(LAYOUT).unwrap()),
            ..options(&server.url, &namespace, 4000)
        };
        let claiming = std::time::Instant::now();
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(Generator::new(options.clone()).unwrap());
            // Claims a millisecond apart at least: each row's claimed_ms orders them.
            std::thread::sleep(Duration::from_millis(20));
        }
        let (json, code, report) = doctor(&options);
        let ids = &json["node"]["coordinator"]["node_ids"];
        assert_eq!(
            (
                ids["range"].as_u64(),
                ids["held"].as_u64(),
                ids["free"].as_u64()
            ),
            (Some(4), Some(3), Some(1)),
            "{kind:?}: {json:#}"
        );
        assert_eq!(
            ids["oldest_holder"]["node_index"].as_u64(),
            Some(held[0].worker_id()),
            "{kind:?}: the first claim is the oldest: {json:#}"
        );
        // Held since a claim this test made: no longer than the test has been claiming.
        let held_s = ids["oldest_holder"]["held_s"].as_u64().unwrap();
        assert!(held_s <= claiming.elapsed().as_secs(), "{json:#}");
        let pid = std::process::id().to_string();
        assert!(
            ids["oldest_holder"]["holder"]
                .as_str()
                .unwrap()
                .contains(&pid),
            "{json:#}"
        );
        assert_eq!(ids["taken_last_hour"], 3, "{json:#}");
        assert_eq!(ids["none_free_in"], "0.3 hours", "{json:#}");
        assert!(
            ids["basis"].as_str().unwrap().contains("claimed_ms"),
            "{json:#}"
        );
        assert_eq!(code, 1, "{kind:?}: {json:#}");
        assert!(
            report
                .findings_of(Level::Warning)
                .any(|w| w.text.contains("only 1 of 4 node IDs")),
            "{json:#}"
        );
        if let Some((cli, status)) = cli_doctor(server, &namespace) {
            assert_eq!(status, 1, "{kind:?}: {cli:#}");
            assert_eq!(cli["exit_code"], 1);
            assert_eq!(cli["node"]["coordinator"]["node_ids"]["free"], 1, "{cli:#}");
            assert_eq!(cli["node"]["coordinator"]["credentials"], true, "{cli:#}");
        }

        held.push(Generator::new(options.clone()).unwrap());
        let (json, code, report) = doctor(&options);
        assert_eq!(
            json["node"]["coordinator"]["node_ids"]["free"], 0,
            "{json:#}"
        );
        assert_eq!(code, 2, "{kind:?}: {json:#}");
        assert!(
            report
                .findings_of(Level::Refused)
                .any(|r| r.text.contains("all 4 node IDs")
                    && r.text.contains("worker_ids_exhausted")),
            "{json:#}"
        );
        let err = Generator::new(options.clone()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
        if let Some((cli, status)) = cli_doctor(server, &namespace) {
            assert_eq!(status, 2, "{kind:?}: {cli:#}");
            assert_eq!(cli["status"], "refused", "{cli:#}");
        }
        for generator in held.drain(..) {
            generator.close();
        }
    });
}

/// Rows edited by hand: a garbled mark, a mark far ahead, an expiry days ahead. Each counts
/// as held (a claim will not take it) and is named, and nothing fails.
#[test]
fn rows_edited_by_hand_count_as_held_and_are_named() {
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("census-edited-{}", kind.arg());
        let options = Options {
            layout: Some(Layout::parse(LAYOUT).unwrap()),
            ..options(&server.url, &namespace, 4000)
        };
        // The table exists once a lease was made in it.
        Generator::new(options.clone()).unwrap().close();
        let days = 10 * 86_400_000_i64;
        let now = SystemClock.now_ms();
        server.sql(&format!(
            "DELETE FROM flakery_node_leases WHERE namespace = '{namespace}'; \
             INSERT INTO flakery_node_leases (namespace, node_index, holder, holder_name, \
               expires_ms, mark) VALUES \
             ('{namespace}', 0, NULL, '', 0, 'yesterday at noon'), \
             ('{namespace}', 1, NULL, '', 0, '{}'), \
             ('{namespace}', 2, 42, 'by hand', {}, '1')",
            now + days,
            now + days
        ));
        let (json, code, _) = doctor(&options);
        let ids = &json["node"]["coordinator"]["node_ids"];
        assert_eq!(
            (
                ids["held"].as_u64(),
                ids["free"].as_u64(),
                ids["unreadable"].as_u64()
            ),
            (Some(3), Some(1), Some(3)),
            "{kind:?}: {json:#}"
        );
        let named = ids["unreadable_records"].to_string();
        assert!(
            named.contains("node index 0") && named.contains("yesterday at noon"),
            "{named}"
        );
        assert!(named.contains("node index 1"), "{named}");
        assert!(named.contains("node index 2") && named.contains("longer than any lease term"));
        assert_eq!(code, 1, "{kind:?}: {json:#}");
        // As counted: one generator gets the one free node ID, the next none.
        let only = Generator::new(options.clone()).unwrap();
        assert_eq!(only.worker_id(), 3);
        let err = Generator::new(options.clone()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
        only.close();
    });
}

/// A census the database refuses is a finding that names the failure, never the password.
/// The user's name holds the (wrong) password, and both databases quote the user in their
/// refusal: without the scrub the password would show.
#[test]
fn a_census_refused_is_a_finding_without_the_password() {
    each_kind(|kind| {
        let server = shared(kind);
        let user_info = format!("flakery:{}@", server.password);
        let wrong = server
            .url
            .replacen(&user_info, "census-Wr0ng-pw-4711:Wr0ng-pw-4711@", 1);
        assert_ne!(wrong, server.url);
        let (json, code, report) = doctor(&options(&wrong, "census-refused", 4000));
        // The masked URL names the user, as it should: the password is nowhere else.
        let text = json.to_string().replace("census-Wr0ng-pw-4711:***@", "");
        assert!(!text.contains("Wr0ng-pw-4711"), "{kind:?}: {text}");
        let ids = json["node"]["coordinator"]["node_ids"].as_str().unwrap();
        assert!(
            ids.starts_with("not counted: coordinator_unavailable"),
            "{json:#}"
        );
        // The refusal is quoted, the user's name in it masked where it holds the password.
        assert!(ids.contains("census-***"), "{kind:?}: {json:#}");
        assert!(
            report
                .findings_of(Level::Warning)
                .any(|w| w.text.contains("could not be counted")),
            "{json:#}"
        );
        assert_eq!(code, 1, "{kind:?}: {json:#}");
    });
}

/// A URL a generator refuses (an unknown TLS mode) is refused by the doctor too, exit 2, the
/// mode named: the census reads it before connecting. It was a warning (exit 1) that the
/// node IDs could not be counted, while `new Generator` failed with invalid_argument.
#[test]
fn a_url_a_generator_refuses_is_refused_by_the_census() {
    each_kind(|kind| {
        let server = shared(kind);
        let bogus = match kind {
            Kind::Postgres => "sslmode=bogus",
            Kind::MariaDb => "ssl-mode=bogus",
        };
        let url = format!("{}?{bogus}", server.url);
        let options = options(&url, "census-bogus-tls", 4000);
        let err = Generator::new(options.clone()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
        let (json, code, report) = doctor(&options);
        assert_eq!(code, 2, "{kind:?}: {json:#}");
        assert!(
            report
                .findings_of(Level::Refused)
                .any(|r| r.text.contains("bogus") && r.text.contains(err.message())),
            "{kind:?}: {json:#}"
        );
        assert!(!json.to_string().contains(&server.password), "{json:#}");
    });
}

/// A table made before the claimed_ms column (as an older flakery made it) is used as it is:
/// claims work and write no claim time, and the census says it cannot tell the ages, and how
/// to add the column. The column is put back after, also when the test fails.
#[test]
fn a_table_without_claim_times_still_leases_and_the_census_says_why() {
    struct PutBack(&'static Server, &'static str);
    impl Drop for PutBack {
        fn drop(&mut self) {
            self.0.sql(self.1);
        }
    }
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("census-untimed-{}", kind.arg());
        let options = Options {
            layout: Some(Layout::parse(LAYOUT).unwrap()),
            ..options(&server.url, &namespace, 4000)
        };
        // The table exists once a lease was made in it.
        Generator::new(options.clone()).unwrap().close();
        server.sql("ALTER TABLE flakery_node_leases DROP COLUMN claimed_ms");
        let _put_back = PutBack(
            server,
            "ALTER TABLE flakery_node_leases ADD COLUMN claimed_ms BIGINT NOT NULL DEFAULT 0",
        );
        let held = Generator::new(options.clone()).unwrap();
        let (json, code, _) = doctor(&options);
        let ids = &json["node"]["coordinator"]["node_ids"];
        assert_eq!(ids["held"], 1, "{kind:?}: {json:#}");
        let why = ids["oldest_holder"].as_str().unwrap();
        assert!(
            why.starts_with("cannot tell: the lease table has no claimed_ms column")
                && why.contains("ALTER TABLE flakery_node_leases ADD COLUMN claimed_ms"),
            "{json:#}"
        );
        assert!(ids["taken_last_hour"]
            .as_str()
            .unwrap()
            .starts_with("cannot tell"));
        assert_eq!(code, 0, "{kind:?}: {json:#}");
        held.close();
    });
}
