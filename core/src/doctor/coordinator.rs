//! A coordinator as the report sees it without taking a lease: its addresses, whether each
//! accepts a TCP connection and how long that took, whether credentials and TLS are asked
//! for. The coordinator's own state (node IDs held and free, the oldest holder, how fast they
//! are taken) needs its client, which the core does not have: the report says so.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::value::{MapBuilder, Value};
use super::{Finding, Level};
use crate::lease::connector::{CoordinatorKind, CoordinatorPlan};
use crate::options::DatabaseKind;

/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The most addresses tried (a connect string may list many).
const MAX_ADDRESSES: usize = 16;

/// The `host:port` addresses of a ZooKeeper connect string: the credentials before its last
/// `@` and the chroot after the first `/` are not addresses.
pub fn zookeeper_addresses(connect: &str) -> Vec<String> {
    let hosts = connect.rsplit_once('@').map_or(connect, |(_, rest)| rest);
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

pub(super) fn section(plan: &CoordinatorPlan, findings: &mut Vec<Finding>) -> Value {
    let (what, _) = plan.kind.describe();
    let (addresses, credentials, tls) = match &plan.kind {
        CoordinatorKind::ZooKeeper { connect } => (
            zookeeper_addresses(connect),
            connect.contains('@'),
            Value::from("not supported by the ZooKeeper client"),
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
    if !reachable {
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
    MapBuilder::new()
        .put("coordinator", what)
        .put("namespace", plan.namespace.as_str())
        .put("session_timeout_ms", plan.session_timeout_ms)
        .put("credentials", credentials)
        .put("tls", tls)
        .put("addresses", Value::List(probes))
        .put(
            "node_ids",
            "not reported for this coordinator (held and free, the oldest holder, the rate \
             they are taken): --lease takes one node ID and gives it back",
        )
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
        let v = section(&plan(port), &mut findings);
        assert!(findings.is_empty(), "{findings:?}");
        let json = v.to_json();
        assert!(json.contains("\"reachable\":true"), "{json}");
        assert!(json.contains("\"credentials\":true") && json.contains("sslmode=require"));
        assert!(!json.contains("hunter2"), "{json}");
        drop(listener);
        let v = section(&plan(port), &mut findings);
        assert!(v.to_json().contains("\"reachable\":false"));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].level, Level::Refused);
    }
}
