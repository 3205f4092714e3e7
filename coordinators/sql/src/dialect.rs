//! The statements a lease of node IDs needs, each database writing them in its own SQL.
//! Times are Unix milliseconds of the database's clock; marks are stored as text (decimal
//! Unix ms, or empty for none) and read with `node::read_mark`, so that a garbled one is
//! told apart from none. Errors are the client crate's messages, scrubbed by the caller.

/// A row that may be claimed: free, expired, or this holder's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub index: i64,
    pub mark: Vec<u8>,
}

/// A row of the lease table as a census reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeaseRow {
    pub index: i64,
    pub holder: Option<i64>,
    pub holder_name: String,
    pub expires_ms: i64,
    pub mark: Vec<u8>,
    /// When it was last claimed (the database's clock, Unix ms; 0 before the column was
    /// added); `None`: the table has no `claimed_ms` column (made by an older flakery).
    pub claimed_ms: Option<i64>,
}

pub(crate) trait Dialect: Send {
    /// Creates the lease table if it is missing.
    fn ensure_lease_table(&mut self) -> Result<(), String>;

    /// Starts a READ COMMITTED transaction.
    fn begin(&mut self) -> Result<(), String>;
    fn commit(&mut self) -> Result<(), String>;
    fn rollback(&mut self) -> Result<(), String>;

    /// The database's clock.
    fn now_ms(&mut self) -> Result<i64, String>;

    /// Up to `limit` claimable rows of `namespace` from `from` to below `to`, lowest first,
    /// without locks: free (no holder), expired (`expires_ms <= now_ms`), or `holder`'s own.
    fn candidates(
        &mut self,
        namespace: &str,
        from: i64,
        to: i64,
        holder: i64,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<Candidate>, String>;

    /// The lowest index of `namespace` from `from` on with no row.
    fn lowest_missing(&mut self, namespace: &str, from: i64) -> Result<i64, String>;

    /// Inserts the row of `index`, held by `holder` until `expires_ms`; `false` when another
    /// transaction inserted it first.
    fn insert_held(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        holder_name: &str,
        expires_ms: i64,
    ) -> Result<bool, String>;

    /// Locks the row of `index` if it is still claimable (`SELECT ... FOR UPDATE SKIP
    /// LOCKED`), returning its mark as now stored; `None` when another holder took it or
    /// locks it.
    fn lock_claimable(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        now_ms: i64,
    ) -> Result<Option<Vec<u8>>, String>;

    /// Sets the locked row's holder, expiry and mark.
    fn take(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        holder_name: &str,
        expires_ms: i64,
        mark: &str,
    ) -> Result<(), String>;

    /// Extends the row's expiry to the database's now plus `term_ms` if `holder` holds it and
    /// it has not expired; `false` otherwise.
    fn renew(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        term_ms: i64,
    ) -> Result<bool, String>;

    /// As `renew`, also writing `new` as the mark, if the stored mark is `expected` or
    /// already `new`.
    fn write_mark(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        term_ms: i64,
        expected: &str,
        new: &str,
    ) -> Result<bool, String>;

    /// Frees the row if `holder` holds it, writing `mark` first when given.
    fn release(
        &mut self,
        namespace: &str,
        index: i64,
        holder: i64,
        mark: Option<&str>,
    ) -> Result<(), String>;

    /// Whether the lease table exists (a census reads: it never creates it).
    fn lease_table_exists(&mut self) -> Result<bool, String>;

    /// Whether the lease table has the `claimed_ms` column: a table made before it was added
    /// is used as it is (never altered: the role may not own it), without claim times.
    fn has_claim_time(&mut self) -> Result<bool, String>;

    /// Writes the claim time of a row just taken, when the table has the column.
    fn note_claimed(&mut self, namespace: &str, index: i64, claimed_ms: i64) -> Result<(), String>;

    /// Up to `limit` rows of `namespace` from `from` to below `to`, lowest index first, with
    /// their claim times when `claimed` (the table has the column).
    fn census_rows(
        &mut self,
        namespace: &str,
        from: i64,
        to: i64,
        limit: i64,
        claimed: bool,
    ) -> Result<Vec<LeaseRow>, String>;

    /// Creates uid-generator's `WORKER_NODE` table if it is missing.
    fn ensure_worker_node_table(&mut self) -> Result<(), String>;

    /// Inserts a `WORKER_NODE` row as uid-generator's `DisposableWorkerIdAssigner` does and
    /// returns its `ID`.
    fn insert_worker_node(&mut self, host: &str, port: &str, node_type: i32)
        -> Result<i64, String>;
}
