//! Every option of a client of `flakery serve` (the crate flakery-client) once, in the form of
//! the generator's table: its name as each surface spells it, its variable, its kind, its
//! range, its default, its doc (docs/client.md#options is rendered from it). A table of its
//! own, with kinds of its own (`ClientKind`), because no generator reads these; `layout` is
//! the generator's option, the same on both. The client takes its defaults from here and names
//! its options in messages by this table (`message_on`); the C struct, the Go struct,
//! `types.d.ts`, the Python stub and Node's keys are checked against it
//! (core/tests/option_surfaces.rs, bindings-node's `CLIENT_KEYS`), as the flags of `flakery
//! next --server` are in the cli crate and `flakery.Client`'s keywords in tests/client.

use super::{option, ClientKind, OptionSpec, LAYOUT};

/// One option of docs/client.md#options.
pub type ClientOptionSpec = OptionSpec<ClientKind>;

/// The most IDs one request may ask for: the server's batch limit (`/v1/ids`, 100000).
pub const MAX_BLOCK_SIZE: u64 = 100_000;

pub const SERVERS: ClientOptionSpec = OptionSpec {
    cli: Some("server"),
    env: Some("FLAKERY_SERVERS"),
    range: "one or more `http://host:port[/prefix]` or `https://...`, separated by commas",
    default_doc: "`FLAKERY_SERVERS`",
    doc: "the servers' base URLs",
    ..option("servers", "servers", "Servers", ClientKind::Servers)
};

pub const TOKEN: ClientOptionSpec = OptionSpec {
    cli: Some("token"),
    env: Some("FLAKERY_SERVER_TOKEN"),
    range: "what an HTTP header can carry: no control character, no space at an end",
    default_doc: "`FLAKERY_SERVER_TOKEN`, else none",
    doc: "the servers' bearer token; never shown in a message, `Debug` or repr",
    ..option("token", "token", "Token", ClientKind::Secret)
};

pub const MAX_AGE: ClientOptionSpec = OptionSpec {
    python: "max_age_ms",
    c: "max_age_ms",
    range: "1 ms to 2^64-1 ms",
    default: Some("10000"),
    default_doc: "10000 ms",
    doc: "an ID held longer than this is dropped, never handed out",
    ..option("max_age", "maxAgeMs", "MaxAge", ClientKind::Duration)
};

pub const TIMEOUT: ClientOptionSpec = OptionSpec {
    python: "timeout_ms",
    c: "timeout_ms",
    range: "1 ms to 2^64-1 ms",
    default: Some("5000"),
    default_doc: "5000 ms",
    doc: "every call returns or fails within this (a batch: plus the time its count takes at the layout's rate)",
    ..option("timeout", "timeoutMs", "Timeout", ClientKind::Duration)
};

pub const REQUEST_TIMEOUT: ClientOptionSpec = OptionSpec {
    python: "request_timeout_ms",
    c: "request_timeout_ms",
    range: "1 ms to 2^64-1 ms (at most `timeout` is used)",
    default: Some("1000"),
    default_doc: "1000 ms",
    doc: "one request may take this long before the next server is asked",
    ..option(
        "request_timeout",
        "requestTimeoutMs",
        "RequestTimeout",
        ClientKind::Duration,
    )
};

pub const MIN_BLOCK: ClientOptionSpec = OptionSpec {
    range: "1 to `max_block`",
    default: Some("16"),
    default_doc: "16",
    doc: "the smallest block of IDs asked for (the size adapts to the rate of use)",
    ..option("min_block", "minBlock", "MinBlock", ClientKind::BlockSize)
};

pub const MAX_BLOCK: ClientOptionSpec = OptionSpec {
    range: "`min_block` to 100000",
    default: Some("10000"),
    default_doc: "10000",
    doc: "the largest block of IDs asked for",
    ..option("max_block", "maxBlock", "MaxBlock", ClientKind::BlockSize)
};

pub const PREFETCH: ClientOptionSpec = OptionSpec {
    c: "no_prefetch",
    go: "NoPrefetch",
    range: "true or false (C and Go: `no_prefetch`, its negation, whose zero is the default)",
    default: Some("true"),
    default_doc: "true",
    doc: "ask for the next block in the background when half the current one is used",
    ..option("prefetch", "prefetch", "Prefetch", ClientKind::Flag)
};

pub const PREFER_FIRST: ClientOptionSpec = OptionSpec {
    range: "true or false",
    default: Some("false"),
    default_doc: "false",
    doc: "ask the servers in the order given (else each process starts at one of its own)",
    ..option(
        "prefer_first",
        "preferFirst",
        "PreferFirst",
        ClientKind::Flag,
    )
};

