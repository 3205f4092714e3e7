//! Every option once: its name as each surface spells it, its environment variable, its type
//! on each surface, its range, its default and a one-line doc. The generator's options are
//! `generator`'s rows (docs/spec.md#generator-options is rendered from them, and a test fails
//! when the two differ); a client of `flakery serve` has a table of its own in the same form
//! (`client`). The surfaces read it where they can (the CLI and the server parse their integer
//! flags with `OptionSpec::parse_u64`, `values`'; every surface names an option in a message as
//! it spells it with `message_on`, `messages`'); where they cannot (the C header, the Go
//! struct, the `.pyi` stub, `types.d.ts`, clap's derived flags), a test checks their names,
//! types and defaults against it (core/tests/option_surfaces.rs, bindings-c's options tests,
//! tests/python and tests/node).
//!
//! This module: what a row is (`OptionSpec`), the surfaces (`Surface`), and how each spells a
//! row's name.

use std::borrow::Cow;

mod client;
mod generator;
mod kind;
mod messages;
mod values;

pub use client::{
    client_markdown, ClientOptionSpec, CLIENT_CERT, CLIENT_KEY, CLIENT_LAYOUT, CLIENT_OPTIONS,
    FALLBACK, MAX_AGE, MAX_BLOCK, MAX_BLOCK_SIZE, MIN_BLOCK, PREFER_FIRST, PREFETCH,
    REQUEST_TIMEOUT, SEND_TOKEN_IN_CLEAR, SERVERS, SERVER_CA, TIMEOUT, TOKEN,
};
pub use generator::{
    markdown, BACKWARDS_TOLERANCE_MS, DATABASE_MODE, DATABASE_URL, DATACENTER_ID, FIELDS, LAYOUT,
    LEASE_DIR, MAX_BORROW_MS, NAMESPACE, OPTIONS, RANDOM_SEQUENCE_START, SEQUENCE_POLICY,
    SESSION_TIMEOUT_MS, WORKER_ID, ZOOKEEPER,
};
pub use kind::{ClientKind, Kind, OptionKind};
pub use messages::{from_environment, message_on};
pub use values::{parse_field, parse_flag};

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
}
