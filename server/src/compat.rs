//! Drop-in paths for the services flakery replaces, answering as they answer: Vesta's REST
//! mode (`/genid`, `/expid`, `/makeid`, `/transtime`) and Meituan Leaf's snowflake mode
//! (`/api/snowflake/get/{key}`, `/decodeSnowflakeId`).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::Json;
use flakery::{Layout, Parts};
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::ids::Ids;
use crate::localtime::{java_date_string, java_timestamp_string};

type Params = crate::query::Query<BTreeMap<String, String>>;

fn param(params: &Params, name: &str) -> Result<Option<u64>, ApiError> {
    params
        .get(name)
        .map(|text| Ok(flakery::decimal::parse_u64(name, text)?))
        .transpose()
}

/// `?time=`: a value of the layout's time field (ticks since its epoch).
fn time_param(params: &Params, layout: &Layout, route: &str) -> Result<u64, ApiError> {
    let time: u64 = param(params, "time")?.ok_or_else(|| {
        ApiError::bad_request(format!("{route} needs ?time=<ticks since the epoch>"))
    })?;
    if time > layout.max_tick() {
        return Err(ApiError::bad_request(format!(
            "time={time} does not fit the layout's time field"
        )));
    }
    Ok(time)
}

/// Vesta's one node number, "machine": the datacenter and worker fields read as one.
fn machine_of(layout: &Layout, datacenter_id: u64, worker_id: u64) -> u64 {
    let worker_bits = layout.worker().map_or(0, |slot| slot.bits);
    (datacenter_id << worker_bits) | worker_id
}

fn machine_parts(layout: &Layout, machine: u64) -> (u64, u64) {
    match layout.worker() {
        Some(slot) => (machine >> slot.bits, machine & slot.max()),
        None => (machine, 0),
    }
}

/// `GET /genid` and `GET /api/snowflake/get/{key}`: the bare ID.
pub async fn genid(State(ids): State<Arc<Ids>>) -> Result<String, ApiError> {
    Ok(ids.next_id().await?.to_string())
}

pub async fn leaf_get(
    State(ids): State<Arc<Ids>>,
    Path(_key): Path<String>,
) -> Result<String, ApiError> {
    Ok(ids.next_id().await?.to_string())
}

/// `GET /expid?id=`: `{"genMethod","machine","seq","time","type","version"}`, the time in
/// the layout's ticks since its epoch, as Vesta's `Id` object serialises.
pub async fn expid(State(ids): State<Arc<Ids>>, params: Params) -> Result<Json<Value>, ApiError> {
    let text = params
        .get("id")
        .ok_or_else(|| ApiError::bad_request("expid needs ?id=<decimal ID>"))?;
    let layout = ids.generator.layout();
    let d = flakery::decode(flakery::parse_id(text)?, layout)?;
    let constant = |name: &str| d.field(name).unwrap_or(0);
    Ok(Json(json!({
        "genMethod": constant("method"),
        "machine": machine_of(layout, d.datacenter_id, d.worker_id),
        "seq": d.sequence,
        "time": d.field("time").unwrap_or(0),
        "type": constant("type"),
        "version": constant("version"),
    })))
}

/// `GET /makeid?time=&seq=&machine=&genMethod=&type=&version=`: the bare ID. Left out,
/// `seq` is 0 and the others are this server's own values, as in Vesta.
pub async fn makeid(State(ids): State<Arc<Ids>>, params: Params) -> Result<String, ApiError> {
    let layout = ids.generator.layout();
    let time = time_param(&params, layout, "makeid")?;
    let node = ids.generator.node();
    let machine = param(&params, "machine")?
        .unwrap_or_else(|| machine_of(layout, node.datacenter_id, node.worker_id));
    let (datacenter_id, worker_id) = machine_parts(layout, machine);
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
        sequence: param(&params, "seq")?.unwrap_or(0),
        fields: merge_fields(&ids, fields),
    };
    Ok(flakery::compose(&parts, layout)?.to_string())
}

/// The fields asked for, else the values this server stamps into its own IDs.
fn merge_fields(ids: &Ids, mut asked: Vec<(String, u64)>) -> Vec<(String, u64)> {
    let own = ids.own_constants();
    for (name, value) in own {
        if !asked.iter().any(|(n, _)| *n == name) {
            asked.push((name, value));
        }
    }
    asked
}

/// `GET /transtime?time=`: the instant of a time field value, as Java's `Date.toString()`
/// in the server's zone (`Fri May 22 14:41:04 CST 2015`).
pub async fn transtime(State(ids): State<Arc<Ids>>, params: Params) -> Result<String, ApiError> {
    let layout = ids.generator.layout();
    let time = time_param(&params, layout, "transtime")?;
    java_date_string(layout.ms_of_tick(time))
        .ok_or_else(|| ApiError::bad_request(format!("time={time} is not a representable date")))
}

/// `GET /decodeSnowflakeId?snowflakeId=`: Leaf's own arithmetic (Twitter's bits and epoch,
/// whatever this server's layout), its string values, and its `errorMsg` for a non-number.
pub async fn leaf_decode(params: Params) -> Json<Value> {
    const TWEPOCH: i64 = 1288834974657;
    let parsed = params
        .get("snowflakeId")
        .and_then(|text| flakery::parse_id(text).ok());
    let answer = parsed.and_then(|id| {
        let timestamp = (id >> 22).wrapping_add(TWEPOCH);
        let when = java_timestamp_string(timestamp)?;
        Some(json!({
            "timestamp": format!("{timestamp}({when})"),
            "workerId": ((id >> 12) ^ (id >> 22 << 10)).to_string(),
            "sequenceId": (id ^ (id >> 12 << 12)).to_string(),
        }))
    });
    Json(answer.unwrap_or_else(|| json!({"errorMsg": "snowflake Id反解析发生异常!"})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_is_datacenter_and_worker_read_as_one() {
        let twitter = Layout::twitter();
        assert_eq!(machine_of(&twitter, 3, 7), 3 * 32 + 7);
        assert_eq!(machine_parts(&twitter, 3 * 32 + 7), (3, 7));
        let vesta = Layout::preset("vesta-max-peak").unwrap();
        assert_eq!(machine_of(&vesta, 0, 1022), 1022);
        assert_eq!(machine_parts(&vesta, 1022), (0, 1022));
    }
}
