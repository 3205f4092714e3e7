//! A program's connector opens every coordinator plan, with the plan the options and the
//! environment made; it is installed once. (The refusal without one is a unit test of
//! `lease::resolve`: this binary installs one.)

use std::sync::Mutex;

use flakery::{
    install_connector, Connector, CoordinatorPlan, FixedNode, Generator, Layout, NodeId, NodeLease,
    NodeSource, Options,
};

static OPENED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Opens every plan as a fixed node 9, and notes what it was asked.
struct Recording;

impl Connector for Recording {
    fn open(&self, plan: &CoordinatorPlan, _: &Layout) -> flakery::Result<Box<dyn NodeLease>> {
        OPENED.lock().unwrap().push(format!("{plan:?}"));
        let node = NodeId {
            datacenter_id: 0,
            worker_id: 9,
        };
        Ok(Box::new(FixedNode::new(node, NodeSource::ZooKeeper)))
    }
}

struct Other;

impl Connector for Other {
    fn open(&self, _: &CoordinatorPlan, _: &Layout) -> flakery::Result<Box<dyn NodeLease>> {
        unreachable!("the first connector stays")
    }
}

#[test]
fn the_installed_connector_opens_coordinator_plans_and_stays() {
    assert!(install_connector(Box::new(Recording)).is_ok());
    assert!(install_connector(Box::new(Other)).is_err());
    let generator = Generator::new(Options {
        zookeeper: Some("user:pw@127.0.0.1:1".into()),
        namespace: Some("orders".into()),
        ..Options::default()
    })
    .unwrap();
    assert_eq!(generator.worker_id(), 9);
    let opened = OPENED.lock().unwrap().clone();
    assert_eq!(opened.len(), 1, "{opened:?}");
    // The plan as given, its credentials never shown.
    assert!(
        opened[0].contains("ZooKeeper") && opened[0].contains("orders"),
        "{opened:?}"
    );
    assert!(!opened[0].contains("pw"), "{opened:?}");
    // Explicit IDs never reach the connector.
    let fixed = Generator::new(Options {
        worker_id: Some(4),
        zookeeper: Some("127.0.0.1:1".into()),
        ..Options::default()
    })
    .unwrap();
    assert_eq!(fixed.worker_id(), 4);
    assert_eq!(OPENED.lock().unwrap().len(), 1);
}
