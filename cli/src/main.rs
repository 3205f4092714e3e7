//! The `flakery` command. Every failure prints one line naming the problem and exits 1
//! (clap's own usage errors exit 2).

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use flakery::{timestamp::format_rfc3339_ms, Error, ErrorCode, Generator, Layout, Options, Parts};

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
        #[arg(short = 'n', long = "count", default_value_t = 1)]
        count: usize,
        /// Layout spec or preset name (default: $FLAKERY_LAYOUT, else twitter).
        #[arg(long)]
        layout: Option<String>,
        #[arg(long)]
        datacenter_id: Option<u64>,
        #[arg(long)]
        worker_id: Option<u64>,
    },
    /// Take IDs apart.
    Decode {
        /// IDs (decimal).
        #[arg(required = true, allow_negative_numbers = true)]
        ids: Vec<String>,
        #[arg(long, default_value = "twitter")]
        layout: String,
        /// One JSON object a line.
        #[arg(long)]
        json: bool,
    },
    /// Build the ID that decodes to the given parts.
    Compose {
        #[arg(long, default_value = "twitter")]
        layout: String,
        #[arg(long, allow_hyphen_values = true)]
        timestamp_ms: i64,
        #[arg(long, default_value_t = 0)]
        datacenter_id: u64,
        #[arg(long, default_value_t = 0)]
        worker_id: u64,
        #[arg(long, default_value_t = 0)]
        sequence: u64,
        /// A constant field's value, NAME=VALUE (repeatable).
        #[arg(long = "field", value_name = "NAME=VALUE")]
        fields: Vec<String>,
    },
    /// List the presets with their fields, capacity and the date each runs out.
    Layouts,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
        } => {
            let options = Options {
                layout: layout.as_deref().map(Layout::parse).transpose()?,
                datacenter_id,
                worker_id,
                ..Options::default()
            };
            let generator = Generator::new(options)?;
            // A chunk at a time: any count streams out in constant memory.
            let mut chunk = [0i64; 4096];
            let mut left = count;
            while left > 0 {
                let ids = &mut chunk[..left.min(4096)];
                generator.fill(ids)?;
                for id in ids.iter() {
                    writeln!(out, "{id}").map_err(write_err)?;
                }
                left -= ids.len();
            }
        }
        Command::Decode { ids, layout, json } => {
            let layout = Layout::parse(&layout)?;
            for text in ids {
                let id = flakery::parse_id(&text)?;
                let d = flakery::decode(id, &layout)?;
                let line = if json {
                    let fields: serde_json::Map<String, serde_json::Value> = d
                        .fields
                        .iter()
                        .map(|(name, value)| (name.clone(), (*value).into()))
                        .collect();
                    serde_json::json!({
                        "id": d.id,
                        "timestamp_ms": d.timestamp_ms,
                        "time": format_rfc3339_ms(d.timestamp_ms),
                        "datacenter_id": d.datacenter_id,
                        "worker_id": d.worker_id,
                        "sequence": d.sequence,
                        "fields": fields,
                    })
                    .to_string()
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
            let fields = fields
                .iter()
                .map(|pair| parse_field(pair))
                .collect::<flakery::Result<Vec<_>>>()?;
            let parts = Parts {
                timestamp_ms,
                datacenter_id,
                worker_id,
                sequence,
                fields,
            };
            writeln!(out, "{}", flakery::compose(&parts, &layout)?).map_err(write_err)?;
        }
        Command::Layouts => {
            for (name, layout) in Layout::presets() {
                writeln!(out, "{name:<22} {}", flakery::layout::describe(&layout))
                    .map_err(write_err)?;
            }
        }
    }
    Ok(())
}

fn parse_field(pair: &str) -> flakery::Result<(String, u64)> {
    let bad = || {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("--field '{pair}' is not NAME=VALUE with a non-negative integer VALUE"),
        )
    };
    let (name, value) = pair.split_once('=').ok_or_else(bad)?;
    Ok((
        name.trim().to_string(),
        value.trim().parse().map_err(|_| bad())?,
    ))
}
