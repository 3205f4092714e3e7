//! TLS to real PostgreSQL and MariaDB servers (see `db_harness`), with a CA and a server
//! certificate made by `openssl` for the test (for the name `localhost` only): the right CA
//! leases over TLS, a wrong CA or a wrong name is `coordinator_unavailable` that says why and
//! never shows the password, and a server without TLS is refused when TLS is required, never
//! used in plain text.
#![cfg(unix)]

use std::path::Path;

use flakery::lease::Coordinator;
use flakery::{decode, ErrorCode, Generator, Options};
use flakery_sql::{DatabaseUrl, SqlCoordinator};

#[path = "../../../core/tests/common/mod.rs"]
mod common;
mod db_harness;
use common::ROLE;
use db_harness::{
    coordinator, each_kind, serial, servers_available, shared, soon, Certs, Kind, Server,
};

fn with_params(url: &str, params: &str) -> DatabaseUrl {
    DatabaseUrl::parse(&format!("{url}?{params}")).unwrap()
}

/// Claims a node ID through `url`, keeping the holder (and its connection) alive.
fn leases(url: &DatabaseUrl, namespace: &str) -> SqlCoordinator {
    let mut holder = coordinator(url, namespace, 10_000);
    if let Err(err) = holder.claim(1024, soon(10_000)) {
        panic!("{url}: {}: {}", err.code(), err.message());
    }
    holder
}

/// Asserts that a claim through `url` is refused with `coordinator_unavailable`, with a
/// message holding `why` and not `password`.
fn refused(url: &DatabaseUrl, password: &str, why: &str) {
    let mut holder = coordinator(url, "tls-refused", 10_000);
    let err = match holder.claim(1024, soon(10_000)) {
        Ok(claim) => panic!("{url}: leased {claim:?}, where it must be refused"),
        Err(err) => err,
    };
    assert_eq!(
        err.code(),
        ErrorCode::CoordinatorUnavailable,
        "{url}: {}",
        err.message()
    );
    assert!(err.message().contains(why), "{url}: {}", err.message());
    assert!(!err.message().contains(password), "{}", err.message());
    assert!(!format!("{holder:?}").contains(password));
}

/// PostgreSQL: the server's own view of flakery's connections (`application_name`), TLS or
/// not: at least one, every one over TLS.
fn assert_postgres_sees_only_tls(server: &Server) {
    let rows = server.sql(
        "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
         WHERE a.application_name = 'flakery'",
    );
    let seen: Vec<&str> = rows.lines().collect();
    assert!(
        !seen.is_empty() && seen.iter().all(|ssl| *ssl == "t"),
        "connections over TLS: {seen:?}"
    );
}

#[test]
fn child_entry_point() {
    match std::env::var(ROLE).as_deref() {
        // FLAKERY_DATABASE_URL and HOME from the parent.
        Ok("db-tls") => match Generator::new(Options::default()).and_then(|g| g.next_id()) {
            Ok(_) => println!("TLS LEASED"),
            Err(err) => println!("TLS ERR {}: {}", err.code(), err.message()),
        },
        // Leases over TLS, forks, and reports the worker IDs of the parent and the child.
        Ok("db-tls-fork") => {
            let generator = Generator::new(Options::default()).unwrap();
            let layout = generator.layout().clone();
            let parent = decode(generator.next_id().unwrap(), &layout).unwrap();
            let child = common::in_forked_child(|| match generator.next_id() {
                Ok(id) => format!("{}", decode(id, &layout).unwrap().worker_id),
                Err(err) => format!("error {}: {}", err.code(), err.message()),
            });
            println!("FORK parent={} child={child}", parent.worker_id);
        }
        _ => {} // an ordinary test run: nothing to do
    }
}

/// What a process with `home` as its HOME gets from `url`: "LEASED" or "ERR code: message".
fn lease_with_home(url: &str, home: &Path) -> String {
    let mut command = common::rerun_as("db-tls");
    command
        .env("FLAKERY_DATABASE_URL", url)
        .env("FLAKERY_NAMESPACE", "tls-home")
        .env("HOME", home);
    common::report(&common::output(&mut command), "TLS")
}

