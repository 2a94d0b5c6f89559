//! `llm` agents: each message goes to an OpenAI-compatible chat-completions endpoint, with
//! the system prompt and the task's earlier turns; the reply streams back as chunks of the
//! artifact `answer`. Cancel drops the upstream request; an upstream error fails the task
//! with the endpoint's own reason.

use std::collections::BTreeMap;
use std::time::Duration;

use a2a_server::{AgentError, AgentExecutor, RequestContext, TaskUpdater, async_trait};
use a2a_types::{Artifact, Message, Part, Role};
use futures::StreamExt;
use serde_json::{Value, json};

/// An OpenAI-compatible chat model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LlmAgent {
    /// Base URL, like `https://api.openai.com/v1` (`/chat/completions` is added).
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The API key (sent as a bearer token), if any.
    pub api_key: Option<String>,
    /// The system prompt.
    pub system_prompt: Option<String>,
    /// Extra request fields (`temperature`, `max_tokens`, …).
    pub parameters: BTreeMap<String, Value>,
    /// Stream tokens as they come (`stream: true`), or wait for the whole answer.
    pub stream: bool,
    /// Longest a request may take.
    pub timeout: Duration,
    http: reqwest::Client,
}

impl LlmAgent {
    /// `model` at `base_url`, streaming, 5-minute timeout.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            system_prompt: None,
            parameters: BTreeMap::new(),
            stream: true,
            timeout: Duration::from_secs(300),
            http: reqwest::Client::builder()
                .tcp_nodelay(true)
                .build()
                .unwrap_or_default(),
        }
    }

    /// The chat messages for this turn: the system prompt, the conversation so far (every
    /// earlier task of the context, see [`RequestContext::thread`]), and the new message.
    fn messages(&self, ctx: &RequestContext, earlier: &[Message]) -> Vec<Value> {
        let mut out = Vec::new();
        if let Some(p) = &self.system_prompt {
            out.push(json!({"role": "system", "content": p}));
        }
        let turn = |m: &Message| {
            let role = if m.role == Role::Agent {
                "assistant"
            } else {
                "user"
            };
            json!({"role": role, "content": m.text_content()})
        };
        out.extend(
            earlier
                .iter()
                .filter(|m| m.message_id != ctx.message.message_id)
                .map(turn),
        );
        out.push(turn(&ctx.message));
        out
    }

    async fn call(&self, ctx: &RequestContext, u: &TaskUpdater) -> Result<String, AgentError> {
        let url = format!("{}/chat/completions", self.base_url.trim_end_matches('/'));
        let mut body = serde_json::Map::new();
        body.insert("model".into(), self.model.clone().into());
        let earlier = ctx
            .thread()
            .await
            .map_err(|e| AgentError::from(format!("reading the conversation: {e}")))?;
        body.insert("messages".into(), self.messages(ctx, &earlier).into());
        body.insert("stream".into(), self.stream.into());
        for (k, v) in &self.parameters {
            body.insert(k.clone(), v.clone());
        }
        let mut req = self.http.post(&url).json(&body).timeout(self.timeout);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let unreachable = |e: reqwest::Error| {
            AgentError::from(format!(
                "the model server at {url}: {}",
                a2a_client::describe_http_error(&e)
            ))
        };
        let resp = req.send().await.map_err(&unreachable)?;
        let status = resp.status();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            let reason = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
                .unwrap_or(text);
            return Err(AgentError::from(format!(
                "the model endpoint answered {status}: {}",
                reason.trim()
            )));
        }
        if !self.stream {
            let v: Value = resp.json().await.map_err(&unreachable)?;
            let text = v["choices"][0]["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            u.artifact_chunk(answer(text.clone()), false, true).await?;
            return Ok(text);
        }
        let mut all = String::new();
        // The workspace's one SSE parser: lines are cut from bytes before they are decoded,
        // so a character split across network chunks arrives whole.
        let mut events = std::pin::pin!(a2a_client::sse::sse_stream(resp.bytes_stream()));
        let mut started = false;
        while let Some(event) = events.next().await {
            let event = event.map_err(&unreachable)?;
            let data = event.data.trim();
            if data == "[DONE]" {
                break;
            }
            let Ok(v) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            if let Some(msg) = v["error"]["message"].as_str() {
                return Err(AgentError::from(format!("the model endpoint: {msg}")));
            }
            if let Some(token) = v["choices"][0]["delta"]["content"].as_str()
                && !token.is_empty()
            {
                u.artifact_chunk(answer(token.to_owned()), started, false)
                    .await?;
                started = true;
                all.push_str(token);
            }
        }
        if started {
            u.artifact_chunk(answer(String::new()), true, true).await?;
        }
        Ok(all)
    }
}

fn answer(text: String) -> Artifact {
    Artifact::new("answer", vec![Part::text(text)]).with_name("answer")
}

#[async_trait]
impl AgentExecutor for LlmAgent {
    async fn execute(&self, ctx: RequestContext, u: TaskUpdater) -> Result<(), AgentError> {
        u.start_work(None).await?;
        // Dropping the request on cancel closes the upstream connection.
        let Ok(result) = ctx.unless_canceled(self.call(&ctx, &u)).await else {
            return Ok(());
        };
        let text = result?;
        // The reply is also the task's status message, so the next turn's history has it.
        u.complete(Some(u.agent_text(text))).await?;
        Ok(())
    }
}
