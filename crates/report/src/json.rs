//! An ordered JSON value and a writer that prints it the way fio prints its JSON (`json.c`):
//! keys in the order they were added, `"key" : value`, two spaces per level, floats with six
//! decimals (`%f`). Unlike fio it escapes strings fully, so the output is always valid JSON.

use std::fmt::Write;

/// A JSON value whose objects keep their keys in insertion order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    /// Printed with six decimals, like fio's `%f` (non-finite values print as 0.000000).
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// An empty object.
    pub fn obj() -> Json {
        Json::Obj(Vec::new())
    }

    /// Adds `key: value` to an object (no effect on other values); returns it for chaining.
    pub fn with(mut self, key: &str, value: impl Into<Json>) -> Json {
        self.push(key, value);
        self
    }

    /// Adds `key: value` to an object.
    pub fn push(&mut self, key: &str, value: impl Into<Json>) {
        if let Json::Obj(pairs) = self {
            pairs.push((key.to_string(), value.into()));
        }
    }

    /// The value under `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(p) => p.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value under `key` of an object, to change it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Obj(p) => p.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` of an object to `value` (replacing the value it had, else adding it).
    pub fn set(&mut self, key: &str, value: impl Into<Json>) {
        match self.get_mut(key) {
            Some(v) => *v = value.into(),
            None => self.push(key, value),
        }
    }

    /// fio's layout, ending with a newline.
    pub fn to_fio_string(&self) -> String {
        let mut s = String::new();
        self.write_fio(&mut s, 0);
        s.push('\n');
        s
    }

    fn write_fio(&self, out: &mut String, level: usize) {
        let indent = |out: &mut String, level: usize| {
            for _ in 0..level {
                out.push_str("  ");
            }
        };
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::UInt(u) => {
                let _ = write!(out, "{u}");
            }
            Json::Float(f) => {
                let f = if f.is_finite() { *f } else { 0.0 };
                let _ = write!(out, "{f:.6}");
            }
            Json::Str(s) => write_str(out, s),
            Json::Arr(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    indent(out, level + 1);
                    v.write_fio(out, level + 1);
                }
                out.push('\n');
                indent(out, level);
                out.push(']');
            }
            Json::Obj(pairs) => {
                out.push_str("{\n");
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n");
                    }
                    indent(out, level + 1);
                    write_str(out, k);
                    out.push_str(" : ");
                    v.write_fio(out, level + 1);
                }
                out.push('\n');
                indent(out, level);
                out.push('}');
            }
        }
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl From<u64> for Json {
    fn from(v: u64) -> Json {
        Json::UInt(v)
    }
}
impl From<u32> for Json {
    fn from(v: u32) -> Json {
        Json::UInt(v as u64)
    }
}
impl From<i64> for Json {
    fn from(v: i64) -> Json {
        Json::Int(v)
    }
}
impl From<i32> for Json {
    fn from(v: i32) -> Json {
        Json::Int(v as i64)
    }
}
impl From<f64> for Json {
    fn from(v: f64) -> Json {
        Json::Float(v)
    }
}
impl From<bool> for Json {
    fn from(v: bool) -> Json {
        Json::Bool(v)
    }
}
impl From<&str> for Json {
    fn from(v: &str) -> Json {
        Json::Str(v.to_string())
    }
}
impl From<String> for Json {
    fn from(v: String) -> Json {
        Json::Str(v)
    }
}
impl From<Vec<Json>> for Json {
    fn from(v: Vec<Json>) -> Json {
        Json::Arr(v)
    }
}

/// serde_json values (ssdlab's own extras) keep serde_json's key order (sorted).
impl From<&serde_json::Value> for Json {
    fn from(v: &serde_json::Value) -> Json {
        match v {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(*b),
            serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => Json::UInt(u),
                (None, Some(i)) => Json::Int(i),
                _ => Json::Float(n.as_f64().unwrap_or(0.0)),
            },
            serde_json::Value::String(s) => Json::Str(s.clone()),
            serde_json::Value::Array(a) => Json::Arr(a.iter().map(Json::from).collect()),
            serde_json::Value::Object(o) => {
                Json::Obj(o.iter().map(|(k, v)| (k.clone(), Json::from(v))).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_layout() {
        let v = Json::obj()
            .with("fio version", "ssdlab")
            .with("n", 3u64)
            .with("f", 95.64433)
            .with(
                "jobs",
                vec![Json::obj().with("a", -1i64).with("e", Json::obj())],
            )
            .with("s", "q\"\\\n");
        let text = v.to_fio_string();
        assert_eq!(
            text,
            "{\n  \"fio version\" : \"ssdlab\",\n  \"n\" : 3,\n  \"f\" : 95.644330,\n  \"jobs\" : [\n    {\n      \"a\" : -1,\n      \"e\" : {\n\n      }\n    }\n  ],\n  \"s\" : \"q\\\"\\\\\\n\"\n}\n"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["f"], 95.64433);
        assert_eq!(back["s"], "q\"\\\n");
        assert_eq!(Json::Float(f64::NAN).to_fio_string(), "0.000000\n");
    }
}
