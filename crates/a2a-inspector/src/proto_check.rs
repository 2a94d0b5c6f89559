//! Checks a JSON document against a message of the normative `a2a.proto`, as ProtoJSON
//! reads it, and lists every problem with its JSON path — rather than stopping at the first,
//! as a parser does, or judging by one SDK's parser.
//!
//! What is checked: each field's JSON type (strings, booleans, numbers or numeric strings for
//! integers, base64 for bytes, RFC 3339 for timestamps, enum names), unknown fields, at most
//! one member of each `oneof`, and fields marked `(google.api.field_behavior) = REQUIRED`
//! present and not empty. Unknown fields are warnings: ProtoJSON parsers refuse them, while
//! A2A asks clients to ignore what they do not know.

use std::sync::OnceLock;

use prost_reflect::{
    DescriptorPool, ExtensionDescriptor, FieldDescriptor, Kind, MessageDescriptor,
};
use serde::Serialize;
use serde_json::Value;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The document does not follow the proto.
    Error,
    /// Allowed, but likely a mistake (an unknown field, a non-standard binding).
    Warning,
}

/// One problem, where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// A JSON path: `$.supportedInterfaces[0].url`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How bad.
    pub severity: Severity,
}

/// The proto's descriptors, read once.
fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(a2a_grpc::FILE_DESCRIPTOR_SET)
            .expect("the descriptor set built from a2a.proto decodes")
    })
}

fn field_behavior() -> Option<ExtensionDescriptor> {
    pool().get_extension_by_name("google.api.field_behavior")
}

/// `google.api.FieldBehavior.REQUIRED`.
const REQUIRED: i32 = 2;

/// Checks `doc` against the message `message` of package `lf.a2a.v1` (`AgentCard`, `Task`,
/// `StreamResponse`, …). `None` when there is no such message.
pub fn check(message: &str, doc: &Value) -> Option<Vec<Problem>> {
    let desc = pool().get_message_by_name(&format!("lf.a2a.v1.{message}"))?;
    let mut problems = Vec::new();
    Checker {
        problems: &mut problems,
        behavior: field_behavior(),
    }
    .message(&desc, doc, "$");
    Some(problems)
}

/// Checks an agent card: the proto's rules, then what the specification adds (interfaces
/// with absolute URLs and a known binding, a version, unique skill ids).
pub fn check_card(doc: &Value) -> Vec<Problem> {
    let mut problems = check("AgentCard", doc).unwrap_or_default();
    let mut add = |path: String, message: String, severity| {
        problems.push(Problem {
            path,
            message,
            severity,
        });
    };
    if let Some(interfaces) = doc.get("supportedInterfaces").and_then(Value::as_array) {
        if interfaces.is_empty() {
            add(
                "$.supportedInterfaces".into(),
                "lists no interface: a client has nowhere to send requests".into(),
                Severity::Error,
            );
        }
        for (i, iface) in interfaces.iter().enumerate() {
            let at = |f: &str| format!("$.supportedInterfaces[{i}].{f}");
            let binding = iface
                .get("protocolBinding")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !binding.is_empty() && !["JSONRPC", "GRPC", "HTTP+JSON"].contains(&binding) {
                add(
                    at("protocolBinding"),
                    format!("{binding:?} is none of the core bindings (JSONRPC, GRPC, HTTP+JSON)"),
                    Severity::Warning,
                );
            }
            if let Some(url) = iface.get("url").and_then(Value::as_str) {
                let absolute = url.starts_with("http://") || url.starts_with("https://");
                if binding != "GRPC" && !url.is_empty() && !absolute {
                    add(
                        at("url"),
                        format!("{url:?} is not an absolute http(s) URL"),
                        Severity::Error,
                    );
                }
            }
            if let Some(v) = iface.get("protocolVersion").and_then(Value::as_str)
                && !v.is_empty()
                && !["1.0", "0.3"].iter().any(|known| v.starts_with(known))
            {
                add(
                    at("protocolVersion"),
                    format!("{v:?}: this console knows versions 1.0 and 0.3"),
                    Severity::Warning,
                );
            }
        }
    }
    if let Some(skills) = doc.get("skills").and_then(Value::as_array) {
        let mut seen = std::collections::HashSet::new();
        for (i, skill) in skills.iter().enumerate() {
            if let Some(id) = skill.get("id").and_then(Value::as_str)
                && !seen.insert(id)
            {
                add(
                    format!("$.skills[{i}].id"),
                    format!("{id:?} is the id of an earlier skill too"),
                    Severity::Error,
                );
            }
        }
    }
    problems
}

struct Checker<'a> {
    problems: &'a mut Vec<Problem>,
    behavior: Option<ExtensionDescriptor>,
}

