//! The `flakery` command. Every failure prints one line naming the problem and exits 1
//! (clap's own usage errors exit 2).

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod doctor;
mod from_servers;
use flakery::{
    decimal, text, timestamp::format_rfc3339_ms, Error, ErrorCode, Generator, IdFormat, Layout,
    Options, Parts,
};

#[derive(Parser)]
#[command(name = "flakery", version, about = "Snowflake-style 64-bit unique IDs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate IDs, one a line.
    Next {
        /// How many.
        #[arg(
            short = 'n',
            long = "count",
            default_value = "1",
            value_name = "N",
            allow_hyphen_values = true
        )]
        count: String,
        /// Layout spec or preset name (default: $FLAKERY_LAYOUT, else twitter).
        #[arg(long)]
        layout: Option<String>,
        /// The datacenter ID (default: $FLAKERY_DATACENTER_ID, else leased).
        #[arg(long, value_name = "ID", allow_hyphen_values = true)]
        datacenter_id: Option<String>,
        /// The worker ID (default: $FLAKERY_WORKER_ID, else leased).
        #[arg(long, value_name = "ID", allow_hyphen_values = true)]
        worker_id: Option<String>,
        /// How to write each ID: decimal, or the fixed-width base32 (13 characters) or base62
        /// (11 characters) forms, which sort as the IDs do.
        #[arg(long, default_value = "decimal", value_name = "FORMAT")]
        format: String,
        /// Take the IDs from `flakery serve` at URL (http[s]://host:port) instead of making them
        /// here: repeatable, or several separated by commas; failover between them
        /// (docs/client.md).
        #[arg(long = "server", value_name = "URL", conflicts_with_all = ["datacenter_id", "worker_id"])]
        servers: Vec<String>,
        /// The servers' bearer token (default: $FLAKERY_SERVER_TOKEN). Prefer the variable: a
        /// flag shows in the process list.
        #[arg(long, requires = "servers", hide_env_values = true)]
        token: Option<String>,
        #[command(flatten)]
        tls: from_servers::TlsArgs,
    },
    /// Take IDs apart.
    Decode {
        /// IDs, written in the form --format names.
        #[arg(required = true, allow_negative_numbers = true)]
        ids: Vec<String>,
        /// Layout spec or preset name.
        #[arg(long, default_value = "twitter")]
        layout: String,
        /// One JSON object a line.
        #[arg(long)]
        json: bool,
        /// The form the IDs are written in: decimal, base32 or base62.
        #[arg(long, default_value = "decimal", value_name = "FORMAT")]
        format: String,
    },
    /// Build the ID that decodes to the given parts.
    Compose {
        /// Layout spec or preset name.
        #[arg(long, default_value = "twitter")]
        layout: String,
        /// The time, in Unix milliseconds (rounded down to the layout's tick).
        #[arg(long, value_name = "MS", allow_hyphen_values = true)]
        timestamp_ms: String,
        /// The datacenter ID.
        #[arg(
            long,
            default_value = "0",
            value_name = "ID",
            allow_hyphen_values = true
        )]
        datacenter_id: String,
        /// The worker ID.
        #[arg(
            long,
            default_value = "0",
            value_name = "ID",
            allow_hyphen_values = true
        )]
        worker_id: String,
        /// The sequence number within the tick.
        #[arg(
            long,
            default_value = "0",
            value_name = "N",
            allow_hyphen_values = true
        )]
        sequence: String,
        /// A constant field's value, NAME=VALUE (repeatable).
        #[arg(long = "field", value_name = "NAME=VALUE")]
        fields: Vec<String>,
    },
    /// List the presets with their fields, capacity and the date each runs out.
    Layouts,
    /// Report the budgets of the configuration this process would use: the layout's end and
    /// 2^53, the clock's sync, the node ID's source, shard skew. Exits 0 all well, 1 with
    /// warnings, 2 when a generator would be refused.
    Doctor(doctor::DoctorArgs),
    /// Hand out IDs over HTTP/1.1, HTTP/2 and gRPC until SIGTERM.
    #[command(after_help = flakery_server::IDENTITY_HELP)]
    Serve(flakery_server::ServeArgs),
}

