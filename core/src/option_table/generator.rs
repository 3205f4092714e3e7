//! The generator's options, a row each, in the order of docs/spec.md#generator-options, and
//! that table as the docs show it.

use super::{option, Kind, OptionSpec};

pub const LAYOUT: OptionSpec = OptionSpec {
    cli: Some("layout"),
    server: Some("layout"),
    env: Some("FLAKERY_LAYOUT"),
    range: "a preset name or a layout spec",
    default_doc: "`FLAKERY_LAYOUT`, else `twitter`",
    doc: "how an ID is cut into fields",
    ..option("layout", "layout", "Layout", Kind::Layout)
};

pub const DATACENTER_ID: OptionSpec = OptionSpec {
    cli: Some("datacenter-id"),
    server: Some("datacenter-id"),
    env: Some("FLAKERY_DATACENTER_ID"),
    range: "0 to the layout's largest datacenter ID",
    default_doc: "`FLAKERY_DATACENTER_ID`, else leased",
    doc: "the node's datacenter field, fixed",
    ..option(
        "datacenter_id",
        "datacenterId",
        "DatacenterID",
        Kind::NodeField,
    )
};

pub const WORKER_ID: OptionSpec = OptionSpec {
    cli: Some("worker-id"),
    server: Some("worker-id"),
    env: Some("FLAKERY_WORKER_ID"),
    range: "0 to the layout's largest worker ID (the variable also `hostname-ordinal`)",
    default_doc: "`FLAKERY_WORKER_ID`, else leased",
    doc: "the node's worker field, fixed",
    ..option("worker_id", "workerId", "WorkerID", Kind::NodeField)
};

pub const SEQUENCE_POLICY: OptionSpec = OptionSpec {
    server: Some("sequence-policy"),
    server_env: Some("FLAKERY_SEQUENCE_POLICY"),
    range: "`wait` or `borrow`",
    default: Some("wait"),
    default_doc: "`wait`",
    doc: "what a used-up tick does: wait for the next, or borrow one ahead of the clock",
    ..option(
        "sequence_policy",
        "sequencePolicy",
        "SequencePolicy",
        Kind::SequencePolicy,
    )
};

pub const MAX_BORROW_MS: OptionSpec = OptionSpec {
    server: Some("max-borrow-ms"),
    server_env: Some("FLAKERY_MAX_BORROW_MS"),
    range: "0 to 2^64-1",
    default: Some("1000"),
    default_doc: "1000",
    doc: "how far `borrow` may run ahead of the clock",
    ..option("max_borrow_ms", "maxBorrowMs", "MaxBorrowMs", Kind::Millis)
};

pub const BACKWARDS_TOLERANCE_MS: OptionSpec = OptionSpec {
    server: Some("backwards-tolerance-ms"),
    server_env: Some("FLAKERY_BACKWARDS_TOLERANCE_MS"),
    range: "0 to 2^64-1",
    default: Some("1000"),
    default_doc: "1000",
    doc: "the clock step back that is waited out rather than refused",
    ..option(
        "backwards_tolerance_ms",
        "backwardsToleranceMs",
        "BackwardsToleranceMs",
        Kind::Millis,
    )
};

pub const RANDOM_SEQUENCE_START: OptionSpec = OptionSpec {
    range: "true or false",
    default: Some("false"),
    default_doc: "false",
    doc: "start each tick at a random sequence number",
    ..option(
        "random_sequence_start",
        "randomSequenceStart",
        "RandomSequenceStart",
        Kind::Flag,
    )
};

pub const FIELDS: OptionSpec = OptionSpec {
    c: "field_names",
    server: Some("field"),
    range: "each value fits its field",
    default_doc: "the layout's defaults",
    doc: "values of constant fields (the C struct: `field_names`, `field_values`, `field_count`)",
    ..option("fields", "fields", "Fields", Kind::Fields)
};

pub const ZOOKEEPER: OptionSpec = OptionSpec {
    env: Some("FLAKERY_ZOOKEEPER"),
    range: "`[user:password@]host:port[,...][/chroot][?secure=true&ca=FILE...]`",
    default_doc: "`FLAKERY_ZOOKEEPER`",
    doc: "lease the node ID from ZooKeeper (over TLS with `?secure=true`)",
    ..option("zookeeper", "zookeeper", "ZooKeeper", Kind::Text)
};

pub const DATABASE_URL: OptionSpec = OptionSpec {
    env: Some("FLAKERY_DATABASE_URL"),
    range: "`postgres://...` or `mysql://...`",
    default_doc: "`FLAKERY_DATABASE_URL`",
    doc: "lease the node ID from PostgreSQL or MySQL",
    ..option(
        "database_url",
        "databaseUrl",
        "DatabaseURL",
        Kind::DatabaseUrl,
    )
};

pub const DATABASE_MODE: OptionSpec = OptionSpec {
    env: Some("FLAKERY_DATABASE_MODE"),
    range: "`lease` or `baidu`",
    default_doc: "`FLAKERY_DATABASE_MODE`, else `lease`",
    doc: "flakery's lease table, or uid-generator's `WORKER_NODE`",
    ..option(
        "database_mode",
        "databaseMode",
        "DatabaseMode",
        Kind::DatabaseMode,
    )
};

