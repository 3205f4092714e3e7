//! `flakery next --server URL`: the IDs come from `flakery serve` through flakery-client,
//! written as `next` writes its own.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use flakery::{IdFormat, Layout};
use flakery_client::Client;

use crate::Command;

/// The TLS flags of `flakery next --server` (the client's table: `server_ca`, ...); each
/// flag not given is read from its variable by the client.
#[derive(clap::Args, Clone, Debug)]
pub struct TlsArgs {
    /// The CAs (a PEM file) an https:// server's certificate must be signed by (default:
    /// $FLAKERY_SERVER_CA, else the system's roots).
    #[arg(
        long = "server-ca",
        id = "server_ca",
        value_name = "PEM",
        requires = "servers"
    )]
    server_ca: Option<PathBuf>,
    /// A certificate (PEM, with its chain) for servers that ask for one: mutual TLS
    /// (default: $FLAKERY_CLIENT_CERT).
    #[arg(
        long = "client-cert",
        id = "client_cert",
        value_name = "PEM",
        requires = "servers"
    )]
    client_cert: Option<PathBuf>,
    /// The PEM file of its private key (default: $FLAKERY_CLIENT_KEY).
    #[arg(
        long = "client-key",
        id = "client_key",
        value_name = "PEM",
        requires = "servers"
    )]
    client_key: Option<PathBuf>,
    /// Send the token over http:// to a host that is not loopback (else refused).
    #[arg(
        long = "send-token-in-clear",
        id = "send_token_in_clear",
        requires = "servers"
    )]
    send_token_in_clear: bool,
}

pub fn main(
    command: Command,
    servers: Vec<String>,
    token: Option<String>,
    tls: TlsArgs,
) -> ExitCode {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run(command, servers, token, tls, &mut out).and_then(|()| {
        out.flush()
            .map_err(|e| flakery_client::Error::invalid_argument(format!("cannot write: {e}")))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = out.flush();
            // Options named as flags (`--server-ca`), as this command takes them.
            let message = flakery::option_table::message_on(&error, flakery::Surface::Cli);
            eprintln!("flakery: {}: {message}", error.code());
            ExitCode::FAILURE
        }
    }
}

fn run(
    command: Command,
    servers: Vec<String>,
    token: Option<String>,
    tls: TlsArgs,
    out: &mut impl Write,
) -> flakery_client::Result<()> {
    let Command::Next {
        count,
        layout,
        format,
        ..
    } = command
    else {
        unreachable!("only next takes --server")
    };
    let format = format
        .parse::<IdFormat>()
        .map_err(|e| crate::flag_named(e.about("format")))?;
    let count = crate::parse_count(&count)?;
    let mut builder = Client::builder()
        // One process, one batch: ask for what is wanted, not a prefetched block more.
        .prefetch(false)
        .block_sizes(
            count.clamp(1, flakery_client::MAX_BLOCK),
            flakery_client::MAX_BLOCK,
        );
    for server in &servers {
        builder = builder.server(server);
    }
    if let Some(token) = token {
        builder = builder.token(token);
    }
    if let Some(layout) = layout {
        builder = builder.layout(Layout::parse(&layout)?);
    }
    let mut options = builder.options().clone();
    options.server_ca = tls.server_ca;
    options.client_cert = tls.client_cert;
    options.client_key = tls.client_key;
    options.send_token_in_clear = tls.send_token_in_clear;
    let client = Client::new(options)?;
    let mut chunk = vec![0i64; count.min(flakery_client::MAX_BLOCK)];
    let mut left = count;
    while left > 0 {
        let ids = &mut chunk[..left.min(flakery_client::MAX_BLOCK)];
        client.fill(ids)?;
        crate::write_ids(out, ids, format)?;
        left -= ids.len();
    }
    Ok(())
}
