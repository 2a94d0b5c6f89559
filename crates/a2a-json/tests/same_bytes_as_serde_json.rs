//! `a2a_json` writes exactly what `serde_json` writes: every kind of `serde` value, strings with
//! an escape at every position, random JSON trees, raw values, and the A2A types.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// Both writers give the same text for `value` (or both fail).
#[track_caller]
fn same<T: Serialize + ?Sized>(value: &T) {
    let ours = a2a_json::to_string(value);
    let theirs = serde_json::to_string(value);
    match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs),
        (Err(_), Err(_)) => {}
        (ours, theirs) => panic!("ours {ours:?}, serde_json's {theirs:?}"),
    }
}

#[derive(Serialize)]
struct Unit;

#[derive(Serialize)]
struct Newtype(u8);

#[derive(Serialize)]
struct Pair(i32, &'static str);

#[derive(Serialize)]
enum Variant {
    Unit,
    Newtype(String),
    Tuple(u8, bool),
    Struct { a: u8, b: Option<u8> },
    EmptyTuple(),
    EmptyStruct {},
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum Internal {
    First { x: u8 },
    Second(Inner),
}

#[derive(Serialize)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    A(u8),
    B { s: &'static str },
}

#[derive(Serialize)]
#[serde(untagged)]
enum Untagged {
    Number(f64),
    Text(&'static str),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Inner {
    long_name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    #[serde(flatten)]
    extra: BTreeMap<String, Value>,
}

#[derive(Serialize)]
struct Everything {
    b: bool,
    i8: i8,
    i16: i16,
    i32: i32,
    i64: i64,
    i128: i128,
    u8: u8,
    u16: u16,
    u32: u32,
    u64: u64,
    u128: u128,
    f32: f32,
    f64: f64,
    c: char,
    s: String,
    none: Option<u8>,
    some: Option<&'static str>,
    unit: (),
    unit_struct: Unit,
    newtype: Newtype,
    pair: Pair,
    tuple: (u8, (), &'static str),
    variants: Vec<Variant>,
    internal: Vec<Internal>,
    adjacent: Vec<Adjacent>,
    untagged: Vec<Untagged>,
    empty_vec: Vec<u8>,
    empty_map: BTreeMap<String, u8>,
    nested: Vec<Vec<BTreeMap<String, Vec<u8>>>>,
}

/// Calls `serialize_bytes`.
struct Bytes(&'static [u8]);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// Calls `collect_str` on a `Display` written in pieces.
struct Collected(&'static str, &'static str);

impl Serialize for Collected {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{}|{}", self.0, self.1))
    }
}

/// A map of unknown length (`serialize_map(None)`), as `flatten` and iterators write.
struct UnknownLength(Vec<(&'static str, u8)>);

impl Serialize for UnknownLength {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().copied().filter(|_| true))
    }
}

#[test]
fn every_kind_of_serde_value() {
    same(&Everything {
        b: true,
        i8: i8::MIN,
        i16: i16::MIN,
        i32: i32::MIN,
        i64: i64::MIN,
        i128: i128::MIN,
        u8: u8::MAX,
        u16: u16::MAX,
        u32: u32::MAX,
        u64: u64::MAX,
        u128: u128::MAX,
        f32: 0.1,
        f64: -1.5e300,
        c: '\u{1f600}',
        s: "a \"quoted\" \\ line\n".to_owned(),
        none: None,
        some: Some("x"),
        unit: (),
        unit_struct: Unit,
        newtype: Newtype(7),
        pair: Pair(-1, "p"),
        tuple: (0, (), ""),
        variants: vec![
            Variant::Unit,
            Variant::Newtype("n".to_owned()),
            Variant::Tuple(1, false),
            Variant::Struct { a: 1, b: None },
            Variant::EmptyTuple(),
            Variant::EmptyStruct {},
        ],
        internal: vec![
            Internal::First { x: 1 },
            Internal::Second(Inner {
                long_name: "l",
                skipped: None,
                extra: BTreeMap::from([("k".to_owned(), json!([1, "2", null]))]),
            }),
        ],
        adjacent: vec![Adjacent::A(3), Adjacent::B { s: "s" }],
        untagged: vec![Untagged::Number(2.5), Untagged::Text("t")],
        empty_vec: vec![],
        empty_map: BTreeMap::new(),
        nested: vec![vec![], vec![BTreeMap::from([("z".to_owned(), vec![])])]],
    });
    same(&Bytes(b""));
    same(&Bytes(b"\x00\x7f\xff"));
    same(&Collected("tab\there", "quote\" and \u{7}"));
    same(&UnknownLength(vec![]));
    same(&UnknownLength(vec![("a", 1), ("b", 2)]));
    same(&[(); 0]);
    same(&Some(Some(())));
}

#[test]
fn floats() {
    for f in [
        0.0,
        -0.0,
        1.0,
        0.1,
        0.1 + 0.2,
        1e-7,
        1e21,
        1e22,
        123_456_789.0,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        same(&f);
        same(&(f as f32));
        same(&BTreeMap::from([(format!("{f}"), f)]));
    }
}

#[test]
fn map_keys_of_every_kind() {
    same(&BTreeMap::from([(1u8, 'a'), (200, 'b')]));
    same(&BTreeMap::from([(i64::MIN, 0), (i64::MAX, 1)]));
    same(&BTreeMap::from([(i128::MIN, 0), (0, 1)]));
    same(&BTreeMap::from([(u128::MAX, 0)]));
    same(&BTreeMap::from([(true, 0), (false, 1)]));
    same(&BTreeMap::from([('"', 0), ('\n', 1), ('é', 2)]));
    same(&BTreeMap::from([("key \"quoted\"\u{1}", 0)]));
    same(&vec![(Variant::Unit, 1)].into_iter().collect::<Vec<_>>());
    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    enum Key {
        Left,
        Right,
    }
    same(&BTreeMap::from([(Key::Left, 0), (Key::Right, 1)]));
    #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
    struct Wrapped(u32);
    same(&BTreeMap::from([(Wrapped(9), 0)]));
    same(&BTreeMap::from([(Some(3u8), 0)]));
    // A key written by `collect_str`, escapes included.
    same(&CollectedKeys(vec![Collected("key\n", "\"quoted\"")]));
    // Float keys: quoted when finite, an error otherwise (on both sides).
    same(&FloatKeys(vec![1.5, -0.0, 1e300]));
    same(&FloatKeys(vec![f64::NAN]));
    same(&FloatKeys(vec![f64::INFINITY]));
    // Keys that are not strings are errors on both sides.
    same(&BTreeMap::from([((), 0)]));
    same(&BTreeMap::from([(None::<u8>, 0)]));
    same(&BTreeMap::from([(vec![1u8], 0)]));
    same(&BTreeMap::from([((1u8, 2u8), 0)]));
}

/// A map whose keys are written by `collect_str`.
struct CollectedKeys(Vec<Collected>);

impl Serialize for CollectedKeys {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|k| (k, 0u8)))
    }
}

/// A map with `f64` keys (no `Ord` for a `BTreeMap`).
struct FloatKeys(Vec<f64>);

impl Serialize for FloatKeys {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|k| (*k, 0u8)))
    }
}

