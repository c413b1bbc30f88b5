//! A TCP stream that acknowledges what it receives at once.
//!
//! Many servers write a response's head and its body with two writes on a
//! socket that batches small segments (Nagle's algorithm): the body waits
//! until the head is acknowledged. Linux delays an acknowledgement for up to
//! 40 ms once a connection looks interactive, which a request/response
//! exchange does after its first round trip, so on a kept-alive connection
//! such a server answers every request about 40 ms late, whatever its own
//! speed. Setting `TCP_QUICKACK` before each read makes the kernel acknowledge
//! at once; the option does not stick (the kernel may go back to delaying),
//! hence once per read. Elsewhere the wrapper only reads.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A [`TcpStream`] that asks for immediate acknowledgements before each read.
pub struct QuickAck(TcpStream);

impl QuickAck {
    pub fn new(stream: TcpStream) -> Self {
        Self(stream)
    }

    #[cfg(target_os = "linux")]
    fn ask(&self) {
        // Best effort: a socket that refuses the option only acknowledges later.
        let _ = socket2::SockRef::from(&self.0).set_tcp_quickack(true);
    }

    #[cfg(not(target_os = "linux"))]
    fn ask(&self) {}
}

impl AsyncRead for QuickAck {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.ask();
        Pin::new(&mut this.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for QuickAck {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}
