//! The lease statements in MySQL / MariaDB (InnoDB; `SKIP LOCKED` needs MySQL 8.0 or
//! MariaDB 10.6), over the `mysql` crate (rust-mysql-simple's synchronous client: blocking
//! sockets, no runtime, so a forked child connects anew with nothing inherited).

use std::sync::LazyLock;
use std::time::Duration;

use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{ClientIdentity, Conn, Opts, OptsBuilder, SslOpts, Value};

use super::dialect::{Candidate, Dialect, LeaseRow};
use super::statements::Statements;
use super::tls::{Roots, TlsMode, TlsRequest};
use super::LEASE_TABLE as T;
use flakery::DatabaseUrl;

/// The database's clock in Unix ms (the session's time zone is UTC, see `connect`).
const NOW: &str = "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";

/// The statements both databases run alike (see `statements`).
static SQL: LazyLock<Statements> = LazyLock::new(|| Statements::new(NOW, false));

/// MySQL's error for a duplicate key.
const ER_DUP_ENTRY: u16 = 1062;

/// The connection, and whether its table has `claimed_ms` (asked once a connection: a claim
/// should not query the catalog each time).
pub(crate) struct MySql(Conn, Option<bool>);

/// Connects to `url` with the TLS its `ssl-mode` and `ssl-ca` ask for, giving up on the TCP
/// connection after `timeout`. Affected-row counts are rows matched (`CLIENT_FOUND_ROWS`),
/// so that an update that changes nothing still proves the row is ours; the session runs
/// in UTC, so `NOW()` converts to Unix time without daylight-saving gaps.
pub(crate) fn connect(url: &DatabaseUrl, timeout: Duration) -> Result<Box<dyn Dialect>, String> {
    let (client_url, tls) =
        super::tls::split(url.kind(), url.expose_secret()).map_err(|e| e.message().to_string())?;
    tls.check_files(url.kind())?;
    let opts = Opts::from_url(&client_url).map_err(|e| format!("{e}"))?;
    let prefer_socket = client_url.contains("prefer_socket=true");
    let mut builder = OptsBuilder::from_opts(opts);
    if !tls.crate_parameters {
        builder = builder.ssl_opts(ssl_opts(&tls));
    }
    // The mysql crate asks rustls for the process's default provider.
    flakery_tls::install_default_provider();
    let builder = builder
        .prefer_socket(prefer_socket)
        .tcp_connect_timeout(Some(timeout))
        .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS)
        .init(vec!["SET time_zone = '+00:00'"]);
    let conn = Conn::new(builder).map_err(|e| super::tls::with_hint(e.to_string()))?;
    Ok(Box::new(MySql(conn, None)))
}

/// The mysql crate's TLS options for `ssl-mode`, `ssl-ca`, `ssl-cert` and `ssl-key`: any
/// options make it require TLS, trusting webpki-roots (Mozilla's CAs) and the CA file.
fn ssl_opts(tls: &TlsRequest) -> Option<SslOpts> {
    let identity = tls
        .client_cert
        .as_ref()
        .map(|(cert, key)| ClientIdentity::new(cert.clone(), key.clone()));
    let with_ca = |opts: SslOpts| match &tls.roots {
        Roots::File(path) => opts.with_root_cert_path(Some(path.clone())),
        Roots::Unnamed | Roots::System => opts,
    };
    let opts = match (tls.mode, &tls.roots) {
        (TlsMode::Disable | TlsMode::Prefer, _) => None,
        (TlsMode::Require, Roots::Unnamed | Roots::System) => {
            Some(SslOpts::default().with_danger_accept_invalid_certs(true))
        }
        // REQUIRED with a CA checks the chain, as libpq's `require` does.
        (TlsMode::Require | TlsMode::VerifyCa, _) => {
            Some(with_ca(SslOpts::default()).with_danger_skip_domain_validation(true))
        }
        (TlsMode::VerifyFull, _) => Some(with_ca(SslOpts::default())),
    };
    opts.map(|opts| opts.with_client_identity(identity))
}

fn text(e: mysql::Error) -> String {
    e.to_string()
}

/// A row as the statement's types, or why not: a table made or altered by hand can hold
/// columns of other types, which the crate's plain conversions answer with a panic.
fn converted<T>(row: std::result::Result<T, mysql::FromRowError>) -> Result<T, String> {
    row.map_err(|_| format!("a row of {T} does not have the column types flakery gives it"))
}

impl MySql {
    fn exec(&mut self, sql: &str, params: Vec<Value>) -> Result<u64, String> {
        self.0.exec_drop(sql, params).map_err(text)?;
        Ok(self.0.affected_rows())
    }
}

