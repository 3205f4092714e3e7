//! `flakery.v1.Ids` over gRPC: the same generator and errors as the HTTP routes.

use std::pin::Pin;
use std::sync::Arc;

use flakery::timestamp::format_rfc3339_ms;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::budget::{Attached, Conn};
use crate::error::ApiError;
use crate::http::MAX_BATCH;
use crate::ids::Ids;

pub mod proto {
    tonic::include_proto!("flakery.v1");
}

use proto::ids_server::IdsServer;
use proto::{
    DecodeRequest, DecodeResponse, NextIdRequest, NextIdResponse, NextIdsRequest, NextIdsResponse,
    StreamIdsRequest,
};

/// The most IDs one `StreamIds` call may ask for; they go out in chunks of `MAX_BATCH`.
pub const MAX_STREAM: u64 = 1_000_000_000;

/// IDs per streamed message: big enough that framing costs little per ID.
const STREAM_CHUNK: usize = 8192;

pub struct IdsService {
    ids: Arc<Ids>,
}

pub fn service(ids: Arc<Ids>) -> IdsServer<IdsService> {
    IdsServer::new(IdsService { ids })
}

fn status(error: impl Into<ApiError>) -> Status {
    error.into().grpc_status()
}

/// Bytes a packed message holds an ID: 8 in the list it is made in, up to 10 encoded.
const BYTES_PER_ID: usize = 8 + 10;

/// Messages a stream holds at once: one being made, two queued, one being encoded or sent.
const STREAM_MESSAGES: usize = 4;

/// The connection's account of unsent answers (`budget`), put on every request by the server.
fn conn<T>(request: &Request<T>) -> Option<Arc<Conn>> {
    request.extensions().get::<Arc<Conn>>().cloned()
}

fn no_account() -> Status {
    Status::internal("internal: the request has no connection account")
}

type IdStream = Pin<Box<dyn Stream<Item = Result<NextIdsResponse, Status>> + Send>>;

#[tonic::async_trait]
impl proto::ids_server::Ids for IdsService {
    async fn next_id(
        &self,
        _request: Request<NextIdRequest>,
    ) -> Result<Response<NextIdResponse>, Status> {
        let id = self.ids.next_id().await.map_err(status)?;
        Ok(Response::new(NextIdResponse { id }))
    }

    async fn next_ids(
        &self,
        request: Request<NextIdsRequest>,
    ) -> Result<Response<NextIdsResponse>, Status> {
        let conn = conn(&request).ok_or_else(no_account)?;
        let count = request.into_inner().count as usize;
        if !(1..=MAX_BATCH).contains(&count) {
            return Err(status(ApiError::bad_request(format!(
                "count {count} is not from 1 to {MAX_BATCH}"
            ))));
        }
        // Counted before the IDs are made, until the last byte of the message is sent.
        let reservation = conn.reserve(count * BYTES_PER_ID).map_err(status)?;
        let ids = self.ids.next_ids(count).await.map_err(status)?;
        let mut response = Response::new(NextIdsResponse { ids });
        response.extensions_mut().insert(Attached::new(reservation));
        Ok(response)
    }

    type StreamIdsStream = IdStream;

    async fn stream_ids(
        &self,
        request: Request<StreamIdsRequest>,
    ) -> Result<Response<IdStream>, Status> {
        let conn = conn(&request).ok_or_else(no_account)?;
        let count = request.into_inner().count;
        if !(1..=MAX_STREAM).contains(&count) {
            return Err(status(ApiError::bad_request(format!(
                "count {count} is not from 1 to {MAX_STREAM}"
            ))));
        }
        // The stream's pipeline, counted for its whole life; what it sends is counted on top
        // until written.
        let reservation = conn
            .reserve_standing(STREAM_MESSAGES * STREAM_CHUNK * BYTES_PER_ID)
            .map_err(status)?;
        // A small channel: the client's reading paces the making, so memory stays bounded.
        let (tx, rx) = tokio::sync::mpsc::channel(2);
        let ids = Arc::clone(&self.ids);
        tokio::spawn(async move {
            let mut left = count;
            while left > 0 {
                let n = left.min(STREAM_CHUNK as u64) as usize;
                let message = ids
                    .next_ids(n)
                    .await
                    .map(|ids| NextIdsResponse { ids })
                    .map_err(status);
                let failed = message.is_err();
                if tx.send(message).await.is_err() || failed {
                    return;
                }
                left -= n as u64;
            }
        });
        let mut response: Response<IdStream> = Response::new(Box::pin(ReceiverStream::new(rx)));
        response.extensions_mut().insert(Attached::new(reservation));
        Ok(response)
    }

    async fn decode(
        &self,
        request: Request<DecodeRequest>,
    ) -> Result<Response<DecodeResponse>, Status> {
        let id = request.into_inner().id;
        let d = flakery::decode(id, self.ids.generator.layout()).map_err(status)?;
        Ok(Response::new(DecodeResponse {
            id,
            timestamp_ms: d.timestamp_ms,
            time: format_rfc3339_ms(d.timestamp_ms),
            datacenter_id: d.datacenter_id,
            worker_id: d.worker_id,
            sequence: d.sequence,
            fields: d.fields.into_iter().collect(),
        }))
    }
}
