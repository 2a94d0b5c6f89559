//! Hostile connections cannot take the server down. The server runs with its open-file limit
//! at 256 (soft and hard); 300 connections that send nothing, half a request head or part of
//! the HTTP/2 connection preface do not keep a legitimate request from being answered, and
//! the server closes them within its head timeout. A body trickled in is cut. Running out of descriptors slows accepting down
//! and the server recovers once they are freed.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;

/// `a2a serve` limited to 256 open files, with `args`; its child, base URL and log lines.
fn serve_limited(args: &[&str]) -> (Child, String, std::sync::mpsc::Receiver<String>) {
    let script = format!("ulimit -n 256 && exec \"{BIN}\" \"$@\"");
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c", &script, "sh", "serve", "--port", "0", "--store", "memory",
    ])
    .args(args)
    .env("A2A_LOG", "a2a_server=warn");
    let (child, base, log) = start_server(cmd, true);
    (child, base, log.expect("a log"))
}

fn addr(base: &str) -> String {
    base.trim_start_matches("http://").to_owned()
}

/// One legitimate request: the agent card, with a short timeout.
fn card_ok(base: &str) -> bool {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap()
        .get(format!("{base}/.well-known/agent-card.json"))
        .send()
        .is_ok_and(|r| r.status().is_success())
}