/// A generator leasing over TLS at `url`, forked: the child leases anew (a connection and a
/// TLS session of its own), so parent and child issue under different worker IDs.
fn assert_a_forked_child_leases_anew(url: &str, namespace: &str) {
    let mut command = common::rerun_as("db-tls-fork");
    command
        .env("FLAKERY_DATABASE_URL", url)
        .env("FLAKERY_NAMESPACE", namespace);
    let report = common::report(&common::output(&mut command), "FORK");
    assert_eq!(common::field(&report, "parent"), "0", "{report}");
    assert_eq!(common::child_words(&report), vec!["1"], "{report}");
}

#[test]
fn the_right_ca_leases_over_tls_and_a_wrong_ca_or_name_is_refused() {
    each_kind(|kind| {
        let certs = Certs::make();
        let server = Server::start_tls(kind, &certs.0);
        let (ca, other_ca) = (certs.file("ca.pem"), certs.file("other-ca.pem"));
        let by_ip = server.url.clone();
        // The certificate is for `localhost` only: by IP the chain checks, the name does not.
        let by_name = by_ip.replace("127.0.0.1", "localhost");
        let password = server.password.as_str();
        match kind {
            Kind::Postgres => {
                let _full = leases(
                    &with_params(&by_name, &format!("sslmode=verify-full&sslrootcert={ca}")),
                    "tls-full",
                );
                assert_postgres_sees_only_tls(&server);
                let _ca = leases(
                    &with_params(&by_ip, &format!("sslmode=verify-ca&sslrootcert={ca}")),
                    "tls-ca",
                );
                let _require = leases(&with_params(&by_ip, "sslmode=require"), "tls-require");
                // libpq's default, prefer: TLS when the server offers it.
                let _prefer = leases(&DatabaseUrl::parse(&by_ip).unwrap(), "tls-prefer");
                assert_postgres_sees_only_tls(&server);
                refused(
                    &with_params(&by_ip, &format!("sslmode=verify-full&sslrootcert={ca}")),
                    password,
                    "not valid for name",
                );
                refused(
                    &with_params(&by_ip, &format!("sslmode=verify-ca&sslrootcert={other_ca}")),
                    password,
                    "UnknownIssuer",
                );
                refused(
                    &with_params(&by_ip, "sslmode=verify-ca"),
                    password,
                    "sslrootcert",
                );
                refused(
                    &with_params(&by_ip, "sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem"),
                    password,
                    "/nonexistent/ca.pem",
                );
                // As libpq: ~/.postgresql/root.crt is the default CA file, and with one
                // `require` checks the chain.
                let home = certs.0.join("home");
                std::fs::create_dir_all(home.join(".postgresql")).unwrap();
                let root_crt = home.join(".postgresql/root.crt");
                let require = format!("{by_ip}?sslmode=require");
                std::fs::copy(&other_ca, &root_crt).unwrap();
                let report = lease_with_home(&require, &home);
                assert!(
                    report.starts_with("ERR coordinator_unavailable")
                        && report.contains("UnknownIssuer"),
                    "{report}"
                );
                std::fs::copy(&ca, &root_crt).unwrap();
                assert_eq!(lease_with_home(&require, &home), "LEASED");
                let full = format!("{by_name}?sslmode=verify-full");
                assert_eq!(lease_with_home(&full, &home), "LEASED");
                assert_a_forked_child_leases_anew(
                    &format!("{by_name}?sslmode=verify-full&sslrootcert={ca}"),
                    "tls-fork",
                );
            }
            Kind::MariaDb => {
                // The server refuses flakery's user without TLS: every lease below is over TLS.
                server.sql("ALTER USER 'flakery'@'%' REQUIRE SSL");
                refused(
                    &DatabaseUrl::parse(&by_ip).unwrap(),
                    password,
                    "Access denied",
                );
                let _identity = leases(
                    &with_params(&by_name, &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}")),
                    "tls-identity",
                );
                let _ca = leases(
                    &with_params(&by_ip, &format!("ssl-mode=VERIFY_CA&ssl-ca={ca}")),
                    "tls-ca",
                );
                let _required = leases(&with_params(&by_ip, "ssl-mode=REQUIRED"), "tls-required");
                // The mysql crate's own parameter: the CA, the chain and the name checked.
                let _crate = leases(
                    &with_params(&by_name, &format!("root_cert_path={ca}")),
                    "tls-crate",
                );
                refused(
                    &with_params(&by_ip, &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}")),
                    password,
                    "not valid for name",
                );
                refused(
                    &with_params(&by_ip, &format!("ssl-mode=VERIFY_CA&ssl-ca={other_ca}")),
                    password,
                    "UnknownIssuer",
                );
                assert_a_forked_child_leases_anew(
                    &format!("{by_name}?ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
                    "tls-fork",
                );
            }
        }
    });
}

#[test]
fn a_client_certificate_is_sent_where_the_server_requires_one() {
    each_kind(|kind| {
        let certs = Certs::make();
        let server = Server::start_tls(kind, &certs.0);
        server.control("require-client-cert");
        let (ca, cert, key) = (
            certs.file("ca.pem"),
            certs.file("client.crt"),
            certs.file("client.key"),
        );
        let by_name = server.url.replace("127.0.0.1", "localhost");
        let password = server.password.as_str();
        match kind {
            Kind::Postgres => {
                let checked = format!("sslmode=verify-full&sslrootcert={ca}");
                refused(&with_params(&by_name, &checked), password, "certificate");
                let _held = leases(
                    &with_params(&by_name, &format!("{checked}&sslcert={cert}&sslkey={key}")),
                    "tls-client-cert",
                );
                refused(
                    &with_params(
                        &by_name,
                        &format!("{checked}&sslcert={cert}&sslkey=/no/key.pem"),
                    ),
                    password,
                    "/no/key.pem",
                );
                // libpq's default files, ~/.postgresql/postgresql.crt and .key.
                let home = certs.0.join("home");
                let dot = home.join(".postgresql");
                std::fs::create_dir_all(&dot).unwrap();
                std::fs::copy(&ca, dot.join("root.crt")).unwrap();
                std::fs::copy(&cert, dot.join("postgresql.crt")).unwrap();
                std::fs::copy(&key, dot.join("postgresql.key")).unwrap();
                let full = format!("{by_name}?sslmode=verify-full");
                assert_eq!(lease_with_home(&full, &home), "LEASED");
            }
            Kind::MariaDb => {
                let checked = format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}");
                refused(&with_params(&by_name, &checked), password, "Access denied");
                let _held = leases(
                    &with_params(
                        &by_name,
                        &format!("{checked}&ssl-cert={cert}&ssl-key={key}"),
                    ),
                    "tls-client-cert",
                );
                // The mysql crate's own parameters.
                let _crate = leases(
                    &with_params(
                        &by_name,
                        &format!("root_cert_path={ca}&cert_chain_path={cert}&priv_key_path={key}"),
                    ),
                    "tls-client-cert-crate",
                );
            }
        }
    });
}

