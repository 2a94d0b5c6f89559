//! The conformance suite every [`TaskStore`] must pass. Backends run it with
//! [`task_store_conformance!`](crate::task_store_conformance), which stamps out one test per
//! case so failures show up by name.

use std::sync::Arc;

use a2a_types::{
    Artifact, Message, Part, Role, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use chrono::{Duration, Utc};

use super::{StoreError, TaskEvent, TaskQuery, TaskStore};

fn created(id: &str, ctx: &str) -> TaskEvent {
    let mut t = Task::new(id, ctx, TaskState::Submitted);
    t.history.push(
        Message::user_text("hello")
            .with_task_id(id)
            .with_context_id(ctx),
    );
    TaskEvent::Created(t)
}

fn status(id: &str, state: TaskState, text: Option<&str>) -> TaskEvent {
    let msg = text.map(|t| Message::agent_text(t).with_task_id(id).with_context_id("c"));
    TaskEvent::Status(TaskStatusUpdateEvent::new(
        id,
        "c",
        TaskStatus::with_message(state, msg),
    ))
}

fn artifact(id: &str, aid: &str, text: &str, append: bool) -> TaskEvent {
    let a = Artifact::new(aid, vec![Part::text(text)]);
    TaskEvent::Artifact(TaskArtifactUpdateEvent::new(id, "c", a, append, false))
}

fn push_config(id: &str, url: &str) -> a2a_types::TaskPushNotificationConfig {
    let mut c = a2a_types::TaskPushNotificationConfig::default();
    c.id = Some(id.to_owned());
    c.task_id = Some("t1".to_owned());
    c.url = url.to_owned();
    c
}

/// Push configs: stored per task in order, replaced by id, deleted idempotently, refused for
/// an unknown task, and kept apart between tasks.
pub async fn push_configs(store: Arc<dyn TaskStore>) {
    let missing = store
        .put_push_config("t1", &push_config("a", "https://a.example/hook"))
        .await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );
    store
        .append("t1", 0, vec![created("t1", "c")])
        .await
        .unwrap();
    store
        .append("t2", 0, vec![created("t2", "c")])
        .await
        .unwrap();
    assert!(store.push_configs("t1").await.unwrap().is_empty());
    for (id, url) in [("b", "https://b.example/1"), ("a", "https://a.example/1")] {
        store
            .put_push_config("t1", &push_config(id, url))
            .await
            .unwrap();
    }
    store
        .put_push_config("t1", &push_config("b", "https://b.example/2"))
        .await
        .unwrap();
    let configs = store.push_configs("t1").await.unwrap();
    let seen: Vec<(&str, &str)> = configs
        .iter()
        .map(|c| (c.id.as_deref().unwrap(), c.url.as_str()))
        .collect();
    assert_eq!(
        seen,
        [("b", "https://b.example/2"), ("a", "https://a.example/1")]
    );
    assert!(store.push_configs("t2").await.unwrap().is_empty());
    assert!(store.push_configs("missing").await.unwrap().is_empty());
    store.delete_push_config("t1", "b").await.unwrap();
    store.delete_push_config("t1", "b").await.unwrap();
    store.delete_push_config("missing", "b").await.unwrap();
    let left = store.push_configs("t1").await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id.as_deref(), Some("a"));
}

/// The owner logged after the creation shows in the snapshot and filters listings.
pub async fn owners(store: Arc<dyn TaskStore>) {
    let owner = |name: &str| TaskEvent::Owner(Arc::from(name));
    store
        .append("t1", 0, vec![created("t1", "c"), owner("alice")])
        .await
        .unwrap();
    store
        .append("t2", 0, vec![created("t2", "c")])
        .await
        .unwrap();
    store
        .append(
            "t3",
            0,
            vec![
                created("t3", "c"),
                owner("bob"),
                status("t3", TaskState::Working, None),
            ],
        )
        .await
        .unwrap();
    let snap = store.get("t1", None).await.unwrap().unwrap();
    assert_eq!(snap.owner.as_deref(), Some("alice"));
    assert_eq!(snap.task.id, "t1");
    assert!(
        store
            .get("t2", None)
            .await
            .unwrap()
            .unwrap()
            .owner
            .is_none()
    );
    let t3 = store.get("t3", None).await.unwrap().unwrap();
    assert_eq!(t3.owner.as_deref(), Some("bob"));
    assert_eq!(t3.task.status.state, TaskState::Working);
    let list = |owner: Option<&str>| {
        let store = store.clone();
        let owner = owner.map(Arc::from);
        async move {
            let mut q = TaskQuery::default();
            q.page_size = 10;
            q.owner = owner;
            store.list(&q).await.unwrap()
        }
    };
    let alice = list(Some("alice")).await;
    let ids: Vec<&str> = alice.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["t1"]);
    assert_eq!(alice.total_size, 1);
    assert_eq!(list(Some("carol")).await.total_size, 0);
    assert_eq!(list(None).await.total_size, 3);
    // A context holds each owner's tasks apart: filtering by both gives the owner's only.
    let mut q = TaskQuery::default();
    q.page_size = 10;
    q.context_id = Some("c".into());
    q.owner = Some(Arc::from("bob"));
    let page = store.list(&q).await.unwrap();
    let ids: Vec<&str> = page.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["t3"]);
    assert_eq!(page.total_size, 1);
}

