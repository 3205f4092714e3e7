//! Stopping without failing a request. On SIGTERM the server turns unready at once
//! (`/readyz` and gRPC health answer 503 / NOT_SERVING) but goes on serving for the drain
//! delay, long enough for a load balancer's health checks to notice and stop sending here;
//! only then does it stop accepting, finish what is in flight, and release its lease.
//! While draining, HTTP/1.1 answers carry `Connection: close`, so that no client or proxy
//! keeps a connection it would reuse after the server closed it.

use axum::http::{header, HeaderValue};
use axum::response::Response;

/// Marks an HTTP/1.1 answer given while draining (the guard calls it; HTTP/2 has no such
/// header, hyper would strip it: its connections are ended by GOAWAY).
pub fn close(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}
