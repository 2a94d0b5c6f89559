//! The body of a unary gRPC call or answer, read frame by frame while keeping what was read:
//! [`Replay`] knows the message's prefix (compression flag and declared length) as soon as
//! its five bytes are in, and can give the body back whole (what was read, then the rest)
//! to a reader that takes it from the start, such as tonic's codec.
//!
//! The server and the client read the common case (one plain message) themselves and hand
//! anything else to tonic this way, so that tonic's answers and errors stay what they were;
//! they write a message with [`encode_message`].

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use http_body::{Body, Frame};

/// A gRPC message's prefix: a compression flag and the message's length (big-endian u32).
pub const PREFIX_BYTES: usize = 5;

/// Metadata names gRPC itself sets, which a call's or an answer's metadata may not carry
/// (tonic's `GRPC_RESERVED_HEADERS`).
pub const RESERVED_HEADERS: [&str; 5] = [
    "te",
    "content-type",
    "grpc-message",
    "grpc-message-type",
    "grpc-status",
];

/// `message` as one uncompressed gRPC message: its prefix, then its bytes, in one buffer.
pub fn encode_message(message: &impl prost::Message) -> Result<Bytes, tonic::Status> {
    let len = message.encoded_len();
    let prefix_len = u32::try_from(len).map_err(|_| too_large())?;
    let mut buf = BytesMut::with_capacity(PREFIX_BYTES + len);
    buf.put_u8(0);
    buf.put_u32(prefix_len);
    message
        .encode(&mut buf)
        .map_err(|e| tonic::Status::internal(e.to_string()))?;
    Ok(buf.freeze())
}

/// The status of an answer longer than a gRPC message's prefix can say (4 GiB).
pub(crate) fn too_large() -> tonic::Status {
    tonic::Status::resource_exhausted("the message is larger than a gRPC message can be")
}

/// Frames read from a body `B`, kept to be read again, then the rest of `B`.
#[derive(Debug)]
pub struct Replay<B: Body> {
    frames: VecDeque<Result<Frame<Bytes>, B::Error>>,
    rest: Option<B>,
    /// The first bytes of the data, up to the prefix's five.
    prefix: [u8; PREFIX_BYTES],
    prefix_len: usize,
    /// All the data read.
    len: usize,
}

impl<B: Body> Default for Replay<B> {
    fn default() -> Self {
        Self {
            frames: VecDeque::new(),
            rest: None,
            prefix: [0; PREFIX_BYTES],
            prefix_len: 0,
            len: 0,
        }
    }
}

impl<B: Body<Data = Bytes>> Replay<B> {
    /// Keeps `frame`, read from the body. Constant time: the prefix is picked out as it
    /// arrives, nothing else is looked at.
    pub fn record(&mut self, frame: Result<Frame<Bytes>, B::Error>) {
        if let Ok(data) = frame.as_ref().map(Frame::data_ref)
            && let Some(data) = data
        {
            let take = (PREFIX_BYTES - self.prefix_len).min(data.len());
            self.prefix[self.prefix_len..self.prefix_len + take].copy_from_slice(&data[..take]);
            self.prefix_len += take;
            self.len += data.len();
        }
        self.frames.push_back(frame);
    }

    /// How many data bytes were read, prefix included.
    pub fn data_len(&self) -> usize {
        self.len
    }

    /// How many frames were read (data, trailers and errors).
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// The message's length as its prefix declares it, once the prefix is read.
    pub fn declared(&self) -> Option<usize> {
        let len = self.prefix_if_read()?;
        usize::try_from(u32::from_be_bytes([len[1], len[2], len[3], len[4]])).ok()
    }

    /// The prefix's compression flag, once the prefix is read.
    pub fn compression_flag(&self) -> Option<u8> {
        Some(self.prefix_if_read()?[0])
    }

    /// Whether what was read is exactly one uncompressed message (prefix and all).
    pub fn is_one_plain_message(&self) -> bool {
        self.compression_flag() == Some(0)
            && self
                .declared()
                .is_some_and(|d| self.len == PREFIX_BYTES + d)
    }

    fn prefix_if_read(&self) -> Option<&[u8; PREFIX_BYTES]> {
        (self.prefix_len == PREFIX_BYTES).then_some(&self.prefix)
    }

    /// The data read without its prefix: the one frame's bytes when the data came in one
    /// frame (the usual case), else copied once.
    pub fn message(&self) -> Bytes {
        let mut data = self
            .frames
            .iter()
            .filter_map(|f| f.as_ref().ok()?.data_ref());
        let all = match (data.next(), data.next()) {
            (None, _) => return Bytes::new(),
            (Some(one), None) => one.clone(),
            (Some(first), Some(second)) => {
                let mut all = BytesMut::with_capacity(self.len);
                all.extend_from_slice(first);
                all.extend_from_slice(second);
                for more in data {
                    all.extend_from_slice(more);
                }
                all.freeze()
            }
        };
        all.slice(PREFIX_BYTES.min(all.len())..)
    }

    /// What was read, then the rest of `body`, as one body.
    pub fn then(mut self, body: B) -> Self {
        self.rest = Some(body);
        self
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Replay<B>
where
    B::Error: Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        if let Some(frame) = self.frames.pop_front() {
            return Poll::Ready(Some(frame));
        }
        match self.rest.as_mut() {
            Some(rest) => Pin::new(rest).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty() && self.rest.as_ref().is_none_or(Body::is_end_stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    type Empty = http_body_util::Empty<Bytes>;

    fn data(bytes: &'static [u8]) -> Result<Frame<Bytes>, Infallible> {
        Ok(Frame::data(Bytes::from_static(bytes)))
    }

    #[test]
    fn the_prefix_is_known_across_frames_and_the_message_is_whole() {
        let mut read = Replay::<Empty>::default();
        read.record(data(&[0, 0, 0]));
        assert_eq!(read.declared(), None);
        read.record(data(&[0, 3, b'a']));
        assert_eq!(
            (read.compression_flag(), read.declared()),
            (Some(0), Some(3))
        );
        assert!(!read.is_one_plain_message());
        read.record(data(b"bc"));
        assert!(read.is_one_plain_message());
        assert_eq!(read.message(), Bytes::from_static(b"abc"));
        assert_eq!((read.data_len(), read.frames()), (8, 3));
    }

    #[tokio::test]
    async fn what_was_read_comes_back_first() {
        use http_body_util::BodyExt;
        let mut read = Replay::<http_body_util::Full<Bytes>>::default();
        read.record(Ok(Frame::data(Bytes::from_static(b"\x01\x00\x00\x00\x01"))));
        assert_eq!(read.compression_flag(), Some(1));
        let body = read.then(http_body_util::Full::new(Bytes::from_static(b"z")));
        let all = body.collect().await.unwrap().to_bytes();
        assert_eq!(&all[..], b"\x01\x00\x00\x00\x01z");
    }
}