impl Dialect for MySql {
    fn ensure_lease_table(&mut self) -> Result<(), String> {
        // Looked up first: CREATE TABLE IF NOT EXISTS takes the table's metadata lock even
        // when the table exists, waiting for every open transaction on it and making every
        // later one wait behind it, so that many starts at once queue on one another.
        if self.lease_table_exists()? {
            return Ok(());
        }
        self.0
            .query_drop(format!(
                "CREATE TABLE IF NOT EXISTS {T} (
                     namespace   VARCHAR(64)    NOT NULL,
                     node_index  BIGINT         NOT NULL,
                     holder      BIGINT         NULL,
                     holder_name VARCHAR(255)   NOT NULL DEFAULT '',
                     expires_ms  BIGINT         NOT NULL DEFAULT 0,
                     mark        VARBINARY(255) NOT NULL DEFAULT '',
                     claimed_ms  BIGINT         NOT NULL DEFAULT 0,
                     PRIMARY KEY (namespace, node_index)
                 ) ENGINE = InnoDB"
            ))
            .map_err(text)
    }

    fn begin(&mut self) -> Result<(), String> {
        self.0
            .query_drop("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .and_then(|()| self.0.query_drop("START TRANSACTION"))
            .map_err(text)
    }

    fn commit(&mut self) -> Result<(), String> {
        self.0.query_drop("COMMIT").map_err(text)
    }

    fn rollback(&mut self) -> Result<(), String> {
        self.0.query_drop("ROLLBACK").map_err(text)
    }

    fn now_ms(&mut self) -> Result<i64, String> {
        self.0
            .query_first_opt::<i64, _>(format!("SELECT {NOW}"))
            .map_err(text)?
            .map(converted)
            .transpose()?
            .ok_or_else(|| "no answer to SELECT NOW()".into())
    }

    fn candidates(
        &mut self,
        namespace: &str,
        from: i64,
        to: i64,
        holder: i64,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<Candidate>, String> {
        let rows = self
            .0
            .exec_opt::<(i64, Vec<u8>), _, _>(
                &SQL.candidates,
                (namespace, from, to, holder, now_ms, limit),
            )
            .map_err(text)?;
        rows.into_iter()
            .map(|row| converted(row).map(|(index, mark)| Candidate { index, mark }))
            .collect()
    }

    fn lease_table_exists(&mut self) -> Result<bool, String> {
        let found: Option<u8> = self
            .0
            .exec_first(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() \
                 AND table_name = ?",
                (T,),
            )
            .map_err(text)?;
        Ok(found.is_some())
    }

    fn has_claim_time(&mut self) -> Result<bool, String> {
        if let Some(known) = self.1 {
            return Ok(known);
        }
        let found: Option<u8> = self
            .0
            .exec_first(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() \
                 AND table_name = ? AND column_name = 'claimed_ms'",
                (T,),
            )
            .map_err(text)?;
        self.1 = Some(found.is_some());
        Ok(found.is_some())
    }

    fn note_claimed(&mut self, namespace: &str, index: i64, claimed_ms: i64) -> Result<(), String> {
        if self.has_claim_time()? {
            self.exec(
                &SQL.claimed,
                vec![claimed_ms.into(), namespace.into(), index.into()],
            )?;
        }
        Ok(())
    }

    fn census_rows(
        &mut self,
        namespace: &str,
        from: i64,
        to: i64,
        limit: i64,
        claimed: bool,
    ) -> Result<Vec<LeaseRow>, String> {
        type Row = (i64, Option<i64>, Vec<u8>, i64, Vec<u8>);
        let row_of = |(index, holder, name, expires_ms, mark): Row, claimed_ms| LeaseRow {
            index,
            holder,
            holder_name: String::from_utf8_lossy(&name).into_owned(),
            expires_ms,
            mark,
            claimed_ms,
        };
        let params = (namespace, from, to, limit);
        if claimed {
            type Timed = (i64, Option<i64>, Vec<u8>, i64, Vec<u8>, i64);
            let rows = self
                .0
                .exec_opt::<Timed, _, _>(&SQL.census_claimed, params)
                .map_err(text)?;
            rows.into_iter()
                .map(|row| {
                    converted(row).map(|(a, b, c, d, e, claimed_ms)| {
                        row_of((a, b, c, d, e), Some(claimed_ms))
                    })
                })
                .collect()
        } else {
            let rows = self
                .0
                .exec_opt::<Row, _, _>(&SQL.census, params)
                .map_err(text)?;
            rows.into_iter()
                .map(|row| converted(row).map(|row| row_of(row, None)))
                .collect()
        }
    }

    fn lowest_missing(&mut self, namespace: &str, from: i64) -> Result<i64, String> {
        self.0
            .exec_first_opt::<Option<i64>, _, _>(
                &SQL.lowest_missing,
                (namespace, from, from, namespace, from, namespace),
            )
            .map_err(text)?
            .map(converted)
            .transpose()?
            .flatten()
            .ok_or_else(|| "no answer to the lowest free index".into())
    }

    fn insert_held(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        holder_name: &str,
        expires_ms: i64,
    ) -> Result<bool, String> {
        let result = self.0.exec_drop(
            format!(
                "INSERT INTO {T} (namespace, node_index, holder, holder_name, expires_ms, mark) \
                 VALUES (?, ?, ?, ?, ?, '')"
            ),
            (namespace, index, holder, holder_name, expires_ms),
        );
        match result {
            Ok(()) => Ok(true),
            Err(mysql::Error::MySqlError(e)) if e.code == ER_DUP_ENTRY => Ok(false),
            Err(e) => Err(text(e)),
        }
    }

    fn lock_claimable(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        now_ms: i64,
    ) -> Result<Option<Vec<u8>>, String> {
        self.0
            .exec_first_opt::<Vec<u8>, _, _>(
                &SQL.lock_claimable,
                (namespace, index, holder, now_ms),
            )
            .map_err(text)?
            .map(converted)
            .transpose()
    }

    fn take(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        holder_name: &str,
        expires_ms: i64,
        mark: &str,
    ) -> Result<(), String> {
        self.exec(
            &SQL.take,
            vec![
                holder.into(),
                holder_name.into(),
                expires_ms.into(),
                mark.into(),
                namespace.into(),
                index.into(),
            ],
        )
        .map(drop)
    }

    fn renew(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        term_ms: i64,
    ) -> Result<bool, String> {
        let params = vec![
            term_ms.into(),
            namespace.into(),
            index.into(),
            holder.into(),
        ];
        Ok(self.exec(&SQL.renew, params)? == 1)
    }

    fn write_mark(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        term_ms: i64,
        expected: &str,
        new: &str,
    ) -> Result<bool, String> {
        let params = vec![
            term_ms.into(),
            new.into(),
            namespace.into(),
            index.into(),
            holder.into(),
            expected.into(),
            new.into(),
        ];
        Ok(self.exec(&SQL.write_mark, params)? == 1)
    }

    fn release(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        mark: Option<&str>,
    ) -> Result<(), String> {
        let params = vec![mark.into(), namespace.into(), index.into(), holder.into()];
        self.exec(&SQL.release, params).map(drop)
    }

    fn ensure_worker_node_table(&mut self) -> Result<(), String> {
        // uid-generator's WORKER_NODE.sql, created only if missing.
        self.0
            .query_drop(
                "CREATE TABLE IF NOT EXISTS WORKER_NODE (
                     ID BIGINT NOT NULL AUTO_INCREMENT COMMENT 'auto increment id',
                     HOST_NAME VARCHAR(64) NOT NULL COMMENT 'host name',
                     PORT VARCHAR(64) NOT NULL COMMENT 'port',
                     TYPE INT NOT NULL COMMENT 'node type: ACTUAL or CONTAINER',
                     LAUNCH_DATE DATE NOT NULL COMMENT 'launch date',
                     MODIFIED TIMESTAMP NOT NULL COMMENT 'modified time',
                     CREATED TIMESTAMP NOT NULL COMMENT 'created time',
                     PRIMARY KEY(ID)
                 ) COMMENT = 'DB WorkerID Assigner for UID Generator', ENGINE = INNODB",
            )
            .map_err(text)
    }

    fn insert_worker_node(
        &mut self,
        host: &str,
        port: &str,
        node_type: i32,
    ) -> Result<i64, String> {
        self.0
            .exec_drop(
                "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) \
                 VALUES (?, ?, ?, CURDATE(), NOW(), NOW())",
                (host, port, node_type),
            )
            .map_err(text)?;
        i64::try_from(self.0.last_insert_id()).map_err(|_| "WORKER_NODE.ID is out of range".into())
    }
}

#[cfg(test)]
mod tests {
    /// The unreadable ssl-ca is named before anything is sent (a closed port, so nothing
    /// else could be the cause either way).
    #[test]
    fn connect_names_an_unreadable_ca_file() {
        let url = flakery::DatabaseUrl::parse(
            "mysql://u:pw@127.0.0.1:1/db?ssl-mode=VERIFY_CA&ssl-ca=/nonexistent/flakery-ca.pem",
        )
        .unwrap();
        let message = super::connect(&url, std::time::Duration::from_secs(5))
            .err()
            .unwrap();
        assert!(message.contains("ssl-ca"), "{message}");
        assert!(message.contains("/nonexistent/flakery-ca.pem"), "{message}");
        assert!(message.contains("No such file"), "{message}");
    }
}
