//! The `/v1` routes: IDs as JSON (decimal strings, or `?format=base32|base62`) or bare lines
//! with `Accept: text/plain`; decode, compose, the layout; health, readiness, metrics.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Extension, FromRequestParts, Path, State};
use axum::http::request::Parts as RequestParts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use flakery::text::IdFormat;
use flakery::timestamp::format_rfc3339_ms;
use flakery::{Layout, Parts};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::batch::{self, BatchBody};
use crate::budget::{Attached, Conn};
use crate::error::ApiError;
use crate::ids::Ids;
use crate::query::Query;

/// The most IDs one request may ask for.
pub const MAX_BATCH: usize = 100_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatQuery {
    format: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdsQuery {
    count: Option<String>,
    format: Option<String>,
}

fn id_format(format: Option<&str>) -> Result<IdFormat, ApiError> {
    match format {
        None => Ok(IdFormat::Decimal),
        Some(text) => text.parse().map_err(|_| {
            ApiError::bad_request(format!(
                "format '{}' is not decimal, base32 or base62",
                text.escape_debug()
            ))
        }),
    }
}

fn wants_text(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.starts_with("text/plain"))
}

/// What a batch may be answered as: bare lines (`Accept: text/plain` first), 8-byte words
/// (`application/octet-stream` anywhere in `Accept`), else JSON. An extractor of its own
/// because taking the `HeaderMap` would copy every header of every request.
pub struct Accepts {
    text: bool,
    words: bool,
}

#[axum::async_trait]
impl<S: Send + Sync> FromRequestParts<S> for Accepts {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut RequestParts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Accepts {
            text: wants_text(&parts.headers),
            words: wants_words(&parts.headers),
        })
    }
}

/// `Accept` lists `application/octet-stream` at a quality above 0. flakery's client lists
/// `text/plain;q=0.5` first, which a server older than the words reads (it looks at the first
/// type only) and answers in lines.
fn wants_words(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    accept.split(',').any(|range| {
        let mut params = range.split(';').map(str::trim);
        let media = params.next().unwrap_or_default();
        media.eq_ignore_ascii_case(WORDS)
            && !params.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            })
    })
}

/// One ID. The request is taken whole: each extractor of its parts would be a boxed future
/// of its own, and most requests have no query to read (bench/server/profile.sh).
pub async fn next_id(
    State(ids): State<Arc<Ids>>,
    request: axum::extract::Request,
) -> Result<Response, ApiError> {
    let asked = OneId::of(&request)?;
    drop(request);
    asked.answer(ids.next_id().await?)
}

/// What a request for one ID asks for: the ID's form, and whether as a bare line.
pub struct OneId {
    format: IdFormat,
    text: bool,
}

impl OneId {
    pub fn of<B>(request: &axum::http::Request<B>) -> Result<OneId, ApiError> {
        let format = match request.uri().query() {
            None => IdFormat::Decimal,
            Some(_) => {
                let Query(query) = Query::<FormatQuery>::from_uri(request.uri())?;
                id_format(query.format.as_deref())?
            }
        };
        Ok(OneId {
            format,
            text: wants_text(request.headers()),
        })
    }

    pub fn answer(&self, id: i64) -> Result<Response, ApiError> {
        if self.text {
            return Ok(with_type(render_id(id, self.format, "", "\n")?, TEXT));
        }
        Ok(with_type(
            render_id(id, self.format, "{\"id\":\"", "\"}")?,
            JSON,
        ))
    }
}

const TEXT: &str = "text/plain; charset=utf-8";
const JSON: &str = "application/json";
const WORDS: &str = "application/octet-stream";

/// An answer of `body`, built directly (the generic tuple form converts the header anew).
fn with_type(body: String, content_type: &'static str) -> Response {
    with_type_of(Body::from(body), content_type)
}

