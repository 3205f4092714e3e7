//! `flakery serve`: hands out IDs over HTTP/1.1, HTTP/2 and gRPC from one generator, with
//! its identity from the same sources as every other flakery generator.

mod answer;
mod batch;
mod budget;
mod budgets;
mod compat;
pub mod config;
mod drain;
mod error;
mod grpc;
mod guard;
mod header_timer;
mod http;
mod ids;
mod leaf;
mod localtime;
mod logs;
mod metrics;
mod query;
mod readiness;
mod serve;
mod stopping;
mod tls;
mod unavailable;

use std::process::ExitCode;

use flakery::{Generator, Layout, Options};

pub use config::{ServeArgs, IDENTITY_HELP};

/// A core error as `flakery serve` prints it: its code, and its message with the options named
/// as the flags spell them (`--worker-id`).
fn shown(error: &flakery::Error) -> String {
    let message = flakery::option_table::message_on(error, flakery::Surface::Server);
    format!("{}: {message}", error.code())
}

fn options(args: &ServeArgs) -> Result<(Options, Vec<(String, u64)>), String> {
    let layout = args
        .layout
        .as_deref()
        .map(Layout::parse)
        .transpose()
        .map_err(|e| shown(&e))?;
    let fields = args
        .fields
        .iter()
        .map(|pair| flakery::option_table::parse_field(pair))
        .collect::<flakery::Result<Vec<_>>>()
        .map_err(|e| shown(&e))?;
    compat::check_vesta_fields(layout.as_ref().unwrap_or(&Layout::twitter()), &fields)?;
    let sequence_policy = args
        .sequence_policy
        .parse()
        .map_err(|e: flakery::Error| shown(&e))?;
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

/// One log line at start when the layout has less than the margin left (docs/server.md#logs).
fn warn_if_running_out(options: &Options, margin_days: u64) -> Result<(), String> {
    let layout = options.resolved_layout().map_err(|e| shown(&e))?;
    let now_ms = flakery::Clock::now_ms(&flakery::SystemClock);
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
    logs::init(&args.log_format);
    // The server ships every coordinator: FLAKERY_ZOOKEEPER and FLAKERY_DATABASE_URL work.
    flakery_coordinators::install();
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

/// glibc raises its mmap threshold each time a large block is freed, after which large answers
/// come from the heap, which fragments and is not given back to the system: after a burst of
/// large answers the process kept hundreds of MB. A fixed threshold keeps every large answer
/// in a mapping of its own, returned when freed.
fn return_large_blocks_when_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// The start line: where the node ID came from (the coordinator by address and namespace,
/// never its credentials, and its session timeout or term) and whether IDs can be issued.
fn log_started(
    ids: &ids::Ids,
    args: &ServeArgs,
    listen: std::net::SocketAddr,
    tls: Option<&tls::Tls>,
) {
    let node = ids.generator.node();
    let source = ids.generator.source();
    let lease = ids.readiness.lease();
    let zookeeper = source == flakery::NodeSource::ZooKeeper;
    let term_ms = lease.term_ms();
    let message = if ids.is_ready() {
        "serving IDs"
    } else {
        "listening, but cannot issue IDs yet (see the warning above): ID requests and /readyz \
         answer 503 until it can"
    };
    tracing::info!(
        event = "started",
        listen = %listen,
        layout = %ids.generator.layout(),
        datacenter_id = node.datacenter_id,
        worker_id = node.worker_id,
        source = %source,
        coordinator = lease.coordinator().unwrap_or("none"),
        session_timeout_ms = term_ms.filter(|_| zookeeper),
        lease_term_ms = term_ms.filter(|_| !zookeeper),
        drain_delay_ms = args.drain_delay_ms,
        token = if args.token.is_some() { "required" } else { "none" },
        tls = tls.map_or("off", tls::Tls::mode),
        "{message}"
    );
    if args.token.is_some() && tls.is_none() && !on_loopback(listen) {
        tracing::warn!(
            event = "token_in_clear",
            listen = %listen,
            "a token is required on a plain-HTTP listener that is not loopback: it crosses \
             the network in clear, and whoever sees it can take IDs; serve TLS \
             (--tls-cert, --tls-key) or put TLS in front"
        );
    }
}

/// Whether the listener is loopback only, an IPv4-mapped `[::ffff:127.0.0.1]` too.
fn on_loopback(listen: std::net::SocketAddr) -> bool {
    listen.ip().to_canonical().is_loopback()
}

fn run_inner(mut args: ServeArgs) -> Result<(), String> {
    return_large_blocks_when_freed();
    raise_descriptor_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    // SIGHUP's default action would end the server, and taking the identity can wait (a
    // lease held by another, a ZooKeeper not up yet): from here on it is held for `serve`.
    let hangup = {
        let _inside = runtime.enter();
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok()
    };
    // Before the identity: a token that guards nothing is a configuration error.
    args.token = args.checked_token()?;
    // And the TLS files: a bad pair is refused before a lease is taken.
    let tls = args
        .tls_files()?
        .map(tls::Tls::load)
        .transpose()?
        .map(std::sync::Arc::new);
    let (options, constants) = options(&args)?;
    warn_if_running_out(&options, args.exhaustion_warning_days)?;
    budgets::note_if_above_2_53(&options)?;
    // The identity first, before any port is open: a server that cannot issue never listens.
    let generator = Generator::new(options.clone()).map_err(|e| shown(&e))?;
    let metrics = metrics::Metrics::new().map_err(|e| format!("metrics: {e}"))?;
    metrics.configure(&options)?;
    let ids = ids::Ids::new(generator, metrics, constants);
    // One ID before reporting ready: a lease whose mark is ahead of this clock is held but
    // cannot issue, and must not be reported ready (the ID is a gap, which costs nothing).
    match ids.generator.try_next_id() {
        Ok(_) => ids.record(Ok(())),
        Err(error) => ids.record(Err(&error)),
    }
    let result = runtime.block_on(async {
        let listener =
            listen(args.listen).map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
        let listen = listener.local_addr().map_err(|e| e.to_string())?;
        log_started(&ids, &args, listen, tls.as_deref());
        serve::serve(std::sync::Arc::clone(&ids), args, listener, tls, hangup).await;
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

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_is_known_in_every_spelling() {
        for (listen, loopback) in [
            ("127.0.0.1:80", true),
            ("127.3.2.1:80", true),
            ("[::1]:80", true),
            ("[::ffff:127.0.0.1]:80", true),
            ("0.0.0.0:80", false),
            ("[::]:80", false),
            ("[::ffff:10.0.0.1]:80", false),
            ("10.0.0.1:80", false),
        ] {
            assert_eq!(
                super::on_loopback(listen.parse().unwrap()),
                loopback,
                "{listen}"
            );
        }
    }
}