fn main() -> ExitCode {
    // The CLI ships every coordinator: FLAKERY_ZOOKEEPER and FLAKERY_DATABASE_URL work.
    flakery_coordinators::install();
    flakery_server::config::unset_empty_variables();
    let cli = Cli::parse();
    let cli = match cli.command {
        Command::Serve(args) => return flakery_server::run(args),
        Command::Doctor(args) => return doctor::main(args),
        command => Cli { command },
    };
    if let Command::Next {
        servers,
        token,
        tls,
        ..
    } = &cli.command
    {
        if !servers.is_empty() {
            let (servers, token, tls) = (servers.clone(), token.clone(), tls.clone());
            return from_servers::main(cli.command, servers, token, tls);
        }
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run(cli.command, &mut out).and_then(|()| {
        out.flush()
            .map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("cannot write: {e}")))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = out.flush();
            let error = flag_named(error);
            eprintln!("flakery: {}: {}", error.code(), error.message());
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command, out: &mut impl Write) -> flakery::Result<()> {
    let write_err =
        |e: io::Error| Error::new(ErrorCode::InvalidArgument, format!("cannot write: {e}"));
    match command {
        Command::Next {
            count,
            layout,
            datacenter_id,
            worker_id,
            format,
            ..
        } => {
            let format = format
                .parse::<IdFormat>()
                .map_err(|e| flag_named(e.about("format")))?;
            let mut options = Options {
                layout: layout.as_deref().map(Layout::parse).transpose()?,
                ..Options::default()
            };
            let count = parse_count(&count)?;
            let resolved = options.resolved_layout()?;
            // A layout that has run out fails below with time_exhausted: one line, not two.
            let margin_days = flakery::layout::exhaustion_warning_days()?;
            if let Some(warning) = resolved
                .exhaustion_warning(now_ms(), margin_days)
                .filter(|_| resolved.time_left_ms(now_ms()) > 0)
            {
                eprintln!("flakery: warning: {warning}");
            }
            options.datacenter_id = datacenter_id
                .map(|text| number(&resolved, "datacenter_id", &text))
                .transpose()?;
            options.worker_id = worker_id
                .map(|text| number(&resolved, "worker_id", &text))
                .transpose()?;
            let generator = Generator::new(options)?;
            // A chunk at a time: any count streams out in constant memory.
            let mut chunk = [0i64; 4096];
            let mut left = count;
            while left > 0 {
                let ids = &mut chunk[..left.min(4096)];
                generator.fill(ids)?;
                write_ids(out, ids, format)?;
                left -= ids.len();
            }
            // Gives a leased node ID back before exiting, the time really used recorded (a
            // drop only signals the release: docs/spec.md#the-generators-slow-path).
            generator.close();
        }
        Command::Decode {
            ids,
            layout,
            json,
            format,
        } => {
            let format = format
                .parse::<IdFormat>()
                .map_err(|e| flag_named(e.about("format")))?;
            let layout = Layout::parse(&layout)?;
            for written in ids {
                // Decimal IDs reach 2^64-1, which an unsigned layout (discord) decodes.
                let d = match format {
                    IdFormat::Decimal => {
                        flakery::decode_u64(flakery::parse_id_u64(&written)?, &layout)?
                    }
                    _ => flakery::decode(format.parse(&written)?, &layout)?,
                };
                let line = if json {
                    // The one JSON form of a decoded ID (the server's /v1/decode too).
                    d.to_json()
                } else {
                    let mut line = format!(
                        "{}  time {}  datacenter {}  worker {}  sequence {}",
                        d.id,
                        format_rfc3339_ms(d.timestamp_ms),
                        d.datacenter_id,
                        d.worker_id,
                        d.sequence
                    );
                    for field in layout
                        .fields()
                        .iter()
                        .filter(|f| f.kind == flakery::FieldKind::Constant)
                    {
                        let value = d.field(&field.name).unwrap_or_default();
                        line.push_str(&format!("  {} {value}", field.name));
                    }
                    line
                };
                writeln!(out, "{line}").map_err(write_err)?;
            }
        }
        Command::Compose {
            layout,
            timestamp_ms,
            datacenter_id,
            worker_id,
            sequence,
            fields,
        } => {
            let layout = Layout::parse(&layout)?;
            let timestamp_ms = decimal::parse_i64("--timestamp-ms", &timestamp_ms)?;
            let datacenter_id = number(&layout, "datacenter_id", &datacenter_id)?;
            let worker_id = number(&layout, "worker_id", &worker_id)?;
            let sequence = number(&layout, "sequence", &sequence)?;
            let fields = fields
                .iter()
                .map(|pair| flakery::option_table::parse_field(pair))
                .collect::<flakery::Result<Vec<_>>>()?;
            let parts = Parts {
                timestamp_ms,
                datacenter_id,
                worker_id,
                sequence,
                fields,
            };
            writeln!(out, "{}", flakery::compose_u64(&parts, &layout)?).map_err(write_err)?;
        }
        Command::Serve(_) | Command::Doctor(_) => unreachable!("run by main"),
        Command::Layouts => {
            let now = now_ms();
            for (name, layout) in Layout::presets() {
                let days_left = layout.time_left_ms(now) / 86_400_000;
                writeln!(
                    out,
                    "{name:<22} {} | {days_left} days left",
                    flakery::layout::describe(&layout)
                )
                .map_err(write_err)?;
            }
        }
    }
    Ok(())
}

/// `--count`, in canonical decimal.
fn parse_count(count: &str) -> flakery::Result<usize> {
    usize::try_from(decimal::parse_u64("--count", count)?).map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("--count={count} is more than this machine can count"),
        )
    })
}

