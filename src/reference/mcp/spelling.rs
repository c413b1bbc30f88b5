//! How a client spelled the `Mcp-*` header names of its latest request on a
//! connection. hyper lower-cases header names before a handler sees them, so
//! the fault of MCP-HDR-006 (a server that looks `mcp-method` up
//! case-sensitively) needs the bytes as they arrived: [`Recording`] wraps a
//! plain TCP stream and notes the spelling of every `Mcp-*` name of each
//! request head it reads.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Most connections remembered.
const MAX_TRACKED: usize = 4096;
/// Bytes of a line kept: enough for any header name protocheck sends.
const MAX_LINE: usize = 96;
/// Bytes kept from the end of a line.
const TAIL: usize = 16;

/// The spellings seen, by connection.
#[derive(Debug, Default, Clone)]
pub(crate) struct Spellings(Arc<Mutex<HashMap<SocketAddr, Vec<String>>>>);

impl Spellings {
    /// The `Mcp-*` names of the latest request head on `peer`, as spelled;
    /// `None` when the connection is not recorded.
    pub(crate) fn of(&self, peer: SocketAddr) -> Option<Vec<String>> {
        self.0.lock().ok()?.get(&peer).cloned()
    }

    fn set(&self, peer: SocketAddr, names: Vec<String>) {
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= MAX_TRACKED && !map.contains_key(&peer) {
                map.clear();
            }
            map.insert(peer, names);
        }
    }
}

/// A TCP stream that records header-name spellings as it is read.
pub(crate) struct Recording<S> {
    inner: S,
    peer: SocketAddr,
    spellings: Spellings,
    line: Vec<u8>,
    /// The last bytes of the current line: a request line may follow the
    /// previous body on the same line, longer than what `line` keeps.
    tail: Vec<u8>,
    names: Vec<String>,
}

impl<S> Recording<S> {
    pub(crate) fn new(inner: S, peer: SocketAddr, spellings: Spellings) -> Self {
        Self {
            inner,
            peer,
            spellings,
            line: Vec::new(),
            tail: Vec::new(),
            names: Vec::new(),
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b != b'\n' {
                if self.line.len() < MAX_LINE {
                    self.line.push(b);
                }
                if self.tail.len() == TAIL {
                    self.tail.remove(0);
                }
                self.tail.push(b);
                continue;
            }
            let line = String::from_utf8_lossy(&self.line).trim_end().to_owned();
            let tail = String::from_utf8_lossy(&self.tail).trim_end().to_owned();
            self.line.clear();
            self.tail.clear();
            // A request line (possibly right after the previous body, which
            // has no newline of its own) starts a new head.
            if tail.ends_with(" HTTP/1.1") || tail.ends_with(" HTTP/1.0") {
                self.names.clear();
            } else if line.is_empty() {
                self.spellings.set(self.peer, self.names.clone());
            } else if let Some((name, _)) = line.split_once(':')
                && name.len() > 4
                && name[..4].eq_ignore_ascii_case("mcp-")
            {
                self.names.push(name.to_owned());
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Recording<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let fresh = buf.filled()[before..].to_vec();
            self.scan(&fresh);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Recording<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_recorded_as_spelled() {
        let spellings = Spellings::default();
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap_or_else(|_| unreachable!());
        let mut r = Recording::new((), peer, spellings.clone());
        r.scan(b"POST /mcp HTTP/1.1\r\nHost: x\r\nMcp-Method: tools/list\r\nmcp-name: a\r\n\r\n{}");
        assert_eq!(
            spellings.of(peer),
            Some(vec!["Mcp-Method".to_owned(), "mcp-name".to_owned()])
        );
        let body = format!("{{\"padding\": \"{}\"}}", "x".repeat(300));
        r.scan(body.as_bytes());
        r.scan(b"POST /mcp HTTP/1.1\r\nMCP-METHOD: x\r\n\r\n");
        assert_eq!(spellings.of(peer), Some(vec!["MCP-METHOD".to_owned()]));
    }
}
