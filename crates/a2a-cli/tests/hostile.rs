//! Hostile connections cannot take the server down. The server runs with its open-file limit
//! at 256 (soft and hard); 300 connections that send nothing or half a request head do not
//! keep a legitimate request from being answered, and the server closes them within its
//! head timeout. A body trickled in is cut. Running out of descriptors slows accepting down
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
        if i % 2 == 1 {
            c.write_all(b"POST / HTTP/1.1\r\nHost: victim\r\nContent-Ty")
                .unwrap();
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
    let metrics = reqwest::blocking::get(format!("{base}/metrics"))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("a2a_connections_refused_total{reason=\"accept_failed\"}")),
        "accept never ran out of descriptors:\n{metrics}"
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
