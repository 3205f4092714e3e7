//! `flakery next --server URL`: the IDs come from `flakery serve` through flakery-client,
//! written as `next` writes its own.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use flakery::{IdFormat, Layout};
use flakery_client::Client;

use crate::Command;

pub fn main(command: Command, servers: Vec<String>, token: Option<String>) -> ExitCode {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run(command, servers, token, &mut out).and_then(|()| {
        out.flush()
            .map_err(|e| flakery_client::Error::invalid_argument(format!("cannot write: {e}")))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = out.flush();
            eprintln!("flakery: {}: {}", error.code(), error.message());
            ExitCode::FAILURE
        }
    }
}

fn run(
    command: Command,
    servers: Vec<String>,
    token: Option<String>,
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
    let client = builder.build()?;
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
