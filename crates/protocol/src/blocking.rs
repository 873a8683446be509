//! A TCP stream for a thread that serves one connection alone: reads and
//! writes are blocking system calls rather than readiness from the
//! runtime's reactor.
//!
//! Through the reactor, every command costs a read that fails with EAGAIN,
//! an `epoll_wait` that sleeps, and the read again; a thread with nothing
//! else to do sleeps in the read itself (one system call, woken by the
//! kernel straight from the socket). Measured against the reactor on the
//! dedicated threads (`bench/ab.sh`, medians): oltp_write_only at 16
//! threads +9%, oltp_read_write at 16 +5%, point_select at 4 +5% and +19%
//! in two runs. MySQL's thread-per-connection reads the same way (book 5.16
//! on what a thread pool costs at low concurrency).
//!
//! The async traits stay so that one command loop serves every stream:
//! a read or write blocks for at most [`SLICE`], then returns `Pending`
//! with a wake-up deferred past the runtime's timer and I/O drivers, so the
//! loop's timers (idle, wait_timeout) and its shutdown signal are seen
//! within a slice. TLS reads until the socket would block, which a blocking
//! read never reports, so before TLS the stream joins the reactor
//! ([`crate::Stream::before_tls`]).

use std::future::Future;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The longest a read or write blocks before the command loop looks at its
/// timers and shutdown signal again. Short next to the 100 ms idle
/// timeout of an open transaction; long enough that an idle connection's
/// thread wakes only a few times a second.
pub const SLICE: Duration = Duration::from_millis(25);

/// See the module documentation.
pub struct BlockingTcp {
    mode: Mode,
}

enum Mode {
    Blocking(TcpStream),
    /// After `before_tls`: readiness from the runtime, as any socket.
    Reactor(tokio::net::TcpStream),
}

impl BlockingTcp {
    /// Takes a connected socket (in either mode) and makes it blocking,
    /// with reads and writes bounded by [`SLICE`].
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(SLICE))?;
        stream.set_write_timeout(Some(SLICE))?;
        Ok(BlockingTcp {
            mode: Mode::Blocking(stream),
        })
    }

    /// The socket back, non-blocking and without timeouts: ready for
    /// `tokio::net::TcpStream::from_std` on another runtime.
    pub fn into_std(self) -> io::Result<TcpStream> {
        let stream = match self.mode {
            Mode::Blocking(s) => s,
            Mode::Reactor(s) => s.into_std()?,
        };
        stream.set_read_timeout(None)?;
        stream.set_write_timeout(None)?;
        stream.set_nonblocking(true)?;
        Ok(stream)
    }

    /// Joins the current runtime's reactor for good.
    pub(crate) fn join_reactor(&mut self) -> io::Result<()> {
        if let Mode::Blocking(s) = &self.mode {
            let s = s.try_clone()?;
            s.set_read_timeout(None)?;
            s.set_write_timeout(None)?;
            s.set_nonblocking(true)?;
            // The clone shares the socket; the blocking handle closes its
            // descriptor only, when replaced.
            self.mode = Mode::Reactor(tokio::net::TcpStream::from_std(s)?);
        }
        Ok(())
    }
}

/// A blocking call's result as a poll: a timeout (the slice ran out)
/// becomes `Pending`, woken once the runtime has polled its drivers.
fn blocking<T>(
    cx: &mut Context<'_>,
    mut call: impl FnMut() -> io::Result<T>,
) -> Poll<io::Result<T>> {
    loop {
        match call() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                // `yield_now` defers its wake-up until the runtime has run
                // its timers and reactor (a plain `wake_by_ref` would poll
                // this task again first, and the loop's timers would not
                // fire).
                let yielded = std::pin::pin!(tokio::task::yield_now());
                let pending = yielded.poll(cx).is_pending();
                debug_assert!(pending, "a first poll of yield_now is pending");
                return Poll::Pending;
            }
            r => return Poll::Ready(r),
        }
    }
}

impl AsyncRead for BlockingTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().mode {
            Mode::Blocking(s) => {
                blocking(cx, || s.read(buf.initialize_unfilled())).map_ok(|n| buf.advance(n))
            }
            Mode::Reactor(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for BlockingTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().mode {
            Mode::Blocking(s) => blocking(cx, || s.write(data)),
            Mode::Reactor(s) => Pin::new(s).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().mode {
            // Writes go straight to the socket (TCP_NODELAY is the caller's).
            Mode::Blocking(_) => Poll::Ready(Ok(())),
            Mode::Reactor(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().mode {
            Mode::Blocking(s) => Poll::Ready(s.shutdown(std::net::Shutdown::Write)),
            Mode::Reactor(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