/// Creating a task stores it at sequence 1.
pub async fn create_and_get(store: Arc<dyn TaskStore>) {
    let recs = store
        .append("t1", 0, vec![created("t1", "c")])
        .await
        .unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].seq, 1);
    assert_eq!(recs[0].state, TaskState::Submitted);
    let snap = store.get("t1", None).await.unwrap().unwrap();
    assert_eq!(snap.seq, 1);
    assert_eq!(snap.task.id, "t1");
    assert_eq!(snap.task.context_id, "c");
    assert_eq!(snap.task.history.len(), 1);
    assert!(store.get("missing", None).await.unwrap().is_none());
}

/// Creation is exclusive and must start with `Created`.
pub async fn create_rules(store: Arc<dyn TaskStore>) {
    store
        .append("t1", 0, vec![created("t1", "c")])
        .await
        .unwrap();
    let again = store.append("t1", 0, vec![created("t1", "c")]).await;
    assert!(
        matches!(again, Err(StoreError::AlreadyExists(_))),
        "{again:?}"
    );
    let bad = store
        .append("t2", 0, vec![status("t2", TaskState::Working, None)])
        .await;
    assert!(matches!(bad, Err(StoreError::NotCreated(_))), "{bad:?}");
    let missing = store
        .append("t3", 4, vec![status("t3", TaskState::Working, None)])
        .await;
    assert!(
        matches!(missing, Err(StoreError::NotFound(_))),
        "{missing:?}"
    );
}

