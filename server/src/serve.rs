//! The listener: one port for HTTP/1.1, h2c and gRPC (or, with TLS, HTTP/1.1 and HTTP/2 by
//! ALPN); connections bounded and timed out, the TLS handshake included;
//! on SIGTERM or SIGINT, drain (see `drain`): turn unready, keep serving for the drain delay,
//! then stop accepting, let in-flight requests finish, and return.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

use crate::budget::Budget;
use crate::config::ServeArgs;
use crate::guard::{Guard, Guarded};
use crate::header_timer::{HeaderTimer, Watched};
use crate::ids::{Ids, PROBE_EVERY};
use crate::stopping::{Background, Ticks};
use crate::tls::Tls;
use crate::{compat, grpc, http, leaf};

/// Most concurrent HTTP/2 streams (gRPC calls) on one connection: each open stream costs its
/// state and framing whether or not its client reads, beyond what `budget` counts.
const MAX_H2_STREAMS: u32 = 128;
/// Largest request head the transport reads: twice what the guard accepts, so a head a little
/// over the guard's bound still gets the JSON 431 (past this, the transport's bare 431).
const HEAD_BUFFER_BYTES: usize = 2 * crate::guard::MAX_HEAD_BYTES;
/// What HTTP/2 queues per stream for the socket (hyper's default is 400 KiB).
const H2_SEND_BUFFER: usize = 4 * crate::budget::CHUNK;
/// The turn of the SIGHUP task when no TLS file is watched (it only checks for the stop).
const TLS_SIGHUP_ONLY_TURN: Duration = Duration::from_secs(3600);
/// How often gRPC health's status is brought in line with `/readyz`.
const MIRROR_EVERY: Duration = Duration::from_millis(100);
/// Largest gRPC request message (every request is a few bytes).
const MAX_GRPC_MESSAGE: usize = 4 * 1024;

/// Every HTTP route, the gRPC services (`grpc`) beside them, and the guard in front.
fn app(ids: &Arc<Ids>, args: &ServeArgs, grpc: Router) -> Guarded {
    let v1 = Router::new()
        .route("/v1/id", get(http::next_id))
        .route("/v1/ids", get(http::next_ids))
        .route("/v1/decode/:id", get(http::decode))
        .route("/v1/compose", axum::routing::post(http::compose))
        .route("/v1/layout", get(http::layout))
        .route("/healthz", get(http::healthz))
        .route("/readyz", get(http::readyz))
        .route("/metrics", get(http::metrics))
        .route("/genid", get(compat::genid))
        .route("/expid", get(compat::expid))
        .route("/makeid", get(compat::makeid))
        .route("/transtime", get(compat::transtime))
        .route("/api/snowflake/get/:key", get(leaf::get))
        .route("/decodeSnowflakeId", get(leaf::decode))
        .with_state(Arc::clone(ids));
    let guard = Arc::new(Guard {
        ids: Arc::clone(ids),
        token: args.token.clone(),
        in_flight: crate::budget::Counter::new(args.max_in_flight.max(1)),
        request_timeout: args.request_timeout(),
    });
    let routes = v1.merge(grpc).fallback(http::not_found);
    Guarded::new(guard, routes, args.max_body_bytes)
}

/// Keeps gRPC's health service in step with `/readyz`.
async fn mirror_readiness(
    ids: Arc<Ids>,
    mut reporter: tonic_health::server::HealthReporter,
    mut ticks: Ticks,
) {
    let mut shown = None;
    loop {
        let ready = ids.is_ready();
        if shown != Some(ready) {
            let status = if ready {
                tonic_health::ServingStatus::Serving
            } else {
                tonic_health::ServingStatus::NotServing
            };
            reporter.set_service_status("", status).await;
            reporter.set_service_status("flakery.v1.Ids", status).await;
            shown = Some(ready);
        }
        if !ticks.next().await {
            return;
        }
    }
}

async fn shutdown_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        std::future::pending::<()>().await;
        unreachable!();
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}

