//! The lease statements in PostgreSQL, over the `postgres` crate (rust-postgres's synchronous
//! client: each connection has its own single-thread runtime and socket, nothing shared by
//! the process, so a forked child connects anew with nothing inherited).

use std::sync::LazyLock;
use std::time::Duration;

use postgres::config::SslMode;
use postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::dialect::{Candidate, Dialect, LeaseRow};
use super::statements::Statements;
use super::tls::TlsMode;
use super::LEASE_TABLE as T;
use flakery::DatabaseUrl;

/// The database's clock in Unix ms, at the moment the statement runs.
const NOW: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// The statements both databases run alike (see `statements`).
static SQL: LazyLock<Statements> = LazyLock::new(|| Statements::new(NOW, true));

/// Serialises `CREATE TABLE IF NOT EXISTS` between holders starting at once (two concurrent
/// creations of one table can fail on PostgreSQL's catalog): a transaction-scoped advisory
/// lock on this key ("flakery" in ASCII).
const CREATE_LOCK: i64 = 0x0066_6c61_6b65_7279;

/// The connection, and whether its table has `claimed_ms` (asked once a connection: a claim
/// should not query the catalog each time).
pub(crate) struct Postgres(Client, Option<bool>);

/// Connects to `url` with the TLS its `sslmode` and `sslrootcert` ask for (see
/// `tls_config`), giving up on the TCP connection after `timeout`.
pub(crate) fn connect(url: &DatabaseUrl, timeout: Duration) -> Result<Box<dyn Dialect>, String> {
    let (client_url, tls) =
        super::tls::split(url.kind(), url.expose_secret()).map_err(|e| e.message().to_string())?;
    let mut config: Config = client_url.parse().map_err(|e| format!("{e}"))?;
    tls.check_files(url.kind())?;
    config
        .connect_timeout(timeout)
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(5))
        .application_name("flakery")
        .ssl_mode(match tls.mode {
            TlsMode::Disable => SslMode::Disable,
            TlsMode::Prefer => SslMode::Prefer,
            // The certificate checks are the rustls configuration's.
            TlsMode::Require | TlsMode::VerifyCa | TlsMode::VerifyFull => SslMode::Require,
        });
    let connector = MakeRustlsConnect::new(super::tls_config::postgres_config(&tls)?);
    let client = config
        .connect(connector)
        .map_err(|e| super::tls::with_hint(describe(e)))?;
    Ok(Box::new(Postgres(client, None)))
}

fn describe(err: postgres::Error) -> String {
    match std::error::Error::source(&err) {
        Some(source) if !err.to_string().contains(&source.to_string()) => {
            format!("{err}: {source}")
        }
        _ => err.to_string(),
    }
}

