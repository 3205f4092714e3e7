//! Drop-in paths for Meituan Leaf's snowflake mode (Leaf 1.0.1's `leaf-server`, Spring Boot
//! 1.5): `/api/snowflake/get/{key}` and `LeafMonitorController.decodeSnowflakeId`, answered
//! byte for byte as Leaf answers them. docs/server.md#leaf lists them side by side.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::ApiError;
use crate::ids::Ids;
use crate::localtime::java_timestamp_string;

/// Spring's content type for a `@ResponseBody` map and for its error body.
const LEAF_JSON: &str = "application/json;charset=UTF-8";

/// Spring Boot's content type for a `String` a `@RestController` returns (its
/// `StringHttpMessageConverter` configured for UTF-8).
const LEAF_TEXT: &str = "text/plain;charset=UTF-8";

/// `GET /api/snowflake/get/{key}`: the bare ID.
pub async fn get(
    State(ids): State<Arc<Ids>>,
    Path(_key): Path<String>,
) -> Result<Response, ApiError> {
    let id = ids.next_id().await?;
    Ok((
        [(header::CONTENT_TYPE, HeaderValue::from_static(LEAF_TEXT))],
        id.to_string(),
    )
        .into_response())
}

fn leaf_json(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static(LEAF_JSON))],
        body,
    )
        .into_response()
}

/// `GET /decodeSnowflakeId?snowflakeId=`: Leaf's own arithmetic (Twitter's bits and epoch,
/// whatever this server's layout) on `Long.parseLong` of the parameter, its string values in
/// its `HashMap`'s order, and its `errorMsg` for a non-number. A repeated parameter is joined
/// with commas, as Spring binds it to a `String` (so it is never a number); a missing one is
/// Spring Boot 1.5's 400 error body.
pub async fn decode(Query(params): Query<Vec<(String, String)>>) -> Response {
    let values: Vec<&str> = params
        .iter()
        .filter(|(name, _)| name == "snowflakeId")
        .map(|(_, value)| value.as_str())
        .collect();
    if values.is_empty() {
        return leaf_json(StatusCode::BAD_REQUEST, missing_parameter_body());
    }
    let answer = java_parse_long(&values.join(",")).and_then(decode_fields);
    let body =
        answer.unwrap_or_else(|| json!({"errorMsg": "snowflake Id反解析发生异常!"}).to_string());
    leaf_json(StatusCode::OK, body)
}

/// `{"workerId","sequenceId","timestamp"}`: the order Java's `HashMap` iterates these three
/// keys in (checked with Java 17 and 25).
fn decode_fields(id: i64) -> Option<String> {
    const TWEPOCH: i64 = 1288834974657;
    let timestamp = (id >> 22).wrapping_add(TWEPOCH);
    let when = java_timestamp_string(timestamp)?;
    let worker_id = (id >> 12) ^ (id >> 22 << 10);
    let sequence = id ^ (id >> 12 << 12);
    let quoted = |text: String| serde_json::Value::String(text).to_string();
    Some(format!(
        "{{\"workerId\":{},\"sequenceId\":{},\"timestamp\":{}}}",
        quoted(worker_id.to_string()),
        quoted(sequence.to_string()),
        quoted(format!("{timestamp}({when})")),
    ))
}

/// Java's `Long.parseLong`: an optional sign, ASCII digits, no spaces, within i64.
fn java_parse_long(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Spring Boot 1.5's `DefaultErrorAttributes` for a `MissingServletRequestParameterException`,
/// in its key order, the timestamp in Unix milliseconds as Jackson writes a `Date`.
fn missing_parameter_body() -> String {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "{{\"timestamp\":{now_ms},\"status\":400,\"error\":\"Bad Request\",\
         \"exception\":\"org.springframework.web.bind.MissingServletRequestParameterException\",\
         \"message\":\"Required String parameter 'snowflakeId' is not present\",\
         \"path\":\"/decodeSnowflakeId\"}}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_longs_as_java_does() {
        assert_eq!(java_parse_long("+12"), Some(12));
        assert_eq!(java_parse_long("-12"), Some(-12));
        for bad in [
            "",
            " 12",
            "12 ",
            "1_2",
            "123,456",
            "9223372036854775808",
            "+",
            "-",
        ] {
            assert_eq!(java_parse_long(bad), None, "{bad}");
        }
    }
}
