//! Every generator option once: its name as each surface spells it, its environment
//! variable, its type on each surface, its range, its default and a one-line doc
//! (docs/spec.md#generator-options is rendered from this table, and a test fails when the two
//! differ). The surfaces read it where they can (the CLI and the server parse their integer
//! flags with `OptionSpec::parse_u64`; every surface names an option in a message as it spells
//! it with `message_on`); where they cannot (the C header, the Go struct, the `.pyi` stub,
//! `types.d.ts`, clap's derived flags), a test checks their names, types and defaults against
//! it (core/tests/option_surfaces.rs, bindings-c's options tests, tests/python and tests/node).
//! A client of `flakery serve` has a table of its own in the same form (`client`).

//!
//! How a message names an option as each surface spells it is `messages`'.

use std::borrow::Cow;

use crate::error::{Error, Result};

mod client;
mod kind;
mod messages;

pub use client::{
    client_markdown, ClientOptionSpec, CLIENT_LAYOUT, CLIENT_OPTIONS, FALLBACK, MAX_AGE, MAX_BLOCK,
    MAX_BLOCK_SIZE, MIN_BLOCK, PREFER_FIRST, PREFETCH, REQUEST_TIMEOUT, SERVERS, TIMEOUT, TOKEN,
};
pub use kind::{ClientKind, Kind, OptionKind};
pub use messages::{from_environment, message_on};

/// Where an option is written: each spells its name its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// The builder's methods and `Options`' fields: `worker_id`.
    Rust,
    /// `flakery.Generator(worker_id=...)`.
    Python,
    /// `new Generator({workerId})`.
    Node,
    /// A member of `flakery_options`: `worker_id`.
    C,
    /// A field of the Go package's `Options`: `WorkerID`.
    Go,
    /// A flag of `flakery next`: `--worker-id`.
    Cli,
    /// A flag of `flakery serve`: `--worker-id`.
    Server,
    /// A `FLAKERY_*` variable: `FLAKERY_WORKER_ID`.
    Environment,
}

/// One option of docs/spec.md#generator-options (`K`: `Kind`), or of docs/client.md#options
/// (`K`: `ClientKind`, a `ClientOptionSpec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec<K = Kind> {
    /// The builder's method and `Options`' field.
    pub rust: &'static str,
    /// The keyword of `flakery.Generator` or `flakery.Client`: the Rust name, but where Rust
    /// takes a `Duration` and Python milliseconds (`max_age_ms`).
    pub python: &'static str,
    /// The key of `GeneratorOptions` (camelCase).
    pub js: &'static str,
    /// The member of `flakery_options` (C++ reserves `namespace`).
    pub c: &'static str,
    /// The field of the Go package's `Options`.
    pub go: &'static str,
    /// The long flag of `flakery next`, without its dashes; `None`: it has none.
    pub cli: Option<&'static str>,
    /// The long flag of `flakery serve`, without its dashes.
    pub server: Option<&'static str>,
    /// The variable every generator reads when the option is not given.
    pub env: Option<&'static str>,
    /// A variable only `flakery serve` reads, for its flag (clap's `env`).
    pub server_env: Option<&'static str>,
    pub kind: K,
    /// The values it may take, in words.
    pub range: &'static str,
    /// The value a surface gives it when it is not set, as that surface writes it (`1000`,
    /// `wait`, `false`); `None`: not given, so the environment or the node identity decides.
    pub default: Option<&'static str>,
    /// What applies when it is not given, for the docs.
    pub default_doc: &'static str,
    pub doc: &'static str,
}

const fn option<K>(
    rust: &'static str,
    js: &'static str,
    go: &'static str,
    kind: K,
) -> OptionSpec<K> {
    OptionSpec {
        rust,
        python: rust,
        js,
        c: rust,
        go,
        cli: None,
        server: None,
        env: None,
        server_env: None,
        kind,
        range: "",
        default: None,
        default_doc: "",
        doc: "",
    }
}

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
    range: "`[user:password@]host:port[,...][/chroot]`",
    default_doc: "`FLAKERY_ZOOKEEPER`",
    doc: "lease the node ID from ZooKeeper",
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
    range: "what the ZooKeeper server allows",
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

/// The generator's option whose Rust name is `rust`.
pub fn by_rust_name(rust: &str) -> Option<&'static OptionSpec> {
    OPTIONS.iter().find(|o| o.rust == rust)
}

/// The name of the option whose Rust name is `rust` (a generator's, else a client's) as
/// `surface` spells it.
pub fn name_of(rust: &str, surface: Surface) -> Option<Cow<'static, str>> {
    match by_rust_name(rust) {
        Some(option) => Some(option.name(surface)),
        None => CLIENT_OPTIONS
            .iter()
            .find(|o| o.rust == rust)
            .map(|o| o.name(surface)),
    }
}

impl OptionSpec<Kind> {
    /// This option of the generator's table, as the client's table holds it (`layout`).
    pub(crate) const fn for_client(self, kind: ClientKind) -> ClientOptionSpec {
        OptionSpec {
            rust: self.rust,
            python: self.python,
            js: self.js,
            c: self.c,
            go: self.go,
            cli: self.cli,
            server: self.server,
            env: self.env,
            server_env: self.server_env,
            kind,
            range: self.range,
            default: self.default,
            default_doc: self.default_doc,
            doc: self.doc,
        }
    }
}

