//! `exec` agents with real subprocesses, served by a real host and driven by the client:
//! streamed output, the JSON-lines protocol through INPUT_REQUIRED, cancel that stops the
//! whole process group, timeout, and a failing program.

mod common;

use std::time::{Duration, Instant};

use a2a_client::Outcome;
use a2a_host::exec::{ExecAgent, OutputMode};
use a2a_types::{StreamResponse, TaskState};
use common::{req, serve};

fn sh(script: &str) -> ExecAgent {
    ExecAgent::new(vec!["sh".into(), "-c".into(), script.into()])
}

#[tokio::test(flavor = "multi_thread")]
async fn stdout_streams_as_artifact_chunks() {
    let c = serve(sh(
        "read line; printf '%s' \"$line\"; sleep 0.3; printf ' and more'",
    ))
    .await;
    let mut stream = c.stream(req("first\n")).await.unwrap();
    let mut chunks = Vec::new();
    let mut last = None;
    while let Some(ev) = stream.next().await {
        match ev.unwrap().response {
            StreamResponse::ArtifactUpdate(a) => {
                chunks.push((a.artifact.text_content(), a.append, a.last_chunk));
            }
            StreamResponse::StatusUpdate(s) => last = Some(s.status.state),
            _ => {}
        }
    }
    assert_eq!(last, Some(TaskState::Completed));
    // Output written in two goes arrives in two chunks (and a closing one), not at the end.
    assert_eq!(chunks[0], ("first".to_owned(), false, false), "{chunks:?}");
    assert_eq!(
        chunks[1],
        (" and more".to_owned(), true, false),
        "{chunks:?}"
    );
    assert!(
        chunks.last().unwrap().2,
        "the last chunk is marked: {chunks:?}"
    );
    let Outcome::Completed(task) = c.run(req("x\n")).await.unwrap() else {
        panic!()
    };
    assert_eq!(task.artifacts_text(), "x and more");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_lines_through_input_required() {
    let mut agent = sh(r#"
        name=$(cat)
        if [ "$A2A_HISTORY" = "[]" ]; then
          echo '{"status": "working", "text": "looking"}'
          echo '{"input_required": "Your name?"}'
        else
          turns=$(printf '%s' "$A2A_HISTORY" | grep -o '"messageId"' | wc -l)
          printf '{"artifact": "greeting", "text": "Hi %s (%s earlier messages)", "last_chunk": true}\n' "$name" "$turns"
          echo 'a line that is not JSON'
          echo '{"complete": "done"}'
        fi"#);
    agent.output = OutputMode::JsonLines;
    let c = serve(agent).await;
    let first = c.run(req("hello")).await.unwrap();
    let Outcome::InputRequired(ask) = &first else {
        panic!("{first:?}")
    };
    assert_eq!(ask.prompt_text(), "Your name?");
    let mut next = req("Ada");
    next.message.task_id = Some(ask.task_id().to_owned());
    next.message.context_id = Some(ask.context_id().to_owned());
    let Outcome::Completed(task) = c.run(next).await.unwrap() else {
        panic!()
    };
    let greeting = task.artifact("greeting").unwrap().text_content();
    assert!(greeting.starts_with("Hi Ada ("), "{greeting}");
    assert!(
        !greeting.starts_with("Hi Ada (0"),
        "the history reached the program: {greeting}"
    );
    assert_eq!(
        task.artifact("output").unwrap().text_content(),
        "a line that is not JSON\n"
    );
    assert_eq!(task.status.message.unwrap().text_content(), "done");
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        // A zombie (`Z`) has exited; only its parent has not read its status yet.
        .is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_the_whole_process_group() {
    let dir = std::env::temp_dir().join(format!("a2a-exec-{}", a2a_types::new_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pids = dir.join("pids");
    // A child that ignores SIGTERM, in the background: only the group's SIGKILL stops it.
    let mut agent = sh(&format!(
        "(trap '' TERM; sleep 60) & echo $! > {p}.tmp; echo $$ >> {p}.tmp; mv {p}.tmp {p}; echo started; wait",
        p = pids.display()
    ));
    agent.kill_grace = Duration::from_millis(300);
    let c = serve(agent).await;
    let mut stream = c.stream(req("")).await.unwrap();
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
    let listed: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|p| alive(*p)));
    let task = c.cancel_task(task_id.as_deref().unwrap()).await.unwrap();
    assert_eq!(task.status.state, TaskState::Canceled);
    let deadline = Instant::now() + Duration::from_secs(10);
    while listed.iter().any(|p| alive(*p)) {
        assert!(Instant::now() < deadline, "still running: {listed:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_past_its_timeout_fails() {
    let mut agent = sh("sleep 30");
    agent.timeout = Duration::from_millis(300);
    agent.kill_grace = Duration::from_millis(100);
    let c = serve(agent).await;
    let Outcome::Failed(task) = c.run(req("")).await.unwrap() else {
        panic!()
    };
    let why = task.status.message.unwrap().text_content();
    assert!(why.contains("timeout"), "{why}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nonzero_exit_fails_with_the_end_of_stderr() {
    let c = serve(sh("echo partial; echo 'it broke' >&2; exit 3")).await;
    let Outcome::Failed(task) = c.run(req("")).await.unwrap() else {
        panic!()
    };
    let why = task.status.message.as_ref().unwrap().text_content();
    assert_eq!(why, "exit status 3: it broke");
    assert_eq!(task.artifacts_text(), "partial\n");

    let c = serve(ExecAgent::new(vec!["/no/such/program".into()])).await;
    let Outcome::Failed(task) = c.run(req("")).await.unwrap() else {
        panic!()
    };
    let why = task.status.message.unwrap().text_content();
    assert!(why.contains("/no/such/program"), "{why}");
}
