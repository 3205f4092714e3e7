//! Drop-in paths for Vesta's REST mode (`/genid`, `/expid`, `/makeid`, `/transtime`),
//! answering as Vesta's Java API answers: bare text (`text/plain`), its `Id` object's JSON,
//! `makeId`'s argument order, `Date.toString()`. Meituan Leaf's paths are in `leaf.rs`.
//! docs/server.md#vesta lists every difference that remains, and why.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use flakery::{Layout, Parts};
use serde_json::json;

use crate::error::ApiError;
use crate::ids::Ids;
use crate::localtime::java_date_string;

/// The query as sent, every pair in order: a name given twice is refused, not guessed at.
type Params = Query<Vec<(String, String)>>;

/// Vesta's two layouts by the value of their `type` field (Vesta's `IdType`): 0 max-peak
/// (seconds, 20-bit sequence), 1 min-granularity (milliseconds, 10-bit sequence).
const VESTA_TYPES: [&str; 2] = ["vesta-max-peak", "vesta-min-granularity"];

/// Vesta's answers are bare text, JSON included, with the content type its netty server
/// sends: `text/plain`, no charset (every body is ASCII).
fn vesta_text(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))],
        body,
    )
        .into_response()
}

fn raw<'a>(params: &'a Params, name: &str) -> Result<Option<&'a str>, ApiError> {
    let mut values = params.iter().filter(|(n, _)| n == name);
    let first = values.next().map(|(_, v)| v.as_str());
    if values.next().is_some() {
        return Err(ApiError::bad_request(format!(
            "{name} is given more than once"
        )));
    }
    Ok(first)
}

fn param(params: &Params, name: &str) -> Result<Option<u64>, ApiError> {
    raw(params, name)?
        .map(|text| Ok(flakery::decimal::parse_u64(name, text)?))
        .transpose()
}

/// A value of the time field of `layout` (ticks since its epoch).
fn check_time(time: u64, layout: &Layout) -> Result<u64, ApiError> {
    if time > layout.max_tick() {
        return Err(ApiError::bad_request(format!(
            "time={time} does not fit the layout's time field"
        )));
    }
    Ok(time)
}

/// Whether `layout` cuts IDs as one of Vesta's two layouts does (any epoch).
fn is_vesta(layout: &Layout) -> bool {
    VESTA_TYPES.iter().any(|name| {
        Layout::preset(name).is_ok_and(|preset| {
            preset.fields() == layout.fields() && preset.unit() == layout.unit()
        })
    })
}

/// The layout Vesta's `makeId` builds an ID of `type` in: on a Vesta layout, the one `type`
/// names, with this service's epoch; elsewhere this service's own.
fn layout_of_type(own: &Layout, id_type: Option<u64>) -> Result<Layout, ApiError> {
    let Some(id_type) = id_type.filter(|_| is_vesta(own)) else {
        return Ok(own.clone());
    };
    let name = VESTA_TYPES.get(id_type as usize).ok_or_else(|| {
        ApiError::bad_request(format!(
            "type={id_type} is not a Vesta ID type (0 max-peak, 1 min-granularity)"
        ))
    })?;
    Layout::parse(&format!("{name};epoch={}", own.epoch_ms()))
        .map_err(|e| ApiError::bad_request(e.message().to_string()))
}

/// Refuses `--field` values a Vesta service never stamps into its own IDs: a `type` other
/// than its layout's (Vesta's `init()` sets it from the layout) and a `version` other than 0
/// (Vesta's version 1 sets bit 63: a negative ID, which flakery never issues).
pub fn check_vesta_fields(layout: &Layout, fields: &[(String, u64)]) -> Result<(), String> {
    if !is_vesta(layout) {
        return Ok(());
    }
    for (name, value) in fields {
        let expected = match name.as_str() {
            "type" => layout.field("type").map_or(0, |f| f.default),
            "version" => 0,
            _ => continue,
        };
        if *value != expected {
            return Err(format!(
                "invalid_argument: --field {name}={value} contradicts layout '{layout}', whose \
                 IDs Vesta always gives {name}={expected}; leave it out, or choose the layout \
                 of that type (vesta-max-peak is type 0, vesta-min-granularity type 1)"
            ));
        }
    }
    Ok(())
}

/// Vesta's one node number, "machine": the datacenter and worker fields read as one.
fn machine_of(layout: &Layout, datacenter_id: u64, worker_id: u64) -> u64 {
    let worker_bits = layout.worker().map_or(0, |slot| slot.bits);
    (datacenter_id << worker_bits) | worker_id
}

/// `machine` split into the datacenter and worker fields of `layout`; refused, naming
/// `machine` and its range, when it does not fit them (Vesta lets it run into `seq`).
fn machine_parts(layout: &Layout, machine: u64) -> Result<(u64, u64), ApiError> {
    let bits = layout.worker().map_or(0, |slot| slot.bits)
        + layout.datacenter().map_or(0, |slot| slot.bits);
    let max = 1u64.checked_shl(bits).map_or(u64::MAX, |limit| limit - 1);
    if machine > max {
        return Err(ApiError::bad_request(format!(
            "machine={machine} does not fit the layout's {bits}-bit machine field (0-{max})"
        )));
    }
    Ok(match layout.worker() {
        Some(slot) => (machine >> slot.bits, machine & slot.max()),
        None => (machine, 0),
    })
}

/// `GET /genid`: the bare ID.
pub async fn genid(State(ids): State<Arc<Ids>>) -> Result<Response, ApiError> {
    let id = ids.next_id().await?;
    Ok(vesta_text(StatusCode::OK, id.to_string()))
}