#[test]
fn a_server_without_tls_is_refused_when_tls_is_required() {
    let _guard = serial();
    if !servers_available() {
        return;
    }
    let certs = Certs::make();
    for (kind, params) in [
        (Kind::Postgres, "sslmode=require".to_string()),
        (
            Kind::Postgres,
            format!("sslmode=verify-full&sslrootcert={}", certs.file("ca.pem")),
        ),
        (Kind::MariaDb, "ssl-mode=REQUIRED".to_string()),
        (
            Kind::MariaDb,
            format!("ssl-mode=VERIFY_CA&ssl-ca={}", certs.file("ca.pem")),
        ),
        // The mysql crate's own TLS parameters are its to apply: never dropped into plain text.
        (
            Kind::MariaDb,
            "cipher_suites=TLS13_AES_128_GCM_SHA256".to_string(),
        ),
    ] {
        let server = shared(kind);
        let why = match kind {
            Kind::Postgres => "server does not support TLS",
            Kind::MariaDb => "does not have this capability",
        };
        refused(&with_params(&server.url, &params), &server.password, why);
        // The same server in plain text, when the URL allows it.
        let plain = match kind {
            Kind::Postgres => "sslmode=prefer",
            Kind::MariaDb => "ssl-mode=DISABLED",
        };
        let _held = leases(&with_params(&server.url, plain), "tls-plain");
    }
}