fn with_type_of(body: Body, content_type: &'static str) -> Response {
    let mut response = Response::new(body);
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

pub async fn next_ids(
    State(ids): State<Arc<Ids>>,
    Extension(conn): Extension<Arc<Conn>>,
    Query(query): Query<IdsQuery>,
    Accepts { text, words }: Accepts,
) -> Result<Response, ApiError> {
    let format = id_format(query.format.as_deref())?;
    let count = match query.count.as_deref() {
        None => 1,
        Some(text) => match flakery::decimal::parse_u64_at_most("count", text, MAX_BATCH as u64)? {
            0 => return Err(ApiError::bad_request("count=0: ask for 1 to 100000 IDs")),
            n => n as usize,
        },
    };
    // A text form asked for by name is text, whatever else the client takes.
    if words && query.format.is_none() {
        return next_words(&ids, &conn, count).await;
    }
    let shape = if text { batch::LINES } else { batch::JSON };
    // Counted before the IDs are made, until the last byte of their text is sent.
    let mut reservation = conn.reserve(batch::most_bytes(count, format, shape))?;
    let body = BatchBody::new(ids.next_ids(count).await?, format, shape);
    reservation.shrink_to(body.bytes());
    let content_type = if text { TEXT } else { JSON };
    let mut response = with_type_of(Body::new(body), content_type);
    response.extensions_mut().insert(Attached::new(reservation));
    Ok(response)
}

/// `count` IDs as 8-byte little-endian words (`Accept: application/octet-stream`): the same
/// IDs, limits and refusals as their text, in 8 bytes each instead of up to 20, which the
/// client copies instead of parsing.
async fn next_words(ids: &Arc<Ids>, conn: &Arc<Conn>, count: usize) -> Result<Response, ApiError> {
    let mut reservation = conn.reserve(batch::most_word_bytes(count))?;
    let body = batch::little_endian(&ids.next_ids(count).await?);
    reservation.shrink_to(body.len());
    let mut response = with_type_of(Body::from(body), WORDS);
    response.extensions_mut().insert(Attached::new(reservation));
    Ok(response)
}

/// One ID as `open` + id + `close` (IDs and their text forms need no JSON escaping), in a
/// string exactly as long as its capacity: such a string becomes the answer's `Bytes` as it
/// is, where a larger one needs another allocation to share it.
fn render_id(id: i64, format: IdFormat, open: &str, close: &str) -> flakery::Result<String> {
    let mut decimal = itoa::Buffer::new();
    let base32;
    let base62;
    let text = match format {
        IdFormat::Decimal => decimal.format(id),
        IdFormat::Base32 => {
            base32 = flakery::text::encode_base32(id)?;
            ascii(&base32)
        }
        IdFormat::Base62 => {
            base62 = flakery::text::encode_base62(id)?;
            ascii(&base62)
        }
    };
    let mut body = String::with_capacity(open.len() + text.len() + close.len());
    body.push_str(open);
    body.push_str(text);
    body.push_str(close);
    Ok(body)
}

fn ascii(bytes: &[u8]) -> &str {
    // The text forms' alphabets are ASCII.
    std::str::from_utf8(bytes).unwrap_or_default()
}

pub async fn decode(
    State(ids): State<Arc<Ids>>,
    path: Result<Path<String>, PathRejection>,
    Query(query): Query<FormatQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let Path(text) = path.map_err(|_| {
        ApiError::bad_request("the ID in the path is not UTF-8 once percent-decoded")
    })?;
    let id = match query.format.as_deref() {
        None => flakery::parse_id(&text)?,
        format => id_format(format)?.parse(&text)?,
    };
    let decoded = flakery::decode(id, ids.generator.layout())?;
    // The one JSON form of a decoded ID, which `flakery decode --json` prints too.
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        decoded.to_json(),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComposeBody {
    timestamp_ms: i64,
    #[serde(default)]
    datacenter_id: u64,
    #[serde(default)]
    worker_id: u64,
    #[serde(default)]
    sequence: u64,
    #[serde(default)]
    fields: BTreeMap<String, u64>,
}

pub async fn compose(
    State(ids): State<Arc<Ids>>,
    body: Result<Json<ComposeBody>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let Json(body) = body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE | StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            ApiError::for_status(rejection.status(), rejection.body_text())
        }
        _ => ApiError::bad_request(format!(
            "the body is not a JSON object of timestamp_ms, datacenter_id, worker_id, \
             sequence and fields: {}",
            rejection.body_text()
        )),
    })?;
    let parts = Parts {
        timestamp_ms: body.timestamp_ms,
        datacenter_id: body.datacenter_id,
        worker_id: body.worker_id,
        sequence: body.sequence,
        fields: body.fields.into_iter().collect(),
    };
    let id = flakery::compose(&parts, ids.generator.layout())?;
    Ok(Json(json!({ "id": id.to_string() })))
}

pub fn layout_json(layout: &Layout) -> Value {
    let capacity = layout.capacity();
    let fields: Vec<Value> = layout
        .fields()
        .iter()
        .map(|f| {
            json!({
                "name": f.name,
                "kind": f.kind.as_str(),
                "bits": f.slot.bits,
                "shift": f.slot.shift,
                "default": f.default,
            })
        })
        .collect();
    json!({
        "spec": layout.to_string(),
        "preset": layout.preset_name(),
        "epoch_ms": layout.epoch_ms(),
        "epoch": format_rfc3339_ms(layout.epoch_ms()),
        "unit": layout.unit().as_str(),
        "fields": fields,
        "capacity": {
            "ids_per_tick": capacity.ids_per_tick,
            "ids_per_second": capacity.ids_per_second,
            "datacenter_ids": capacity.datacenter_ids,
            "worker_ids": capacity.worker_ids,
            "node_ids": capacity.node_ids,
        },
        "exhausted_at_ms": capacity.exhausted_at_ms,
        "exhausted_at": format_rfc3339_ms(capacity.exhausted_at_ms),
    })
}

pub async fn layout(State(ids): State<Arc<Ids>>) -> Json<Value> {
    let node = ids.generator.node();
    let mut body = layout_json(ids.generator.layout());
    body["node"] = json!({
        "datacenter_id": node.datacenter_id,
        "worker_id": node.worker_id,
        "source": ids.generator.source().as_str(),
    });
    Json(body)
}

pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "up" }))
}

pub async fn readyz(State(ids): State<Arc<Ids>>) -> Result<Json<Value>, ApiError> {
    match ids.readiness.check() {
        Ok(()) => Ok(Json(json!({ "status": "ready" }))),
        Err(not_ready) => Err(ApiError {
            code: not_ready.code(),
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: not_ready.message(),
        }),
    }
}

pub async fn metrics(State(ids): State<Arc<Ids>>) -> Result<Response, ApiError> {
    ids.sync_slow_path_counts();
    ids.metrics.show_lease(ids.readiness.lease());
    ids.metrics.show_layout_time_left(ids.generator.layout());
    let text = ids.metrics.render().map_err(|e| ApiError {
        code: "internal",
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("cannot render the metrics: {e}"),
    })?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response())
}

pub async fn not_found() -> ApiError {
    ApiError::not_found("no such route: see /v1/id, /v1/ids, /v1/decode/{id}, /v1/layout")
}
