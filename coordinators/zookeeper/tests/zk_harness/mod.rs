//! A throw-away ZooKeeper for the tests that need a real one (tests/zookeeper/zkserver.py),
//! stopped by PID on drop, and a log of the lease's events. tests/zookeeper/run.sh installs
//! ZooKeeper; a missing one fails the test in CI (CI=true) and skips it loudly elsewhere.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// This crate's connector, installed before main in every test process (the children the
/// tests re-run as roles too): `Generator::new` opens its plans.
#[ctor::ctor(unsafe)]
fn install_connector() {
    flakery_zookeeper::install();
}

pub fn repo_root() -> PathBuf {
    // coordinators/<crate>/ in the repository.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

pub fn zkserver() -> Command {
    let mut command = Command::new("python3");
    command.arg(repo_root().join("tests/zookeeper/zkserver.py"));
    command
}

fn zookeeper_installed() -> bool {
    Path::new("/usr/share/java/zookeeper.jar").exists()
        && Command::new("java")
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

/// Whether ZooKeeper is installed; in CI (CI=true) a missing one fails the test, elsewhere it
/// is skipped after a loud notice.
fn available() -> bool {
    if zookeeper_installed() {
        return true;
    }
    // Installing is the area's job (tests/zookeeper/run.sh), never a test's.
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "CI=true: ZooKeeper (and java) are required: run bash tests/zookeeper/run.sh, \
             which installs them"
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "!!!!!!!! SKIPPED: ZooKeeper is not installed; run bash tests/zookeeper/install.sh \
         (Debian's zookeeper) !!!!!!!!"
    );
    false
}

/// One test at a time: the counts and orders of events are not disturbed by each other.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running ZooKeeper, stopped by PID on drop.
pub struct Server {
    pub pid: u32,
    pub dir: String,
    pub port: u16,
    pub connect: String,
    /// The secureClientPort of a server started with `start_tls`.
    pub secure_port: Option<u16>,
}

impl Server {
    /// A new server, or `None` (after a loud notice) where ZooKeeper is missing outside CI.
    pub fn start() -> Option<Server> {
        available().then(|| Self::start_with(&[]))
    }

    /// `start`, with a secureClientPort too, its certificates from `certs` (made by
    /// tests/tls_certs.py), asking each TLS client for a certificate (`ssl.clientAuth=need`).
    pub fn start_tls(certs: &Path) -> Option<Server> {
        available().then(|| Self::start_with(&["--tls", certs.to_str().unwrap()]))
    }

    /// A server on `port` keeping its data in `data` (a restart of an earlier one).
    pub fn start_at(data: &Path, port: u16) -> Server {
        Self::start_with(&[
            "--data-dir",
            data.to_str().unwrap(),
            "--port",
            &port.to_string(),
        ])
    }

    pub fn start_with(args: &[&str]) -> Server {
        let output = zkserver()
            .arg("start")
            .args(args)
            .output()
            .expect("run zkserver.py");
        assert!(
            output.status.success(),
            "zkserver.py start failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let info: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        Server {
            pid: info["pid"].as_u64().unwrap() as u32,
            dir: info["dir"].as_str().unwrap().to_string(),
            port: info["port"].as_u64().unwrap() as u16,
            connect: info["connect"].as_str().unwrap().to_string(),
            secure_port: info["secure_port"].as_u64().map(|port| port as u16),
        }
    }

    fn signal(&self, what: &str) {
        let status = zkserver()
            .args([what, &self.pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// SIGSTOP: the server keeps its connections open and answers nothing.
    pub fn pause(&self) {
        self.signal("pause");
    }

    pub fn resume(&self) {
        self.signal("resume");
    }

    /// A client of the test's own (the `zookeeper` crate, no credentials), to look at and
    /// tamper with the server's tree as any other client could.
    pub fn client(&self) -> zookeeper::ZooKeeper {
        let zk = zookeeper::ZooKeeper::connect(
            &self.connect,
            Duration::from_secs(10),
            |_: zookeeper::WatchedEvent| {},
        )
        .unwrap();
        zk.exists("/", false).unwrap();
        zk
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = zkserver()
            .args(["stop", &self.pid.to_string(), &self.dir])
            .status();
    }
}

/// A data directory of the test's own, removed on drop (also when the test fails).
pub struct DataDir(pub PathBuf);

impl DataDir {
    pub fn new(name: &str) -> DataDir {
        let dir = std::env::temp_dir().join(format!("flakery-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        DataDir(dir)
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every log event of the process (the lease's `tracing` events), as text.
pub fn log_lines() -> &'static Mutex<Vec<String>> {
    static LINES: OnceLock<&'static Mutex<Vec<String>>> = OnceLock::new();
    LINES.get_or_init(|| {
        let lines: &'static Mutex<Vec<String>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        let _ = tracing::subscriber::set_global_default(Recorder(lines));
        lines
    })
}

/// What a test reads at the instant of each log line, on the thread that logs, before that
/// thread goes on (a lease's state, say): appended to the line.
type LineNote = Box<dyn Fn() -> String + Send + Sync>;

static LINE_NOTE: Mutex<Option<LineNote>> = Mutex::new(None);

/// Appends `note()` to each log line from now on (`None`: no note).
pub fn note_each_line(note: Option<LineNote>) {
    *LINE_NOTE.lock().unwrap_or_else(|e| e.into_inner()) = note;
}

/// A subscriber that keeps each event's level and fields as one line.
struct Recorder(&'static Mutex<Vec<String>>);

struct Text(String);

impl tracing::field::Visit for Text {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = Text(event.metadata().level().to_string());
        event.record(&mut text);
        if let Some(note) = LINE_NOTE.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            text.0.push_str(&note());
        }
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
