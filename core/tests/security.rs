//! Another local user against the host lease, and a host without the default lease
//! directory. These need root, a throwaway unprivileged user and private mount namespaces, so
//! they are ignored by `cargo test` and run by tests/security/run.sh, which creates the user
//! (FLAKERY_SECURITY_USER, its uid and gid in FLAKERY_SECURITY_UID/GID), runs this binary
//! from a directory that user can read, and removes the user afterwards.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use flakery::{Generator, Options};

mod common;
use common::ROLE;

const WHY: &str = "needs root and a throwaway user: run by tests/security/run.sh";

#[test]
fn child_entry_point() {
    // An ordinary test run has no role: nothing to do.
    if std::env::var(ROLE).as_deref() == Ok("hold") {
        let made = Generator::new(Options::default());
        let report = match &made {
            Ok(generator) => format!("ok {}", generator.worker_id()),
            Err(e) => format!("err {} {}", e.code(), e.message()),
        };
        println!("NODE {report}");
        std::io::stdout().flush().unwrap();
        let _ = std::io::stdin().read_line(&mut String::new());
        drop(made);
    }
}

/// The throwaway user's uid and gid.
fn other_user() -> (u32, u32) {
    let id = |name: &str| -> u32 {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is not set: {WHY}"))
            .parse()
            .unwrap()
    };
    (id("FLAKERY_SECURITY_UID"), id("FLAKERY_SECURITY_GID"))
}

fn as_other_user(command: &mut Command) -> &mut Command {
    let (uid, gid) = other_user();
    command.uid(uid).gid(gid).env("HOME", "/")
}

/// A process holding a host lease (or reporting why not) until `release` is called.
struct Holder {
    child: Child,
    reader: BufReader<std::process::ChildStdout>,
    report: String,
}

impl Holder {
    // The child is waited for in `release`.
    #[allow(clippy::zombie_processes)]
    fn start(command: &mut Command) -> Holder {
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = common::spawn(command);
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                reader.read_line(&mut line).unwrap() > 0,
                "the holder printed nothing"
            );
            if let Some((_, rest)) = line.split_once("NODE ") {
                let report = rest.trim().to_string();
                return Holder {
                    child,
                    reader,
                    report,
                };
            }
        }
    }

    fn release(mut self) {
        drop(self.child.stdin.take());
        let _ = std::io::Read::read_to_end(&mut self.reader, &mut Vec::new());
        let _ = self.child.wait();
    }
}

impl Holder {
    /// Asserts that the holder was refused with `code` and every one of `needles` in its
    /// message, then lets it go.
    fn assert_refused(self, code: &str, needles: &[&str]) {
        let report = &self.report;
        assert!(report.starts_with(&format!("err {code} ")), "{report}");
        for needle in needles {
            assert!(report.contains(needle), "no '{needle}' in {report}");
        }
        self.release();
    }
}

fn holder(dir: &Path) -> Command {
    let mut command = common::rerun_as("hold");
    command.env("FLAKERY_LEASE_DIR", dir);
    command
}

