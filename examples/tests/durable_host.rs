//! `examples/durable_host.rs` in a process of its own: a task it completed is still there
//! after the process is SIGKILLed and started again on the same SQLite file.

#![allow(unreachable_pub)] // the example's items are public for this test

#[path = "../durable_host.rs"]
mod durable_host;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use a2a_client::A2aClient;
use a2a_client::types::{Message, SendMessageRequest, SendMessageResponse, TaskState};

/// The example's `main`, when this test binary is started as the example (see `start`).
#[test]
#[ignore = "the example's process, started by durable_host_survives_a_kill"]
fn durable_host_process() {
    if std::env::var("A2A_DURABLE_HOST_EXAMPLE").is_ok() {
        durable_host::main().unwrap();
    }
}

/// Starts the example on `store` and a free port; the process and its base URL.
fn start(store: &str) -> (Child, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "durable_host_process",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("A2A_DURABLE_HOST_EXAMPLE", "1")
        .env("A2A_STORE", store)
        .env("A2A_ADDRESS", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("serving on ") {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the example did not start"
        );
    }
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    (child, line["serving on ".len()..].trim().to_owned())
}

#[test]
fn durable_host_survives_a_kill() {
    let path = std::env::temp_dir().join(format!("a2a-durable-{}.db", std::process::id()));
    let store = format!("sqlite:{}", path.display());
    let (mut first, base) = start(&store);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let greeter = format!("{base}/a2a/greeter");
    let id = rt.block_on(async {
        let c = A2aClient::connect(&greeter).await.unwrap();
        let answer = c
            .send(SendMessageRequest::new(Message::user_text("Ada")))
            .await
            .unwrap();
        let SendMessageResponse::Task(t) = answer else {
            panic!("{answer:?}")
        };
        assert_eq!(t.status.state, TaskState::Completed);
        t.id
    });
    first.kill().unwrap(); // SIGKILL: no shutdown of any kind
    first.wait().unwrap();

    let (mut second, base) = start(&store);
    let task = rt.block_on(async {
        let c = A2aClient::connect(&format!("{base}/a2a/greeter"))
            .await
            .unwrap();
        c.get_task(&id, None).await.unwrap()
    });
    assert_eq!(task.status.state, TaskState::Completed);
    let greeting = task.status.message.map(|m| m.text_content());
    assert_eq!(greeting.as_deref(), Some("Hello, Ada!"));
    second.kill().unwrap();
    second.wait().unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}
