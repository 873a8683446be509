//! The byte stream under a connection: plain TCP, or TLS after the
//! client's SSLRequest. One type for both so the command loop is written
//! once; the TLS handshake happens in place.

pub use lockstep_types::result::TlsInfo;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_rustls::server::TlsStream;

/// A byte stream a connection is served over: any async socket, told
/// before TLS takes it over.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {
    /// rustls reads until the socket would block; a stream that blocks its
    /// thread instead must switch to non-blocking reads here.
    fn before_tls(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Stream for tokio::net::TcpStream {}
impl Stream for tokio::io::DuplexStream {}
impl<R, W> Stream for tokio::io::Join<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
}
impl Stream for crate::BlockingTcp {
    fn before_tls(&mut self) -> io::Result<()> {
        self.join_reactor()
    }
}

pub(crate) enum Transport<S> {
    Plain(S),
    Tls(Box<TlsStream<Rewind<S>>>),
    /// Only while the TLS handshake runs (or after it failed).
    Closed,
}

impl<S: Stream> Transport<S> {
    /// Runs the TLS handshake over the plain stream. `buffered` are bytes
    /// already read past the SSLRequest (the start of the ClientHello).
    pub(crate) async fn upgrade(
        &mut self,
        config: Arc<rustls::ServerConfig>,
        buffered: Vec<u8>,
    ) -> io::Result<TlsInfo> {
        let Transport::Plain(mut plain) = std::mem::replace(self, Transport::Closed) else {
            return Err(io::Error::other("TLS requested twice"));
        };
        plain.before_tls()?;
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        let tls = acceptor
            .accept(Rewind {
                prefix: buffered,
                pos: 0,
                inner: plain,
            })
            .await?;
        let conn = tls.get_ref().1;
        let version = match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
            Some(v) => format!("{v:?}"),
            None => String::new(),
        };
        let cipher = conn
            .negotiated_cipher_suite()
            .map(|s| openssl_style(&format!("{:?}", s.suite())))
            .unwrap_or_default();
        *self = Transport::Tls(Box::new(tls));
        Ok(TlsInfo { version, cipher })
    }
}

/// rustls names TLS 1.3 suites "TLS13_AES_..."; clients and MySQL print
/// the IANA/OpenSSL form "TLS_AES_...".
fn openssl_style(rustls_name: &str) -> String {
    match rustls_name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => rustls_name.to_string(),
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "TLS handshake failed")
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Transport<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            Transport::Closed => Poll::Ready(Err(closed())),
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Transport<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            Transport::Closed => Poll::Ready(Err(closed())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_flush(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Transport::Closed => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Transport::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Transport::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Transport::Closed => Poll::Ready(Ok(())),
        }
    }
}

/// A stream that first yields bytes already read from it.
pub(crate) struct Rewind<S> {
    prefix: Vec<u8>,
    pos: usize,
    inner: S,
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if me.pos < me.prefix.len() {
            let n = (me.prefix.len() - me.pos).min(buf.remaining());
            buf.put_slice(&me.prefix[me.pos..me.pos + n]);
            me.pos += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut me.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_names() {
        assert_eq!(
            openssl_style("TLS13_AES_256_GCM_SHA384"),
            "TLS_AES_256_GCM_SHA384"
        );
        assert_eq!(
            openssl_style("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
        );
    }
}
