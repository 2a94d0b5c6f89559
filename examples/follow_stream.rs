//! A client that follows a streamed task: it prints each event as it arrives and stops
//! waiting after a deadline, leaving the task running (timing out is not canceling).
//! `cargo run -p a2a-examples --example follow_stream -- http://127.0.0.1:3000`.
use std::time::Duration;

use a2a_client::types::{Message, SendMessageRequest, StreamResponse, Task};
use a2a_client::{A2aClient, Decision, Outcome, StreamEvent};

/// Sends `text` to the agent at `url` and follows the task for at most `deadline`.
pub async fn follow(url: &str, text: &str, deadline: Duration) -> anyhow::Result<Outcome> {
    let client = A2aClient::connect(url).await?;
    let request = SendMessageRequest::new(Message::user_text(text));
    let print = |event: &StreamEvent, _so_far: Option<&Task>| {
        match &event.response {
            StreamResponse::Task(t) => println!("task {} is {}", t.id, t.status.state),
            StreamResponse::StatusUpdate(s) => println!("now {}", s.status.state),
            StreamResponse::ArtifactUpdate(a) => println!("{}", a.artifact.text_content()),
            StreamResponse::Message(m) => println!("message: {}", m.text_content()),
            _ => {}
        }
        Decision::Continue
    };
    Ok(client
        .run_with_listener_and_deadline(request, print, deadline)
        .await?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::args().nth(1);
    let url = url.as_deref().unwrap_or("http://127.0.0.1:3000");
    match follow(url, "go", Duration::from_secs(10)).await? {
        Outcome::Completed(task) => println!("completed:\n{}", task.artifacts_text()),
        Outcome::Stopped(stopped) => {
            let id = stopped.task_id().unwrap_or("?");
            println!("stopped waiting; task {id} keeps running (a2a cancel stops it)");
        }
        other => println!("ended: {other:?}"),
    }
    Ok(())
}
