//! `flakery doctor`: the core's report (flakery::doctor) for the configuration this process
//! would use, as text or JSON; its exit status is the report's (0 all well, 1 warnings, 2 a
//! generator would be refused), so that it serves as a container start check, a cron job or
//! a CI step (docs/doctor.md).

use std::process::ExitCode;

use clap::Args;
use flakery::doctor::{report, Request};
use flakery::{Error, ErrorCode, Layout, Options};

#[derive(Args)]
pub struct DoctorArgs {
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Layout spec or preset name (default: $FLAKERY_LAYOUT, else twitter).
    #[arg(long)]
    layout: Option<String>,
    /// The datacenter ID (default: $FLAKERY_DATACENTER_ID, else leased).
    #[arg(long, value_name = "ID", allow_hyphen_values = true)]
    datacenter_id: Option<String>,
    /// The worker ID (default: $FLAKERY_WORKER_ID, else leased).
    #[arg(long, value_name = "ID", allow_hyphen_values = true)]
    worker_id: Option<String>,
    /// The clock step back a generator waits out (default 1000).
    #[arg(long, value_name = "MS", allow_hyphen_values = true)]
    backwards_tolerance_ms: Option<String>,
    /// Report as for a generator that starts each tick at a random sequence number.
    #[arg(long)]
    random_sequence_start: bool,
    /// Simulate `id % N` over N shards (with --rate).
    #[arg(long, value_name = "N", requires = "rate")]
    shards: Option<String>,
    /// IDs a second for the shard simulation: 10 or 10/s.
    #[arg(long, value_name = "R", requires = "shards")]
    rate: Option<String>,
    /// Another layout to compare the shard skew with.
    #[arg(long, value_name = "LAYOUT", requires = "shards")]
    compare_layout: Option<String>,
    /// Report only these, comma-separated: layout, clock, node, shards (default: all).
    #[arg(long, value_name = "LIST")]
    check: Option<String>,
    /// The process that must see the same host lease directory (its mount namespace's view):
    /// default 1.
    #[arg(long, value_name = "PID")]
    shared_with: Option<String>,
    /// Take a node ID lease and give it back at once (by default none is taken).
    #[arg(long)]
    lease: bool,
}

pub fn main(args: DoctorArgs) -> ExitCode {
    match run(args) {
        Ok((text, code)) => {
            print!("{text}");
            ExitCode::from(code)
        }
        Err(error) => {
            let error = super::flag_named(error);
            eprintln!("flakery: {}: {}", error.code(), error.message());
            // The configuration given cannot be reported on: it would be refused.
            ExitCode::from(2)
        }
    }
}

fn run(args: DoctorArgs) -> flakery::Result<(String, u8)> {
    let options = Options {
        layout: args.layout.as_deref().map(Layout::parse).transpose()?,
        random_sequence_start: args.random_sequence_start,
        ..Options::default()
    };
    let mut request = Request::for_options(options)?;
    let layout = request.layout.clone();
    let number = |option, text: Option<String>| {
        text.map(|text| super::number(&layout, option, &text))
            .transpose()
    };
    request.options.datacenter_id = number("datacenter_id", args.datacenter_id)?;
    request.options.worker_id = number("worker_id", args.worker_id)?;
    if let Some(ms) = number("backwards_tolerance_ms", args.backwards_tolerance_ms)? {
        request.options.backwards_tolerance_ms = ms;
    }
    if let (Some(shards), Some(rate)) = (&args.shards, &args.rate) {
        request.simulate_shards(shards, rate)?;
    }
    request.compare_layout = args
        .compare_layout
        .as_deref()
        .map(Layout::parse)
        .transpose()?;
    request.take_lease = args.lease;
    if let Some(pid) = &args.shared_with {
        let pid = flakery::decimal::parse_u64("--shared-with", pid)?;
        request.reference_pid = u32::try_from(pid).map_err(|_| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("--shared-with={pid} is not a process ID"),
            )
        })?;
    }
    if let Some(checks) = &args.check {
        request.checks = flakery::doctor::Checks::parse(checks)?;
    }
    let report = report(&request)?;
    let text = if args.json {
        format!("{}\n", report.to_json())
    } else {
        report.to_text()
    };
    let code = u8::try_from(report.exit_code())
        .map_err(|_| Error::new(ErrorCode::InvalidArgument, "exit status out of range"))?;
    Ok((text, code))
}