/// `GET /expid?id=`: `{"genMethod","machine","seq","time","type","version"}` as bare text,
/// read with this service's layout, the time in its ticks since the epoch, as Vesta's `Id`
/// object serialises.
pub async fn expid(State(ids): State<Arc<Ids>>, params: Params) -> Result<Response, ApiError> {
    let text =
        raw(&params, "id")?.ok_or_else(|| ApiError::bad_request("expid needs ?id=<decimal ID>"))?;
    let layout = ids.generator.layout();
    let d = flakery::decode(flakery::parse_id(text)?, layout)?;
    let constant = |name: &str| d.field(name).unwrap_or(0);
    let body = json!({
        "genMethod": constant("method"),
        "machine": machine_of(layout, d.datacenter_id, d.worker_id),
        "seq": d.sequence,
        "time": d.field("time").unwrap_or(0),
        "type": constant("type"),
        "version": constant("version"),
    });
    Ok(vesta_text(StatusCode::OK, body.to_string()))
}

/// `GET /makeid?time=&seq=&machine=&genMethod=&type=&version=`: the bare ID, as Vesta's Java
/// API `makeId(time, seq, machine, genMethod, type, version)` builds it: in the layout `type`
/// names, `time` in that layout's ticks. `time` and `seq` are required, as in Vesta; the
/// others left out are this server's own values.
pub async fn makeid(State(ids): State<Arc<Ids>>, params: Params) -> Result<Response, ApiError> {
    let (Some(time), Some(sequence)) = (param(&params, "time")?, param(&params, "seq")?) else {
        // Vesta's own words (its netty handler); its Spring controller answers 500.
        return Ok(vesta_text(
            StatusCode::BAD_REQUEST,
            "Both time and seq are required.".into(),
        ));
    };
    let own = ids.generator.layout();
    let layout = layout_of_type(own, param(&params, "type")?)?;
    let time = check_time(time, &layout)?;
    let node = ids.generator.node();
    let machine = param(&params, "machine")?
        .unwrap_or_else(|| machine_of(own, node.datacenter_id, node.worker_id));
    let (datacenter_id, worker_id) = machine_parts(&layout, machine)?;
    let mut fields = Vec::new();
    for (name, vesta_name) in [
        ("method", "genMethod"),
        ("type", "type"),
        ("version", "version"),
    ] {
        if let Some(value) = param(&params, vesta_name)? {
            fields.push((name.to_string(), value));
        }
    }
    let parts = Parts {
        timestamp_ms: layout.ms_of_tick(time),
        datacenter_id,
        worker_id,
        sequence,
        fields: merge_fields(&ids, &layout, fields),
    };
    let id = flakery::compose(&parts, &layout)?;
    Ok(vesta_text(StatusCode::OK, id.to_string()))
}

/// The fields asked for, else the values this server stamps into its own IDs (but never
/// this server's `type` into an ID of the other type's layout).
fn merge_fields(ids: &Ids, layout: &Layout, mut asked: Vec<(String, u64)>) -> Vec<(String, u64)> {
    for (name, value) in ids.own_constants() {
        let own_type_elsewhere = name == "type" && layout != ids.generator.layout();
        if !own_type_elsewhere && !asked.iter().any(|(n, _)| *n == name) {
            asked.push((name, value));
        }
    }
    asked
}

/// `GET /transtime?time=`: the instant of a time field value, as Java's `Date.toString()`
/// in the server's zone (`Fri May 22 14:41:04 CST 2015`).
pub async fn transtime(State(ids): State<Arc<Ids>>, params: Params) -> Result<Response, ApiError> {
    let layout = ids.generator.layout();
    let time = param(&params, "time")?
        .ok_or_else(|| ApiError::bad_request("transtime needs ?time=<ticks since the epoch>"))?;
    let time = check_time(time, layout)?;
    let text = java_date_string(layout.ms_of_tick(time))
        .ok_or_else(|| ApiError::bad_request(format!("time={time} is not a representable date")))?;
    Ok(vesta_text(StatusCode::OK, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_is_datacenter_and_worker_read_as_one() {
        let twitter = Layout::twitter();
        assert_eq!(machine_of(&twitter, 3, 7), 3 * 32 + 7);
        assert_eq!(machine_parts(&twitter, 3 * 32 + 7).unwrap(), (3, 7));
        assert!(machine_parts(&twitter, 1024).is_err());
        let vesta = Layout::preset("vesta-max-peak").unwrap();
        assert_eq!(machine_of(&vesta, 0, 1022), 1022);
        assert_eq!(machine_parts(&vesta, 1023).unwrap(), (0, 1023));
        assert!(machine_parts(&vesta, 5000).is_err());
    }

    #[test]
    fn type_and_version_that_vesta_never_stamps_are_refused() {
        let max_peak = Layout::preset("vesta-max-peak").unwrap();
        let field = |name: &str, value| vec![(name.to_string(), value)];
        assert!(check_vesta_fields(&max_peak, &field("type", 0)).is_ok());
        assert!(check_vesta_fields(&max_peak, &field("method", 2)).is_ok());
        assert!(check_vesta_fields(&max_peak, &field("type", 1)).is_err());
        assert!(check_vesta_fields(&max_peak, &field("version", 1)).is_err());
        let min_gran = Layout::parse("vesta-min-granularity;epoch=0").unwrap();
        assert!(check_vesta_fields(&min_gran, &field("type", 1)).is_ok());
        assert!(check_vesta_fields(&min_gran, &field("type", 0)).is_err());
        // Not a Vesta layout: a field named type is this user's own.
        let custom = Layout::parse("type:2,time:41,sequence:12;epoch=0").unwrap();
        assert!(check_vesta_fields(&custom, &field("type", 3)).is_ok());
    }
}