/// Serves until a signal, then drains; SIGHUP (`hangup`, taken by the caller) reloads TLS.
/// The caller releases the identity afterwards.
pub async fn serve(
    ids: Arc<Ids>,
    args: ServeArgs,
    listener: TcpListener,
    tls: Option<Arc<Tls>>,
    hangup: Option<tokio::signal::unix::Signal>,
) {
    let (reporter, health) = tonic_health::server::health_reporter();
    let mut background = Background::new();
    let watch = args.tls_watch().filter(|_| tls.is_some());
    let ticks = background.ticks(watch.unwrap_or(TLS_SIGHUP_ONLY_TURN));
    background.spawn(crate::tls::reload(
        tls.clone(),
        watch.is_some(),
        hangup,
        ticks,
    ));
    background.spawn(Arc::clone(&ids).watch_identity(background.ticks(PROBE_EVERY)));
    background.spawn(mirror_readiness(
        Arc::clone(&ids),
        reporter,
        background.ticks(MIRROR_EVERY),
    ));
    let ids_service = grpc::service(Arc::clone(&ids)).max_decoding_message_size(MAX_GRPC_MESSAGE);
    let grpc = tonic::service::Routes::new(ids_service)
        .add_service(health)
        .into_axum_router();
    let app = app(&ids, &args, grpc);

    let accept = Accept {
        app,
        builder: Arc::new(connection_builder(&args)),
        connections: Arc::new(Semaphore::new(args.max_connections.max(1))),
        drain: watch::Sender::new(false),
        ids: Arc::clone(&ids),
        budget: Budget::new(args.max_unsent_bytes),
        first_byte_timeout: args.header_timeout(),
        header_timeout: args.header_timeout(),
        tls,
    };
    let signal_name = accept.until(&listener, shutdown_signal()).await;
    ids.readiness.start_draining();
    tracing::info!(
        event = "draining",
        signal = signal_name,
        drain_delay_ms = args.drain_delay_ms,
        "/readyz answers 503 so that load balancers stop sending here; still serving for the \
         drain delay (a second signal ends it)"
    );
    let delay = args.drain_delay();
    accept
        .until(&listener, async move {
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = shutdown_signal() => {}
            }
        })
        .await;
    tracing::info!(
        event = "stopping",
        "no new connections; finishing the requests in flight"
    );
    drop(listener);
    background.stop().await;
    // Every connection is asked to end gracefully, and each holds its receiver till it has.
    accept.drain.send_replace(true);
    if tokio::time::timeout(args.shutdown_grace(), accept.drain.closed())
        .await
        .is_err()
    {
        tracing::warn!(
            grace_s = args.shutdown_grace_s,
            "requests still in flight after the grace period were cut off; raise \
             --shutdown-grace-s if they were expected to finish"
        );
    }
}

fn connection_builder(args: &ServeArgs) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The HTTP/1 timer is each connection's own (`serve_connection`).
    builder
        .http1()
        .header_read_timeout(args.header_timeout())
        .max_buf_size(HEAD_BUFFER_BYTES)
        .writev(false);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_H2_STREAMS)
        .max_header_list_size(HEAD_BUFFER_BYTES as u32)
        .max_send_buf_size(H2_SEND_BUFFER)
        .keep_alive_interval(Some(args.header_timeout()))
        .keep_alive_timeout(args.header_timeout());
    builder
}

/// Accepts connections and serves each on a task of its own, until a future completes.
struct Accept {
    app: Guarded,
    builder: Arc<auto::Builder<TokioExecutor>>,
    connections: Arc<Semaphore>,
    /// Set once the server drains (`serve_until_done`).
    drain: watch::Sender<bool>,
    ids: Arc<Ids>,
    budget: Arc<Budget>,
    first_byte_timeout: Duration,
    header_timeout: Duration,
    tls: Option<Arc<Tls>>,
}

