//! `llm` agents against an OpenAI-compatible server started by the test: tokens streamed as
//! chunks, the conversation sent with each turn, the non-streaming form, an upstream error,
//! a model server that is down, and a slow upstream cancelled mid-stream (the upstream request is dropped).

mod common;

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_client::Outcome;
use a2a_host::llm::LlmAgent;
use a2a_types::{StreamResponse, TaskState};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use common::{req, serve};
use serde_json::{Value, json};

#[derive(Default)]
struct Upstream {
    requests: Mutex<Vec<(Option<String>, Value)>>,
    dropped: AtomicBool,
    /// Woken when `dropped` is set.
    dropped_now: tokio::sync::Notify,
}

/// Sets `dropped` when the response stream is dropped (the client went away).
struct DropFlag(Arc<Upstream>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
        self.0.dropped_now.notify_one();
    }
}

async fn completions(
    State(up): State<Arc<Upstream>>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    up.requests.lock().unwrap().push((auth, body.clone()));
    match body["model"].as_str().unwrap_or_default() {
        "bad" => (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": {"message": "invalid api key"}})),
        )
            .into_response(),
        // Every byte in a chunk of its own: multi-byte characters arrive split.
        "bytewise" => {
            let mut text = String::new();
            for token in ["Grüße, ", "你好 ", "🙂"] {
                let chunk = json!({"choices": [{"delta": {"content": token}}]});
                text.push_str(&format!("data: {chunk}\n\n"));
            }
            text.push_str("data: [DONE]\n\n");
            let bytes: Vec<Result<Vec<u8>, Infallible>> =
                text.into_bytes().into_iter().map(|b| Ok(vec![b])).collect();
            sse(axum::body::Body::from_stream(futures::stream::iter(bytes)))
        }
        "slow" => {
            let flag = DropFlag(up.clone());
            let stream = futures::stream::unfold((0u32, flag), |(n, flag)| async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let line = format!(
                    "data: {}\n\n",
                    json!({"choices": [{"delta": {"content": format!("t{n} ")}}]})
                );
                Some((Ok::<_, Infallible>(line), (n + 1, flag)))
            });
            sse(axum::body::Body::from_stream(stream))
        }
        _ if body["stream"] == json!(false) => axum::Json(json!({
            "choices": [{"message": {"role": "assistant", "content": "whole answer"}}]
        }))
        .into_response(),
        _ => {
            let turns = body["messages"].as_array().map_or(0, Vec::len);
            let mut text = String::new();
            for token in ["Hel", "lo", &format!(" ({turns} messages)")] {
                let chunk = json!({"choices": [{"delta": {"content": token}}]});
                text.push_str(&format!("data: {chunk}\n\n"));
            }
            text.push_str("data: [DONE]\n\n");
            sse(axum::body::Body::from(text))
        }
    }
}

fn sse(body: axum::body::Body) -> Response {
    let mut resp = body.into_response();
    resp.headers_mut()
        .insert("content-type", "text/event-stream".parse().unwrap());
    resp
}

async fn upstream() -> (String, Arc<Upstream>) {
    let up = Arc::new(Upstream::default());
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .with_state(up.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), up)
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_stream_and_the_conversation_goes_with_each_turn() {
    let (url, up) = upstream().await;
    let mut agent = LlmAgent::new(&url, "m");
    agent.api_key = Some("k".into());
    agent.system_prompt = Some("be brief".into());
    agent.parameters.insert("temperature".into(), json!(0.2));
    let c = serve(agent).await;

    let mut stream = c.stream(req("hi")).await.unwrap();
    let mut chunks = Vec::new();
    let mut context = None;
    while let Some(ev) = stream.next().await {
        match ev.unwrap().response {
            StreamResponse::Task(t) => context = Some(t.context_id),
            StreamResponse::ArtifactUpdate(a) => chunks.push(a.artifact.text_content()),
            _ => {}
        }
    }
    assert_eq!(chunks[..3], ["Hel", "lo", " (2 messages)"], "{chunks:?}");

    // A second task in the same context: the model sees the first turn too.
    let mut next = req("and again");
    next.message.context_id = context;
    let Outcome::Completed(task) = c.run(next).await.unwrap() else {
        panic!()
    };
    assert_eq!(task.artifacts_text(), "Hello (4 messages)");
    let requests = up.requests.lock().unwrap().clone();
    let (auth, body) = &requests[1];
    assert_eq!(auth.as_deref(), Some("Bearer k"));
    assert_eq!(body["temperature"], json!(0.2));
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(body["messages"][2]["content"], "Hello (2 messages)");
    assert_eq!(body["messages"][3]["content"], "and again");
}

/// A model answer in Chinese, German and emoji, its characters split across network chunks
/// at every byte: it arrives whole.
#[tokio::test(flavor = "multi_thread")]
async fn characters_split_across_chunks_arrive_whole() {
    let (url, _) = upstream().await;
    let c = serve(LlmAgent::new(&url, "bytewise")).await;
    let Outcome::Completed(task) = c.run(req("hi")).await.unwrap() else {
        panic!()
    };
    assert_eq!(task.artifacts_text(), "Grüße, 你好 🙂");
}

#[tokio::test(flavor = "multi_thread")]
async fn whole_answers_and_upstream_errors() {
    let (url, _) = upstream().await;
    let mut agent = LlmAgent::new(&url, "m");
    agent.stream = false;
    let c = serve(agent).await;
    let Outcome::Completed(task) = c.run(req("hi")).await.unwrap() else {
        panic!()
    };
    assert_eq!(task.artifacts_text(), "whole answer");

    let c = serve(LlmAgent::new(&url, "bad")).await;
    let Outcome::Failed(task) = c.run(req("hi")).await.unwrap() else {
        panic!()
    };
    let why = task.status.message.unwrap().text_content();
    assert!(
        why.contains("401") && why.contains("invalid api key"),
        "{why}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_server_that_is_down_fails_the_task_with_the_cause() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let c = serve(LlmAgent::new(&url, "m")).await;
    let Outcome::Failed(task) = c.run(req("hi")).await.unwrap() else {
        panic!()
    };
    let why = task.status.message.unwrap().text_content();
    assert!(why.contains("the model server at"), "{why}");
    assert!(why.contains("connection refused"), "{why}");
    assert!(why.contains("is the server running?"), "{why}");
    assert_eq!(
        why.matches(&port.to_string()).count(),
        1,
        "the URL once: {why}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_drops_the_upstream_request() {
    let (url, up) = upstream().await;
    let c = serve(LlmAgent::new(&url, "slow")).await;
    let mut stream = c.stream(req("go")).await.unwrap();
    let mut task_id = None;
    while let Some(ev) = stream.next().await {
        let ev = ev.unwrap();
        if let StreamResponse::Task(t) = &ev.response {
            task_id = Some(t.id.clone());
        }
        if matches!(ev.response, StreamResponse::ArtifactUpdate(_)) {
            break;
        }
    }
    assert!(!up.dropped.load(Ordering::SeqCst));
    let task = c.cancel_task(task_id.as_deref().unwrap()).await.unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);
    // The upstream sees its response dropped (a stored permit covers a drop that came first).
    tokio::time::timeout(Duration::from_secs(10), up.dropped_now.notified())
        .await
        .expect("upstream still streaming");
    assert!(up.dropped.load(Ordering::SeqCst));
}
