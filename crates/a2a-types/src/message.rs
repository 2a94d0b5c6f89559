//! Messages and their parts.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::proto_enum::proto_enum;
use crate::serde_util::{self, base64_bytes};

proto_enum! {
    /// Who sent a message.
    pub enum Role {
        /// Invalid / not set.
        #[default]
        Unspecified = 0 => "ROLE_UNSPECIFIED",
        /// The client side.
        User = 1 => "ROLE_USER" | "user",
        /// The agent.
        Agent = 2 => "ROLE_AGENT" | "agent",
    }
}

/// One turn of communication between a client and an agent.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Message {
    /// Unique id, set by the message's creator.
    #[serde(
        default,
        alias = "message_id",
        deserialize_with = "serde_util::string::deserialize"
    )]
    pub message_id: String,
    /// The conversation this message belongs to.
    #[serde(
        default,
        alias = "context_id",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub context_id: Option<String>,
    /// The task this message belongs to.
    #[serde(
        default,
        alias = "task_id",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::opt_string::deserialize"
    )]
    pub task_id: Option<String>,
    /// Sender.
    #[serde(default)]
    pub role: Role,
    /// Content (at least one part).
    #[serde(default, deserialize_with = "serde_util::vec::deserialize")]
    pub parts: Vec<Part>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs present in this message.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub extensions: Vec<String>,
    /// Tasks this message refers to.
    #[serde(
        default,
        alias = "reference_task_ids",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "serde_util::vec::deserialize"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with a generated id.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Self {
            message_id: crate::new_id(),
            role,
            parts,
            ..Self::default()
        }
    }

    /// A user message with one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![Part::text(text)])
    }

    /// An agent message with one text part.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Self::new(Role::Agent, vec![Part::text(text)])
    }

    /// Sets the context id.
    pub fn with_context_id(mut self, id: impl Into<String>) -> Self {
        self.context_id = Some(id.into());
        self
    }

    /// Sets the task id.
    pub fn with_task_id(mut self, id: impl Into<String>) -> Self {
        self.task_id = Some(id.into());
        self
    }

    /// Sets the metadata.
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The concatenation of the text parts.
    pub fn text_content(&self) -> String {
        join_text(&self.parts)
    }
}

/// Concatenates the text parts of `parts`.
pub fn join_text(parts: &[Part]) -> String {
    let mut out = String::new();
    for p in parts {
        if let PartContent::Text(t) = &p.content {
            out.push_str(t);
        }
    }
    out
}

/// The content of a part: exactly one of text, raw bytes, a URL or structured data.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PartContent {
    /// Plain text.
    Text(String),
    /// Inline bytes (base64 on the wire).
    Raw(Vec<u8>),
    /// A URL pointing to the content.
    Url(String),
    /// Any JSON value.
    Data(Value),
}

impl Default for PartContent {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

/// A piece of content in a message or artifact.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Part {
    /// The content.
    pub content: PartContent,
    /// Free-form metadata.
    pub metadata: Option<Map<String, Value>>,
    /// File name, for file-like content.
    pub filename: Option<String>,
    /// Media type, for example `text/plain` or `image/png`.
    pub media_type: Option<String>,
}

impl Part {
    /// A part with the given content.
    pub fn new(content: PartContent) -> Self {
        Self {
            content,
            metadata: None,
            filename: None,
            media_type: None,
        }
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(PartContent::Text(text.into()))
    }

    /// A raw-bytes part.
    pub fn raw(bytes: impl Into<Vec<u8>>) -> Self {
        Self::new(PartContent::Raw(bytes.into()))
    }

    /// A URL part.
    pub fn url(url: impl Into<String>) -> Self {
        Self::new(PartContent::Url(url.into()))
    }

    /// A structured-data part.
    pub fn data(data: Value) -> Self {
        Self::new(PartContent::Data(data))
    }

    /// Sets the file name.
    pub fn with_filename(mut self, name: impl Into<String>) -> Self {
        self.filename = Some(name.into());
        self
    }

    /// Sets the media type.
    pub fn with_media_type(mut self, media_type: impl Into<String>) -> Self {
        self.media_type = Some(media_type.into());
        self
    }

    /// Sets the metadata.
    pub fn with_metadata(mut self, metadata: Map<String, Value>) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// The text, when this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            PartContent::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let len = 1
            + usize::from(self.metadata.is_some())
            + usize::from(self.filename.is_some())
            + usize::from(self.media_type.is_some());
        let mut m = s.serialize_map(Some(len))?;
        match &self.content {
            PartContent::Text(t) => m.serialize_entry("text", t)?,
            PartContent::Raw(b) => m.serialize_entry("raw", &base64_bytes::encode(b))?,
            PartContent::Url(u) => m.serialize_entry("url", u)?,
            PartContent::Data(d) => m.serialize_entry("data", d)?,
        }
        if let Some(md) = &self.metadata {
            m.serialize_entry("metadata", md)?;
        }
        if let Some(f) = &self.filename {
            m.serialize_entry("filename", f)?;
        }
        if let Some(t) = &self.media_type {
            m.serialize_entry("mediaType", t)?;
        }
        m.end()
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum PartField {
    Text,
    Raw,
    Url,
    Data,
    Metadata,
    Filename,
    #[serde(alias = "media_type")]
    MediaType,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PartVisitor;

        impl<'de> Visitor<'de> for PartVisitor {
            type Value = Part;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Part object with one of text, raw, url or data")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
                let mut content: Option<PartContent> = None;
                let mut metadata = None;
                let mut filename = None;
                let mut media_type = None;
                let set = |content: &mut Option<PartContent>, c: PartContent| {
                    if content.is_some() {
                        return Err(de::Error::custom(
                            "a part must set only one of text, raw, url or data",
                        ));
                    }
                    *content = Some(c);
                    Ok(())
                };
                while let Some(key) = map.next_key::<PartField>()? {
                    match key {
                        PartField::Text => {
                            if let Some(t) = map.next_value::<Option<String>>()? {
                                set(&mut content, PartContent::Text(t))?;
                            }
                        }
                        PartField::Raw => {
                            if let Some(r) = map.next_value::<Option<String>>()? {
                                let bytes = base64_bytes::decode(&r).ok_or_else(|| {
                                    de::Error::custom("part.raw is not valid base64")
                                })?;
                                set(&mut content, PartContent::Raw(bytes))?;
                            }
                        }
                        PartField::Url => {
                            if let Some(u) = map.next_value::<Option<String>>()? {
                                set(&mut content, PartContent::Url(u))?;
                            }
                        }
                        PartField::Data => {
                            let v: Value = map.next_value()?;
                            if !v.is_null() {
                                set(&mut content, PartContent::Data(v))?;
                            }
                        }
                        PartField::Metadata => metadata = map.next_value()?,
                        PartField::Filename => {
                            filename = map
                                .next_value::<Option<String>>()?
                                .filter(|s| !s.is_empty())
                        }
                        PartField::MediaType => {
                            media_type = map
                                .next_value::<Option<String>>()?
                                .filter(|s| !s.is_empty())
                        }
                        PartField::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let content = content.ok_or_else(|| {
                    de::Error::custom("a part must set one of text, raw, url or data")
                })?;
                Ok(Part {
                    content,
                    metadata,
                    filename,
                    media_type,
                })
            }
        }

        d.deserialize_map(PartVisitor)
    }
}
