//! The report as data: a small tree of values that the text and the JSON renderings both walk,
//! so that the two never say different things. Written by hand: the core has no JSON
//! dependency.

use std::fmt::Write;

/// One value of the report.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Map(Vec<(String, Value)>),
}

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        Value::Str(text.to_string())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Value {
        Value::Str(text)
    }
}

impl From<bool> for Value {
    fn from(on: bool) -> Value {
        Value::Bool(on)
    }
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Int(n as i128)
            }
        }
    )*};
}
int_value!(u32, i32, u64, i64, usize);

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Value {
        value.map_or(Value::Null, Into::into)
    }
}

/// A map built member by member, in order.
#[derive(Debug, Default)]
pub struct MapBuilder(Vec<(String, Value)>);

impl MapBuilder {
    pub fn new() -> MapBuilder {
        MapBuilder(Vec::new())
    }

    pub fn put(mut self, key: &str, value: impl Into<Value>) -> MapBuilder {
        self.0.push((key.to_string(), value.into()));
        self
    }

    pub fn build(self) -> Value {
        Value::Map(self.0)
    }
}

impl Value {
    /// The member `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// One line of JSON.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(on) => out.push_str(if *on { "true" } else { "false" }),
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Float(x) if x.is_finite() => {
                let _ = write!(out, "{x}");
            }
            Value::Float(_) => out.push_str("null"),
            Value::Str(text) => crate::decoded_json::string(out, text),
            Value::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Value::Map(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    crate::decoded_json::string(out, key);
                    out.push(':');
                    value.write_json(out);
                }
                out.push('}');
            }
        }
    }

    /// The value as text: scalars on one line, maps and lists indented below their key.
    pub fn write_text(&self, out: &mut String, indent: usize) {
        match self {
            Value::Map(members) => {
                for (key, value) in members {
                    let _ = write!(out, "{:indent$}{key}:", "");
                    value.write_item(out, indent);
                }
            }
            Value::List(items) => {
                for item in items {
                    let _ = write!(out, "{:indent$}-", "");
                    item.write_item(out, indent);
                }
            }
            scalar => {
                let _ = writeln!(out, "{:indent$}{}", "", scalar.scalar_text());
            }
        }
    }

    /// After `key:` or `-`: a scalar on the same line, anything else below it.
    fn write_item(&self, out: &mut String, indent: usize) {
        match self {
            Value::Map(m) if !m.is_empty() => {
                out.push('\n');
                self.write_text(out, indent + 2);
            }
            Value::List(l) if !l.is_empty() => {
                out.push('\n');
                self.write_text(out, indent + 2);
            }
            Value::Map(_) | Value::List(_) => out.push_str(" (none)\n"),
            scalar => {
                let _ = writeln!(out, " {}", scalar.scalar_text());
            }
        }
    }

    fn scalar_text(&self) -> String {
        match self {
            Value::Null => "-".to_string(),
            Value::Bool(on) => if *on { "yes" } else { "no" }.to_string(),
            Value::Int(n) => n.to_string(),
            Value::Float(x) => format!("{x:.4}"),
            Value::Str(text) => terminal_safe(text),
            _ => String::new(),
        }
    }
}

/// `text` as the report's text shows it: control characters (a newline, ESC) and the
/// characters that reorder what a terminal shows (bidi marks, embeddings, overrides,
/// isolates) escaped, so that a record read from outside can neither fake a line nor write
/// to the reader's terminal; everything else, quotes included, as it is.
fn terminal_safe(text: &str) -> String {
    let reorders = |c: char| {
        matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
    };
    text.chars()
        .map(|c| match c.is_control() || reorders(c) {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escapes_and_nests() {
        let v = MapBuilder::new()
            .put("a", "x\"\n\u{1}")
            .put("n", Value::List(vec![1u64.into(), Value::Null]))
            .put("f", Value::Float(f64::NAN))
            .build();
        assert_eq!(
            v.to_json(),
            r#"{"a":"x\"\u000a\u0001","n":[1,null],"f":null}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&v.to_json()).unwrap();
        assert_eq!(parsed["a"], "x\"\n\u{1}");
    }

    /// Quotes as they are; what a terminal would act on (a newline, ESC, DEL, a C1 control,
    /// a right-to-left override, an isolate) escaped.
    #[test]
    fn text_escapes_only_what_a_terminal_acts_on() {
        let shown = |text: &str| {
            let mut out = String::new();
            Value::Str(text.into()).write_text(&mut out, 0);
            out
        };
        assert_eq!(
            shown("the database's \"clock\""),
            "the database's \"clock\"\n"
        );
        assert_eq!(
            shown("a\nb\u{1b}[2J\u{7f}\u{9b}c\u{202E}d\u{2066}e\u{200F}é"),
            "a\\nb\\u{1b}[2J\\u{7f}\\u{9b}c\\u{202e}d\\u{2066}e\\u{200f}é\n"
        );
    }
}
