//! A coordinator as the report sees it without taking a lease: its addresses, whether each
//! accepts a TCP connection and how long that took, whether credentials and TLS are asked
//! for, and its namespace's node IDs (held and free, the oldest holder, how fast they are
//! taken), counted by the installed connector with the coordinator's own client (`census`).

use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::census;
use super::value::{MapBuilder, Value};
use super::{Finding, Level};
use crate::layout::Layout;
use crate::lease::connector::{
    census_coordinator, check_coordinator, CoordinatorKind, CoordinatorPlan,
};
use crate::options::DatabaseKind;

/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The most addresses tried (a connect string may list many).
const MAX_ADDRESSES: usize = 16;

/// How long counting a namespace's node IDs may take.
const CENSUS_TIMEOUT: Duration = Duration::from_secs(10);

/// The `host:port` addresses of a ZooKeeper connect string: the credentials before its last
/// `@`, the query after `?` and the chroot after the first `/` are not addresses.
pub fn zookeeper_addresses(connect: &str) -> Vec<String> {
    let hosts = connect.rsplit_once('@').map_or(connect, |(_, rest)| rest);
    let hosts = hosts.split_once('?').map_or(hosts, |(hosts, _)| hosts);
    let hosts = hosts.split_once('/').map_or(hosts, |(hosts, _)| hosts);
    hosts
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|h| {
            if h.contains(':') {
                h.to_string()
            } else {
                format!("{h}:2181")
            }
        })
        .collect()
}

fn database_address(host: &str, kind: DatabaseKind) -> String {
    let bracketed_v6 = host.starts_with('[') && host.ends_with(']');
    if host.contains(':') && !bracketed_v6 {
        host.to_string()
    } else {
        let port = match kind {
            DatabaseKind::Postgres => 5432,
            DatabaseKind::MySql => 3306,
        };
        format!("{host}:{port}")
    }
}

/// One TCP connection to `address`, closed at once.
fn probe(address: &str) -> Value {
    let started = Instant::now();
    let result = address
        .to_socket_addrs()
        .map_err(|e| e.to_string())
        .and_then(|mut addrs| addrs.next().ok_or_else(|| "no address".to_string()))
        .and_then(|addr| {
            TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).map_err(|e| e.to_string())
        });
    let map = MapBuilder::new().put("address", address);
    match result {
        Ok(_) => map
            .put("reachable", true)
            .put(
                "connect_ms",
                Value::Float(started.elapsed().as_secs_f64() * 1000.0),
            )
            .build(),
        Err(error) => map.put("reachable", false).put("error", error).build(),
    }
}

/// The TLS a ZooKeeper connect string asks for: `?secure=true` (with `ca=`, `cert=`, `key=`
/// files) is ZooKeeper's secureClientPort; the file names are shown, never their contents.
fn zookeeper_tls(connect: &str) -> Value {
    let query = connect
        .rsplit_once('@')
        .map_or(connect, |(_, rest)| rest)
        .split_once('?')
        .map_or("", |(_, query)| query);
    let on = query.split('&').any(|pair| pair == "secure=true");
    if !on {
        return Value::from("off: plain TCP (add ?secure=true&ca=FILE for the secureClientPort)");
    }
    let given = |name: &str| {
        query
            .split('&')
            .any(|pair| pair.split_once('=').is_some_and(|(n, _)| n == name))
    };
    MapBuilder::new()
        .put("secure", true)
        .put(
            "ca",
            if given("ca") {
                "the file given (ca=)"
            } else {
                "the system's roots"
            },
        )
        .put("client_certificate", given("cert") && given("key"))
        .build()
}