/// Writes `ids`, one a line, in `format`.
fn write_ids(out: &mut impl Write, ids: &[i64], format: IdFormat) -> flakery::Result<()> {
    let write_err =
        |e: io::Error| Error::new(ErrorCode::InvalidArgument, format!("cannot write: {e}"));
    for &id in ids {
        match format {
            IdFormat::Decimal => writeln!(out, "{id}"),
            IdFormat::Base32 => out
                .write_all(&text::encode_base32(id)?)
                .and_then(|()| writeln!(out)),
            IdFormat::Base62 => out
                .write_all(&text::encode_base62(id)?)
                .and_then(|()| writeln!(out)),
        }
        .map_err(write_err)?;
    }
    Ok(())
}

fn now_ms() -> i64 {
    flakery::Clock::now_ms(&flakery::SystemClock)
}

/// An error whose message names an option (`worker_id`) as the command line spells it
/// (`--worker-id`).
fn flag_named(error: Error) -> Error {
    let message = flakery::option_table::message_on(&error, flakery::Surface::Cli);
    Error::new(error.code(), message)
}

/// The value of a numeric option (`worker_id`, as the core names it), read here rather than
/// by clap so that a bad one (`--worker-id -1`) gets flakery's message, naming the range the
/// layout gives the field, and flakery's exit status. Canonical decimal only (the core's
/// `decimal`): a well-written value out of range names the field's range.
fn number(layout: &Layout, option: &'static str, text: &str) -> flakery::Result<u64> {
    // A generator option by the table's parser and flag; a compose part (`sequence`) by the
    // same parser under its own flag.
    let parsed = match flakery::option_table::by_rust_name(option) {
        Some(spec) => spec.parse_u64(flakery::Surface::Cli, text),
        None => decimal::parse_u64(&format!("--{}", option.replace('_', "-")), text),
    };
    match parsed {
        Ok(value) => Ok(value),
        Err(_) if decimal::is_canonical_integer(text) => {
            Err(flakery::out_of_range(layout, option, text))
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use flakery::option_table::{CLIENT_OPTIONS, OPTIONS};

    /// `flakery next`'s generator flags are the table's (core/src/option_table/), and every
    /// option the table gives `next` a flag has one.
    #[test]
    fn the_generator_flags_of_next_are_the_tables() {
        let command = Cli::command();
        let next = command.find_subcommand("next").expect("next");
        for option in OPTIONS {
            let arg = next
                .get_arguments()
                .find(|arg| arg.get_id().as_str() == option.rust);
            assert_eq!(
                arg.and_then(|arg| arg.get_long()),
                option.cli,
                "{}",
                option.rust
            );
        }
        let table: Vec<_> = OPTIONS.iter().filter_map(|o| o.cli).collect();
        let client: Vec<_> = CLIENT_OPTIONS
            .iter()
            .filter(|o| OPTIONS.iter().all(|g| g.rust != o.rust))
            .filter_map(|o| o.cli)
            .collect();
        let flags: Vec<_> = next
            .get_arguments()
            .filter_map(|arg| arg.get_long())
            .filter(|long| !["count", "format"].contains(long))
            .collect();
        let (client_flags, flags): (Vec<_>, Vec<_>) =
            flags.into_iter().partition(|long| client.contains(long));
        assert_eq!(flags, table, "flags of next that are not in the table");
        assert_eq!(client_flags, client, "the client's flags of next");
        for option in CLIENT_OPTIONS.iter().filter(|o| o.cli.is_some()) {
            let arg = next
                .get_arguments()
                .find(|arg| arg.get_long() == option.cli)
                .expect("a flag");
            assert_eq!(arg.get_id().as_str(), option.rust, "{:?}", option.cli);
        }
    }
}
