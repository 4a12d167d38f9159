//! The header tap: a listener whose connections copy every request *head* as sent.
//!
//! hyper hands the handler a `HeaderMap`, which lowercases names and groups duplicates, and
//! hyper does not expose the original order (hyper issue #3914). Hooklab promises headers in
//! arrival order with their original case, so [`TapListener`] wraps each accepted `TcpStream`
//! in a [`TapStream`] that feeds every byte hyper reads through a [`parser::HeadParser`]. Each
//! complete head is pushed onto that connection's FIFO ([`HeadQueue`]); the handler reaches the
//! queue through `ConnectInfo<`[`TapConnection`]`>` and pops the head of its request. HTTP/1.1
//! serves one request at a time per connection, so the queue's front is always the current
//! request; [`RequestHead::matches`] checks that anyway, and the handler falls back to the
//! `HeaderMap` on any doubt.

mod parser;

pub(crate) use parser::RequestHead;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use hooklab_core::request::Header;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// At most this many parsed heads wait per connection (a client pipelining more than this
/// gets the remaining requests' headers from hyper's map instead).
const MAX_QUEUED_HEADS: usize = 64;

/// A TCP listener whose connections record request heads as sent.
#[derive(Debug)]
pub struct TapListener {
    inner: TcpListener,
}

impl TapListener {
    pub fn new(inner: TcpListener) -> Self {
        Self { inner }
    }
}

impl Listener for TapListener {
    type Io = TapStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TapStream, SocketAddr) {
        let (stream, remote) = Listener::accept(&mut self.inner).await;
        // Webhook senders wait for our answer; do not let Nagle hold it back.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("could not set TCP_NODELAY: {e}");
        }
        (TapStream::new(stream), remote)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// The heads parsed on one connection, oldest first, waiting for their handlers.
#[derive(Debug, Default)]
pub(crate) struct HeadQueue {
    heads: Mutex<VecDeque<RequestHead>>,
}

impl HeadQueue {
    /// Appends a head; `false` when the queue is full (the tap then stops for this connection).
    fn push(&self, head: RequestHead) -> bool {
        let Ok(mut heads) = self.heads.lock() else {
            return false;
        };
        if heads.len() >= MAX_QUEUED_HEADS {
            return false;
        }
        heads.push_back(head);
        true
    }

    /// The oldest head not yet claimed by a handler.
    pub(crate) fn pop(&self) -> Option<RequestHead> {
        self.heads.lock().ok()?.pop_front()
    }
}

/// An accepted connection whose reads are tapped.
#[derive(Debug)]
pub struct TapStream {
    inner: TcpStream,
    parser: parser::HeadParser,
    heads: Arc<HeadQueue>,
}

impl TapStream {
    fn new(inner: TcpStream) -> Self {
        Self {
            inner,
            parser: parser::HeadParser::new(),
            heads: Arc::default(),
        }
    }
}

impl AsyncRead for TapStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = result {
            if !this.parser.is_broken() {
                let heads = &this.heads;
                this.parser
                    .feed(&buf.filled()[before..], &mut |head| heads.push(head));
            }
        }
        result
    }
}

impl AsyncWrite for TapStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// What a handler knows about its connection: the peer and the connection's head queue.
#[derive(Debug, Clone)]
pub struct TapConnection {
    pub remote: SocketAddr,
    heads: Arc<HeadQueue>,
}

impl TapConnection {
    /// Claims the head of the request being handled (the oldest unclaimed one).
    pub(crate) fn pop_head(&self) -> Option<RequestHead> {
        self.heads.pop()
    }
}

impl Connected<IncomingStream<'_, TapListener>> for TapConnection {
    fn connect_info(stream: IncomingStream<'_, TapListener>) -> Self {
        Self {
            remote: *stream.remote_addr(),
            heads: Arc::clone(&stream.io().heads),
        }
    }
}

impl RequestHead {
    /// Whether this head is the one hyper parsed into `method`, `target` and `headers`: same
    /// method, same target, same multiset of (lowercase name, value). `Content-Length` is left
    /// out: hyper drops it beside `Transfer-Encoding` and folds equal duplicates.
    pub(crate) fn matches(
        &self,
        method: &str,
        target: &str,
        headers: &axum::http::HeaderMap,
    ) -> bool {
        if self.method != method || self.target != target {
            return false;
        }
        let is_counted = |name: &str| !name.eq_ignore_ascii_case("content-length");
        let mut ours: Vec<(String, &[u8])> = self
            .headers
            .iter()
            .filter(|h| is_counted(&h.name))
            .map(|h| (h.name.to_ascii_lowercase(), h.value.as_slice()))
            .collect();
        let mut theirs: Vec<(String, &[u8])> = headers
            .iter()
            .filter(|(n, _)| is_counted(n.as_str()))
            .map(|(n, v)| (n.as_str().to_string(), v.as_bytes()))
            .collect();
        ours.sort_unstable();
        theirs.sort_unstable();
        ours == theirs
    }

    pub(crate) fn into_headers(self) -> Vec<Header> {
        self.headers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};

    fn head(headers: &[(&str, &str)]) -> RequestHead {
        RequestHead {
            method: "POST".into(),
            target: "/s?a=1".into(),
            headers: headers.iter().map(|(n, v)| Header::new(*n, *v)).collect(),
        }
    }

    fn map(headers: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (n, v) in headers {
            map.append(*n, HeaderValue::from_static(v));
        }
        map
    }

    #[test]
    fn a_head_matches_hyper_s_view_of_the_same_request() {
        let h = head(&[("X-A", "1"), ("x-b", "2"), ("X-a", "3")]);
        let m = map(&[("x-a", "1"), ("x-a", "3"), ("x-b", "2")]);
        assert!(h.matches("POST", "/s?a=1", &m));
    }

    #[test]
    fn any_difference_but_content_length_is_a_mismatch() {
        let h = head(&[
            ("X-A", "1"),
            ("Content-Length", "2"),
            ("Transfer-Encoding", "chunked"),
        ]);
        let m = map(&[("x-a", "1"), ("transfer-encoding", "chunked")]);
        assert!(
            h.matches("POST", "/s?a=1", &m),
            "hyper drops Content-Length beside chunked"
        );
        assert!(!h.matches("PUT", "/s?a=1", &m), "method");
        assert!(!h.matches("POST", "/s?a=2", &m), "target");
        let other_value = map(&[("x-a", "2"), ("transfer-encoding", "chunked")]);
        assert!(!h.matches("POST", "/s?a=1", &other_value), "value");
        let extra = map(&[("x-a", "1"), ("x-a", "1"), ("transfer-encoding", "chunked")]);
        assert!(!h.matches("POST", "/s?a=1", &extra), "multiplicity");
    }

    #[test]
    fn the_queue_is_fifo_and_bounded() {
        let q = HeadQueue::default();
        for i in 0..MAX_QUEUED_HEADS {
            assert!(q.push(RequestHead {
                target: format!("/{i}"),
                ..head(&[])
            }));
        }
        assert!(
            !q.push(head(&[])),
            "full: the tap stops rather than grow without bound"
        );
        assert_eq!(q.pop().map(|h| h.target), Some("/0".into()));
    }
}
