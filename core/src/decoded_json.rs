//! The one JSON form of a decoded ID, which `flakery decode --json` prints and `flakery
//! serve`'s `GET /v1/decode/{id}` answers (docs/spec.md#decoding-and-composing):
//!
//! `{"id":"1541815603606036480","timestamp_ms":1656432460105,"time":"2022-06-28T16:07:40.105Z",
//! "datacenter_id":11,"worker_id":26,"sequence":0,"fields":{"time":367597485448,...}}`
//!
//! The ID is a decimal string: a JSON number above 2^53 loses digits in JavaScript's
//! `JSON.parse` (and in every reader that keeps numbers as doubles), and a Twitter ID
//! is that large 25 days after its epoch; the server has answered IDs as strings everywhere since it began,
//! and the CLI now does the same. The other members stay numbers: they are what the layout's
//! fields hold, far below 2^53 in every preset, and a reader does arithmetic on them.
//! Written by hand: the core has no JSON dependency, and every member's text is known
//! (numbers, an RFC 3339 time, field names that are lower-case letters, digits and `_`).

use std::fmt::Write;

use crate::codec::Decoded;
use crate::timestamp::format_rfc3339_ms;

impl Decoded {
    /// This decoded ID as one line of JSON (no newline), the shape the module documents.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(160 + 24 * self.fields.len());
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            "{{\"id\":\"{}\",\"timestamp_ms\":{},\"time\":\"{}\",\"datacenter_id\":{},\
             \"worker_id\":{},\"sequence\":{},\"fields\":{{",
            self.id,
            self.timestamp_ms,
            format_rfc3339_ms(self.timestamp_ms),
            self.datacenter_id,
            self.worker_id,
            self.sequence
        );
        for (i, (name, value)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            string(&mut out, name);
            let _ = write!(out, ":{value}");
        }
        out.push_str("}}");
        out
    }
}

/// A JSON string; field names need no escape today, but a name is never trusted to stay so.
/// The doctor's report writes its strings with it too.
pub(crate) fn string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use crate::layout::Layout;

    #[test]
    fn the_id_is_a_string_and_the_rest_numbers() {
        let decoded = crate::codec::decode(1541815603606036480, &Layout::twitter()).unwrap();
        assert_eq!(
            decoded.to_json(),
            "{\"id\":\"1541815603606036480\",\"timestamp_ms\":1656432460105,\
             \"time\":\"2022-06-28T16:07:40.105Z\",\"datacenter_id\":11,\"worker_id\":26,\
             \"sequence\":0,\"fields\":{\"time\":367597485448,\"datacenter\":11,\
             \"worker\":26,\"sequence\":0}}"
        );
    }

    #[test]
    fn a_name_is_escaped() {
        let mut out = String::new();
        super::string(&mut out, "a\"b\\c\u{1}");
        assert_eq!(out, "\"a\\\"b\\\\c\\u0001\"");
    }
}