#[test]
fn an_error_is_an_error_on_both_sides() {
    // The check above accepts two errors; make sure an error is seen as one.
    assert!(a2a_json::to_string(&BTreeMap::from([((), 0)])).is_err());
    assert!(a2a_json::to_string(&FloatKeys(vec![f64::NAN])).is_err());
}

/// Bytes that need an escape, and some that do not but sit near them.
const SPECIAL: [char; 14] = [
    '"', '\\', '\u{0}', '\u{8}', '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1f}', '\u{7f}', ' ', '/',
    'é',
];

#[test]
fn one_special_character_at_every_position() {
    for len in 0..40 {
        for pos in 0..len {
            for special in SPECIAL {
                let s: String = (0..len)
                    .map(|i| if i == pos { special } else { 'a' })
                    .collect();
                same(&s);
            }
        }
    }
}

#[test]
fn random_strings() {
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let alphabet: Vec<char> = SPECIAL
        .into_iter()
        .chain(['a', 'Z', '0', '€', '\u{1f600}', '\u{80}', '\u{ffff}'])
        .collect();
    for _ in 0..20_000 {
        let len = rng.usize(0..64);
        let s: String = (0..len)
            .map(|_| {
                if rng.u8(..) < 200 {
                    char::from(rng.u8(0x20..0x7f))
                } else {
                    alphabet[rng.usize(..alphabet.len())]
                }
            })
            .collect();
        same(&s);
        same(&BTreeMap::from([(s.clone(), s)]));
    }
    // Every character below 0x100 alone, in a key, and collected.
    for c in (0u32..0x100).filter_map(char::from_u32) {
        same(&c);
        same(&c.to_string());
        same(&BTreeMap::from([(c, c)]));
    }
}

fn random_value(rng: &mut fastrand::Rng, depth: u32) -> Value {
    let leaf = depth == 0 || rng.u8(..4) == 0;
    match rng.u8(..if leaf { 6 } else { 8 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.bool()),
        2 => json!(rng.i64(..)),
        3 => json!(rng.u64(..)),
        4 => json!(f64::from_bits(rng.u64(..)).clamp(-1e308, 1e308)),
        5 => {
            let s: String = (0..rng.usize(..12))
                .map(|_| char::from_u32(rng.u32(..0x300)).unwrap_or('?'))
                .collect();
            Value::String(s)
        }
        6 => Value::Array(
            (0..rng.usize(..5))
                .map(|_| random_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.usize(..5))
                .map(|i| (format!("k{i}\u{1}"), random_value(rng, depth - 1)))
                .collect(),
        ),
    }
}

#[test]
fn random_json_trees() {
    let mut rng = fastrand::Rng::with_seed(42);
    for _ in 0..5_000 {
        same(&random_value(&mut rng, 5));
    }
}