impl Postgres {
    fn exec(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<u64, String> {
        self.0.execute(sql, params).map_err(describe)
    }
}

impl Dialect for Postgres {
    fn ensure_lease_table(&mut self) -> Result<(), String> {
        self.0
            .batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({CREATE_LOCK});
                 CREATE TABLE IF NOT EXISTS {T} (
                     namespace   VARCHAR(64)  NOT NULL,
                     node_index  BIGINT       NOT NULL,
                     holder      BIGINT,
                     holder_name VARCHAR(255) NOT NULL DEFAULT '',
                     expires_ms  BIGINT       NOT NULL DEFAULT 0,
                     mark        TEXT         NOT NULL DEFAULT '',
                     claimed_ms  BIGINT       NOT NULL DEFAULT 0,
                     PRIMARY KEY (namespace, node_index));
                 COMMIT"
            ))
            .map_err(describe)
    }

    fn begin(&mut self) -> Result<(), String> {
        self.0
            .batch_execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            .map_err(describe)
    }

    fn commit(&mut self) -> Result<(), String> {
        self.0.batch_execute("COMMIT").map_err(describe)
    }

    fn rollback(&mut self) -> Result<(), String> {
        self.0.batch_execute("ROLLBACK").map_err(describe)
    }

    fn now_ms(&mut self) -> Result<i64, String> {
        let row = self
            .0
            .query_one(&format!("SELECT {NOW}"), &[])
            .map_err(describe)?;
        row.try_get(0).map_err(describe)
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
            .query(
                &SQL.candidates,
                &[&namespace, &from, &to, &holder, &now_ms, &limit],
            )
            .map_err(describe)?;
        rows.iter()
            .map(|row| {
                Ok(Candidate {
                    index: row.try_get(0).map_err(describe)?,
                    mark: row.try_get::<_, String>(1).map_err(describe)?.into_bytes(),
                })
            })
            .collect()
    }

    fn lease_table_exists(&mut self) -> Result<bool, String> {
        let row = self
            .0
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&T])
            .map_err(describe)?;
        row.try_get(0).map_err(describe)
    }

    fn has_claim_time(&mut self) -> Result<bool, String> {
        if let Some(known) = self.1 {
            return Ok(known);
        }
        let row = self
            .0
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE \
                 table_schema = current_schema() AND table_name = $1 \
                 AND column_name = 'claimed_ms')",
                &[&T],
            )
            .map_err(describe)?;
        let known = row.try_get(0).map_err(describe)?;
        self.1 = Some(known);
        Ok(known)
    }

    fn note_claimed(&mut self, namespace: &str, index: i64, claimed_ms: i64) -> Result<(), String> {
        if self.has_claim_time()? {
            self.exec(&SQL.claimed, &[&claimed_ms, &namespace, &index])?;
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
        let sql = if claimed {
            &SQL.census_claimed
        } else {
            &SQL.census
        };
        let rows = self
            .0
            .query(sql, &[&namespace, &from, &to, &limit])
            .map_err(describe)?;
        rows.iter()
            .map(|row| {
                Ok(LeaseRow {
                    index: row.try_get(0).map_err(describe)?,
                    holder: row.try_get(1).map_err(describe)?,
                    holder_name: row.try_get(2).map_err(describe)?,
                    expires_ms: row.try_get(3).map_err(describe)?,
                    mark: row.try_get::<_, String>(4).map_err(describe)?.into_bytes(),
                    claimed_ms: if claimed {
                        Some(row.try_get(5).map_err(describe)?)
                    } else {
                        None
                    },
                })
            })
            .collect()
    }

    fn lowest_missing(&mut self, namespace: &str, from: i64) -> Result<i64, String> {
        let row = self
            .0
            .query_one(
                &SQL.lowest_missing,
                &[&namespace, &from, &from, &namespace, &from, &namespace],
            )
            .map_err(describe)?;
        row.try_get(0).map_err(describe)
    }

    fn insert_held(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        holder_name: &str,
        expires_ms: i64,
    ) -> Result<bool, String> {
        let inserted = self.exec(
            &format!(
                "INSERT INTO {T} (namespace, node_index, holder, holder_name, expires_ms, mark) \
                 VALUES ($1, $2, $3, $4, $5, '') ON CONFLICT DO NOTHING"
            ),
            &[&namespace, &index, &holder, &holder_name, &expires_ms],
        )?;
        Ok(inserted == 1)
    }

    fn lock_claimable(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        now_ms: i64,
    ) -> Result<Option<Vec<u8>>, String> {
        let row = self
            .0
            .query_opt(&SQL.lock_claimable, &[&namespace, &index, &holder, &now_ms])
            .map_err(describe)?;
        row.map(|row| {
            row.try_get::<_, String>(0)
                .map(String::into_bytes)
                .map_err(describe)
        })
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
            &[
                &holder,
                &holder_name,
                &expires_ms,
                &mark,
                &namespace,
                &index,
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
        let updated = self.exec(&SQL.renew, &[&term_ms, &namespace, &index, &holder])?;
        Ok(updated == 1)
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
        let updated = self.exec(
            &SQL.write_mark,
            &[&term_ms, &new, &namespace, &index, &holder, &expected, &new],
        )?;
        Ok(updated == 1)
    }

    fn release(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        mark: Option<&str>,
    ) -> Result<(), String> {
        self.exec(&SQL.release, &[&mark, &namespace, &index, &holder])
            .map(drop)
    }

    fn ensure_worker_node_table(&mut self) -> Result<(), String> {
        // uid-generator's WORKER_NODE.sql in PostgreSQL's types; unquoted names, as a
        // hand-written PostgreSQL port of that script has them.
        self.0
            .batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({CREATE_LOCK});
                 CREATE TABLE IF NOT EXISTS WORKER_NODE (
                     ID          BIGSERIAL   NOT NULL,
                     HOST_NAME   VARCHAR(64) NOT NULL,
                     PORT        VARCHAR(64) NOT NULL,
                     TYPE        INT         NOT NULL,
                     LAUNCH_DATE DATE        NOT NULL,
                     MODIFIED    TIMESTAMP   NOT NULL,
                     CREATED     TIMESTAMP   NOT NULL,
                     PRIMARY KEY (ID));
                 COMMIT"
            ))
            .map_err(describe)
    }

    fn insert_worker_node(
        &mut self,
        host: &str,
        port: &str,
        node_type: i32,
    ) -> Result<i64, String> {
        let row = self
            .0
            .query_one(
                "INSERT INTO WORKER_NODE (HOST_NAME, PORT, TYPE, LAUNCH_DATE, MODIFIED, CREATED) \
                 VALUES ($1, $2, $3, CURRENT_DATE, NOW(), NOW()) RETURNING ID",
                &[&host, &port, &node_type],
            )
            .map_err(describe)?;
        row.try_get(0).map_err(describe)
    }
}

#[cfg(test)]
mod tests {
    /// As MySQL's: the unreadable key is named, with the reason, before connecting.
    #[test]
    fn connect_names_an_unreadable_key_file() {
        let cert = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
        let url = flakery::DatabaseUrl::parse(&format!(
            "postgres://u:pw@127.0.0.1:1/db?sslmode=require&sslcert={cert}\
             &sslkey=/nonexistent/flakery.key"
        ))
        .unwrap();
        let message = super::connect(&url, std::time::Duration::from_secs(5))
            .err()
            .unwrap();
        assert!(message.contains("sslkey"), "{message}");
        assert!(message.contains("/nonexistent/flakery.key"), "{message}");
        assert!(message.contains("No such file"), "{message}");
    }
}