impl Accept {
    async fn until<T>(&self, listener: &TcpListener, stop: impl Future<Output = T>) -> T {
        tokio::pin!(stop);
        loop {
            let (stream, _peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(error) => {
                        // Out of file descriptors, most likely: wait instead of spinning.
                        tracing::warn!(
                            %error,
                            "accept failed: raise the descriptor limit (LimitNOFILE) or lower \
                             --max-connections"
                        );
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                out = &mut stop => return out,
            };
            self.serve_connection(stream);
        }
    }

    fn serve_connection(&self, stream: TcpStream) {
        let Ok(permit) = Arc::clone(&self.connections).try_acquire_owned() else {
            self.ids.metrics.connections_refused.inc();
            drop(stream);
            return;
        };
        let _ = stream.set_nodelay(true);
        // Every request carries its connection's account of unsent answers (`budget`).
        let conn = self.budget.connection();
        // Set by the first request: until then the connection is on its deadline.
        let asked = Arc::new(AtomicBool::new(false));
        let service = TowerToHyperService::new(self.app.for_connection(conn, Arc::clone(&asked)));
        // HTTP/1's header-read timeout on a timer of this connection's own (`header_timer`).
        let header_timer = HeaderTimer::default();
        let mut builder = (*self.builder).clone();
        builder.http1().timer(header_timer.clone());
        let header_timer_io = header_timer.clone();
        let mut drain = self.drain.subscribe();
        let ids = Arc::clone(&self.ids);
        // One deadline from the accept to the first request, the TLS handshake included: a
        // client that connects, or finishes a handshake, or sends a byte, and then nothing,
        // gives its slot back then (neither the handshake, hyper's version sniff nor
        // HTTP/2's preface has a timeout of its own).
        let deadline = tokio::time::Instant::now() + self.first_byte_timeout;
        // The configuration of this moment: a reload after the accept does not touch it.
        let acceptor = self.tls.as_ref().map(|tls| tls.acceptor());
        // Its watcher ends when this is dropped, with the connection's task.
        let (ended, watch_ended) = tokio::sync::oneshot::channel::<()>();
        let connection = tokio::spawn(async move {
            // Dropped when the connection ends, or is cut off (`header_timer::watch`).
            let _open = Open::new(ids, permit);
            let _ended = ended;
            if sent_something(&stream, deadline).await {
                let stream = Watched::new(stream, &header_timer_io);
                match acceptor {
                    None => {
                        let connection =
                            builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                        serve_until_done(connection, &mut drain, &header_timer_io, |c| {
                            c.graceful_shutdown()
                        })
                        .await;
                    }
                    Some(acceptor) => {
                        if let Ok(Ok(stream)) =
                            tokio::time::timeout_at(deadline, acceptor.accept(stream)).await
                        {
                            let connection = builder
                                .serve_connection_with_upgrades(TokioIo::new(stream), service);
                            serve_until_done(connection, &mut drain, &header_timer_io, |c| {
                                c.graceful_shutdown()
                            })
                            .await;
                        }
                    }
                }
            }
        });
        // Its deadlines on a task of their own: raced in the connection's task, their timers
        // were polled at each of its wake-ups, every request.
        tokio::spawn(crate::header_timer::watch(
            header_timer,
            connection.abort_handle(),
            watch_ended,
            asked,
            deadline,
            self.header_timeout,
        ));
    }
}

/// Serves `connection` until it ends. When the server drains, or the connection has been
/// idle (no request begun) for a timeout (`header_timer`), it is asked to end gracefully
/// (`shut`): HTTP/2 sends GOAWAY and finishes the streams open, HTTP/1 finishes the request in
/// flight and closes. Costs a wake-up one relaxed load besides the drain's receiver.
async fn serve_until_done<C: Future>(
    connection: C,
    drain: &mut watch::Receiver<bool>,
    timer: &HeaderTimer,
    shut: impl Fn(Pin<&mut C>),
) {
    let mut connection = std::pin::pin!(connection);
    let mut drained = std::pin::pin!(drain.wait_for(|draining| *draining));
    let (mut registered, mut asked_to_end) = (false, false);
    std::future::poll_fn(|cx| {
        if !asked_to_end
            && (drained.as_mut().poll(cx).is_ready() || timer.is_idle(cx, &mut registered))
        {
            shut(connection.as_mut());
            asked_to_end = true;
        }
        connection.as_mut().poll(cx).map(drop)
    })
    .await
}

/// A connection's slot and its place in `flakery_connections_open`, for as long as its task
/// lives, however it ends.
struct Open {
    ids: Arc<Ids>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Open {
    fn new(ids: Arc<Ids>, permit: tokio::sync::OwnedSemaphorePermit) -> Open {
        ids.metrics.connections_open.inc();
        Open {
            ids,
            _permit: permit,
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.ids.metrics.connections_open.dec();
    }
}

async fn sent_something(stream: &TcpStream, deadline: tokio::time::Instant) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout_at(deadline, stream.peek(&mut byte)).await,
        Ok(Ok(n)) if n > 0
    )
}
