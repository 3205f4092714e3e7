//! The real servers of the database tests (coordinators/sql/tests/database*.rs): PostgreSQL and MariaDB
//! started by tests/db/dbserver.py on 127.0.0.1 with temporary data, stopped by PID. Each
//! test binary shares one server of each kind (each test in a namespace of its own); tests
//! that kill, pause or restart a server, or need one configured otherwise, start their own.
//! tests/db/run.sh installs the servers; missing ones fail the test in CI (CI=true) and skip
//! it loudly elsewhere. The tests of a binary run one at a time (`serial`).
#![allow(dead_code)] // each test binary uses part of it

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use flakery::{Clock, SystemClock};
use flakery_sql::{DatabaseUrl, SqlCoordinator};

/// This crate's connector, installed before main in every test process (the children the
/// tests re-run as roles too): `Generator::new` opens its plans.
#[ctor::ctor(unsafe)]
fn install_connector() {
    flakery_sql::install();
}

pub fn repo_root() -> PathBuf {
    // coordinators/<crate>/ in the repository.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

pub fn dbserver(args: &[&str]) -> String {
    let output = Command::new("python3")
        .arg(repo_root().join("tests/db/dbserver.py"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run dbserver.py");
    assert!(
        output.status.success(),
        "dbserver.py {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

pub fn installed() -> bool {
    Command::new("bash")
        .args([
            "-c",
            "ls /usr/lib/postgresql/*/bin/initdb && command -v mariadb-install-db",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the servers can be had: installs them in CI, skips loudly elsewhere.
pub fn servers_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        if installed() {
            return true;
        }
        // Installing is the area's job (tests/db/run.sh), never a test's.
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: PostgreSQL and MariaDB are required: run bash tests/db/run.sh, which \
             installs them"
        );
        let _ = writeln!(
            std::io::stderr(),
            "!!!!!!!! SKIPPED: PostgreSQL / MariaDB are not installed; run bash \
             tests/db/install.sh !!!!!!!!"
        );
        false
    })
}

pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Postgres,
    MariaDb,
}

impl Kind {
    pub fn arg(self) -> &'static str {
        match self {
            Kind::Postgres => "postgres",
            Kind::MariaDb => "mariadb",
        }
    }
}

/// A running server, stopped by PID on drop (shared ones at exit).
pub struct Server {
    pub kind: Kind,
    pub dir: String,
    pub url: String,
    pub password: String,
}

impl Server {
    pub fn start(kind: Kind) -> Server {
        Server::start_with(kind, &[])
    }

    /// A server serving TLS with the certificate and key in `certs` (see `make_certs`).
    pub fn start_tls(kind: Kind, certs: &Path) -> Server {
        Server::start_with(kind, &["--tls", certs.to_str().unwrap()])
    }

    fn start_with(kind: Kind, extra: &[&str]) -> Server {
        let mut args = vec!["start", kind.arg()];
        args.extend_from_slice(extra);
        let info: serde_json::Value = serde_json::from_str(&dbserver(&args)).unwrap();
        Server {
            kind,
            dir: info["dir"].as_str().unwrap().to_string(),
            url: info["url"].as_str().unwrap().to_string(),
            password: info["password"].as_str().unwrap().to_string(),
        }
    }

    pub fn sql(&self, statement: &str) -> String {
        dbserver(&["sql", &self.dir, statement])
    }

    pub fn control(&self, what: &str) {
        dbserver(&[what, &self.dir]);
    }

    pub fn database_url(&self) -> DatabaseUrl {
        DatabaseUrl::parse(&self.url).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !SHARED_DIRS.lock().unwrap().contains(&self.dir) {
            let _ = Command::new("python3")
                .arg(repo_root().join("tests/db/dbserver.py"))
                .args(["stop", &self.dir])
                .status();
        }
    }
}

static SHARED_DIRS: Mutex<Vec<String>> = Mutex::new(Vec::new());

extern "C" fn stop_shared_servers() {
    let dirs = SHARED_DIRS.lock().map(|d| d.clone()).unwrap_or_default();
    for dir in dirs {
        let _ = Command::new("python3")
            .arg(repo_root().join("tests/db/dbserver.py"))
            .args(["stop", &dir])
            .status();
    }
}

/// The server of `kind` that the tests share, started on first use and stopped at exit.
pub fn shared(kind: Kind) -> &'static Server {
    static POSTGRES: OnceLock<Server> = OnceLock::new();
    static MARIADB: OnceLock<Server> = OnceLock::new();
    let cell = match kind {
        Kind::Postgres => &POSTGRES,
        Kind::MariaDb => &MARIADB,
    };
    cell.get_or_init(|| {
        let server = Server::start(kind);
        let mut dirs = SHARED_DIRS.lock().unwrap();
        if dirs.is_empty() {
            // SAFETY: registers a plain function to run at exit.
            unsafe { libc::atexit(stop_shared_servers) };
        }
        dirs.push(server.dir.clone());
        server
    })
}

/// A temporary directory with a test CA (`ca.pem`), a server certificate for `localhost`
/// signed by it (`server.crt`, `server.key`) and another CA (`other-ca.pem`); removed on drop.
pub struct Certs(pub PathBuf);

impl Certs {
    pub fn make() -> Certs {
        let dir = std::env::temp_dir().join(format!(
            "sql-flakery-certs-{}-{}",
            std::process::id(),
            SystemClock.now_ms()
        ));
        dbserver(&["certs", dir.to_str().unwrap()]);
        Certs(dir)
    }

    pub fn file(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn clock() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

pub fn coordinator(url: &DatabaseUrl, namespace: &str, term_ms: i64) -> SqlCoordinator {
    SqlCoordinator::new(url.clone(), namespace, term_ms, clock()).unwrap()
}

pub fn soon(ms: i64) -> i64 {
    SystemClock.now_ms() + ms
}

/// How long a test waits for something that must happen before it gives up: a safety net
/// against a hang, never a measure (no test here asserts how long anything took).
pub const SAFETY_NET: std::time::Duration = std::time::Duration::from_secs(120);

impl Server {
    /// Whether the lease row `index` of `namespace` is free in the database's own clock:
    /// given back, or expired (as the coordinator's claim reads it).
    pub fn row_is_free(&self, namespace: &str, index: u64) -> bool {
        let now = match self.kind {
            Kind::Postgres => "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT",
            Kind::MariaDb => "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
        };
        let held = self.sql(&format!(
            "SELECT COUNT(*) FROM flakery_node_leases WHERE namespace = '{namespace}' \
             AND node_index = {index} AND holder IS NOT NULL AND expires_ms > {now}"
        ));
        held.trim() == "0"
    }

    /// Waits until the row `index` of `namespace` is free in the database: the order of
    /// events a test needs before another holder may take it. (A sleep of a term is not it:
    /// a request the holder sent just before it stopped may be applied later on a loaded
    /// machine, and moves the expiry.)
    pub fn await_free_row(&self, namespace: &str, index: u64) {
        let until = std::time::Instant::now() + SAFETY_NET;
        while !self.row_is_free(namespace, index) {
            assert!(
                std::time::Instant::now() < until,
                "{:?}: row {index} of '{namespace}' still held",
                self.kind
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Runs `body` against each kind of server, one at a time.
pub fn each_kind(body: impl Fn(Kind)) {
    let _guard = serial();
    if !servers_available() {
        return;
    }
    for kind in [Kind::Postgres, Kind::MariaDb] {
        body(kind);
    }
}
