//! Every option of a client of `flakery serve` (the crate flakery-client) once, in the form of
//! the generator's table: its name as each surface spells it, its variable, its kind, its
//! range, its default, its doc (docs/client.md#options is rendered from it). A table of its
//! own because no generator reads these; `layout` is the generator's option, the same on
//! both. The client takes its defaults from here and names its options in messages by this
//! table (`message_on`); the C struct, the Go struct, `types.d.ts` and Node's keys are checked
//! against it (core/tests/option_surfaces.rs, bindings-node's `CLIENT_KEYS`), as the flags of
//! `flakery next --server` are in the cli crate.

use super::{option, Kind, OptionSpec, LAYOUT};

/// The most IDs one request may ask for: the server's batch limit (`/v1/ids`, 100000).
pub const MAX_BLOCK_SIZE: u64 = 100_000;

pub const SERVERS: OptionSpec = OptionSpec {
    cli: Some("server"),
    env: Some("FLAKERY_SERVERS"),
    range: "one or more `http://host:port[/prefix]`, separated by commas",
    default_doc: "`FLAKERY_SERVERS`",
    doc: "the servers' base URLs",
    ..option("servers", "servers", "Servers", Kind::Servers)
};

pub const TOKEN: OptionSpec = OptionSpec {
    cli: Some("token"),
    env: Some("FLAKERY_SERVER_TOKEN"),
    range: "what an HTTP header can carry: no control character, no space at an end",
    default_doc: "`FLAKERY_SERVER_TOKEN`, else none",
    doc: "the servers' bearer token; never shown in a message, `Debug` or repr",
    ..option("token", "token", "Token", Kind::Secret)
};

pub const MAX_AGE: OptionSpec = OptionSpec {
    c: "max_age_ms",
    range: "1 ms to 2^64-1 ms",
    default: Some("10000"),
    default_doc: "10000 ms",
    doc: "an ID held longer than this is dropped, never handed out",
    ..option("max_age", "maxAgeMs", "MaxAge", Kind::Duration)
};

pub const TIMEOUT: OptionSpec = OptionSpec {
    c: "timeout_ms",
    range: "1 ms to 2^64-1 ms",
    default: Some("5000"),
    default_doc: "5000 ms",
    doc: "every call returns or fails within this",
    ..option("timeout", "timeoutMs", "Timeout", Kind::Duration)
};

pub const REQUEST_TIMEOUT: OptionSpec = OptionSpec {
    c: "request_timeout_ms",
    range: "1 ms to 2^64-1 ms (at most `timeout` is used)",
    default: Some("1000"),
    default_doc: "1000 ms",
    doc: "one request may take this long before the next server is asked",
    ..option(
        "request_timeout",
        "requestTimeoutMs",
        "RequestTimeout",
        Kind::Duration,
    )
};

pub const MIN_BLOCK: OptionSpec = OptionSpec {
    range: "1 to `max_block`",
    default: Some("16"),
    default_doc: "16",
    doc: "the smallest block of IDs asked for (the size adapts to the rate of use)",
    ..option("min_block", "minBlock", "MinBlock", Kind::BlockSize)
};

pub const MAX_BLOCK: OptionSpec = OptionSpec {
    range: "`min_block` to 100000",
    default: Some("10000"),
    default_doc: "10000",
    doc: "the largest block of IDs asked for",
    ..option("max_block", "maxBlock", "MaxBlock", Kind::BlockSize)
};

pub const PREFETCH: OptionSpec = OptionSpec {
    c: "no_prefetch",
    go: "NoPrefetch",
    range: "true or false (C and Go: `no_prefetch`, its negation, whose zero is the default)",
    default: Some("true"),
    default_doc: "true",
    doc: "ask for the next block in the background when half the current one is used",
    ..option("prefetch", "prefetch", "Prefetch", Kind::FlagOn)
};

pub const PREFER_FIRST: OptionSpec = OptionSpec {
    range: "true or false",
    default: Some("false"),
    default_doc: "false",
    doc: "ask the servers in the order given (else each process starts at one of its own)",
    ..option("prefer_first", "preferFirst", "PreferFirst", Kind::Flag)
};

pub const FALLBACK: OptionSpec = OptionSpec {
    range: "a generator whose node ID no server ever holds",
    default_doc: "none",
    doc: "the generator used when every server is unavailable",
    ..option("fallback", "fallback", "Fallback", Kind::Fallback)
};

/// Every option of a client, in the order of docs/client.md#options (and of each surface).
pub const CLIENT_OPTIONS: [OptionSpec; 11] = [
    SERVERS,
    TOKEN,
    LAYOUT,
    MAX_AGE,
    TIMEOUT,
    REQUEST_TIMEOUT,
    MIN_BLOCK,
    MAX_BLOCK,
    PREFETCH,
    PREFER_FIRST,
    FALLBACK,
];

/// The table of docs/client.md#options, as the docs show it (a test compares).
pub fn client_markdown() -> String {
    let code = |name: &str| format!("`{name}`");
    let mut out = String::from(
        "| option (Rust, Python) | Node | C | Go | `flakery next` | environment | values | \
         default | meaning |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in CLIENT_OPTIONS {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            code(o.rust),
            code(o.js),
            code(o.c),
            code(o.go),
            o.cli.map_or(String::new(), |f| format!("`--{f}`")),
            o.env.map_or(String::new(), code),
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
    use crate::option_table::{Surface, OPTIONS};

    #[test]
    fn every_name_is_unique_and_no_generator_option_but_layout() {
        for surface in [Surface::Rust, Surface::Node, Surface::C, Surface::Go] {
            let mut names: Vec<_> = CLIENT_OPTIONS.iter().map(|o| o.name(surface)).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), CLIENT_OPTIONS.len(), "{surface:?}");
        }
        for o in CLIENT_OPTIONS.iter().filter(|o| o.rust != "layout") {
            assert!(OPTIONS.iter().all(|g| g.rust != o.rust), "{}", o.rust);
        }
    }

    #[test]
    fn integers_have_a_default_in_their_range() {
        for o in CLIENT_OPTIONS.iter().filter(|o| o.kind.is_integer()) {
            let default = o.default_u64().unwrap_or_else(|| panic!("{}", o.rust));
            assert!(default >= 1, "{}", o.rust);
        }
        assert!(MAX_BLOCK.range.ends_with(&MAX_BLOCK_SIZE.to_string()));
        assert!(MIN_BLOCK.default_u64() <= MAX_BLOCK.default_u64());
    }

    /// `cargo test -p flakery --lib print_client_docs_table -- --ignored --nocapture` prints
    /// the table to paste into docs/client.md.
    #[test]
    #[ignore]
    fn print_client_docs_table() {
        print!("{}", client_markdown());
    }

    #[test]
    fn the_docs_table_is_this_table() {
        assert_eq!(
            super::super::table_in("docs/client.md", "## Options"),
            client_markdown(),
            "docs/client.md#options differs from core/src/option_table/client.rs: paste the \
             table `option_table::client_markdown()` renders"
        );
    }
}