pub(super) fn section(
    plan: &CoordinatorPlan,
    layout: &Layout,
    findings: &mut Vec<Finding>,
) -> Value {
    let (what, _) = plan.kind.describe();
    let (addresses, credentials, tls) = match &plan.kind {
        CoordinatorKind::ZooKeeper { connect } => (
            zookeeper_addresses(connect),
            connect.contains('@'),
            zookeeper_tls(connect),
        ),
        CoordinatorKind::Database { url, .. } => {
            let query = url.masked().split_once('?').map_or("", |(_, q)| q);
            let mode = query
                .split('&')
                .find(|pair| {
                    let key = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
                    key == "sslmode" || key == "ssl-mode" || key == "require_ssl"
                })
                .map_or_else(
                    || Value::from("not set: the driver's default"),
                    |pair| Value::from(pair.to_string()),
                );
            (
                vec![database_address(url.host(), url.kind())],
                url.masked() != url.expose_secret(),
                mode,
            )
        }
    };
    let probes: Vec<Value> = addresses
        .iter()
        .take(MAX_ADDRESSES)
        .map(|a| probe(a))
        .collect();
    let reachable = probes
        .iter()
        .any(|p| p.get("reachable") == Some(&Value::Bool(true)));
    // A string a start refuses (a raw '@' in a parameter ends the credentials there) may
    // name addresses that are not the coordinator's: its refusal is the finding.
    let refused = check_coordinator(plan, layout).err();
    if !reachable && refused.is_none() {
        findings.push(Finding::new(
            Level::Refused,
            "coordinator",
            &format!(
                "no address of {what} accepts a connection: a generator would fail with \
                 coordinator_unavailable"
            ),
            "start the coordinator, or check the address and the network between",
        ));
    }
    // An unreachable coordinator is refused above: counting would only repeat it.
    let node_ids = if let Some(error) = refused {
        census::failed(&error, &what, findings)
    } else if reachable {
        match census_coordinator(plan, layout, CENSUS_TIMEOUT) {
            Ok(census) => census::section(&census, &what, findings),
            Err(error) => census::failed(&error, &what, findings),
        }
    } else {
        Value::from("not counted: the coordinator cannot be reached")
    };
    MapBuilder::new()
        .put("coordinator", what)
        .put("namespace", plan.namespace.as_str())
        .put("session_timeout_ms", plan.session_timeout_ms)
        .put("credentials", credentials)
        .put("tls", tls)
        .put("addresses", Value::List(probes))
        .put("node_ids", node_ids)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{DatabaseMode, DatabaseUrl};

    #[test]
    fn a_connect_strings_addresses() {
        assert_eq!(
            zookeeper_addresses("u:p@w@a:1,b/chroot/x"),
            vec!["a:1".to_string(), "b:2181".to_string()]
        );
        assert_eq!(database_address("h", DatabaseKind::MySql), "h:3306");
        assert_eq!(
            database_address("[::1]", DatabaseKind::Postgres),
            "[::1]:5432"
        );
        assert_eq!(database_address("h:7", DatabaseKind::Postgres), "h:7");
        assert_eq!(
            zookeeper_addresses("u:p@a:1,b:2?secure=true&ca=/x"),
            vec!["a:1".to_string(), "b:2".to_string()]
        );
    }

    /// `?secure=true` is ZooKeeper's TLS (coordinators/zookeeper/src/tls.rs), not "none".
    #[test]
    fn zookeeper_tls_is_read_from_the_connect_string() {
        let on = zookeeper_tls("u:p@a:1/c?secure=true&ca=/ca.pem&cert=/c.pem&key=/k.pem").to_json();
        assert!(on.contains("\"secure\":true"), "{on}");
        assert!(on.contains("\"client_certificate\":true"), "{on}");
        assert!(on.contains("ca="), "{on}");
        assert!(!on.contains("/ca.pem") && !on.contains("u:p"), "{on}");
        // As the section reports it (port 1 is closed: nothing is counted).
        let plan = CoordinatorPlan {
            kind: CoordinatorKind::ZooKeeper {
                connect: "u:p@127.0.0.1:1?secure=true&ca=/ca.pem".into(),
            },
            namespace: "default".into(),
            session_timeout_ms: 10_000,
        };
        let v = section(&plan, &Layout::twitter(), &mut Vec::new());
        let tls = v.get("tls").unwrap().to_json();
        assert!(tls.contains("\"secure\":true"), "{tls}");
        let off = zookeeper_tls("a:1?secure=false").to_json();
        assert!(off.starts_with("\"off"), "{off}");
        assert!(zookeeper_tls("a:1").to_json().starts_with("\"off"));
    }

    /// A loopback listener is reachable; the same port closed is not, and is refused. The
    /// password never shows.
    #[test]
    fn a_database_is_probed_on_loopback() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let plan = |port: u16| CoordinatorPlan {
            kind: CoordinatorKind::Database {
                url: DatabaseUrl::parse(&format!(
                    "postgres://u:hunter2@127.0.0.1:{port}/ids?sslmode=require"
                ))
                .unwrap(),
                mode: DatabaseMode::Lease,
                datacenter_id: None,
            },
            namespace: "default".into(),
            session_timeout_ms: 10_000,
        };
        let mut findings = Vec::new();
        let v = section(&plan(port), &Layout::twitter(), &mut findings);
        // No connector in this program: the count is a finding, not a crash.
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].text.contains("could not be counted"),
            "{findings:?}"
        );
        findings.clear();
        let json = v.to_json();
        assert!(json.contains("\"reachable\":true"), "{json}");
        assert!(json.contains("\"credentials\":true") && json.contains("sslmode=require"));
        assert!(!json.contains("hunter2"), "{json}");
        drop(listener);
        let v = section(&plan(port), &Layout::twitter(), &mut findings);
        assert!(v.to_json().contains("\"reachable\":false"));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].level, Level::Refused);
    }
}
