//! Agent2Agent (A2A) client.
//!
//! [`A2aClient`] resolves an agent card, picks the interface (JSON-RPC, v1.0 preferred, v0.3
//! when that is all the agent speaks) and offers every operation: send, stream, get, list,
//! cancel, subscribe (resuming dropped connections), extended card.
//!
//! On top of that it follows interactions correctly: [`A2aClient::run`] returns a typed
//! [`Outcome`] — a direct message, a completed task with **every** artifact (chunks appended
//! by `artifactId`), input/auth required with the task and context ids to continue from,
//! failed/rejected with the agent's reason, canceled. A [`StreamListener`] watches each event
//! and may stop early with its own answer or with the artifacts received so far;
//! [`A2aClient::run_with_deadline`] stops waiting after a timeout. Neither ever cancels the
//! remote task: canceling is the separate, explicit [`A2aClient::cancel_task`].
//! [`Conversation`] keeps `contextId`/`taskId` across turns.
//!
//! ```no_run
//! # async fn demo() -> Result<(), a2a_client::ClientError> {
//! use a2a_client::{A2aClient, Outcome};
//! use a2a_types::{Message, SendMessageRequest};
//!
//! let client = A2aClient::connect("http://127.0.0.1:41241/a2a/multi").await?;
//! match client.run(SendMessageRequest::new(Message::user_text("hi"))).await? {
//!     Outcome::InputRequired(i) => println!("agent asks: {}", i.prompt_text()),
//!     other => println!("{}", other.text()),
//! }
//! # Ok(()) }
//! ```

pub mod card;
mod client;
mod conversation;
mod error;
mod outcome;
pub mod signature;
pub mod sse;
mod stream;
pub mod trace;
pub mod transport;

pub use card::{Binding, ProtocolVersion};
pub use client::{A2aClient, ClientBuilder, fetch_card};
pub use conversation::Conversation;
pub use error::{ClientError, describe_http_error};
pub use outcome::{
    Decision, FollowToEnd, Interrupted, Outcome, StopReason, Stopped, StreamListener,
    TaskAccumulator,
};
pub use stream::{StreamEvent, TaskStream};

pub use a2a_types as types;
