//! `flakery serve`: hands out IDs over HTTP/1.1, HTTP/2 and gRPC from one generator, with
//! its identity from the same sources as every other flakery generator.

mod compat;
pub mod config;
mod error;
mod grpc;
mod guard;
mod http;
mod ids;
mod leaf;
mod localtime;
mod metrics;
mod serve;

use std::process::ExitCode;

use flakery::{Generator, Layout, Options};

pub use config::{ServeArgs, IDENTITY_HELP};

fn parse_field(pair: &str) -> Result<(String, u64), String> {
    let (name, value) = pair
        .split_once('=')
        .ok_or_else(|| format!("--field '{pair}' is not NAME=VALUE"))?;
    let value = value
        .trim()
        .parse()
        .map_err(|_| format!("--field '{pair}': VALUE is not a non-negative integer"))?;
    Ok((name.trim().to_string(), value))
}

fn options(args: &ServeArgs) -> Result<(Options, Vec<(String, u64)>), String> {
    let layout = args
        .layout
        .as_deref()
        .map(Layout::parse)
        .transpose()
        .map_err(|e| format!("{}: {}", e.code(), e.message()))?;
    let fields = args
        .fields
        .iter()
        .map(|pair| parse_field(pair))
        .collect::<Result<Vec<_>, _>>()?;
    compat::check_vesta_fields(layout.as_ref().unwrap_or(&Layout::twitter()), &fields)?;
    let sequence_policy = args
        .sequence_policy
        .parse()
        .map_err(|e: flakery::Error| format!("{}: {}", e.code(), e.message()))?;
    Ok((
        Options {
            layout,
            datacenter_id: args.datacenter_id,
            worker_id: args.worker_id,
            sequence_policy,
            max_borrow_ms: args.max_borrow_ms,
            backwards_tolerance_ms: args.backwards_tolerance_ms,
            fields: fields.clone(),
            ..Options::default()
        },
        fields,
    ))
}

fn init_logs(format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FLAKERY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// One log line at start when the layout has less than the margin left (docs/server.md#logs).
fn warn_if_running_out(options: &Options, margin_days: u64) -> Result<(), String> {
    let layout = options
        .resolved_layout()
        .map_err(|e| format!("{}: {}", e.code(), e.message()))?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    if let Some(warning) = layout.exhaustion_warning(now_ms, margin_days) {
        tracing::warn!(
            event = "layout_running_out",
            time_left_ms = layout.time_left_ms(now_ms),
            "{warning}"
        );
    }
    Ok(())
}

/// Runs the server until SIGTERM or SIGINT; the exit code says whether it started.
pub fn run(args: ServeArgs) -> ExitCode {
    init_logs(&args.log_format);
    match run_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!(event = "failed", "{message}");
            eprintln!("flakery serve: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Binds with a backlog long enough for a burst of clients (tokio's default is 1024).
fn listen(address: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(4096)
}

/// A server holds a descriptor per client: lift the soft limit to the hard one, so a flood
/// meets `--max-connections` before it meets the process's descriptor limit.
fn raise_descriptor_limit() {
    // SAFETY: getrlimit/setrlimit read and write the plain struct passed.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

fn run_inner(args: ServeArgs) -> Result<(), String> {
    raise_descriptor_limit();
    let (options, constants) = options(&args)?;
    warn_if_running_out(&options, args.exhaustion_warning_days)?;
    // The identity first, before any port is open: a server that cannot issue never listens.
    let generator =
        Generator::new(options).map_err(|e| format!("{}: {}", e.code(), e.message()))?;
    let metrics = metrics::Metrics::new().map_err(|e| format!("metrics: {e}"))?;
    metrics
        .register_time_left(generator.layout().clone())
        .map_err(|e| format!("metrics: {e}"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let ids = ids::Ids::new(generator, metrics, constants);
    let result = runtime.block_on(async {
        let listener =
            listen(args.listen).map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
        let node = ids.generator.node();
        tracing::info!(
            event = "started",
            listen = %listener.local_addr().map_err(|e| e.to_string())?,
            layout = %ids.generator.layout(),
            datacenter_id = node.datacenter_id,
            worker_id = node.worker_id,
            source = %ids.generator.source(),
            token = if args.token.is_some() { "required" } else { "none" },
            "serving IDs"
        );
        serve::serve(std::sync::Arc::clone(&ids), args, listener).await;
        Ok::<(), String>(())
    });
    // Every connection has finished or been cut off: give the node ID back.
    ids.generator.close();
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    let node = ids.generator.node();
    tracing::info!(
        event = "stopped",
        datacenter_id = node.datacenter_id,
        worker_id = node.worker_id,
        ids_issued = ids.metrics.ids_issued.get(),
        "lease released"
    );
    result
}
