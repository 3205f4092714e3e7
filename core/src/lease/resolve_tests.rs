//! Unit tests of `resolve`: plans from options and environment snapshots, and the refusal
//! of a coordinator plan in a program that installed no connector.

use super::*;

fn plan_in(options: &Options, env: &[(&str, &str)]) -> Result<Plan> {
    plan(
        options,
        &Layout::twitter(),
        &Environment::from_vars(env.iter().copied()),
    )
}

#[test]
fn a_coordinator_plan_without_a_connector_is_refused_naming_the_crate() {
    // No test of this binary installs a connector.
    let options = Options {
        zookeeper: Some("app:pw@127.0.0.1:1".into()),
        ..Options::default()
    };
    let planned = plan_in(&options, &[]).unwrap();
    let err = open(&planned, &Layout::twitter()).err().unwrap();
    assert_eq!(err.code(), crate::ErrorCode::InvalidArgument);
    let message = err.message();
    assert!(
        message.contains("ZooKeeper")
            && message.contains("flakery-coordinators")
            && message.contains("feature 'zookeeper'")
            && message.contains("flakery_coordinators::install()"),
        "{message}"
    );
    assert!(!message.contains("pw"), "{message}");
    let database = plan_in(
        &Options::default(),
        &[("FLAKERY_DATABASE_URL", "mysql://u:secret@127.0.0.1:1/ids")],
    )
    .unwrap();
    let message = open(&database, &Layout::twitter())
        .err()
        .unwrap()
        .to_string();
    assert!(
        message.contains("feature 'mysql'") && !message.contains("secret"),
        "{message}"
    );
}

#[test]
fn coordinators_are_planned_with_their_namespace_and_term() {
    let planned = plan_in(
        &Options::default(),
        &[
            ("FLAKERY_ZOOKEEPER", " zk1:2181/ids "),
            ("FLAKERY_NAMESPACE", "orders"),
            ("FLAKERY_SESSION_TIMEOUT_MS", "4000"),
            // ZooKeeper comes before the database and the environment's worker ID.
            ("FLAKERY_DATABASE_URL", "postgres://h/db"),
        ],
    )
    .unwrap();
    assert_eq!(
        planned,
        Plan::Coordinator(CoordinatorPlan {
            kind: CoordinatorKind::ZooKeeper {
                connect: "zk1:2181/ids".into()
            },
            namespace: "orders".into(),
            session_timeout_ms: 4000,
        })
    );
    let planned = plan_in(
        &Options {
            datacenter_id: Some(2),
            ..Options::default()
        },
        &[("FLAKERY_DATABASE_URL", "postgres://u:pw@h/db")],
    )
    .unwrap();
    let Plan::Coordinator(CoordinatorPlan {
        kind:
            CoordinatorKind::Database {
                mode,
                datacenter_id,
                ..
            },
        session_timeout_ms,
        ..
    }) = planned
    else {
        panic!("{planned:?}");
    };
    assert_eq!(
        (mode, datacenter_id, session_timeout_ms),
        (DatabaseMode::Lease, Some(2), DEFAULT_SESSION_TIMEOUT_MS)
    );
    // uid-generator's rows are whole node IDs: a datacenter alone cannot stay fixed.
    let refused = plan_in(
        &Options {
            datacenter_id: Some(2),
            database_mode: Some(DatabaseMode::Baidu),
            ..Options::default()
        },
        &[("FLAKERY_DATABASE_URL", "postgres://h/db")],
    )
    .unwrap_err();
    assert!(refused.message().contains("'baidu'"), "{refused}");
}

#[test]
fn the_host_names_ordinal_is_read_from_the_snapshot() {
    let env = Environment::from_vars([("FLAKERY_WORKER_ID", "hostname-ordinal")]);
    let planned = plan(
        &Options::default(),
        &Layout::twitter(),
        &env.clone().with_host_name("ids-7"),
    );
    assert_eq!(
        planned.unwrap(),
        Plan::Fixed(
            NodeId {
                datacenter_id: 0,
                worker_id: 7
            },
            NodeSource::Hostname
        )
    );
    let refused = plan(
        &Options::default(),
        &Layout::twitter(),
        &env.with_host_name("ids"),
    );
    assert!(refused.unwrap_err().message().contains("'ids'"));
}

/// A session timeout of 0 is refused whichever way it comes, and whether or not a coordinator
/// would read it: no surface reads 0 as "not given".
#[test]
fn a_session_timeout_of_0_is_refused() {
    let fixed = Options {
        datacenter_id: Some(1),
        worker_id: Some(1),
        session_timeout_ms: Some(0),
        ..Options::default()
    };
    let err = plan_in(&fixed, &[]).err().unwrap();
    assert_eq!(err.code(), crate::ErrorCode::InvalidArgument);
    assert_eq!(
        err.message(),
        "session_timeout_ms must be at least 1, not 0"
    );
    assert_eq!(err.option(), Some("session_timeout_ms"));
    let zookeeper = Options {
        zookeeper: Some("127.0.0.1:1".into()),
        ..Options::default()
    };
    let err = plan_in(&zookeeper, &[("FLAKERY_SESSION_TIMEOUT_MS", "0")])
        .err()
        .unwrap();
    assert_eq!(
        err.message(),
        "FLAKERY_SESSION_TIMEOUT_MS must be at least 1, not 0"
    );
    let zero = Options {
        session_timeout_ms: Some(0),
        ..zookeeper.clone()
    };
    let err = plan_in(&zero, &[("FLAKERY_SESSION_TIMEOUT_MS", "5")])
        .err()
        .unwrap();
    assert_eq!(err.option(), Some("session_timeout_ms"), "{err}");
    let err = resolved_session_timeout_ms(&zero).err().unwrap();
    assert_eq!(err.option(), Some("session_timeout_ms"), "{err}");
    let one = Options {
        session_timeout_ms: Some(1),
        ..zookeeper
    };
    assert!(plan_in(&one, &[]).is_ok());
}
