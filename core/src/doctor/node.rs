//! Node identity: which source would give the node ID and why (the resolution's own steps,
//! `lease::resolve::explain`), the variables seen, the container signs; for the host lease,
//! its directory, whether PID 1 sees the same one, and who holds its files. No lease is taken
//! unless asked (`take_lease`), and then it is given back at once.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::value::{MapBuilder, Value};
use super::{Finding, Level};
use crate::layout::Layout;
use crate::lease::environment::{Environment, NODE_VARIABLES};
use crate::lease::resolve::{explain, open, Plan};
use crate::options::{DatabaseUrl, Options};

/// Files of the host lease a report lists at most.
const LISTED_FILES: usize = 64;

/// A variable's value as the report shows it: never a credential.
fn shown(name: &str, value: &str) -> String {
    match name {
        "FLAKERY_ZOOKEEPER" => crate::options::zookeeper_shown(value),
        "FLAKERY_DATABASE_URL" => DatabaseUrl::parse(value)
            .map(|url| url.masked().to_string())
            .unwrap_or_else(|_| "(set, not a valid URL)".into()),
        _ => value.to_string(),
    }
}

pub(super) fn section(
    options: &Options,
    layout: &Layout,
    env: &Environment,
    take_lease: bool,
    reference_pid: u32,
    findings: &mut Vec<Finding>,
) -> Value {
    let (plan, steps) = explain(options, layout, env);
    let variables: Vec<(String, Value)> = NODE_VARIABLES
        .iter()
        .filter_map(|name| match env.var(name) {
            Ok(Some(value)) => Some((name.to_string(), shown(name, &value).into())),
            Ok(None) => None,
            Err(e) => Some((name.to_string(), e.message().to_string().into())),
        })
        .collect();
    let sign = crate::lease::host::container::container_sign();
    let mut map = MapBuilder::new()
        .put(
            "steps",
            Value::List(steps.into_iter().map(Value::from).collect()),
        )
        .put("variables", Value::Map(variables))
        .put("host_name", env.host_name().ok().map(str::to_string))
        .put("container_sign", sign);
    let plan = match plan {
        Ok(plan) => plan,
        Err(error) => {
            findings.push(Finding::new(Level::Refused, "node", error.message(), ""));
            return map.put("source", "refused").build();
        }
    };
    if let Plan::Fixed(node, _) = &plan {
        // The generator checks explicit values when it is built: so does the report.
        if let Err(error) = crate::codec::node_bits(layout, *node) {
            findings.push(Finding::new(Level::Refused, "node", error.message(), ""));
        }
    }
    map = match &plan {
        Plan::Fixed(node, source) => map
            .put("source", source.as_str())
            .put("datacenter_id", node.datacenter_id)
            .put("worker_id", node.worker_id),
        Plan::HostLease {
            dir,
            namespace,
            datacenter_id,
        } => map
            .put("source", "host lease")
            .put("namespace", namespace.as_str())
            .put("datacenter_id", *datacenter_id)
            .put(
                "host_lease",
                host_lease(dir.as_deref(), namespace, layout, reference_pid, findings),
            ),
        Plan::Coordinator(c) => map.put("source", "coordinator").put(
            "coordinator",
            super::coordinator::section(c, layout, findings),
        ),
    };
    if take_lease {
        map = map.put("lease", lease_once(&plan, layout, findings));
    }
    map.build()
}

/// Takes the lease the plan asks for, reads its node ID and gives it back.
fn lease_once(plan: &Plan, layout: &Layout, findings: &mut Vec<Finding>) -> Value {
    let now = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
    let taken = open(plan, layout).and_then(|lease| {
        let grant = lease.grant(now, now);
        lease.release(i64::MIN);
        grant
    });
    match taken {
        Ok(grant) => MapBuilder::new()
            .put("taken", true)
            .put("datacenter_id", grant.node.datacenter_id)
            .put("worker_id", grant.node.worker_id)
            .put("released", true)
            .build(),
        Err(error) => {
            findings.push(Finding::new(Level::Refused, "lease", error.message(), ""));
            MapBuilder::new()
                .put("taken", false)
                .put("error", format!("{}: {}", error.code(), error.message()))
                .build()
        }
    }
}