impl Checker<'_> {
    fn error(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.to_owned(),
            message: message.into(),
            severity: Severity::Error,
        });
    }

    fn warning(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.to_owned(),
            message: message.into(),
            severity: Severity::Warning,
        });
    }

    fn required(&self, field: &FieldDescriptor) -> bool {
        let Some(ext) = &self.behavior else {
            return false;
        };
        let options = field.options();
        if !options.has_extension(ext) {
            return false;
        }
        match &*options.get_extension(ext) {
            prost_reflect::Value::List(values) => values
                .iter()
                .any(|v| matches!(v, prost_reflect::Value::EnumNumber(REQUIRED))),
            prost_reflect::Value::EnumNumber(n) => *n == REQUIRED,
            _ => false,
        }
    }

    fn message(&mut self, desc: &MessageDescriptor, value: &Value, path: &str) {
        match desc.full_name() {
            "google.protobuf.Struct" => {
                if !value.is_object() {
                    self.error(path, format!("must be an object, not {}", kind_of(value)));
                }
                return;
            }
            "google.protobuf.Value" => return,
            "google.protobuf.ListValue" => {
                if !value.is_array() {
                    self.error(path, format!("must be an array, not {}", kind_of(value)));
                }
                return;
            }
            "google.protobuf.Timestamp" => {
                match value.as_str() {
                    Some(s) if chrono_like_rfc3339(s) => {}
                    Some(s) => self.error(path, format!("{s:?} is not an RFC 3339 timestamp")),
                    None => self.error(
                        path,
                        format!("must be an RFC 3339 string, not {}", kind_of(value)),
                    ),
                }
                return;
            }
            "google.protobuf.Empty" => {
                if value.as_object().is_none_or(|o| !o.is_empty()) {
                    self.error(path, "must be an empty object");
                }
                return;
            }
            _ => {}
        }
        let Some(object) = value.as_object() else {
            self.error(
                path,
                format!(
                    "must be an object ({}), not {}",
                    desc.name(),
                    kind_of(value)
                ),
            );
            return;
        };
        let mut oneof_seen: std::collections::HashMap<String, String> = Default::default();
        for (key, v) in object {
            let at = format!("{path}.{key}");
            let field = desc
                .get_field_by_json_name(key)
                .or_else(|| desc.get_field_by_name(key));
            let Some(field) = field else {
                self.warning(&at, format!("unknown field of {}", desc.name()));
                continue;
            };
            if v.is_null() {
                continue;
            }
            if let Some(oneof) = field.containing_oneof()
                && !oneof.is_synthetic()
                && let Some(other) = oneof_seen.insert(oneof.name().to_owned(), key.clone())
            {
                self.error(
                    &at,
                    format!(
                        "{key} and {other} are both members of the oneof {}: set at most one",
                        oneof.name()
                    ),
                );
            }
            self.field(&field, v, &at);
        }
        for field in desc.fields() {
            if !self.required(&field) {
                continue;
            }
            // A message is present when given, even empty; a string or a list when not empty
            // (proto3 cannot tell an empty one from an absent one).
            let is_message = matches!(field.kind(), Kind::Message(_)) && !field.is_list();
            let present = object
                .get(field.json_name())
                .or_else(|| object.get(field.name()))
                .filter(|v| !v.is_null() && (is_message || !is_empty(v)));
            if present.is_none() {
                self.error(
                    &format!("{path}.{}", field.json_name()),
                    format!("is required ({}.{} is REQUIRED)", desc.name(), field.name()),
                );
            }
        }
    }

    fn field(&mut self, field: &FieldDescriptor, value: &Value, path: &str) {
        if field.is_map() {
            let Some(object) = value.as_object() else {
                self.error(
                    path,
                    format!("must be an object (a map), not {}", kind_of(value)),
                );
                return;
            };
            let Kind::Message(entry) = field.kind() else {
                return;
            };
            let value_field = entry.map_entry_value_field();
            for (k, v) in object {
                self.single(&value_field, v, &format!("{path}[{k:?}]"));
            }
        } else if field.is_list() {
            let Some(items) = value.as_array() else {
                self.error(path, format!("must be an array, not {}", kind_of(value)));
                return;
            };
            for (i, v) in items.iter().enumerate() {
                self.single(field, v, &format!("{path}[{i}]"));
            }
        } else {
            self.single(field, value, path);
        }
    }

    fn single(&mut self, field: &FieldDescriptor, value: &Value, path: &str) {
        match field.kind() {
            Kind::Message(m) => self.message(&m, value, path),
            Kind::Enum(e) => match value {
                Value::String(s) => {
                    if e.get_value_by_name(s).is_none() {
                        let names: Vec<String> = e.values().map(|v| v.name().to_owned()).collect();
                        self.error(
                            path,
                            format!(
                                "{s:?} is not a value of {} ({})",
                                e.name(),
                                names.join(", ")
                            ),
                        );
                    }
                }
                Value::Number(n) if n.as_i64().is_some() => {}
                other => self.error(
                    path,
                    format!("must be a name of {}, not {}", e.name(), kind_of(other)),
                ),
            },
            Kind::String => {
                if !value.is_string() {
                    self.error(path, format!("must be a string, not {}", kind_of(value)));
                }
            }
            Kind::Bool => {
                if !value.is_boolean() {
                    self.error(
                        path,
                        format!("must be true or false, not {}", kind_of(value)),
                    );
                }
            }
            Kind::Bytes => match value.as_str() {
                Some(s) if is_base64(s) => {}
                Some(_) => self.error(path, "must be base64 (standard or URL-safe)"),
                None => self.error(
                    path,
                    format!("must be a base64 string, not {}", kind_of(value)),
                ),
            },
            Kind::Double | Kind::Float => {
                let ok = value.is_number()
                    || value.as_str().is_some_and(|s| {
                        s.parse::<f64>().is_ok() || ["NaN", "Infinity", "-Infinity"].contains(&s)
                    });
                if !ok {
                    self.error(path, format!("must be a number, not {}", kind_of(value)));
                }
            }
            Kind::Int32
            | Kind::Sint32
            | Kind::Sfixed32
            | Kind::Int64
            | Kind::Sint64
            | Kind::Sfixed64
            | Kind::Uint32
            | Kind::Fixed32
            | Kind::Uint64
            | Kind::Fixed64 => {
                let ok = match value {
                    Value::Number(n) => {
                        n.as_i64().is_some()
                            || n.as_u64().is_some()
                            || n.as_f64().is_some_and(|f| f.fract() == 0.0)
                    }
                    Value::String(s) => s.parse::<i128>().is_ok(),
                    _ => false,
                };
                if !ok {
                    self.error(path, format!("must be an integer, not {}", kind_of(value)));
                }
            }
        }
    }
}