pub const FALLBACK: ClientOptionSpec = OptionSpec {
    range: "a generator whose node ID no server ever holds",
    default_doc: "none",
    doc: "the generator used when every server is unavailable",
    ..option("fallback", "fallback", "Fallback", ClientKind::Fallback)
};

pub const SERVER_CA: ClientOptionSpec = OptionSpec {
    cli: Some("server-ca"),
    env: Some("FLAKERY_SERVER_CA"),
    range: "a PEM file of one or more CA certificates",
    default_doc: "`FLAKERY_SERVER_CA`, else the system's roots",
    doc: "the CAs an `https://` server's certificate must be signed by (instead of the system's)",
    ..option("server_ca", "serverCa", "ServerCA", ClientKind::Path)
};

pub const CLIENT_CERT: ClientOptionSpec = OptionSpec {
    cli: Some("client-cert"),
    env: Some("FLAKERY_CLIENT_CERT"),
    range: "a PEM file: the certificate, then its chain; with `client_key`",
    default_doc: "`FLAKERY_CLIENT_CERT`, else none",
    doc: "the certificate shown to an `https://` server that asks for one (mutual TLS)",
    ..option("client_cert", "clientCert", "ClientCert", ClientKind::Path)
};

pub const CLIENT_KEY: ClientOptionSpec = OptionSpec {
    cli: Some("client-key"),
    env: Some("FLAKERY_CLIENT_KEY"),
    range: "a PEM file of the private key of `client_cert`",
    default_doc: "`FLAKERY_CLIENT_KEY`, else none",
    doc: "the key of `client_cert`; its path may show in a message, never what it holds",
    ..option("client_key", "clientKey", "ClientKey", ClientKind::Path)
};

pub const SEND_TOKEN_IN_CLEAR: ClientOptionSpec = OptionSpec {
    cli: Some("send-token-in-clear"),
    range: "true or false",
    default: Some("false"),
    default_doc: "false",
    doc: "send the token over `http://` to a host that is not loopback (else refused when built)",
    ..option(
        "send_token_in_clear",
        "sendTokenInClear",
        "SendTokenInClear",
        ClientKind::Flag,
    )
};

/// The generator's `layout`, in the client's table.
pub const CLIENT_LAYOUT: ClientOptionSpec = LAYOUT.for_client(ClientKind::Layout);

/// Every option of a client, in the order of docs/client.md#options (and of each surface).
/// TLS's options come last: C's and Go's structs only grow at their end.
pub const CLIENT_OPTIONS: [ClientOptionSpec; 15] = [
    SERVERS,
    TOKEN,
    CLIENT_LAYOUT,
    MAX_AGE,
    TIMEOUT,
    REQUEST_TIMEOUT,
    MIN_BLOCK,
    MAX_BLOCK,
    PREFETCH,
    PREFER_FIRST,
    FALLBACK,
    SERVER_CA,
    CLIENT_CERT,
    CLIENT_KEY,
    SEND_TOKEN_IN_CLEAR,
];

/// The table of docs/client.md#options, as the docs show it (a test compares).
pub fn client_markdown() -> String {
    let code = |name: &str| format!("`{name}`");
    let mut out = String::from(
        "| option (Rust) | Python | Node | C | Go | `flakery next` | environment | values | \
         default | meaning |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in CLIENT_OPTIONS {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            code(o.rust),
            code(o.python),
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
    use crate::option_table::tests::assert_unique_names;
    use crate::option_table::{Surface, OPTIONS};

    #[test]
    fn every_name_is_unique_and_no_generator_option_but_layout() {
        assert_unique_names(
            &CLIENT_OPTIONS,
            &[
                Surface::Rust,
                Surface::Python,
                Surface::Node,
                Surface::C,
                Surface::Go,
            ],
        );
        for o in CLIENT_OPTIONS.iter().filter(|o| o.rust != "layout") {
            assert!(OPTIONS.iter().all(|g| g.rust != o.rust), "{}", o.rust);
        }
    }

    /// C's and Go's zero value is an option not set, so a flag whose default is true is named
    /// there as its negation, and one whose default is false as itself.
    #[test]
    fn a_zero_flag_in_c_and_go_is_the_default() {
        for o in CLIENT_OPTIONS.iter().filter(|o| o.kind == ClientKind::Flag) {
            match o.default {
                Some("true") => {
                    assert_eq!(o.c, format!("no_{}", o.rust), "{}", o.rust);
                    assert!(o.go.starts_with("No"), "{}", o.go);
                }
                Some("false") => {
                    assert_eq!(o.c, o.rust);
                    assert!(!o.go.starts_with("No"), "{}", o.go);
                }
                other => panic!("{}: a flag with default {other:?}", o.rust),
            }
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
