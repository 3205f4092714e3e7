//! Stopping without failing a request. On SIGTERM the server turns unready at once
//! (`/readyz` and gRPC health answer 503 / NOT_SERVING) but goes on serving for the drain
//! delay, long enough for a load balancer's health checks to notice and stop sending here;
//! only then does it stop accepting, finish what is in flight, and release its lease.
//! While draining, HTTP/1.1 answers carry `Connection: close`, so that no client or proxy
//! keeps a connection it would reuse after the server closed it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Version};
use axum::middleware::Next;
use axum::response::Response;

use crate::ids::Ids;

pub async fn close_when_draining(
    State(ids): State<Arc<Ids>>,
    request: Request,
    next: Next,
) -> Response {
    // HTTP/2 has no such header (hyper would strip it): its connections are ended by GOAWAY.
    let http1 = request.version() <= Version::HTTP_11;
    let mut response = next.run(request).await;
    if http1 && ids.readiness.is_draining() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
