//! The future of the guard's service (`guard::Guarded`): an answer made in the call
//! (`Guard::one_id_now`, nearly every `GET /v1/id`), or a boxed future.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::response::Response;

pub enum Answer {
    Now(Option<Response>),
    Later(Pin<Box<dyn Future<Output = Response> + Send>>),
}

impl Future for Answer {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Answer::Now(response) => Poll::Ready(Ok(response
                .take()
                .expect("an answer is polled once it is ready"))),
            Answer::Later(future) => future.as_mut().poll(cx).map(Ok),
        }
    }
}