impl<K: OptionKind> OptionSpec<K> {
    /// The option's name as `surface` spells it: `workerId`, `--worker-id`,
    /// `FLAKERY_WORKER_ID`. A surface without it (no `flakery next` flag for `zookeeper`)
    /// gets its variable, else the Rust name.
    pub fn name(&self, surface: Surface) -> Cow<'static, str> {
        let flag = |flag: Option<&'static str>| match flag {
            Some(flag) => Cow::Owned(format!("--{flag}")),
            None => Cow::Borrowed(self.env.unwrap_or(self.rust)),
        };
        match surface {
            Surface::Rust => Cow::Borrowed(self.rust),
            Surface::Python => Cow::Borrowed(self.python),
            Surface::Node => Cow::Borrowed(self.js),
            Surface::C => Cow::Borrowed(self.c),
            Surface::Go => Cow::Borrowed(self.go),
            Surface::Cli => flag(self.cli),
            Surface::Server => flag(self.server),
            Surface::Environment => {
                Cow::Borrowed(self.env.or(self.server_env).unwrap_or(self.rust))
            }
        }
    }

    /// The default of an integer option, as a number.
    pub fn default_u64(&self) -> Option<u64> {
        self.default.and_then(|d| d.parse().ok())
    }

    /// An integer option written as text (a flag, a variable) by the core's one decimal
    /// parser; the message names it as `surface` spells it.
    pub fn parse_u64(&self, surface: Surface, text: &str) -> Result<u64> {
        debug_assert!(self.kind.is_integer(), "{} is no integer", self.rust);
        crate::decimal::parse_u64(&self.name(surface), text).map_err(|e| e.about(self.rust))
    }
}

/// A constant field's value written `NAME=VALUE` (`flakery compose --field`, `flakery serve
/// --field`): the name trimmed, the value canonical decimal; messages name `--field` (the
/// only surfaces that write fields as text are flags).
pub fn parse_field(pair: &str) -> Result<(String, u64)> {
    let flag = FIELDS.name(Surface::Server);
    let (name, value) = pair.split_once('=').ok_or_else(|| {
        Error::invalid_argument(format!(
            "{flag} '{}' is not NAME=VALUE with a non-negative integer VALUE",
            crate::truncate::shown(pair)
        ))
    })?;
    let name = name.trim();
    let value = crate::decimal::parse_u64(&format!("{flag} {name}"), value)?;
    Ok((name.to_string(), value))
}

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

/// The first table after `heading` in the repository's `doc`, as the docs tests compare it.
#[cfg(test)]
fn table_in(doc: &str, heading: &str) -> String {
    let path = format!("{}/../{doc}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let section = text
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("{doc} has no {heading}"));
    section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::options::{Options, DEFAULT_BACKWARDS_TOLERANCE_MS, DEFAULT_MAX_BORROW_MS};

    /// No two options of `table` share a name on any of `surfaces`.
    pub(super) fn assert_unique_names<K: OptionKind>(
        table: &[OptionSpec<K>],
        surfaces: &[Surface],
    ) {
        for &surface in surfaces {
            let mut names: Vec<_> = table.iter().map(|o| o.name(surface)).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), table.len(), "{surface:?}");
        }
    }

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

    #[test]
    fn integers_are_read_by_the_strict_parser_named_per_surface() {
        for o in OPTIONS.iter().filter(|o| o.kind.is_integer()) {
            assert_eq!(o.parse_u64(Surface::Cli, "12"), Ok(12));
            for bad in crate::decimal::REFUSED_EXAMPLES {
                for surface in [Surface::Cli, Surface::Server, Surface::Environment] {
                    let err = o.parse_u64(surface, bad).unwrap_err();
                    assert_eq!(err.code(), ErrorCode::InvalidArgument);
                    let name = o.name(surface);
                    assert!(err.message().starts_with(&*name), "{name}: {err}");
                }
            }
        }
        assert_eq!(
            WORKER_ID
                .parse_u64(Surface::Environment, "+3")
                .unwrap_err()
                .message()
                .split(" (")
                .next(),
            Some("FLAKERY_WORKER_ID='+3' is not a non-negative integer in plain decimal")
        );
    }

    #[test]
    fn a_field_is_name_equals_canonical_decimal() {
        assert_eq!(parse_field(" version =2"), Ok(("version".to_string(), 2)));
        assert_eq!(parse_field("v=0"), Ok(("v".to_string(), 0)));
        let err = parse_field("version").unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert!(
            err.message()
                .starts_with("--field 'version' is not NAME=VALUE"),
            "{err}"
        );
        for bad in crate::decimal::REFUSED_EXAMPLES {
            let err = parse_field(&format!("v={bad}")).unwrap_err();
            assert!(err.message().starts_with("--field v="), "{err}");
        }
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
            table_in("docs/spec.md", "### Generator options"),
            markdown(),
            "docs/spec.md#generator-options differs from core/src/option_table/: paste the \
             table `option_table::markdown()` renders"
        );
    }
}