/// The harness's directory (root's, removed by the harness): the tests' files live in it.
fn work() -> PathBuf {
    PathBuf::from(std::env::var("FLAKERY_SECURITY_WORK").unwrap_or_else(|_| panic!("{WHY}")))
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = work().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn sh_as_other_user(script: &str) {
    let status = as_other_user(Command::new("sh").args(["-c", script]))
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}

#[test]
#[ignore = "needs root and a throwaway user: run by tests/security/run.sh"]
fn two_users_share_a_root_made_directory_and_never_share_a_node_id() {
    let base = scratch("shared");
    let dir = base.join("leases"); // made by root's first lease: 1777, sticky
    let root_holder = Holder::start(&mut holder(&dir));
    assert_eq!(root_holder.report, "ok 0");
    let mode = std::fs::metadata(&dir).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o1777, "a directory that other users can lease in");
    let user_holder = Holder::start(as_other_user(&mut holder(&dir)));
    assert_eq!(
        user_holder.report, "ok 1",
        "the other user must take another node ID"
    );
    let second_root = Holder::start(&mut holder(&dir));
    assert_eq!(second_root.report, "ok 2");
    for h in [root_holder, user_holder, second_root] {
        h.release();
    }
    // Each user's process takes back its own file; neither ever uses the other's.
    let user_again = Holder::start(as_other_user(&mut holder(&dir)));
    assert_eq!(user_again.report, "ok 1");
    user_again.release();
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
#[ignore = "needs root and a throwaway user: run by tests/security/run.sh"]
fn another_users_links_fifos_and_files_never_make_root_write_chmod_or_block() {
    let base = scratch("traps");
    let dir = base.join("leases");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = base.join("victim");
    std::fs::write(&victim, "root's\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let v = victim.display();
    let d = dir.display();
    // At today's file names and at the older per-namespace directory's.
    sh_as_other_user(&format!(
        "set -e; mkdir -m 1777 {d}/default
         for p in {d}/flakery.default.node- {d}/default/node-; do
           ln -s {v} ${{p}}0
           mkfifo -m 666 ${{p}}1
           printf '%20d\\n' 0 > ${{p}}2; chmod 666 ${{p}}2
           printf '%20d\\n' 0 > ${{p}}3
         done"
    ));
    let (tx, rx) = std::sync::mpsc::channel();
    let dir_for_thread = dir.clone();
    std::thread::spawn(move || {
        let _ = tx.send(Holder::start(&mut holder(&dir_for_thread)));
    });
    let root_holder = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("root's lease blocked");
    assert_eq!(
        root_holder.report, "ok 4",
        "indexes 0 to 3 are the other user's"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's\n");
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o7777, 0o600);
    let (uid, _) = other_user();
    for index in 2..4 {
        let meta = std::fs::metadata(dir.join(format!("flakery.default.node-{index}"))).unwrap();
        assert_eq!(meta.uid(), uid, "the other user's file changed owner");
        assert_eq!(
            std::fs::read_to_string(dir.join(format!("flakery.default.node-{index}"))).unwrap(),
            format!("{:>20}\n", 0),
            "root wrote into the other user's file"
        );
    }
    root_holder.release();

    // Every node ID of a small layout taken by traps: the error names the other user's files.
    let mut command = holder(&dir);
    command.env(
        "FLAKERY_LAYOUT",
        "time:41,worker:2,sequence:12;epoch=1288834974657",
    );
    Holder::start(&mut command).assert_refused(
        "worker_ids_exhausted",
        &[
            "flakery.default.node-0: a symbolic link",
            "flakery.default.node-1: not a regular file",
            &format!("flakery.default.node-2 (uid {uid})"),
            &format!("flakery.default.node-3 (uid {uid})"),
        ],
    );
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
#[ignore = "needs root and a throwaway user: run by tests/security/run.sh"]
fn a_lease_directory_in_a_directory_of_another_user_is_refused() {
    // Made by the other user in /tmp, as any user can.
    let theirs = PathBuf::from(format!("{}-theirs", work().display()));
    let _ = std::fs::remove_dir_all(&theirs);
    let t = theirs.display();
    sh_as_other_user(&format!("mkdir -m 755 {t} && mkdir -m 1777 {t}/leases"));
    let (uid, _) = other_user();
    Holder::start(&mut holder(&theirs.join("leases"))).assert_refused(
        "invalid_argument",
        &[&format!("{t} belongs to uid {uid}"), "FLAKERY_LEASE_DIR"],
    );
    assert_eq!(
        std::fs::read_dir(theirs.join("leases")).unwrap().count(),
        0,
        "root made a file in it"
    );
    let _ = std::fs::remove_dir_all(&theirs);
}

#[test]
#[ignore = "needs root and a throwaway user: run by tests/security/run.sh"]
fn a_user_who_cannot_write_the_lease_directory_is_told_what_to_do() {
    let base = scratch("readonly");
    let dir = base.join("leases");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    Holder::start(as_other_user(&mut holder(&dir))).assert_refused(
        "invalid_argument",
        &[
            "Permission denied",
            "FLAKERY_LEASE_DIR",
            "install -d -m 1777",
        ],
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// This test binary as `role`, in a private mount namespace whose /run is an empty tmpfs
/// prepared by `setup` (shell, run as root inside it).
fn in_private_run(setup: &str) -> Holder {
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "set -e; mount -t tmpfs fcl-security-run /run; {setup}; exec \"$0\" --exact \
         child_entry_point --nocapture --test-threads=1"
    );
    let mut command = Command::new("unshare");
    command
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .arg(exe)
        .env(ROLE, "hold");
    for name in [
        "FLAKERY_WORKER_ID",
        "FLAKERY_DATACENTER_ID",
        "FLAKERY_ZOOKEEPER",
        "FLAKERY_LEASE_DIR",
    ] {
        command.env_remove(name);
    }
    Holder::start(&mut command)
}

#[test]
#[ignore = "needs root and a throwaway user: run by tests/security/run.sh"]
fn without_run_lock_the_implicit_default_is_refused_and_nothing_falls_back() {
    let tmp = scratch("no-run-lock");
    let refused = in_private_run(&format!("export TMPDIR={}", tmp.display()));
    refused.assert_refused(
        "invalid_argument",
        &["/run/lock does not exist", "FLAKERY_LEASE_DIR"],
    );
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "it fell back to TMPDIR"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
#[ignore = "needs root and a throwaway user: run by tests/security/run.sh"]
fn in_a_container_the_implicit_default_is_refused() {
    // /run/.containerenv is what Podman puts in each container (this one may be Docker's too).
    let refused = in_private_run("mkdir -m 1777 /run/lock; touch /run/.containerenv");
    refused.assert_refused(
        "invalid_argument",
        &["looks like a container", "FLAKERY_LEASE_DIR"],
    );
}
