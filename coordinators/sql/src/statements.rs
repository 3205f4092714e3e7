//! The lease statements that both databases run alike, written once with MySQL's
//! placeholders (`?`, bound in the order they stand); PostgreSQL's are the same numbered
//! (`$1`, `$2`, ...). What differs between the databases (the clock, creating the table,
//! inserting a row that may exist) stays in `postgres` and `mysql`.

use super::LEASE_TABLE as T;

/// The statements, each bound in the order of its placeholders (see each field).
pub(crate) struct Statements {
    /// namespace, from, to, holder, now_ms, limit
    pub candidates: String,
    /// namespace, from, from, namespace, from, namespace
    pub lowest_missing: String,
    /// namespace, index, holder, now_ms
    pub lock_claimable: String,
    /// holder, holder_name, expires_ms, mark, namespace, index
    pub take: String,
    /// term_ms, namespace, index, holder
    pub renew: String,
    /// term_ms, new, namespace, index, holder, expected, new
    pub write_mark: String,
    /// mark (or NULL: kept), namespace, index, holder
    pub release: String,
    /// namespace, from, to, limit: every row, as `doctor` counts them (the texts cut short,
    /// so that a row edited by hand costs no more than one written by flakery)
    pub census: String,
    /// The same with the claim time, for a table that has the column.
    pub census_claimed: String,
    /// claimed_ms, namespace, index: the claim time of a row just taken
    pub claimed: String,
}

impl Statements {
    /// `now`: the database's clock in Unix ms, as an expression; `numbered`: placeholders
    /// `$1`, `$2`, ... (PostgreSQL) instead of `?`.
    pub(crate) fn new(now: &str, numbered: bool) -> Statements {
        let sql = |text: String| {
            if numbered {
                number_placeholders(&text)
            } else {
                text
            }
        };
        Statements {
            candidates: sql(format!(
                "SELECT node_index, mark FROM {T} WHERE namespace = ? AND node_index >= ? \
                 AND node_index < ? AND (holder IS NULL OR holder = ? OR expires_ms <= ?) \
                 ORDER BY node_index LIMIT ?"
            )),
            // The lowest index from `from` on with no row: `from` itself, or the end of the
            // run of rows that starts there.
            lowest_missing: sql(format!(
                "SELECT CASE WHEN NOT EXISTS \
                   (SELECT 1 FROM {T} WHERE namespace = ? AND node_index = ?) THEN ? \
                 ELSE (SELECT MIN(a.node_index) + 1 FROM {T} a WHERE a.namespace = ? \
                   AND a.node_index >= ? AND NOT EXISTS (SELECT 1 FROM {T} b \
                     WHERE b.namespace = ? AND b.node_index = a.node_index + 1)) END"
            )),
            lock_claimable: sql(format!(
                "SELECT mark FROM {T} WHERE namespace = ? AND node_index = ? \
                 AND (holder IS NULL OR holder = ? OR expires_ms <= ?) FOR UPDATE SKIP LOCKED"
            )),
            take: sql(format!(
                "UPDATE {T} SET holder = ?, holder_name = ?, expires_ms = ?, mark = ? \
                 WHERE namespace = ? AND node_index = ?"
            )),
            renew: sql(format!(
                "UPDATE {T} SET expires_ms = {now} + ? WHERE namespace = ? AND node_index = ? \
                 AND holder = ? AND expires_ms > {now}"
            )),
            write_mark: sql(format!(
                "UPDATE {T} SET expires_ms = {now} + ?, mark = ? WHERE namespace = ? \
                 AND node_index = ? AND holder = ? AND expires_ms > {now} AND mark IN (?, ?)"
            )),
            release: sql(format!(
                "UPDATE {T} SET holder = NULL, holder_name = '', expires_ms = 0, \
                 mark = COALESCE(?, mark) WHERE namespace = ? AND node_index = ? AND holder = ?"
            )),
            census: sql(format!(
                "SELECT node_index, holder, LEFT(holder_name, 64), expires_ms, LEFT(mark, 65) \
                 FROM {T} WHERE namespace = ? AND node_index >= ? AND node_index < ? \
                 ORDER BY node_index LIMIT ?"
            )),
            census_claimed: sql(format!(
                "SELECT node_index, holder, LEFT(holder_name, 64), expires_ms, LEFT(mark, 65), \
                 claimed_ms FROM {T} WHERE namespace = ? AND node_index >= ? \
                 AND node_index < ? ORDER BY node_index LIMIT ?"
            )),
            claimed: sql(format!(
                "UPDATE {T} SET claimed_ms = ? WHERE namespace = ? AND node_index = ?"
            )),
        }
    }
}

/// Each `?` as `$1`, `$2`, ... in order (the statements hold no other `?`).
fn number_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_in_order() {
        assert_eq!(
            number_placeholders("a = ? AND b IN (?, ?)"),
            "a = $1 AND b IN ($2, $3)"
        );
        let s = Statements::new("NOW_MS", true);
        assert!(
            s.write_mark.contains("NOW_MS + $1, mark = $2"),
            "{}",
            s.write_mark
        );
        assert!(
            s.write_mark.ends_with("mark IN ($6, $7)"),
            "{}",
            s.write_mark
        );
        assert!(!Statements::new("NOW_MS", false).release.contains('$'));
    }
}
