//! ZooKeeper credentials against a real server: with `user:password@` in the connect string,
//! a client without those credentials (here the `zookeeper` crate's, a client independent of
//! flakery's) can read flakery's znodes but neither lower a mark nor delete or create a node,
//! so it cannot make two holders share a node ID (docs/security.md#zookeeper); and the
//! password shows nowhere.
#![cfg(unix)]

use flakery::{ErrorCode, Generator, Layout, Options};
use flakery_zookeeper::ZooKeeperLease;
use zookeeper::{Acl, CreateMode, ZkError};

mod zk_harness;
use zk_harness::{log_lines, serial, Server};

const SECRET: &str = "pw-7f3a:9@s3cret";

fn options(connect: &str, namespace: &str) -> Options {
    Options {
        zookeeper: Some(connect.to_string()),
        namespace: Some(namespace.to_string()),
        session_timeout_ms: Some(4000),
        ..Options::default()
    }
}

fn with_credentials(server: &Server, user: &str) -> String {
    format!("{user}:{SECRET}@{}", server.connect)
}

/// Every way a client without the credentials could change what a holder relies on.
fn assert_cannot_tamper(zk: &zookeeper::ZooKeeper, root: &str) {
    let hwm = format!("{root}/hwm/0");
    let node = format!("{root}/nodes/0");
    // Reading stays open, for operators.
    let (mark, before) = zk.get_data(&hwm, false).unwrap();
    assert!(zk.exists(&node, false).unwrap().is_some());
    assert_eq!(
        zk.set_data(&hwm, b"0".to_vec(), None).err(),
        Some(ZkError::NoAuth)
    );
    assert_eq!(zk.delete(&hwm, None), Err(ZkError::NoAuth));
    assert_eq!(zk.delete(&node, None), Err(ZkError::NoAuth));
    let open = Acl::open_unsafe().clone();
    for path in [format!("{root}/nodes/7"), format!("{root}/hwm/7")] {
        assert_eq!(
            zk.create(&path, Vec::new(), open.clone(), CreateMode::Persistent),
            Err(ZkError::NoAuth),
            "{path}"
        );
    }
    for path in [root.to_string(), format!("{root}/nodes"), hwm.clone()] {
        assert_eq!(
            zk.set_acl(&path, open.clone(), None).err(),
            Some(ZkError::NoAuth),
            "{path}"
        );
    }
    // Unchanged, or moved on by the holder alone (marks only rise).
    let (after_mark, after) = zk.get_data(&hwm, false).unwrap();
    let number = |m: &[u8]| String::from_utf8_lossy(m).parse::<i64>().unwrap();
    assert!(after.version >= before.version && number(&after_mark) >= number(&mark));
}

#[test]
fn without_the_credentials_a_client_can_neither_lower_a_mark_nor_delete_a_node() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let generator = Generator::new(options(&with_credentials(&server, "flakery"), "acl")).unwrap();
    let before = generator.next_ids(100).unwrap();

    let anonymous = server.client();
    assert_cannot_tamper(&anonymous, "/flakery/acl");
    // Other credentials are no better than none.
    let other = server.client();
    other
        .add_auth("digest", format!("flakery:{SECRET}x").into_bytes())
        .unwrap();
    assert_cannot_tamper(&other, "/flakery/acl");

    // The holder never noticed.
    let after = generator.next_ids(100).unwrap();
    assert!(after[0] > *before.last().unwrap());
    assert_eq!(generator.worker_id(), 0);
}

#[test]
fn znodes_made_without_credentials_become_the_identitys_own_and_other_credentials_are_refused() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    // A namespace an older flakery (or anyone) made open to every client.
    let anonymous = server.client();
    let open = Acl::open_unsafe().clone();
    for path in [
        "/flakery",
        "/flakery/old",
        "/flakery/old/hwm",
        "/flakery/old/nodes",
    ] {
        anonymous
            .create(path, Vec::new(), open.clone(), CreateMode::Persistent)
            .unwrap();
    }
    anonymous
        .create(
            "/flakery/old/hwm/0",
            b"1".to_vec(),
            open,
            CreateMode::Persistent,
        )
        .unwrap();

    let generator = Generator::new(options(&with_credentials(&server, "flakery"), "old")).unwrap();
    generator.next_ids(10).unwrap();
    assert_eq!(generator.worker_id(), 0);
    assert_cannot_tamper(&anonymous, "/flakery/old");

    // Another identity cannot take over the namespace, and is told why without the secret.
    let err = ZooKeeperLease::acquire(
        &with_credentials(&server, "intruder"),
        "old",
        4000,
        &Layout::twitter(),
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
    assert!(
        err.message().contains("other ZooKeeper credentials"),
        "{err}"
    );
    assert!(!format!("{err} {err:?}").contains(SECRET), "{err:?}");
    assert_eq!(generator.next_ids(10).unwrap().len(), 10);
}

#[test]
fn credentials_never_appear_in_errors_logs_or_debug_and_their_absence_is_logged_once() {
    let _serial = serial();
    let lines = log_lines();
    let Some(server) = Server::start() else {
        return;
    };
    lines.lock().unwrap().clear();
    let mut shown = Vec::new();

    // Refused connect strings.
    for bad in [
        format!("u:{SECRET}@127.0.0.1:notaport"),
        format!("u:{SECRET}@"),
        format!("u:{SECRET}@::1:2181"),
        format!(":{SECRET}@127.0.0.1:1"),
        format!("u:{SECRET}@127.0.0.1:1/a//b"),
    ] {
        let err = Generator::new(options(&bad, "x")).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
        shown.push(format!("{err} {err:?}"));
    }
    // A server that is not there.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let err = Generator::new(Options {
        session_timeout_ms: Some(1000),
        ..options(&format!("u:{SECRET}@127.0.0.1:{closed}"), "x")
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
    shown.push(format!("{err} {err:?}"));
    // A lease and a generator that hold a node ID.
    let connect = with_credentials(&server, "flakery");
    shown.push(format!("{:?}", options(&connect, "debug")));
    let lease = ZooKeeperLease::acquire(&connect, "debug", 4000, &Layout::twitter()).unwrap();
    shown.push(format!("{lease:?}"));
    let generator = Generator::new(options(&connect, "debug")).unwrap();
    shown.push(format!("{generator:?}"));
    drop(lease);
    drop(generator);

    let logged = lines.lock().unwrap().clone();
    for text in shown.iter().chain(&logged) {
        assert!(!text.contains(SECRET), "the password is shown: {text}");
        assert!(
            !text.contains("pw-7f3a"),
            "part of the password is shown: {text}"
        );
    }
    assert!(
        !logged.iter().any(|l| l.contains("without credentials")),
        "{logged:?}"
    );

    // Without credentials: said once, at the start.
    lines.lock().unwrap().clear();
    let generator = Generator::new(options(&server.connect, "open")).unwrap();
    generator.next_ids(10).unwrap();
    drop(generator);
    let warnings: Vec<String> = lines
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("without credentials"))
        .cloned()
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("WARN"), "{warnings:?}");
    assert!(warnings[0].contains("share a node ID"), "{warnings:?}");
}
