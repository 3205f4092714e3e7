//! The listener: one port for HTTP/1.1, h2c and gRPC; connections bounded and timed out;
//! on SIGTERM or SIGINT, stop accepting, let in-flight requests finish, then return.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

use crate::config::ServeArgs;
use crate::guard::Guard;
use crate::ids::Ids;
use crate::{compat, grpc, http, leaf};

/// Most concurrent HTTP/2 streams (gRPC calls) on one connection.
const MAX_H2_STREAMS: u32 = 256;
/// Largest buffered HTTP/1 request head.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Largest gRPC request message (every request is a few bytes).
const MAX_GRPC_MESSAGE: usize = 4 * 1024;

/// Every HTTP route, the gRPC services (`grpc`) beside them, and the guard in front.
fn app(ids: &Arc<Ids>, args: &ServeArgs, grpc: Router) -> Router {
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
        in_flight: Arc::new(Semaphore::new(args.max_in_flight.max(1))),
        request_timeout: args.request_timeout(),
    });
    v1.merge(grpc)
        .fallback(http::not_found)
        .layer(DefaultBodyLimit::max(args.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            guard,
            crate::guard::guard,
        ))
}

/// Keeps gRPC's health service in step with `/readyz`.
async fn mirror_readiness(
    ids: Arc<Ids>,
    mut reporter: tonic_health::server::HealthReporter,
    mut stop: watch::Receiver<bool>,
) {
    let mut shown = None;
    loop {
        let ready = ids.is_ready() && !*stop.borrow();
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
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            _ = stop.changed() => {}
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

/// Serves until a signal, then drains. The caller releases the identity afterwards.
pub async fn serve(ids: Arc<Ids>, args: ServeArgs, listener: TcpListener) {
    let (reporter, health) = tonic_health::server::health_reporter();
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(Arc::clone(&ids).watch_identity(stop_rx.clone()));
    tokio::spawn(mirror_readiness(Arc::clone(&ids), reporter, stop_rx));
    let ids_service = grpc::service(Arc::clone(&ids)).max_decoding_message_size(MAX_GRPC_MESSAGE);
    let grpc = tonic::service::Routes::new(ids_service)
        .add_service(health)
        .into_axum_router();
    let app = app(&ids, &args, grpc);

    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(args.header_timeout())
        .max_buf_size(MAX_HEAD_BYTES);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_H2_STREAMS)
        .keep_alive_interval(Some(args.header_timeout()))
        .keep_alive_timeout(args.header_timeout());
    let builder = Arc::new(builder);
    let connections = Arc::new(Semaphore::new(args.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let signal = shutdown_signal();
    tokio::pin!(signal);

    let signal_name = loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // Out of file descriptors, most likely: wait instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            name = &mut signal => break name,
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            ids.metrics.connections_refused.inc();
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let builder = Arc::clone(&builder);
        let watcher = graceful.watcher();
        let metrics_ids = Arc::clone(&ids);
        let first_byte_timeout = args.header_timeout();
        tokio::spawn(async move {
            metrics_ids.metrics.connections_open.inc();
            // A client that connects and sends nothing is closed, so idle connections
            // cannot hold every slot.
            if sent_something(&stream, first_byte_timeout).await {
                let connection =
                    builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                let _ = watcher.watch(connection.into_owned()).await;
            }
            metrics_ids.metrics.connections_open.dec();
            drop(permit);
        });
    };

    tracing::info!(
        event = "stopping",
        signal = signal_name,
        "no new connections; draining"
    );
    drop(listener);
    let _ = stop_tx.send(true);
    if tokio::time::timeout(args.shutdown_grace(), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            grace_s = args.shutdown_grace_s,
            "requests still in flight after the grace period were cut off"
        );
    }
}

async fn sent_something(stream: &TcpStream, within: Duration) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(within, stream.peek(&mut byte)).await,
        Ok(Ok(n)) if n > 0
    )
}
