//! `flakery next --server URL`: the IDs come from `flakery serve` through flakery-client,
//! written as `next` writes its own.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches};
use flakery::option_table::{self as table, ClientKind, ClientOptionSpec};
use flakery::{IdFormat, Layout};
use flakery_client::Client;

use crate::Command;

/// The TLS options of `flakery next --server`: their flags are made from the client's table
/// (flag, help, default), not declared again here.
const TLS_OPTIONS: [&ClientOptionSpec; 4] = [
    &table::SERVER_CA,
    &table::CLIENT_CERT,
    &table::CLIENT_KEY,
    &table::SEND_TOKEN_IN_CLEAR,
];

/// The TLS flags as given; each flag not given is read from its variable by the client.
#[derive(Clone, Debug, Default)]
pub struct TlsArgs {
    server_ca: Option<PathBuf>,
    client_cert: Option<PathBuf>,
    client_key: Option<PathBuf>,
    send_token_in_clear: bool,
}

/// The flag of a row of the client's table, its id the option's Rust name.
fn flag_of(option: &ClientOptionSpec) -> Arg {
    let long = option
        .cli
        .expect("a TLS option of the table without a flag");
    let doc = option.doc.replace('`', "");
    let mut first = doc.chars();
    let sentence: String = first
        .next()
        .into_iter()
        .flat_map(char::to_uppercase)
        .collect();
    let arg = Arg::new(option.rust)
        .long(long)
        .requires("servers")
        .help(format!(
            "{sentence}{} (default: {})",
            first.as_str(),
            option.default_doc.replace('`', "")
        ));
    match option.kind {
        ClientKind::Flag => arg.action(ArgAction::SetTrue),
        _ => arg
            .value_name("PEM")
            .value_parser(clap::value_parser!(PathBuf)),
    }
}

impl clap::Args for TlsArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        TLS_OPTIONS
            .into_iter()
            .fold(command, |command, option| command.arg(flag_of(option)))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

impl clap::FromArgMatches for TlsArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let path = |option: &ClientOptionSpec| matches.get_one::<PathBuf>(option.rust).cloned();
        Ok(TlsArgs {
            server_ca: path(&table::SERVER_CA),
            client_cert: path(&table::CLIENT_CERT),
            client_key: path(&table::CLIENT_KEY),
            send_token_in_clear: matches.get_flag(table::SEND_TOKEN_IN_CLEAR.rust),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// Each TLS flag is its table row (flag, help, default) and lands in its own option.
    #[test]
    fn the_tls_flags_are_the_tables_rows() {
        let cli = crate::Cli::try_parse_from([
            "flakery",
            "next",
            "--server",
            "https://localhost:1",
            "--server-ca",
            "/ca.pem",
            "--client-cert",
            "/c.pem",
            "--client-key",
            "/k.pem",
            "--send-token-in-clear",
        ])
        .unwrap();
        let Command::Next { tls, .. } = cli.command else {
            panic!("not next")
        };
        assert_eq!(tls.server_ca, Some(PathBuf::from("/ca.pem")));
        assert_eq!(tls.client_cert, Some(PathBuf::from("/c.pem")));
        assert_eq!(tls.client_key, Some(PathBuf::from("/k.pem")));
        assert!(tls.send_token_in_clear);
        let command = crate::Cli::command();
        let next = command.find_subcommand("next").expect("next");
        for option in TLS_OPTIONS {
            let arg = next
                .get_arguments()
                .find(|arg| arg.get_id().as_str() == option.rust)
                .expect("a flag");
            assert_eq!(arg.get_long(), option.cli);
            let help = arg.get_help().expect("help").to_string();
            let default = option.default_doc.replace('`', "");
            assert!(help.ends_with(&format!("(default: {default})")), "{help}");
        }
        // Without --server they mean nothing: refused, as clap's usage errors are.
        let alone = crate::Cli::try_parse_from(["flakery", "next", "--client-key", "/k.pem"]);
        assert!(alone.is_err());
    }
}