/// Whether a legitimate request gets an answer before `deadline`, asking again each 100 ms
/// (a caller told 503 with Retry-After retries).
fn answered_before(base: &str, deadline: Instant) -> bool {
    while Instant::now() < deadline {
        if card_ok(base) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Whether the server closed `conn` (EOF or reset) within `within`, reading whatever it sent.
fn closed_within(conn: &mut TcpStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        conn.set_read_timeout(Some(left)).unwrap();
        match conn.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn idle_and_half_sent_connections_are_closed_and_do_not_block_others() {
    let head_timeout = 2.0;
    let (mut server, base, _log) = serve_limited(&[
        "--agent",
        "echo",
        "--header-read-timeout",
        &head_timeout.to_string(),
    ]);
    let started = Instant::now();
    let mut hostile = Vec::new();
    for i in 0..300 {
        let mut c = TcpStream::connect(addr(&base)).unwrap();
        match i % 3 {
            1 => c
                .write_all(b"POST / HTTP/1.1\r\nHost: victim\r\nContent-Ty")
                .unwrap(),
            // Part of the HTTP/2 connection preface: version detection waits for the rest.
            2 => c.write_all(b"PRI * HTTP/2.0\r\n").unwrap(),
            _ => {}
        }
        hostile.push(c);
    }
    // A legitimate caller is answered within the head timeout and a few seconds (at first
    // it may be told 503 with Retry-After, never left hanging).
    let deadline = started + Duration::from_secs_f64(head_timeout + 5.0);
    assert!(
        answered_before(&base, deadline),
        "no answer within {:?}",
        started.elapsed()
    );
    // Every hostile connection is closed by the server.
    let mut open = 0;
    for c in &mut hostile {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(200));
        if !closed_within(c, left) {
            open += 1;
        }
    }
    assert_eq!(open, 0, "{open} hostile connections still open");
    // And the server still answers.
    assert!(card_ok(&base));
    let o = a2a(&["send", &base, "still here"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn a_trickled_body_is_cut() {
    let (mut server, base, _log) = serve_limited(&["--agent", "echo", "--body-read-timeout", "2"]);
    let mut c = TcpStream::connect(addr(&base)).unwrap();
    c.write_all(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{",
    )
    .unwrap();
    let started = Instant::now();
    // One byte a second, for longer than the timeout; the server answers and closes.
    let mut writer = c.try_clone().unwrap();
    std::thread::spawn(move || {
        for _ in 0..20 {
            std::thread::sleep(Duration::from_secs(1));
            if writer.write_all(b" ").is_err() {
                return;
            }
        }
    });
    c.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let mut head = [0u8; 64];
    let n = c
        .read(&mut head)
        .expect("an answer before the client gave up");
    let answer = String::from_utf8_lossy(&head[..n]).into_owned();
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "cut after {:?}",
        started.elapsed()
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn accepting_recovers_after_descriptors_run_out() {
    // More connections allowed than descriptors exist: accept itself fails (EMFILE).
    let (mut server, base, log) = serve_limited(&[
        "--agent",
        "echo",
        "--max-connections",
        "100000",
        "--header-read-timeout",
        "30",
    ]);
    let mut hostile: Vec<TcpStream> = (0..300)
        .filter_map(|_| TcpStream::connect(addr(&base)).ok())
        .collect();
    assert!(hostile.len() >= 250, "only {} connections", hostile.len());
    // Out of descriptors, accepting fails (and says so); once the hostile connections go,
    // the server accepts again by itself.
    assert!(
        wait_for_line(
            &log,
            &["cannot accept connections"],
            Duration::from_secs(10)
        )
        .is_some(),
        "accept never ran out of descriptors"
    );
    hostile.clear();
    assert!(
        answered_before(&base, Instant::now() + Duration::from_secs(10)),
        "the server did not recover"
    );
    assert!(
        refused(&base, "accept_failed") >= 1.0,
        "accept failures were not counted"
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn long_streams_outlive_the_head_timeout() {
    let (mut server, base, _log) = serve_limited(&["--header-read-timeout", "1"]);
    let slow = format!("{base}/a2a/slow");
    for binding in ["jsonrpc", "grpc"] {
        let started = Instant::now();
        let o = a2a(&["stream", &slow, "3", "--binding", binding]);
        assert!(o.status.success(), "{binding}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("COMPLETED"),
            "{binding}: {}",
            stdout(&o)
        );
        assert!(started.elapsed() >= Duration::from_secs(3));
    }
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn a_client_that_stops_reading_a_stream_is_disconnected_and_the_task_goes_on() {
    // An agent that writes 8 MB (more than the server's send buffer and the client's receive
    // buffer hold), then works on until the test lets it finish.
    let dir = std::env::temp_dir().join(format!("a2a-stall-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let go = dir.join("go");
    let _ = std::fs::remove_file(&go);
    let script = format!(
        "head -c 8000000 /dev/zero | tr '\\\\0' x; while [ ! -e '{}' ]; do sleep 0.1; done; echo done",
        go.display()
    );
    let config = dir.join("agents.toml");
    std::fs::write(
        &config,
        format!(
            "[[agents]]\nid = \"big\"\nkind = \"exec\"\ncommand = [\"sh\", \"-c\", {script:?}]\n"
        ),
    )
    .unwrap();
    let (mut server, base, _log) =
        serve_limited(&["--config", config.to_str().unwrap(), "--write-timeout", "1"]);

    // A raw streaming call from a socket with a small receive buffer, which then stops reading.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let target: std::net::SocketAddr = addr(&base).parse().unwrap();
    socket.connect(&target.into()).unwrap();
    let mut conn: TcpStream = socket.into();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}}"#;
    write!(
        conn,
        "POST /a2a/big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 512];
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = conn.read(&mut head).unwrap();
    let head = String::from_utf8_lossy(&head[..n]).into_owned();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let task_id = head
        .split("\"id\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned);

    // The server gives up on the stalled stream: it counts the cut...
    let deadline = Instant::now() + Duration::from_secs(20);
    while refused(&base, "write_timeout") < 1.0 {
        assert!(
            Instant::now() < deadline,
            "the stalled stream was never cut"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // ...and the connection ends (what was already in the buffers, then EOF), long before
    // the 8 MB the agent wrote.
    let mut received = n;
    let mut buf = vec![0u8; 64 * 1024];
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let ended = loop {
        match conn.read(&mut buf) {
            Ok(0) => break true,
            Ok(k) => received += k,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    assert!(ended, "the connection stayed open after {received} bytes");
    assert!(
        received < 8_000_000,
        "read {received} bytes: nothing was cut"
    );

    // The task was not canceled with its stream: still working, then done.
    let url = format!("{base}/a2a/big");
    let tasks = a2a(&["list", &url, "--json"]);
    assert!(tasks.status.success(), "{}", stderr(&tasks));
    let listed: serde_json::Value = serde_json::from_slice(&tasks.stdout).unwrap();
    let task = &listed["tasks"][0];
    let id = task["id"].as_str().expect("the task is listed").to_owned();
    if let Some(seen) = &task_id {
        assert_eq!(seen, &id);
    }
    assert_eq!(state_of(&url, &id), "TASK_STATE_WORKING");
    std::fs::write(&go, b"").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while state_of(&url, &id) != "TASK_STATE_COMPLETED" {
        assert!(Instant::now() < deadline, "the task never completed");
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = a2a(&["get", &url, &id, "--json"]);
    let task: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let output: usize = task["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["parts"].as_array().unwrap())
        .filter_map(|p| p["text"].as_str())
        .map(str::len)
        .sum();
    assert!(output >= 8_000_000, "the stored output has {output} bytes");
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_oversized_request_head_gets_431() {
    let (mut server, base, _log) =
        serve_limited(&["--agent", "echo", "--max-header-bytes", "16384"]);
    let mut c = TcpStream::connect(addr(&base)).unwrap();
    let big = "x".repeat(32 * 1024);
    write!(
        c,
        "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\nX-Big: {big}\r\n\r\n"
    )
    .unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut head = [0u8; 64];
    let n = c.read(&mut head).expect("an answer");
    let answer = String::from_utf8_lossy(&head[..n]).into_owned();
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    // A head within the bound is served.
    assert!(card_ok(&base));
    let _ = server.kill();
    let _ = server.wait();
}
