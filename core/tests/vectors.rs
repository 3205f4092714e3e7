//! IDs published by the systems themselves (or made by their own code), decoded by flakery.
//! The vectors and their provenance live in tests/vectors/decode.json, shared by every
//! language's tests.

use flakery::{decode, Layout};
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors/decode.json");
    let text = std::fs::read_to_string(path).expect("tests/vectors/decode.json");
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn published_ids_decode_as_their_origin_decodes_them() {
    let vectors = vectors();
    assert!(vectors.len() >= 20);
    for v in &vectors {
        let layout = Layout::parse(v["layout"].as_str().unwrap()).unwrap();
        let id: i64 = v["id"].as_str().unwrap().parse().unwrap();
        let d = decode(id, &layout).unwrap_or_else(|e| panic!("{id}: {e}"));
        let published = v["timestamp_ms"].as_i64().unwrap();
        let tolerance = v["timestamp_tolerance_ms"].as_i64().unwrap_or(0);
        assert!(
            (published..=published + tolerance).contains(&d.timestamp_ms),
            "{id}: {} not within {published}+{tolerance}",
            d.timestamp_ms
        );
        if let Some(exact) = v["decoded_timestamp_ms"].as_i64() {
            assert_eq!(d.timestamp_ms, exact, "{id}");
        }
        // null: the layout has no such field, and flakery reports 0 for it.
        for (got, key, slot) in [
            (d.datacenter_id, "datacenter_id", layout.datacenter()),
            (d.worker_id, "worker_id", layout.worker()),
        ] {
            match v[key].as_u64() {
                Some(expected) => assert_eq!(got, expected, "{id}: {key}"),
                None => assert!(slot.is_none() && got == 0, "{id}: {key}"),
            }
        }
        assert_eq!(d.sequence, v["sequence"].as_u64().unwrap(), "{id}");
        for (name, value) in v["fields"].as_object().unwrap() {
            assert_eq!(d.field(name), value.as_u64(), "{id}: field {name}");
        }
    }
}

#[test]
fn every_preset_has_a_vector() {
    let vectors = vectors();
    for (name, _) in Layout::presets() {
        if name == "safe53" {
            continue; // flakery's own layout: no origin to publish one
        }
        assert!(
            vectors.iter().any(|v| v["preset"] == name),
            "no vector for preset {name}"
        );
    }
}

/// Sonyflake v2's own `Compose` and `ToTime` with start times off a 10 ms boundary and time
/// units other than 10 ms (tests/vectors/sonyflake_units.json): ticks counted from the Unix
/// epoch, `floor(t/unit) - floor(start/unit)`.
#[test]
fn sonyflake_epochs_and_units_count_ticks_as_sonyflake_does() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/sonyflake_units.json"
    );
    let vectors: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(vectors.len() >= 8);
    for v in &vectors {
        let spec = format!(
            "time:39,sequence:8,worker:16;epoch={};unit={}ms",
            v["start_ms"], v["unit_ms"]
        );
        let layout = Layout::parse(&spec).unwrap();
        let id: i64 = v["id"].as_str().unwrap().parse().unwrap();
        let parts = flakery::Parts {
            timestamp_ms: v["time_ms"].as_i64().unwrap(),
            worker_id: v["machine_id"].as_u64().unwrap(),
            sequence: v["sequence"].as_u64().unwrap(),
            ..Default::default()
        };
        assert_eq!(flakery::compose(&parts, &layout), Ok(id), "{spec}");
        let d = decode(id, &layout).unwrap();
        assert_eq!(
            d.timestamp_ms,
            v["decoded_time_ms"].as_i64().unwrap(),
            "{spec}"
        );
        assert_eq!(
            Layout::parse(&layout.to_string()).unwrap(),
            layout,
            "{spec}"
        );
    }
}

/// Discord IDs of 2^63 and above (tests/vectors/unsigned.json, from @sapphire/snowflake):
/// decoded and composed as `u64`.
#[test]
fn discord_ids_are_unsigned_with_42_time_bits() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/unsigned.json"
    );
    let vectors: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(vectors
        .iter()
        .any(|v| v["id"].as_str().unwrap().parse::<i64>().is_err()));
    for v in &vectors {
        let layout = Layout::parse(v["layout"].as_str().unwrap()).unwrap();
        let id: u64 = v["id"].as_str().unwrap().parse().unwrap();
        let d = flakery::decode_u64(id, &layout).unwrap_or_else(|e| panic!("{id}: {e}"));
        let expected = (
            v["timestamp_ms"].as_i64().unwrap(),
            v["datacenter_id"].as_u64().unwrap(),
            v["worker_id"].as_u64().unwrap(),
            v["sequence"].as_u64().unwrap(),
        );
        assert_eq!(
            (d.timestamp_ms, d.datacenter_id, d.worker_id, d.sequence),
            expected,
            "{id}"
        );
        let parts = flakery::Parts {
            timestamp_ms: d.timestamp_ms,
            datacenter_id: d.datacenter_id,
            worker_id: d.worker_id,
            sequence: d.sequence,
            fields: vec![],
        };
        assert_eq!(flakery::compose_u64(&parts, &layout), Ok(id));
    }
}
