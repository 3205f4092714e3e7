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

/// Java's `Long.parseLong`: an optional sign, then digits as `Character.digit(c, 10)` reads
/// them (any of the basic plane's 37 runs of Unicode decimal digits, fullwidth `１` among
/// them; a digit outside that plane is a surrogate pair to Java and refused), no spaces,
/// within i64.
fn java_parse_long(text: &str) -> Option<i64> {
    let (sign, digits) = match text.strip_prefix(['-', '+']) {
        Some(rest) => (&text[..1], rest),
        None => ("", text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut ascii = String::with_capacity(text.len());
    ascii.push_str(sign);
    for c in digits.chars() {
        ascii.push(char::from(b'0' + java_decimal_digit(c)?));
    }
    ascii.parse().ok()
}

/// The first code point of each run of ten decimal digits (general category Nd) in Unicode's
/// basic multilingual plane: the characters `Character.digit(c, 10)` reads, the same 370 in
/// Java 17 and Java 25 (listed by running both).
const JAVA_DIGIT_ZEROS: [u32; 37] = [
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
    0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80,
    0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
    0xFF10,
];

fn java_decimal_digit(c: char) -> Option<u8> {
    let code = c as u32;
    JAVA_DIGIT_ZEROS
        .iter()
        .find(|&&zero| (zero..zero + 10).contains(&code))
        .map(|&zero| (code - zero) as u8)
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
        // Java 17 and 25: Long.parseLong("\uFF11\uFF12") is 12; Arabic-Indic and Devanagari
        // digits likewise; the extremes of a long.
        assert_eq!(java_parse_long("\u{FF11}\u{FF12}"), Some(12));
        assert_eq!(java_parse_long("-\u{0661}\u{0660}"), Some(-10));
        assert_eq!(java_parse_long("\u{096F}"), Some(9));
        assert_eq!(java_parse_long("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(java_parse_long("9223372036854775807"), Some(i64::MAX));
        for bad in [
            "",
            " 12",
            "12 ",
            "1_2",
            "123,456",
            "9223372036854775808",
            "+",
            "-",
            "+-1",
            "\u{FF0B}1",
            // A digit outside the basic plane is two chars to Java, neither a digit.
            "\u{1D7CF}",
            // Next to a run of digits, not in one.
            "\u{065F}",
            "\u{066A}",
            "\u{FF1A}",
            "\u{00B2}",
        ] {
            assert_eq!(java_parse_long(bad), None, "{bad}");
        }
    }
}