fn host_lease(
    dir: Option<&Path>,
    namespace: &str,
    layout: &Layout,
    reference_pid: u32,
    findings: &mut Vec<Finding>,
) -> Value {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => match crate::lease::host::implicit_lease_dir() {
            Ok(dir) => dir,
            Err(error) => {
                findings.push(Finding::new(
                    Level::Refused,
                    "host lease",
                    error.message(),
                    "",
                ));
                return MapBuilder::new().put("dir", Value::Null).build();
            }
        },
    };
    let shared = shared_with(&dir, reference_pid);
    match shared {
        Some(false) => findings.push(Finding::new(
            Level::Warning,
            "host lease",
            &format!(
                "the lease directory {} is not the one process {reference_pid} sees (this \
                 process has a mount of its own there): generators that see the other one \
                 lease the same node IDs",
                dir.display()
            ),
            "mount the same host directory into every generator's namespace, or give node IDs \
             explicitly (FLAKERY_WORKER_ID) or through a coordinator",
        )),
        None => findings.push(Finding::new(
            Level::Note,
            "host lease",
            &format!(
                "cannot tell whether {} is the directory process {reference_pid} sees \
                 (/proc/{reference_pid}/root is not readable here)",
                dir.display()
            ),
            "",
        )),
        Some(true) => {}
    }
    let (files, holders) = holders(&dir, namespace);
    MapBuilder::new()
        .put("dir", dir.display().to_string())
        .put("exists", dir.is_dir())
        .put("compared_with_pid", reference_pid)
        .put("shared", shared)
        .put("node_ids", layout.capacity().node_ids)
        .put("files", files)
        .put("holders", Value::List(holders))
        .build()
}

/// Whether `dir` (absolute) is the same directory through process `pid`'s root, which is
/// its mount namespace's view (`None`: cannot tell).
pub fn shared_with(dir: &Path, pid: u32) -> Option<bool> {
    let ours = std::fs::metadata(dir).ok()?;
    let relative = dir.strip_prefix("/").ok()?;
    let root = PathBuf::from(format!("/proc/{pid}/root"));
    match std::fs::metadata(root.join(relative)) {
        Ok(theirs) => Some((ours.dev(), ours.ino()) == (theirs.dev(), theirs.ino())),
        // It has no such directory: not shared, if its root can be read at all.
        Err(_) => std::fs::read_dir(&root).ok().map(|_| false),
    }
}

/// The namespace's lease files in `dir`, and for each one locked, the process that holds it
/// (from /proc/locks, without touching the file).
fn holders(dir: &Path, namespace: &str) -> (u64, Vec<Value>) {
    let prefix = format!("flakery.{namespace}.node-");
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let mut files = 0u64;
    let mut held = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, held);
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(index) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        files += 1;
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if let Some(pid) = lock_holder(&locks, meta.dev(), meta.ino()) {
            if held.len() < LISTED_FILES {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .map(|c| c.trim().to_string())
                    .ok();
                held.push(
                    MapBuilder::new()
                        .put("node_index", index.to_string())
                        .put("pid", pid)
                        .put("process", comm)
                        .build(),
                );
            }
        }
    }
    (files, held)
}

/// The PID holding a FLOCK on the file (`dev`, `ino`) in /proc/locks' text: lines are
/// `1: FLOCK  ADVISORY  WRITE 2246 fe:00:5824516 0 EOF` (major:minor in hex, inode decimal).
pub fn lock_holder(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    let want = format!(
        "{:02x}:{:02x}:{ino}",
        libc::major(dev as libc::dev_t),
        libc::minor(dev as libc::dev_t)
    );
    locks.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.get(1) != Some(&"FLOCK") || words.get(5) != Some(&want.as_str()) {
            return None;
        }
        words.get(4)?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_found_by_device_and_inode() {
        let locks = "1: FLOCK  ADVISORY  WRITE 2246 fe:00:5824516 0 EOF\n\
                     2: POSIX  ADVISORY  WRITE 99 fe:00:77 0 EOF\n";
        let dev = libc::makedev(0xfe, 0) as u64;
        assert_eq!(lock_holder(locks, dev, 5824516), Some(2246));
        assert_eq!(
            lock_holder(locks, dev, 77),
            None,
            "POSIX locks are not the lease's"
        );
        assert_eq!(lock_holder(locks, dev, 582451), None);
    }

    #[test]
    fn the_steps_say_why_and_credentials_never_show() {
        let env = Environment::from_vars([(
            "FLAKERY_DATABASE_URL",
            "postgres://u:hunter2@127.0.0.1:1/ids",
        )]);
        let mut findings = Vec::new();
        let v = section(
            &Options::default(),
            &Layout::twitter(),
            &env,
            false,
            1,
            &mut findings,
        );
        let json = v.to_json();
        assert!(!json.contains("hunter2"), "{json}");
        assert!(json.contains("database: "), "{json}");
        assert_eq!(v.get("source"), Some(&Value::from("coordinator")));
        // Port 1 on loopback is closed: the coordinator cannot be reached.
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].topic, "coordinator");
        findings.clear();
        let fixed = Environment::from_vars([("FLAKERY_WORKER_ID", "7")]);
        let v = section(
            &Options::default(),
            &Layout::twitter(),
            &fixed,
            false,
            1,
            &mut findings,
        );
        assert_eq!(v.get("worker_id"), Some(&Value::Int(7)));
        assert!(findings.is_empty(), "{findings:?}");
        // An explicit worker ID the layout cannot hold: refused, as the generator refuses it.
        let too_big = Options {
            worker_id: Some(32),
            ..Options::default()
        };
        section(
            &too_big,
            &Layout::twitter(),
            &Environment::default(),
            false,
            1,
            &mut findings,
        );
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].level, Level::Refused);
    }
}