#[test]
fn raw_values_are_written_as_they_are() {
    let raw = RawValue::from_string(r#"{ "spaced" : [1, 2] }"#.to_owned()).unwrap();
    same(&raw);
    same(&json!(null));
    #[derive(Serialize)]
    struct WithRaw<'a> {
        id: Option<&'a RawValue>,
        boxed: Box<RawValue>,
        list: Vec<&'a RawValue>,
    }
    let id = RawValue::from_string("\"id-1\"".to_owned()).unwrap();
    same(&WithRaw {
        id: Some(&id),
        boxed: raw.clone(),
        list: vec![&id, &raw],
    });
    same(&WithRaw {
        id: None,
        boxed: raw,
        list: vec![],
    });
}

#[test]
fn a2a_types() {
    let task: a2a_types::Task = serde_json::from_value(json!({
        "id": "task-\"1\"",
        "contextId": "ctx\n1",
        "status": {
            "state": "TASK_STATE_INPUT_REQUIRED",
            "timestamp": "2026-12-06T15:00:00.123Z",
            "message": {"messageId": "m2", "role": "ROLE_AGENT", "parts": [{"text": "which?"}]}
        },
        "history": [{
            "messageId": "m1",
            "role": "ROLE_USER",
            "contextId": "ctx\n1",
            "parts": [
                {"text": "hello \u{1} \"world\"", "metadata": {"k": [1, 2.5, null]}},
                {"raw": "AAEC/w==", "filename": "a.bin", "mediaType": "application/octet-stream"},
                {"url": "https://example.com/a?b=c", "mediaType": "text/html"},
                {"data": {"nested": {"deep": true}}}
            ],
            "metadata": {"trace": "x"},
            "extensions": ["https://ext/1"],
            "referenceTaskIds": ["t0"]
        }],
        "artifacts": [{
            "artifactId": "a1",
            "name": "report",
            "description": "tab\there",
            "parts": [{"text": "°F"}],
            "metadata": {}
        }],
        "metadata": {"n": 1}
    }))
    .unwrap();
    same(&task);
    let message = task.history[0].clone();
    same(&message);
    same(&a2a_types::SendMessageResponse::Task(task.clone()));
    same(&a2a_types::SendMessageResponse::Message(message));
    same(&a2a_types::StreamResponse::Task(task));
    same(&a2a_types::A2aError::internal("could not \"serialize\"").to_jsonrpc());
    same(&a2a_types::A2aError::internal("x").to_rest_body());
}

/// A value whose serialization writes JSON itself, with `to_string`, while the outer call
/// is under way (each thread's buffer is taken, not shared).
struct Nested(u8);

impl Serialize for Nested {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let inner = a2a_json::to_string(&json!({"depth": self.0, "text": "a\"b"})).unwrap();
        if self.0 == 0 {
            s.serialize_str(&inner)
        } else {
            (inner, Nested(self.0 - 1)).serialize(s)
        }
    }
}

#[test]
fn a_value_that_writes_json_while_written() {
    same(&Nested(3));
    // Then a short value: nothing of the longer one before is left in the buffer.
    same(&Nested(0));
    same(&"x");
    // A value past the size of the buffer kept, then a small one again.
    same(&"y".repeat(100_000));
    same(&[1, 2]);
}

/// Names a type gives (fields, variants of every kind) that need escapes, beside a clean name
/// that is the prefix of one, each written several times and from several threads: escaped
/// every time, however the writer speeds up the names it has seen before (a `&'static str`
/// may share its address with a longer one).
#[derive(Serialize)]
struct EscapedNames {
    #[serde(rename = "quote\"d")]
    quoted: u8,
    #[serde(rename = "quote")]
    quote: u8,
    #[serde(rename = "line\nbreak")]
    line: Variants,
    #[serde(rename = "tab\t")]
    tab: Variants,
    #[serde(rename = "back\\slash")]
    backslash: Vec<Variants>,
}

#[derive(Serialize)]
enum Variants {
    #[serde(rename = "plain")]
    Plain,
    #[serde(rename = "plain\u{1}")]
    Control,
    #[serde(rename = "new\"type")]
    Newtype(u8),
    #[serde(rename = "struct\\")]
    Struct { x: u8 },
    #[serde(rename = "tuple\r")]
    Tuple(u8, u8),
}

#[test]
fn names_that_need_escapes_are_escaped_every_time() {
    let value = EscapedNames {
        quoted: 1,
        quote: 2,
        line: Variants::Control,
        tab: Variants::Newtype(3),
        backslash: vec![
            Variants::Plain,
            Variants::Control,
            Variants::Struct { x: 4 },
            Variants::Tuple(5, 6),
            Variants::Plain,
        ],
    };
    for _ in 0..3 {
        same(&value);
    }
    // From other threads too, each with its own memory of the names.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..3 {
                    same(&value);
                }
            });
        }
    });
}