/// Absent for a required field: null, `""`, `[]`, `{}`.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn is_base64(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'='))
}

/// `2026-12-03T07:40:04.360Z` and offsets: the shape RFC 3339 gives, with sane fields.
fn chrono_like_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || !matches!(b[10], b'T' | b't')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    matches!(rest, "Z" | "z")
        || (rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card() -> Value {
        json!({
            "name": "Echo",
            "description": "echoes",
            "version": "1.0.0",
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:41241/a2a/echo", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": true},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}]
        })
    }

    #[test]
    fn a_good_card_has_no_problem() {
        assert_eq!(check_card(&card()), Vec::new());
    }

    #[test]
    fn every_problem_is_listed_with_its_path() {
        let mut c = card();
        c["name"] = json!("");
        c["capabilities"]["streaming"] = json!("yes");
        c["supportedInterfaces"][0]["url"] = json!("/a2a/echo");
        c["skills"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "echo", "name": "Again", "description": "d", "tags": []}));
        c["colour"] = json!("blue");
        c["securitySchemes"] = json!({"k": {"apiKeySecurityScheme": {"name": "x"}, "httpAuthSecurityScheme": {"scheme": "Bearer"}}});
        let problems = check_card(&c);
        let paths: Vec<(&str, Severity)> = problems
            .iter()
            .map(|p| (p.path.as_str(), p.severity))
            .collect();
        for expected in [
            ("$.name", Severity::Error),
            ("$.capabilities.streaming", Severity::Error),
            ("$.supportedInterfaces[0].url", Severity::Error),
            ("$.skills[1].id", Severity::Error),
            ("$.colour", Severity::Warning),
        ] {
            assert!(
                paths.contains(&expected),
                "{expected:?} missing from {problems:#?}"
            );
        }
        assert!(
            problems
                .iter()
                .any(|p| p.path.starts_with("$.securitySchemes[\"k\"]")
                    && p.message.contains("oneof")),
            "{problems:#?}"
        );
    }

    #[test]
    fn enums_timestamps_and_required_fields_of_a_task() {
        let problems = check(
            "Task",
            &json!({"id": "t1", "contextId": "c", "status": {"state": "DONE", "timestamp": "yesterday"}}),
        )
        .unwrap();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert!(paths.contains(&"$.status.state"), "{problems:#?}");
        assert!(paths.contains(&"$.status.timestamp"), "{problems:#?}");
        let problems = check("Task", &json!({"contextId": "c"})).unwrap();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert!(
            paths.contains(&"$.id") && paths.contains(&"$.status"),
            "{problems:#?}"
        );
    }
}