/// Appends need the exact last sequence number.
pub async fn optimistic_append(store: Arc<dyn TaskStore>) {
    store
        .append("t1", 0, vec![created("t1", "c")])
        .await
        .unwrap();
    let recs = store
        .append(
            "t1",
            1,
            vec![
                status("t1", TaskState::Working, None),
                artifact("t1", "a", "x", false),
            ],
        )
        .await
        .unwrap();
    assert_eq!(recs.iter().map(|r| r.seq).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(recs[1].state, TaskState::Working);
    let stale = store
        .append("t1", 2, vec![status("t1", TaskState::Completed, None)])
        .await;
    assert!(
        matches!(
            stale,
            Err(StoreError::Conflict {
                expected: 2,
                actual: 3,
                ..
            })
        ),
        "{stale:?}"
    );
    let snap = store.get("t1", None).await.unwrap().unwrap();
    assert_eq!((snap.seq, snap.task.status.state), (3, TaskState::Working));
}

/// The log replays in order from any cursor.
pub async fn events_after(store: Arc<dyn TaskStore>) {
    store
        .append("t1", 0, vec![created("t1", "c")])
        .await
        .unwrap();
    store
        .append("t1", 1, vec![status("t1", TaskState::Working, None)])
        .await
        .unwrap();
    store
        .append("t1", 2, vec![artifact("t1", "a", "x", false)])
        .await
        .unwrap();
    let all = store.events_after("t1", 0).await.unwrap();
    assert_eq!(all.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(matches!(all[0].event, TaskEvent::Created(_)));
    let tail = store.events_after("t1", 2).await.unwrap();
    assert_eq!(tail.len(), 1);
    assert!(matches!(&tail[0].event, TaskEvent::Artifact(a) if a.artifact.artifact_id == "a"));
    assert!(store.events_after("t1", 3).await.unwrap().is_empty());
    assert!(matches!(
        store.events_after("zz", 0).await,
        Err(StoreError::NotFound(_))
    ));
}

/// The snapshot is the projection of the log.
pub async fn projection(store: Arc<dyn TaskStore>) {
    store
        .append("t1", 0, vec![created("t1", "c")])
        .await
        .unwrap();
    let events = vec![
        status("t1", TaskState::Working, Some("thinking")),
        artifact("t1", "a", "one ", false),
        artifact("t1", "a", "two", true),
        artifact("t1", "b", "old", false),
        artifact("t1", "b", "new", false),
        status("t1", TaskState::InputRequired, Some("question")),
        TaskEvent::UserMessage(Message::user_text("answer").with_task_id("t1")),
        status("t1", TaskState::Completed, Some("bye")),
    ];
    store.append("t1", 1, events).await.unwrap();
    let t = store.get("t1", None).await.unwrap().unwrap().task;
    assert_eq!(t.status.state, TaskState::Completed);
    assert_eq!(t.status.message.as_ref().unwrap().text_content(), "bye");
    assert_eq!(t.artifacts.len(), 2);
    assert_eq!(t.artifacts[0].text_content(), "one two");
    assert_eq!(t.artifacts[1].text_content(), "new");
    let texts: Vec<String> = t.history.iter().map(Message::text_content).collect();
    assert_eq!(texts, ["hello", "thinking", "question", "answer"]);
    assert_eq!(t.history[3].role, Role::User);
    let short = store.get("t1", Some(2)).await.unwrap().unwrap().task;
    let texts: Vec<String> = short.history.iter().map(Message::text_content).collect();
    assert_eq!(texts, ["question", "answer"]);
    let none = store.get("t1", Some(0)).await.unwrap().unwrap().task;
    assert!(none.history.is_empty());
    assert_eq!(
        none.artifacts.len(),
        2,
        "history length does not touch artifacts"
    );
}

/// Listing: filters, newest status first, cursors.
pub async fn list(store: Arc<dyn TaskStore>) {
    let base = Utc::now() - Duration::seconds(100);
    for i in 0..5u32 {
        let id = format!("t{i}");
        let ctx = if i % 2 == 0 { "even" } else { "odd" };
        let mut t = Task::new(&id, ctx, TaskState::Submitted);
        t.status.timestamp = Some(base + Duration::seconds(i64::from(i)));
        t.artifacts.push(Artifact::new("a", vec![Part::text("x")]));
        store
            .append(&id, 0, vec![TaskEvent::Created(t)])
            .await
            .unwrap();
    }
    let mut q = TaskQuery::default();
    q.page_size = 2;
    let p1 = store.list(&q).await.unwrap();
    assert_eq!(p1.total_size, 5);
    assert_eq!(
        p1.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["t4", "t3"]
    );
    assert!(
        p1.tasks[0].artifacts.is_empty(),
        "artifacts only when asked for"
    );
    q.page_token = Some(p1.next_page_token.clone());
    let p2 = store.list(&q).await.unwrap();
    assert_eq!(
        p2.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["t2", "t1"]
    );
    q.page_token = Some(p2.next_page_token.clone());
    let p3 = store.list(&q).await.unwrap();
    assert_eq!(
        p3.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["t0"]
    );
    assert_eq!(p3.next_page_token, "");

    let mut q = TaskQuery::default();
    q.page_size = 10;
    q.context_id = Some("even".into());
    q.include_artifacts = true;
    let even = store.list(&q).await.unwrap();
    assert_eq!(
        even.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["t4", "t2", "t0"]
    );
    assert_eq!(even.tasks[0].artifacts.len(), 1);

    let mut q = TaskQuery::default();
    q.page_size = 10;
    q.status_timestamp_after = Some(base + Duration::seconds(3));
    assert_eq!(store.list(&q).await.unwrap().total_size, 2);
    q.status = Some(TaskState::Working);
    assert_eq!(store.list(&q).await.unwrap().total_size, 0);

    let mut q = TaskQuery::default();
    q.page_size = 10;
    q.page_token = Some("not a token".into());
    assert!(matches!(
        store.list(&q).await,
        Err(StoreError::InvalidPageToken)
    ));
}

/// Stamps out one `#[tokio::test]` per conformance case for a store made by `$make`
/// (an async expression returning `Arc<dyn TaskStore>`). With `optional`, `$make` returns
/// `Option<Arc<dyn TaskStore>>`, and `None` (a database that is not available, which `$make`
/// reports) ends the test. Attributes written first (`#[cfg_attr(…, ignore = "…")]`) go on
/// every test.
#[cfg(feature = "test-util")]
#[macro_export]
macro_rules! task_store_conformance {
    ($(#[$attr:meta])* optional $make:expr) => {
        $crate::task_store_conformance!(@cases [$(#[$attr])*] $make;
            create_and_get, create_rules, optimistic_append, events_after, projection, list,
            push_configs, owners);
    };
    ($(#[$attr:meta])* $make:expr) => {
        $crate::task_store_conformance!($(#[$attr])* optional async { Some($make.await) });
    };
    (@cases $attrs:tt $make:expr; $($case:ident),+) => {
        $( $crate::task_store_conformance!(@one $attrs $make; $case); )+
    };
    (@one [$($attr:tt)*] $make:expr; $case:ident) => {
        $($attr)*
        #[tokio::test]
        async fn $case() {
            let store: Option<::std::sync::Arc<dyn $crate::store::TaskStore>> = $make.await;
            let Some(store) = store else { return };
            $crate::store::conformance::$case(store).await;
        }
    };
}
