//! `encode` writes, from references, exactly the bytes prost writes for the message that
//! `convert` builds from the owned values: the reference is prost, through the conversions
//! the bindings used before.

use a2a_grpc::encode::{SendMessageResponseRef, grpc_message};
use a2a_grpc::pb;
use a2a_grpc::replay::encode_message;
use a2a_types::projection::TaskRef;
use a2a_types::{Artifact, Message, Part, Role, SendMessageResponse, Task, TaskState, TaskStatus};
use chrono::{DateTime, TimeZone, Utc};
use prost::Message as _;
use serde_json::{Map, Value, json};

fn meta(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

/// Every field of every message set, with the values protobuf treats specially: empty
/// strings, an empty map key, zero, negative and fractional numbers, nested lists and
/// objects, empty bytes, a time before 1970 with nanoseconds.
fn every_field_task() -> Task {
    let data = json!({
        "": "empty key",
        "n": 3, "neg": -7, "x": 1.5, "big": 4_294_967_296u64, "zero": 0,
        "list": [true, false, null, "s", [], {}, [1, [2]]],
        "o": {"k": "v", "nested": {"deep": [null]}},
        "unicode": "é ✓ 𝄞",
    });
    let mut msg = Message::new(
        Role::User,
        vec![
            Part::text("hello"),
            Part::text(""),
            Part::raw(vec![0u8, 1, 2, 255])
                .with_filename("b.bin")
                .with_media_type("application/octet-stream"),
            Part::raw(Vec::new()),
            Part::url("https://example.com/f.pdf").with_media_type("application/pdf"),
            Part::data(data.clone()).with_metadata(meta(json!({"part": true}))),
            Part::data(Value::Null),
            Part::data(json!("a string")),
            Part::data(json!([1, 2])),
        ],
    )
    .with_context_id("ctx")
    .with_task_id("t1")
    .with_metadata(meta(data));
    msg.extensions = vec!["https://ext.example/a".into(), String::new()];
    msg.reference_task_ids = vec!["t0".into(), "t-1".into()];
    let mut agent = Message::agent_text("more?");
    agent.metadata = Some(Map::new());
    let mut artifact = Artifact::new("a1", vec![Part::text("out")]).with_name("result");
    artifact.description = Some("the result".into());
    artifact.metadata = Some(meta(json!({"score": 0.25})));
    artifact.extensions = vec!["https://ext.example/b".into()];
    let bare = Artifact::new("a2", Vec::new());
    let mut task = Task::new("t1", "ctx", TaskState::InputRequired);
    let mut status = TaskStatus::with_message(TaskState::InputRequired, Some(agent));
    status.timestamp = Some(DateTime::from_timestamp(-86_401, 123_456_789).unwrap());
    task.status = status;
    task.history = vec![msg, Message::user_text("second"), Message::default()];
    task.artifacts = vec![artifact, bare];
    task.metadata = Some(meta(json!({"owner": "me", "n": 1e300})));
    task
}

/// Minimal tasks: protobuf's defaults everywhere they can be.
fn sparse_tasks() -> Vec<Task> {
    let mut unknown_state = Task::new("", "", TaskState::default());
    unknown_state.status.timestamp = Some(Utc.timestamp_opt(0, 0).unwrap());
    let mut later = Task::new("t", "", TaskState::Completed);
    later.status.timestamp = Some(Utc.timestamp_opt(1_700_000_000, 0).unwrap());
    vec![Task::default(), unknown_state, later]
}

/// Messages whose lengths take one, two and three bytes, at every level: parts of 115 to
/// 135 bytes around the one-byte bound, a part of 70 000 bytes, an artifact of 300 parts,
/// metadata of 20 000 bytes.
fn long_tasks() -> Vec<Task> {
    let mut tasks = Vec::new();
    for n in 115..=135 {
        let mut task = Task::new("t", "c", TaskState::Working);
        task.history = vec![Message::user_text("x".repeat(n))];
        task.artifacts = vec![Artifact::new("a", vec![Part::text("y".repeat(n))])];
        tasks.push(task);
    }
    let mut task = Task::new("t", "c", TaskState::Completed);
    task.history = vec![Message::user_text("z".repeat(70_000))];
    let parts = (0..300).map(|i| Part::text(format!("part {i}"))).collect();
    task.artifacts = vec![Artifact::new("many", parts)];
    task.metadata = Some(meta(json!({"long": "m".repeat(20_000)})));
    tasks.push(task);
    tasks
}

/// The bytes the bindings wrote before: the owned answer converted, then prost.
fn by_prost(answer: SendMessageResponse) -> bytes::Bytes {
    encode_message(&pb::SendMessageResponse::from(answer)).unwrap()
}

#[test]
fn a_task_is_written_as_prost_writes_its_conversion() {
    let mut tasks = sparse_tasks();
    tasks.push(every_field_task());
    tasks.extend(long_tasks());
    for task in tasks {
        let ours = grpc_message(&SendMessageResponseRef::<Artifact, Message>::Task(
            TaskRef::from(&task),
        ))
        .unwrap();
        let reference = by_prost(SendMessageResponse::Task(task.clone()));
        // Not `assert_eq!`: the long tasks would print 100 000 bytes.
        let first_difference = ours.iter().zip(&reference[..]).position(|(a, b)| a != b);
        assert!(
            ours == reference,
            "{} bytes against prost's {}, first different at {first_difference:?}",
            ours.len(),
            reference.len()
        );
        // And it reads back as the task.
        let back = pb::SendMessageResponse::decode(&ours[5..]).unwrap();
        let back = SendMessageResponse::try_from(back).unwrap();
        assert_eq!(back, SendMessageResponse::Task(task));
    }
}

#[test]
fn a_message_is_written_as_prost_writes_its_conversion() {
    let task = every_field_task();
    for message in task.history.iter().chain(task.status.message.as_ref()) {
        let ours = grpc_message(&SendMessageResponseRef::<Artifact, Message>::Message(
            message,
        ))
        .unwrap();
        assert_eq!(
            ours,
            by_prost(SendMessageResponse::Message(message.clone()))
        );
    }
}

#[test]
fn the_prefix_gives_the_length_of_the_message() {
    let task = every_field_task();
    let ours = grpc_message(&SendMessageResponseRef::<Artifact, Message>::Task(
        TaskRef::from(&task),
    ))
    .unwrap();
    assert_eq!(ours[0], 0, "not compressed");
    let len = u32::from_be_bytes(ours[1..5].try_into().unwrap()) as usize;
    assert_eq!(len, ours.len() - 5);
}
