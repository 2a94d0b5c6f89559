//! `GET /metrics` is the Prometheus text format (checked with a parser), and its series move
//! with traffic: requests by binding, method and outcome, latency histograms, tasks by
//! state, open streams, store appends and executor runs. `--no-metrics` turns it off.

mod common;

use std::time::{Duration, Instant};

use common::*;
use prometheus_parse::{Scrape, Value};

fn scrape(base: &str) -> Scrape {
    let resp = reqwest::blocking::get(format!("{base}/metrics")).unwrap();
    assert_eq!(resp.status(), 200);
    let content_type = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let body = resp.text().unwrap();
    // Every sample belongs to a family declared with `# TYPE` (counters by their `_total`
    // name, histograms by their base name), as the Prometheus text format requires.
    let typed: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for line in body
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let name = line.split(['{', ' ']).next().unwrap();
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .filter(|base| typed.contains(base))
            .unwrap_or(name);
        assert!(typed.contains(&family), "no # TYPE for {name}:\n{body}");
    }
    Scrape::parse(body.lines().map(|l| Ok(l.to_owned()))).unwrap()
}

/// The value of the counter or gauge `name` whose labels include `labels` (0 when absent).
fn value(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    s.samples
        .iter()
        .filter(|x| x.metric == name)
        .filter(|x| labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .map(|x| match x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
            _ => panic!("{name} is not a counter or gauge: {x:?}"),
        })
        .sum()
}

/// The number of observations of histogram `name` whose labels include `labels`.
fn observations(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    s.samples
        .iter()
        .filter(|x| x.metric == name)
        .filter(|x| labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .map(|x| match &x.value {
            Value::Histogram(buckets) => buckets
                .iter()
                .find(|b| b.less_than.is_infinite())
                .map_or(0.0, |b| b.count),
            other => panic!("{name} is not a histogram: {other:?}"),
        })
        .sum()
}

#[test]
fn metrics_parse_and_move_with_traffic() {
    let s = serve(&["--store", "memory"]);
    let echo = format!("{}/a2a/echo", s.base);
    let before = scrape(&s.base);
    // Agents are labelled by their id (as in their URL), not by their card's display name.
    let send_ok = [
        ("agent", "echo"),
        ("method", "SendMessage"),
        ("binding", "jsonrpc"),
        ("outcome", "ok"),
    ];
    assert_eq!(value(&before, "a2a_requests_total", &send_ok), 0.0);

    for i in 0..3 {
        let o = a2a(&["send", &echo, &format!("task: {i}"), "--blocking"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = a2a(&[
        "send",
        &echo,
        "task: rest",
        "--binding",
        "rest",
        "--blocking",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = a2a(&["get", &echo, "no-such-task"]);
    assert!(!o.status.success());

    let after = scrape(&s.base);
    assert_eq!(value(&after, "a2a_requests_total", &send_ok), 3.0);
    assert_eq!(
        value(
            &after,
            "a2a_requests_total",
            &[("method", "SendMessage"), ("binding", "http_json")]
        ),
        1.0
    );
    assert_eq!(
        value(
            &after,
            "a2a_requests_total",
            &[("method", "GetTask"), ("outcome", "TASK_NOT_FOUND")]
        ),
        1.0
    );
    assert_eq!(
        observations(
            &after,
            "a2a_request_duration_seconds",
            &[("method", "SendMessage"), ("binding", "jsonrpc")]
        ),
        3.0
    );
    assert!(
        value(
            &after,
            "a2a_task_transitions_total",
            &[("state", "TASK_STATE_COMPLETED")]
        ) >= 4.0
    );
    assert_eq!(
        value(&after, "a2a_tasks", &[("state", "TASK_STATE_WORKING")]),
        0.0
    );
    assert!(observations(&after, "a2a_store_append_duration_seconds", &[]) >= 4.0);
    assert_eq!(
        observations(
            &after,
            "a2a_executor_run_duration_seconds",
            &[("outcome", "ok")]
        ),
        4.0
    );

    // A running task and a subscriber to it show up, and go away when the task ends.
    let slow = format!("{}/a2a/slow", s.base);
    let task = start_task(&slow, "30");
    let mut follower = std::process::Command::new(BIN)
        .args(["subscribe", &slow, &task])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The follower printing the task as WORKING (its stream's first event) means its stream
    // is open and the task is WORKING.
    let out = std::io::BufReader::new(follower.stdout.take().unwrap());
    let mut lines = std::io::BufRead::lines(out).map_while(Result::ok);
    assert!(
        lines.by_ref().any(|l| l.contains("[WORKING]")),
        "the follower never saw the task WORKING"
    );
    let now = scrape(&s.base);
    assert_eq!(
        value(&now, "a2a_tasks", &[("state", "TASK_STATE_WORKING")]),
        1.0
    );
    assert!(value(&now, "a2a_streams_active", &[]) >= 1.0);
    assert!(value(&now, "a2a_bus_subscribers", &[]) >= 1.0);
    std::thread::spawn(move || lines.for_each(drop));
    // The server drops a stream after its last event is written: no event tells the test
    // when, so it reads the gauges until they settle.
    let until = |what: &str, done: &dyn Fn(&Scrape) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let now = scrape(&s.base);
            if done(&now) {
                return now;
            }
            assert!(Instant::now() < deadline, "{what}: {:#?}", now.samples);
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let o = a2a(&["cancel", &slow, &task]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(follower.wait().unwrap().code().is_some());
    let end = until("the stream closed", &|m| {
        value(m, "a2a_streams_active", &[]) == 0.0
            && value(m, "a2a_tasks", &[("state", "TASK_STATE_WORKING")]) == 0.0
    });
    assert_eq!(
        value(
            &end,
            "a2a_task_transitions_total",
            &[("state", "TASK_STATE_CANCELED")]
        ),
        1.0
    );
}

#[test]
fn no_metrics_switches_the_endpoint_off() {
    let s = serve(&["--store", "memory", "--no-metrics"]);
    let resp = reqwest::blocking::get(format!("{}/metrics", s.base)).unwrap();
    assert_eq!(resp.status(), 404);
}
