//! `a2a chat`: an interactive multi-turn session.

use std::io::{IsTerminal, Write};

use a2a_client::{Conversation, Decision, Outcome};
use clap::Args;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::common::{ConnectArgs, TimeoutArg};
use crate::output::{self, LivePrinter};

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  a2a chat http://127.0.0.1:41241/a2a/multi\n\nIn the chat: /new starts a new conversation, /quit (or Ctrl-D) ends; //text sends \"/text\"."
)]
pub(crate) struct ChatArgs {
    #[command(flatten)]
    conn: ConnectArgs,
    #[command(flatten)]
    timeout: TimeoutArg,
    /// Continue this context.
    #[arg(long)]
    context: Option<String>,
    /// Send `metadata.thread_id` (this value, or the context id) with every turn.
    #[arg(long, num_args = 0..=1, default_missing_value = "")]
    thread_id: Option<String>,
}

pub(crate) async fn run(args: ChatArgs) -> anyhow::Result<u8> {
    let client = args.conn.connect_with(Some(args.timeout)).await?;
    println!(
        "chatting with {} at {} (A2A {}); /new starts a new conversation, /quit or Ctrl-D ends",
        client.card().name,
        client.endpoint(),
        client.protocol_version().as_str()
    );
    let mut conv = Conversation::resume(client.clone(), args.context.clone(), None);
    if let Some(t) = &args.thread_id {
        conv = conv.with_thread_id(Some(t.clone()).filter(|t| !t.is_empty()));
    }
    // Piped input is not typed after a prompt: each turn is then printed on lines of its own
    // (`you: …`), so that a transcript reads as one.
    let typed = std::io::stdin().is_terminal();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    loop {
        let waiting = conv.pending_task_id().is_some();
        if typed {
            print!("{}", if waiting { "answer> " } else { "you> " });
            let _ = std::io::stdout().flush();
        }
        let Some(line) = lines.next_line().await? else {
            if typed {
                println!();
            }
            if let Some(task) = conv.pending_task_id() {
                // The agent asked and got no answer: not a finished conversation.
                eprintln!(
                    "a2a: input ended while the agent waits for an answer; task {task} keeps waiting (continue with: a2a send {} ANSWER --task {task})",
                    args.conn.url()
                );
                return Ok(super::client::GAVE_UP);
            }
            break;
        };
        let mut line = line.trim();
        if !typed && !line.is_empty() {
            println!("{}: {line}", if waiting { "answer" } else { "you" });
        }
        match line {
            "" => continue,
            "/quit" | "/exit" => break,
            "/new" => {
                conv = Conversation::new(client.clone());
                println!("(new conversation)");
                continue;
            }
            // `//text` sends "/text".
            l if l.starts_with("//") => line = &line[1..],
            l if l.starts_with('/') => {
                println!(
                    "unknown command {l}: /new starts a new conversation, /quit ends; //text sends \"/text\""
                );
                continue;
            }
            _ => {}
        }
        let mut printer = LivePrinter::leaving_prompts();
        let streaming = conv.client().supports_streaming();
        let listener = |ev: &a2a_client::StreamEvent, _: Option<&a2a_types::Task>| {
            if streaming {
                printer.event(ev);
            }
            Decision::Continue
        };
        let result = conv
            .send_with_listener(a2a_types::Message::user_text(line), listener)
            .await;
        printer.finish();
        match result {
            Ok(outcome) => match &outcome {
                // The question is printed here, once (the live printer leaves it out).
                Outcome::InputRequired(i) => println!("agent: {}", i.prompt_text()),
                Outcome::AuthRequired(i) => {
                    println!("agent needs authentication: {}", i.prompt_text())
                }
                // A streamed reply was printed as it arrived.
                _ if streaming => {}
                Outcome::Failed(_) | Outcome::Rejected(_) | Outcome::Canceled(_) => {
                    match outcome.reason().filter(|r| !r.trim().is_empty()) {
                        Some(r) => println!("agent: the task ended: {r}"),
                        None => println!("agent: the task ended"),
                    }
                }
                other => output::print_outcome(other),
            },
            Err(e) => eprintln!("a2a: error: {e}"),
        }
    }
    Ok(0)
}