pub const NAMESPACE: OptionSpec = OptionSpec {
    c: "namespace_",
    env: Some("FLAKERY_NAMESPACE"),
    range: "1 to 64 letters, digits, `-`, `_` or `.`",
    default_doc: "`FLAKERY_NAMESPACE`, else `default`",
    doc: "the namespace of the leases",
    ..option("namespace", "namespace", "Namespace", Kind::Text)
};

pub const SESSION_TIMEOUT_MS: OptionSpec = OptionSpec {
    env: Some("FLAKERY_SESSION_TIMEOUT_MS"),
    range: "1 to what the ZooKeeper server allows (0 is refused)",
    default_doc: "`FLAKERY_SESSION_TIMEOUT_MS`, else 10000",
    doc: "the ZooKeeper session timeout",
    ..option(
        "session_timeout_ms",
        "sessionTimeoutMs",
        "SessionTimeoutMs",
        Kind::OptionalMillis,
    )
};

pub const LEASE_DIR: OptionSpec = OptionSpec {
    env: Some("FLAKERY_LEASE_DIR"),
    range: "a directory",
    default_doc: "`FLAKERY_LEASE_DIR`, else `/run/lock` (outside containers)",
    doc: "the directory of the host-local lease files",
    ..option("lease_dir", "leaseDir", "LeaseDir", Kind::Path)
};

/// Every option, in the order of docs/spec.md#generator-options (and of each surface).
pub const OPTIONS: [OptionSpec; 14] = [
    LAYOUT,
    DATACENTER_ID,
    WORKER_ID,
    SEQUENCE_POLICY,
    MAX_BORROW_MS,
    BACKWARDS_TOLERANCE_MS,
    RANDOM_SEQUENCE_START,
    FIELDS,
    ZOOKEEPER,
    NAMESPACE,
    SESSION_TIMEOUT_MS,
    LEASE_DIR,
    DATABASE_URL,
    DATABASE_MODE,
];

/// The table of docs/spec.md#generator-options, as the docs show it (a test compares).
pub fn markdown() -> String {
    let code = |name: &str| format!("`{name}`");
    let flag = |flag: Option<&str>| flag.map_or("".to_string(), |f| format!("`--{f}`"));
    let mut out = String::from(
        "| option (Rust, Python) | Node | C | Go | `flakery next` | `flakery serve` | \
         environment | values | default | meaning |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in OPTIONS {
        let env = match (o.env, o.server_env) {
            (Some(env), _) => code(env),
            (None, Some(env)) => format!("{} (`serve` only)", code(env)),
            (None, None) => String::new(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            code(o.rust),
            code(o.js),
            code(o.c),
            code(o.go),
            flag(o.cli),
            flag(o.server),
            env,
            o.range,
            o.default_doc,
            o.doc,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::option_table::tests::assert_unique_names;
    use crate::option_table::Surface;
    use crate::options::{Options, DEFAULT_BACKWARDS_TOLERANCE_MS, DEFAULT_MAX_BORROW_MS};

    #[test]
    fn every_name_is_unique_on_every_surface() {
        assert_unique_names(
            &OPTIONS,
            &[
                Surface::Rust,
                Surface::Python,
                Surface::Node,
                Surface::C,
                Surface::Go,
                Surface::Environment,
            ],
        );
    }

    /// The docs' first column is the Rust name and Python's keyword at once.
    #[test]
    fn python_spells_every_generator_option_as_rust() {
        for o in OPTIONS {
            assert_eq!(o.python, o.rust);
        }
    }

    #[test]
    fn the_table_defaults_are_the_cores() {
        let defaults = Options::default();
        assert_eq!(MAX_BORROW_MS.default, Some("1000"));
        assert_eq!(
            DEFAULT_MAX_BORROW_MS.to_string(),
            MAX_BORROW_MS.default.unwrap()
        );
        assert_eq!(defaults.max_borrow_ms, DEFAULT_MAX_BORROW_MS);
        assert_eq!(
            DEFAULT_BACKWARDS_TOLERANCE_MS.to_string(),
            BACKWARDS_TOLERANCE_MS.default.unwrap()
        );
        assert_eq!(
            defaults.backwards_tolerance_ms,
            DEFAULT_BACKWARDS_TOLERANCE_MS
        );
        assert_eq!(
            defaults.sequence_policy.as_str(),
            SEQUENCE_POLICY.default.unwrap()
        );
        assert_eq!(
            defaults.random_sequence_start.to_string(),
            RANDOM_SEQUENCE_START.default.unwrap()
        );
        // The options with no default of their own are not given.
        assert_eq!(defaults.worker_id, None);
        assert_eq!(defaults.session_timeout_ms, None);
        assert_eq!(defaults.layout, None);
    }

    /// `cargo test -p flakery --lib print_docs_table -- --ignored --nocapture` prints the
    /// table to paste into docs/spec.md.
    #[test]
    #[ignore]
    fn print_docs_table() {
        print!("{}", markdown());
    }

    #[test]
    fn the_docs_table_is_this_table() {
        assert_eq!(
            super::super::table_in("docs/spec.md", "### Generator options"),
            markdown(),
            "docs/spec.md#generator-options differs from core/src/option_table/: paste the \
             table `option_table::markdown()` renders"
        );
    }
}
