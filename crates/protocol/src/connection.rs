//! The per-connection state machine: handshake and authentication, then a
//! loop that reads one command, has the handler run it, and writes the
//! response with a single flush.

use crate::charset::ResultCharset;
use crate::command::{self, decode_command, Command};
use crate::query_attrs;

mod local_infile;
use crate::compress::{CompressState, Io};
use crate::handshake::{self, caps, ClientHello};
use crate::packet::{PacketReader, PacketWriter};
use crate::resultset::{self, status_flags};
use crate::transport::{Stream, Transport};
use crate::{caching_sha2, native_password, Auth};
use crate::{wire, Config, Handler, Handshake, OkInfo, ProtocolError, Response, ResultSet};
use lockstep_types::error::Code;
use lockstep_types::{prefetch, Error};
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

/// Packets before authentication are small; an unauthenticated peer must not
/// make us buffer max_allowed_packet.
const PRE_AUTH_MAX_PACKET: usize = 1 << 20;
/// A large result set is written in pieces of about this size instead of
/// being buffered whole.
const FLUSH_AT: usize = 256 * 1024;

/// A deadline that stands for "not armed": past MySQL's largest
/// wait_timeout (365 days), short of `Instant` overflow.
const FAR: std::time::Duration = std::time::Duration::from_secs(400 * 86_400);

// Error codes not in lockstep_types::error::Code because only the protocol
// layer raises them.
const ER_HANDSHAKE_ERROR: u16 = 1043;
const ER_NET_PACKETS_OUT_OF_ORDER: u16 = 1156;
const ER_NET_UNCOMPRESS_ERROR: u16 = 1157;
const ER_STMT_HAS_NO_OPEN_CURSOR: u16 = 1421;
const ER_MALFORMED_PACKET: u16 = 1835;
const ER_CLIENT_INTERACTION_TIMEOUT: u16 = 4031;
const ER_SECURE_TRANSPORT_REQUIRED: u16 = 3159;

/// Per prepared statement: what the protocol must remember between
/// COM_STMT_* commands.
struct Stmt<T> {
    /// The handler's side of the statement (`Handler::Statement`).
    handler: T,
    num_params: usize,
    /// Parameter types (and query attribute names) of the last execute.
    bound: query_attrs::Bound,
    long_data: Vec<Option<Vec<u8>>>,
    /// A SEND_LONG_DATA failure has no reply; it is reported at execute.
    long_data_error: Option<Error>,
    /// The column definitions of its last result set, encoded.
    defs: Option<EncodedDefs>,
    /// The rows of an execute that asked for a cursor, not yet fetched.
    cursor: Option<OpenCursor>,
}

/// A read-only cursor (COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY): the
/// result set is materialized at execute and handed out by COM_STMT_FETCH.
struct OpenCursor {
    columns: std::sync::Arc<[crate::Column]>,
    rows: std::vec::IntoIter<Vec<lockstep_types::Value>>,
}

/// COM_STMT_EXECUTE flag: open a read-only cursor.
const CURSOR_TYPE_READ_ONLY: u8 = 1;

/// A result set's column definition packets as encoded for one plan's
/// columns (`Arc` identity: a prepared statement keeps its plan, so its
/// executes send the same bytes). Encoding them was ~1.7% of the server's
/// CPU under TPC-C; copying is a fraction of that.
struct EncodedDefs {
    columns: std::sync::Arc<[crate::Column]>,
    charset: ResultCharset,
    /// Payloads back to back; `ends[i]` is where column i's ends.
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl EncodedDefs {
    fn new(columns: &std::sync::Arc<[crate::Column]>, charset: ResultCharset) -> EncodedDefs {
        let mut bytes = Vec::new();
        let ends = columns
            .iter()
            .map(|c| {
                resultset::encode_column_def_in(&mut bytes, c, false, charset);
                bytes.len()
            })
            .collect();
        EncodedDefs {
            columns: columns.clone(),
            charset,
            bytes,
            ends,
        }
    }

    fn packets(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.bytes[a..b])
    }
}

/// What a connection's next command touches first, by address: the
/// handler (the SQL session with its transaction), the command loop's own
/// state, and the first lines of the read and write buffers. Taken before
/// the connection waits for a command, and asked of the cache when its
/// socket wakes it, so that the misses overlap one another and the read's
/// system call instead of stalling the command one after another. With a
/// thousand connections this state no longer stays in a core's cache
/// between two commands of one connection; prefetched, point selects from
/// 1024 connections cost the server ~10.0 instead of ~10.8 us each
/// (bench/ab.sh mux_oltp_point_select 1024, 1.064x).
#[derive(Clone, Copy)]
struct Hot {
    spans: [(usize, usize); 4],
}

impl Hot {
    /// At most this many lines of each span (the handler is ~15).
    const MAX_LINES: usize = 24;
    const BUFFER_BYTES: usize = 128;

    fn of<H: Handler>(session: &Session<'_, H>, reader: &PacketReader) -> Hot {
        Hot {
            spans: [
                prefetch::span(&session.handler),
                prefetch::span(session),
                (reader.landing(), Self::BUFFER_BYTES),
                (session.writer.landing(), Self::BUFFER_BYTES),
            ],
        }
    }

    fn prefetch(&self) {
        for &(start, len) in &self.spans {
            prefetch::lines(start, len, Self::MAX_LINES);
        }
    }
}

impl<T> Stmt<T> {
    fn clear_long_data(&mut self) {
        self.long_data.iter_mut().for_each(|d| *d = None);
        self.long_data_error = None;
    }

    /// COM_STMT_RESET: long data dropped and the cursor closed.
    fn reset(&mut self) {
        self.clear_long_data();
        self.cursor = None;
    }
}

enum Flow {
    Continue,
    Quit,
    /// A LOCAL INFILE request was sent: the file's packets come next.
    LocalInfile,
}

/// Why the command loop ended without an error.
enum Exit {
    Done,
    /// Between commands, the handler asked to move (`Handler::relocate`).
    Relocate,
}

/// Waits for a kill signal; never ends without one.
async fn killed(signal: Option<&tokio::sync::Notify>) {
    match signal {
        Some(n) => n.notified().await,
        None => std::future::pending().await,
    }
}

/// The command loop's two timers, kept across commands (`commands`).
struct Timers<'a> {
    idle: std::pin::Pin<&'a mut tokio::time::Sleep>,
    wait: std::pin::Pin<&'a mut tokio::time::Sleep>,
}

impl Timers<'_> {
    /// Only a deadline that came closer needs its timer moved now.
    fn arm(&mut self, idle_at: Option<tokio::time::Instant>, wait_at: tokio::time::Instant) {
        if let Some(at) = idle_at {
            if self.idle.deadline() > at {
                self.idle.as_mut().reset(at);
            }
        }
        if self.wait.deadline() > wait_at {
            self.wait.as_mut().reset(wait_at);
        }
    }
}

/// Commands whose handling reads more packets from the client.
fn reads_more(code: u8) -> bool {
    matches!(
        code,
        command::COM_CHANGE_USER | command::COM_BINLOG_DUMP_GTID | command::COM_BINLOG_DUMP
    )
}

/// How the wait for a command ended.
enum Waited<'r> {
    Read(Result<Option<&'r [u8]>, ProtocolError>),
    /// Shutdown, or the session was killed.
    Exit,
    /// wait_timeout passed.
    TimedOut,
}

/// How [`serve_relocatable`] and [`Parked::resume`] end.
pub enum Served<H: Handler, S> {
    /// The connection is over (the handler has been told, the stream shut).
    Closed(Result<(), ProtocolError>),
    /// The connection, between two commands, asked to move.
    Relocate(Parked<H, S>),
}

/// An authenticated connection lifted off its task between two commands,
/// with everything the command loop keeps: the handler, prepared
/// statements, negotiated capabilities, and bytes already read of the next
/// command. `map_stream` moves the socket (e.g. to another runtime's
/// reactor), `resume` continues the loop where it stopped.
pub struct Parked<H: Handler, S> {
    state: State<H>,
    stream: S,
}

/// A connection's state outside its stream.
struct State<H: Handler> {
    handler: H,
    writer: PacketWriter,
    caps: u32,
    multi_statements: bool,
    stmts: HashMap<u32, Stmt<H::Statement>>,
    connection_id: u32,
    peer: SocketAddr,
    reader: PacketReader,
    /// Set once CLIENT_COMPRESS is in effect (after authentication).
    compress: Option<Box<CompressState>>,
    scramble: [u8; 20],
}

impl<H: Handler, S> Parked<H, S> {
    /// Replaces the stream by `f(stream)`. On failure the connection ends
    /// (the handler is told, as when a client goes away).
    pub fn map_stream<T>(
        mut self,
        f: impl FnOnce(S) -> std::io::Result<T>,
    ) -> std::io::Result<Parked<H, T>> {
        match f(self.stream) {
            Ok(stream) => Ok(Parked {
                state: self.state,
                stream,
            }),
            Err(e) => {
                self.state.handler.disconnect();
                Err(e)
            }
        }
    }
}

impl<H: Handler, S: Stream> Parked<H, S> {
    /// Ends the connection here (the handler is told, the stream shut).
    pub async fn close(mut self) {
        self.state.handler.disconnect();
        let _ = self.stream.shutdown().await;
    }

    /// Continues the command loop; `shutdown` as in [`serve_until`].
    pub async fn resume<F>(self, config: &Config, shutdown: F) -> Served<H, S>
    where
        F: Future<Output = ()> + Send,
    {
        self.run(config, shutdown, false).await
    }

    /// The handshake first if `fresh`, then the command loop.
    async fn run<F>(self, config: &Config, shutdown: F, fresh: bool) -> Served<H, S>
    where
        F: Future<Output = ()> + Send,
    {
        let State {
            handler,
            writer,
            caps,
            multi_statements,
            stmts,
            connection_id,
            peer,
            mut reader,
            mut compress,
            scramble,
        } = self.state;
        let mut session = Session {
            handler,
            scramble,
            // Only plain connections are parked.
            tls: None,
            config,
            writer,
            scratch: Vec::new(),
            caps,
            multi_statements,
            stmts,
            connection_id,
            peer,
        };
        let mut stream = Transport::Plain(self.stream);
        let handshake = if fresh {
            tokio::time::timeout(
                config.connect_timeout,
                session.handshake(&mut stream, &mut reader),
            )
            .await
            .unwrap_or(Err(ProtocolError::Timeout))
        } else {
            Ok(())
        };
        if handshake.is_ok() && fresh && session.caps & caps::COMPRESS != 0 {
            compress = Some(Box::new(CompressState::new(reader.take_buffered())));
        }
        let result = match handshake {
            Ok(()) => {
                session
                    .commands(&mut stream, &mut reader, &mut compress, shutdown)
                    .await
            }
            Err(e) => Err(e),
        };
        session.finish(stream, reader, compress, result).await
    }
}

/// What a client presented to log in (handshake or COM_CHANGE_USER).
struct Login {
    user: String,
    database: Option<String>,
    /// The client's own capabilities (not masked by ours).
    client_caps: u32,
    auth_response: Vec<u8>,
    client_plugin: Vec<u8>,
    /// The connection collation asked for (0: none).
    collation: u8,
    connect_attrs: Vec<(String, String)>,
}

/// Why a handshake response is refused: the ERR packet's parts, and
/// the error the connection ends with.
struct Refusal {
    code: u16,
    state: Option<&'static str>,
    message: &'static str,
    why: ProtocolError,
}

/// The login a handshake response presents, or why it is refused (not a
/// 4.1 response, names not UTF-8, a plain connection where TLS is
/// required). `tls`: the response came over TLS.
fn login_of(
    hello: Result<ClientHello<'_>, wire::Malformed>,
    tls: bool,
    require_tls: bool,
) -> Result<Login, Refusal> {
    let bad = |state, why| Refusal {
        code: ER_HANDSHAKE_ERROR,
        state,
        message: "Bad handshake",
        why,
    };
    let resp = match hello {
        Ok(ClientHello::Response(r)) => r,
        Ok(ClientHello::SslRequest) => {
            let why = ProtocolError::Unsupported("TLS was requested");
            return Err(bad(Some("08S01"), why));
        }
        Ok(ClientHello::Protocol320) => {
            return Err(bad(None, ProtocolError::Unsupported("pre-4.1 client")));
        }
        Err(e) => return Err(bad(Some("08S01"), e.into())),
    };
    let (Ok(user), Ok(database)) = (
        std::str::from_utf8(resp.user),
        resp.database.map(std::str::from_utf8).transpose(),
    ) else {
        let why = wire::Malformed("user or database is not UTF-8").into();
        return Err(bad(Some("08S01"), why));
    };
    if require_tls && !tls {
        return Err(Refusal {
            code: ER_SECURE_TRANSPORT_REQUIRED,
            state: Some("HY000"),
            message: "Connections using insecure transport are prohibited while --require_secure_transport=ON.",
            why: ProtocolError::Unsupported("plain connection while TLS is required"),
        });
    }
    Ok(Login {
        // Owned copies: the read buffer is needed again for an auth switch.
        user: user.to_owned(),
        database: database.map(str::to_owned),
        client_caps: resp.capabilities,
        collation: resp.collation,
        auth_response: resp.auth_response.to_vec(),
        client_plugin: resp
            .auth_plugin
            .unwrap_or(native_password::PLUGIN_NAME.as_bytes())
            .to_vec(),
        connect_attrs: resp.connect_attrs,
    })
}

struct Session<'c, H: Handler> {
    handler: H,
    /// The handshake's challenge; COM_CHANGE_USER answers it again.
    scramble: [u8; 20],
    /// Set when the connection is TLS.
    tls: Option<crate::TlsInfo>,
    config: &'c Config,
    writer: PacketWriter,
    /// Reused for formatting values, so rows do not allocate.
    scratch: Vec<u8>,
    caps: u32,
    multi_statements: bool,
    stmts: HashMap<u32, Stmt<H::Statement>>,
    connection_id: u32,
    peer: SocketAddr,
}

/// Drive one connection to the end: handshake, auth, then the command loop.
pub async fn serve<H: Handler, S: Stream>(
    stream: S,
    connection_id: u32,
    peer: SocketAddr,
    handler: H,
    config: &Config,
) -> Result<(), ProtocolError> {
    serve_until(
        stream,
        connection_id,
        peer,
        handler,
        config,
        std::future::pending(),
    )
    .await
}

/// Like [`serve`], but the connection is also closed when `shutdown`
/// completes while it waits for a command (server shutdown, or KILL of an
/// idle session). A command in progress is finished first. A handler that
/// asks to relocate goes on in place.
pub async fn serve_until<H, S, F>(
    stream: S,
    connection_id: u32,
    peer: SocketAddr,
    handler: H,
    config: &Config,
    shutdown: F,
) -> Result<(), ProtocolError>
where
    H: Handler,
    S: Stream,
    F: Future<Output = ()> + Send,
{
    let mut shutdown = std::pin::pin!(shutdown);
    let mut served = serve_relocatable(
        stream,
        connection_id,
        peer,
        handler,
        config,
        shutdown.as_mut(),
    )
    .await;
    loop {
        match served {
            Served::Closed(result) => return result,
            Served::Relocate(parked) => served = parked.resume(config, shutdown.as_mut()).await,
        }
    }
}

/// Like [`serve_until`], but between commands the connection may leave
/// (`Handler::relocate`), to be continued with [`Parked::resume`].
pub async fn serve_relocatable<H, S, F>(
    stream: S,
    connection_id: u32,
    peer: SocketAddr,
    handler: H,
    config: &Config,
    shutdown: F,
) -> Served<H, S>
where
    H: Handler,
    S: Stream,
    F: Future<Output = ()> + Send,
{
    let state = State {
        handler,
        writer: PacketWriter::new(),
        caps: 0,
        multi_statements: false,
        stmts: HashMap::new(),
        connection_id,
        peer,
        reader: PacketReader::new(),
        compress: None,
        scramble: [0; 20],
    };
    Parked { state, stream }.run(config, shutdown, true).await
}

/// Send an ERR packet (e.g. 1040 too many connections) as the first packet
/// and close, for refusing a connection before the handshake.
pub async fn refuse<S: AsyncWrite + Unpin>(mut stream: S, error: &Error) -> std::io::Result<()> {
    let mut w = PacketWriter::new();
    // No SQLSTATE: the client has not yet said it speaks protocol 4.1.
    w.packet(|o| resultset::encode_err(o, error.number(), None, &error.message));
    w.flush(&mut stream).await?;
    stream.shutdown().await
}

pub(crate) fn utf8(b: &[u8]) -> Result<&str, Error> {
    std::str::from_utf8(b)
        .map_err(|_| Error::new(Code::Parse, "Invalid utf8mb4 character string in command"))
}

fn unknown_stmt(id: u32, command: &str) -> Error {
    Error::new(
        Code::UnknownStmtHandler,
        format!("Unknown prepared statement handler ({id}) given to {command}"),
    )
}

impl<H: Handler> Session<'_, H> {
    fn deprecate_eof(&self) -> bool {
        self.caps & caps::DEPRECATE_EOF != 0
    }

    fn status_flags(&self) -> u16 {
        let s = self.handler.status();
        let mut flags = 0;
        if s.in_transaction {
            flags |= status_flags::IN_TRANS;
        }
        if s.autocommit {
            flags |= status_flags::AUTOCOMMIT;
        }
        if s.no_backslash_escapes {
            flags |= status_flags::NO_BACKSLASH_ESCAPES;
        }
        flags
    }

    fn send_ok(&mut self, ok: &OkInfo, extra_status: u16) {
        let status = self.status_flags() | extra_status;
        let changes = self.state_changes();
        self.writer
            .packet(|o| resultset::encode_ok_tracked(o, 0, ok, status, &changes));
    }

    /// The session state changes for the next OK packet: none unless the
    /// client asked for CLIENT_SESSION_TRACK (they are dropped then).
    fn state_changes(&mut self) -> Vec<lockstep_types::result::StateChange> {
        let changes = self.handler.take_state_changes();
        match self.caps & caps::SESSION_TRACK {
            0 => Vec::new(),
            _ => changes,
        }
    }

    fn send_error(&mut self, e: &Error) {
        if e.message.is_ascii() {
            return self.writer.packet(|o| resultset::encode_error(o, e));
        }
        // Messages quote names and values: in character_set_results.
        let charset = self.handler.result_charset();
        let text = charset.text(&e.message);
        self.writer
            .packet(|o| resultset::encode_err_bytes(o, e.number(), Some(e.sqlstate()), &text));
    }

    fn send_raw_error(&mut self, code: u16, state: &str, message: &str) {
        self.writer
            .packet(|o| resultset::encode_err(o, code, Some(state), message));
    }

    fn send_unit(&mut self, r: Result<(), Error>) {
        match r {
            Ok(()) => self.send_ok(&OkInfo::default(), 0),
            Err(e) => self.send_error(&e),
        }
    }

    /// The packet that ends a list of column definitions or rows: EOF, or
    /// an OK with the EOF header for CLIENT_DEPRECATE_EOF clients.
    fn send_end(&mut self, status: u16) {
        self.send_end_warning(status, 0);
    }

    /// The packet that ends a result set's rows, with the statement's
    /// warning count.
    fn send_end_warning(&mut self, status: u16, warnings: u16) {
        if self.deprecate_eof() {
            let ok = OkInfo {
                warnings,
                ..OkInfo::default()
            };
            let changes = self.state_changes();
            self.writer
                .packet(|o| resultset::encode_ok_tracked(o, 0xFE, &ok, status, &changes));
        } else {
            self.writer
                .packet(|o| resultset::encode_eof(o, warnings, status));
        }
    }

    /// Ends a connection: a relocation request of a plain connection parks
    /// it; anything else closes it.
    async fn finish<S>(
        mut self,
        stream: Transport<S>,
        reader: PacketReader,
        compress: Option<Box<CompressState>>,
        result: Result<Exit, ProtocolError>,
    ) -> Served<H, S>
    where
        S: Stream,
    {
        match (result, stream) {
            (Ok(Exit::Relocate), Transport::Plain(stream)) => Served::Relocate(Parked {
                state: State {
                    handler: self.handler,
                    writer: self.writer,
                    caps: self.caps,
                    multi_statements: self.multi_statements,
                    stmts: self.stmts,
                    connection_id: self.connection_id,
                    peer: self.peer,
                    reader,
                    compress,
                    scramble: self.scramble,
                },
                stream,
            }),
            (result, mut stream) => {
                self.handler.disconnect();
                let _ = stream.shutdown().await;
                Served::Closed(result.map(|_| ()))
            }
        }
    }

    /// The command loop, after authentication.
    async fn commands<S, F>(
        &mut self,
        stream: &mut Transport<S>,
        reader: &mut PacketReader,
        compress: &mut Option<Box<CompressState>>,
        shutdown: F,
    ) -> Result<Exit, ProtocolError>
    where
        S: Stream,
        F: Future<Output = ()> + Send,
    {
        tokio::pin!(shutdown);
        // Two timers for the whole loop, not two per command: registering
        // and cancelling a timer in the runtime's wheel for every command
        // cost ~1% of the server's CPU under TPC-C. A timer here may be
        // armed for an earlier deadline than the one that applies (the
        // client spoke since); when it fires early it is re-armed, so a busy
        // connection touches the wheel once per 100 ms (idle) or once per
        // wait_timeout, not once per command.
        let far = tokio::time::Instant::now() + FAR;
        let idle = tokio::time::sleep_until(far);
        let wait = tokio::time::sleep_until(far);
        tokio::pin!(idle);
        tokio::pin!(wait);
        let mut timers = Timers { idle, wait };
        let kill = self.handler.kill_signal();
        loop {
            // Only between commands, with no read in flight: the reader
            // keeps any bytes of the next command already received.
            if matches!(stream, Transport::Plain(_)) && self.handler.relocate() {
                return Ok(Exit::Relocate);
            }
            let mut seq = 0u8;
            let stream = &mut Io {
                inner: &mut *stream,
                compress: compress.as_deref_mut(),
            };
            let waited = self
                .wait_for_command(
                    stream,
                    reader,
                    &mut seq,
                    &mut timers,
                    shutdown.as_mut(),
                    kill.as_deref(),
                )
                .await;
            let payload = match waited {
                Waited::Read(Ok(Some(p))) => p,
                Waited::Read(Ok(None)) | Waited::Exit => return Ok(Exit::Done),
                Waited::Read(Err(e)) => return self.answer_read_error(stream, seq, e).await,
                Waited::TimedOut => {
                    self.writer.set_seq(0);
                    self.send_raw_error(
                        ER_CLIENT_INTERACTION_TIMEOUT,
                        "HY000",
                        "The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior.",
                    );
                    let _ = self.writer.flush(stream).await;
                    return Err(ProtocolError::Timeout);
                }
            };
            self.writer.set_seq(seq);
            let received = payload.len() as u64 + 4;
            // Commands that read more packets get the reader.
            let mut flow = match payload.split_first() {
                Some((&code, body)) if reads_more(code) => {
                    let body = body.to_vec();
                    self.exchange(code, &body, stream, reader).await?
                }
                _ => self.dispatch(payload, stream).await?,
            };
            while matches!(flow, Flow::LocalInfile) {
                flow = self.local_infile(stream, reader).await?;
            }
            self.writer.flush(stream).await?;
            let sent = self.writer.take_sent();
            self.handler.traffic(received, sent);
            if matches!(flow, Flow::Quit) || self.handler.should_close() {
                return Ok(Exit::Done);
            }
        }
    }

    /// Waits for the next command's packet while the timers run: `idle`
    /// tells the handler it went quiet, wait_timeout ends the connection,
    /// and shutdown or a KILL ends the wait.
    async fn wait_for_command<'r, S, F>(
        &mut self,
        stream: &mut Io<'_, Transport<S>>,
        reader: &'r mut PacketReader,
        seq: &mut u8,
        timers: &mut Timers<'_>,
        mut shutdown: std::pin::Pin<&mut F>,
        kill: Option<&tokio::sync::Notify>,
    ) -> Waited<'r>
    where
        S: Stream,
        F: Future<Output = ()> + Send,
    {
        let max = self.config.max_allowed_packet;
        let since = tokio::time::Instant::now();
        let idle_at = self.handler.idle_after().map(|d| since + d);
        let wait_at = since
            + self
                .handler
                .wait_timeout()
                .unwrap_or(self.config.wait_timeout);
        timers.arm(idle_at, wait_at);
        // The read stays the same future across the idle call, so a
        // packet half-received when it fires is not lost.
        let hot = Hot::of(self, reader);
        let read = reader.read(stream, seq, max);
        tokio::pin!(read);
        // Polled again only once the socket woke the connection: its
        // state is asked for then, ahead of the read.
        let mut woken = false;
        let mut read = std::future::poll_fn(|cx| {
            if woken {
                hot.prefetch();
            }
            woken = true;
            read.as_mut().poll(cx)
        });
        let mut idled = idle_at.is_none();
        loop {
            tokio::select! {
                biased;
                r = &mut read => return Waited::Read(r),
                _ = &mut shutdown => return Waited::Exit,
                _ = killed(kill) => {
                    if self.handler.should_close() {
                        return Waited::Exit;
                    }
                }
                _ = &mut timers.wait => {
                    if tokio::time::Instant::now() >= wait_at {
                        return Waited::TimedOut;
                    }
                    timers.wait.as_mut().reset(wait_at);
                }
                _ = &mut timers.idle, if !idled => {
                    let at = idle_at.expect("armed only with a deadline");
                    if tokio::time::Instant::now() >= at {
                        idled = true;
                        self.handler.idle();
                        timers.idle.as_mut().reset(tokio::time::Instant::now() + FAR);
                    } else {
                        timers.idle.as_mut().reset(at);
                    }
                }
            }
        }
    }

    /// A command that could not be read: answered when MySQL answers one
    /// (too large, out of order, not decompressible); the connection ends.
    async fn answer_read_error<S>(
        &mut self,
        stream: &mut Io<'_, Transport<S>>,
        seq: u8,
        e: ProtocolError,
    ) -> Result<Exit, ProtocolError>
    where
        S: Stream,
    {
        self.writer.set_seq(seq);
        match &e {
            ProtocolError::PacketTooLarge(_) => self.send_error(&Error::new(
                Code::NetPacketTooLarge,
                "Got a packet bigger than 'max_allowed_packet' bytes",
            )),
            ProtocolError::OutOfOrder { .. } => self.send_raw_error(
                ER_NET_PACKETS_OUT_OF_ORDER,
                "08S01",
                "Got packets out of order",
            ),
            ProtocolError::Io(io)
                if stream.compress.is_some() && io.kind() == std::io::ErrorKind::InvalidData =>
            {
                self.send_raw_error(ER_NET_UNCOMPRESS_ERROR, "08S01", &io.to_string())
            }
            _ => return Err(e),
        }
        let _ = self.writer.flush(stream).await;
        Err(e)
    }

    /// Runs a command that reads more packets: COM_CHANGE_USER (an auth
    /// exchange) or a binlog dump (a semisync replica's replies).
    async fn exchange<S>(
        &mut self,
        code: u8,
        body: &[u8],
        stream: &mut Io<'_, Transport<S>>,
        reader: &mut PacketReader,
    ) -> Result<Flow, ProtocolError>
    where
        S: Stream,
    {
        debug_assert!(reads_more(code));
        if code == command::COM_CHANGE_USER {
            return self.change_user(stream, reader, body).await;
        }
        // A dump waits for events and replies at once: its reads must not
        // block a dedicated thread (blocking.rs).
        if let Transport::Plain(s) = &mut *stream.inner {
            s.before_tls()?;
        }
        self.binlog_dump(stream, reader, code, body).await
    }

    /// Sends the buffered packets and reads the client's next one; the
    /// writer continues the sequence after it.
    async fn round_trip<'r, S>(
        &mut self,
        stream: &mut S,
        reader: &'r mut PacketReader,
    ) -> Result<&'r [u8], ProtocolError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        self.writer.flush(stream).await?;
        let mut seq = self.writer.seq();
        let payload = reader
            .read(stream, &mut seq, PRE_AUTH_MAX_PACKET)
            .await?
            .ok_or(ProtocolError::UnexpectedEof)?;
        self.writer.set_seq(seq);
        Ok(payload)
    }

    /// Sends an ERR packet and ends the connection with `why`.
    async fn fail<S>(
        &mut self,
        stream: &mut S,
        code: u16,
        state: Option<&str>,
        message: &str,
        why: ProtocolError,
    ) -> Result<(), ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        self.writer
            .packet(|o| resultset::encode_err(o, code, state, message));
        self.writer.flush(stream).await?;
        Err(why)
    }

    async fn handshake<S>(
        &mut self,
        stream: &mut Transport<S>,
        reader: &mut PacketReader,
    ) -> Result<(), ProtocolError>
    where
        S: Stream,
    {
        let scramble = handshake::new_scramble();
        let offered = match self.config.tls {
            Some(_) => handshake::SERVER_CAPABILITIES | caps::SSL,
            None => handshake::SERVER_CAPABILITIES,
        };
        self.writer.set_seq(0);
        let (version, id) = (&self.config.server_version, self.connection_id);
        self.writer.packet(|o| {
            handshake::encode_handshake(
                o,
                version,
                id,
                &scramble,
                status_flags::AUTOCOMMIT,
                offered,
            )
        });
        let mut payload = self.round_trip(stream, reader).await?;
        let mut tls = None;
        if let (Ok(ClientHello::SslRequest), Some(config)) = (
            handshake::parse_handshake_response(payload),
            self.config.tls.clone(),
        ) {
            // The handshake response follows, encrypted, with the next sequence id.
            let buffered = reader.take_buffered();
            tls = Some(stream.upgrade(config, buffered).await?);
            let mut seq = self.writer.seq();
            payload = reader
                .read(stream, &mut seq, PRE_AUTH_MAX_PACKET)
                .await?
                .ok_or(ProtocolError::UnexpectedEof)?;
            self.writer.set_seq(seq);
        }
        let hello = handshake::parse_handshake_response(payload);
        let require_tls = self.config.require_secure_transport;
        let login = match login_of(hello, tls.is_some(), require_tls) {
            Ok(login) => login,
            Err(r) => return self.fail(stream, r.code, r.state, r.message, r.why).await,
        };
        self.caps = login.client_caps & offered;
        self.multi_statements = self.caps & caps::MULTI_STATEMENTS != 0;
        self.scramble = scramble;
        self.tls = tls;
        self.authenticate(stream, reader, login).await
    }

    /// Checks a login's credentials with the account's plugin (switching
    /// the client to it when needed), and answers OK or ERR. Used by the
    /// handshake and by COM_CHANGE_USER.
    async fn authenticate<S>(
        &mut self,
        stream: &mut S,
        reader: &mut PacketReader,
        login: Login,
    ) -> Result<(), ProtocolError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let Login {
            user,
            database,
            client_caps,
            mut auth_response,
            client_plugin,
            collation,
            connect_attrs,
        } = login;
        let scramble = self.scramble;
        let tls = self.tls.clone();
        let account = self.handler.account_plugin(&user, self.peer);
        let plugin = handshake::choose_plugin(&client_plugin, account);
        if client_caps & caps::PLUGIN_AUTH != 0 && plugin.as_bytes() != client_plugin {
            // E.g. caching_sha2_password from MySQL 8 clients for a native
            // account, or the reverse.
            self.writer
                .packet(|o| handshake::encode_auth_switch(o, plugin, &scramble));
            auth_response = self.round_trip(stream, reader).await?.to_vec();
        }
        let mut hs = Handshake {
            user: &user,
            database: database.as_deref(),
            auth_plugin: plugin,
            scramble: &scramble,
            auth_response: &auth_response,
            cleartext: false,
            capabilities: self.caps,
            peer: self.peer,
            tls: tls.as_ref(),
            collation,
            connect_attrs: &connect_attrs,
        };
        let mut result = self.handler.authenticate(&hs);
        let password;
        if let Ok(Auth::FullAuthRequired) = result {
            let step = self.full_authentication(stream, reader).await?;
            hs.cleartext = true;
            result = match step {
                caching_sha2::FullAuth::Password(p) => {
                    password = p;
                    hs.auth_response = &password;
                    self.handler.authenticate(&hs)
                }
                _ => {
                    hs.auth_response = &[];
                    // The handler words the access-denied error.
                    self.handler
                        .authenticate(&hs)
                        .and(Ok(Auth::FullAuthRequired))
                }
            };
        }
        self.answer_login(stream, result, &hs).await
    }

    /// caching_sha2_password's full authentication: the client sends its
    /// password over TLS, or RSA-encrypted (asking for the public key
    /// first if it has none).
    async fn full_authentication<S>(
        &mut self,
        stream: &mut S,
        reader: &mut PacketReader,
    ) -> Result<caching_sha2::FullAuth, ProtocolError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let scramble = self.scramble;
        let keys = self.config.rsa_keys.clone();
        let keys = keys.as_deref().and_then(|k| k.get());
        let more = [
            caching_sha2::AUTH_MORE_DATA,
            caching_sha2::PERFORM_FULL_AUTHENTICATION,
        ];
        self.writer.write_packet(&more);
        let packet = self.round_trip(stream, reader).await?.to_vec();
        let step = caching_sha2::full_auth_step(&packet, self.tls.is_some(), &scramble, keys);
        let caching_sha2::FullAuth::SendPublicKey(pem) = step else {
            return Ok(step);
        };
        self.writer.packet(|o| {
            o.push(caching_sha2::AUTH_MORE_DATA);
            o.extend_from_slice(pem.as_bytes());
        });
        let packet = self.round_trip(stream, reader).await?.to_vec();
        Ok(
            match caching_sha2::full_auth_step(&packet, false, &scramble, keys) {
                caching_sha2::FullAuth::SendPublicKey(_) => {
                    caching_sha2::FullAuth::Refuse("the public key was requested twice")
                }
                other => other,
            },
        )
    }

    /// The end of a login: OK (after caching_sha2's fast-auth marker when
    /// the scramble was checked), or the error, which ends the connection.
    async fn answer_login<S>(
        &mut self,
        stream: &mut S,
        result: Result<Auth, Error>,
        hs: &Handshake<'_>,
    ) -> Result<(), ProtocolError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let (plugin, user) = (hs.auth_plugin, hs.user);
        match result {
            Ok(Auth::Accepted) => {
                if plugin == caching_sha2::PLUGIN_NAME
                    && !hs.cleartext
                    && !hs.auth_response.is_empty()
                {
                    self.writer.write_packet(&[
                        caching_sha2::AUTH_MORE_DATA,
                        caching_sha2::FAST_AUTH_SUCCESS,
                    ]);
                }
                self.send_ok(&OkInfo::default(), 0);
                self.writer.flush(stream).await?;
                Ok(())
            }
            Ok(Auth::FullAuthRequired) => {
                let e = Error::new(
                    Code::AccessDenied,
                    format!(
                        "Access denied for user '{user}'@'{}' (using password: YES)",
                        self.peer.ip()
                    ),
                );
                self.send_error(&e);
                self.writer.flush(stream).await?;
                Err(ProtocolError::Auth(e))
            }
            Err(e) => {
                self.send_error(&e);
                self.writer.flush(stream).await?;
                Err(ProtocolError::Auth(e))
            }
        }
    }

    /// COM_CHANGE_USER: the new account is authenticated as at the
    /// handshake (answering its scramble, switching plugins when needed)
    /// on a session started afresh: the transaction rolled back, variables
    /// reset, prepared statements dropped, the named database current. A
    /// failed login ends the connection: the old session is gone.
    async fn change_user<S>(
        &mut self,
        stream: &mut S,
        reader: &mut PacketReader,
        body: &[u8],
    ) -> Result<Flow, ProtocolError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let login = handshake::parse_change_user(body, self.caps)
            .ok()
            .and_then(|r| {
                let user = std::str::from_utf8(r.user).ok()?.to_owned();
                let database = match r.database {
                    Some(d) => Some(std::str::from_utf8(d).ok()?.to_owned()),
                    None => None,
                };
                Some(Login {
                    user,
                    database,
                    client_caps: self.caps,
                    collation: r.collation,
                    connect_attrs: r.connect_attrs,
                    auth_response: r.auth_response.to_vec(),
                    client_plugin: r
                        .auth_plugin
                        .unwrap_or(native_password::PLUGIN_NAME.as_bytes())
                        .to_vec(),
                })
            });
        let Some(login) = login else {
            self.send_raw_error(
                ER_MALFORMED_PACKET,
                "HY000",
                "Malformed communication packet.",
            );
            return Ok(Flow::Continue);
        };
        self.handler.change_user();
        self.stmts.clear();
        self.authenticate(stream, reader, login).await?;
        Ok(Flow::Continue)
    }

    async fn dispatch<S>(&mut self, payload: &[u8], stream: &mut S) -> Result<Flow, ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        let cmd = match decode_command(payload) {
            Ok(c) => c,
            Err(_) => {
                self.send_malformed();
                return Ok(Flow::Continue);
            }
        };
        match cmd {
            Command::Quit => {
                self.handler.quit();
                return Ok(Flow::Quit);
            }
            Command::Ping => self.send_ok(&OkInfo::default(), 0),
            Command::RegisterReplica(body) => {
                let r = self.handler.register_replica(body);
                self.send_unit(r);
            }
            Command::InitDb(db) => {
                let r = utf8(db).and_then(|db| self.handler.init_db(db));
                self.send_unit(r);
            }
            Command::Query(body) => {
                return self.query(stream, body).await;
            }
            Command::FieldList { table, wildcard } => self.field_list(table, wildcard),
            Command::Statistics => {
                let s = self.handler.statistics();
                self.writer.write_packet(s.as_bytes());
            }
            Command::ProcessKill(id) => {
                let sql = format!("KILL {id}");
                let first = self.handler.query(&sql, false).await;
                return self.send_query_results(stream, first).await;
            }
            Command::StmtPrepare(sql) => match self
                .handler
                .statement_text(sql)
                .and_then(|s| self.handler.prepare(&s))
            {
                Ok((info, statement)) => self.send_prepared(info, statement),
                Err(e) => self.send_error(&e),
            },
            Command::StmtExecute {
                statement_id,
                flags,
                params,
                ..
            } => self.execute(stream, statement_id, params, flags).await?,
            Command::StmtSendLongData {
                statement_id,
                param,
                data,
            } => self.long_data(statement_id, param, data),
            Command::StmtClose(id) => {
                self.stmts.remove(&id);
            }
            Command::StmtReset(id) => self.stmt_reset(id),
            Command::SetOption(option) => self.set_option(option),
            Command::StmtFetch { statement_id, rows } => {
                self.fetch(stream, statement_id, rows).await?
            }
            Command::ResetConnection => self.reset_connection(),
            // Served by `commands`, which hands the dump its reader.
            Command::BinlogDumpGtid(_) | Command::BinlogDump(_) => {
                self.send_error(&Error::new(Code::UnknownCom, "Unknown command"))
            }
            Command::Unknown(_) => {
                self.send_error(&Error::new(Code::UnknownCom, "Unknown command"))
            }
        }
        Ok(Flow::Continue)
    }

    /// COM_FIELD_LIST: the table's column definitions (with the default
    /// value field), then EOF.
    fn field_list(&mut self, table: &[u8], wildcard: &[u8]) {
        let r = utf8(table).and_then(|t| {
            let w = utf8(wildcard)?;
            self.handler.field_list(t, w)
        });
        match r {
            Ok(columns) => {
                let charset = self.handler.result_charset();
                for c in &columns {
                    self.writer
                        .packet(|o| resultset::encode_column_def_in(o, c, true, charset));
                }
                let status = self.status_flags();
                self.send_end(status);
            }
            Err(e) => self.send_error(&e),
        }
    }

    /// COM_STMT_RESET: the statement's long data and cursor dropped.
    fn stmt_reset(&mut self, id: u32) {
        match self.stmts.get_mut(&id) {
            Some(stmt) => {
                stmt.reset();
                self.handler.reset_statement(&mut stmt.handler);
                self.send_ok(&OkInfo::default(), 0);
            }
            None => self.send_error(&unknown_stmt(id, "mysqld_stmt_reset")),
        }
    }

    /// COM_SET_OPTION: multi-statements on or off, answered with EOF.
    fn set_option(&mut self, option: u16) {
        match option {
            command::MULTI_STATEMENTS_ON => self.multi_statements = true,
            command::MULTI_STATEMENTS_OFF => self.multi_statements = false,
            _ => return self.send_error(&Error::new(Code::UnknownCom, "Unknown command")),
        }
        let status = self.status_flags();
        self.send_end(status);
    }

    /// COM_RESET_CONNECTION: the session reset, statements dropped, and
    /// multi-statements back to what the handshake negotiated.
    fn reset_connection(&mut self) {
        self.handler.reset_connection();
        self.stmts.clear();
        self.multi_statements = self.caps & caps::MULTI_STATEMENTS != 0;
        self.send_ok(&OkInfo::default(), 0);
    }

    /// Streams a binlog dump until it fails or the client goes away; the
    /// connection ends with it (as in MySQL, a dump connection runs no
    /// other command).
    async fn binlog_dump<S>(
        &mut self,
        stream: &mut S,
        reader: &mut PacketReader,
        command: u8,
        request: &[u8],
    ) -> Result<Flow, ProtocolError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let mut dump = match self.handler.binlog_dump(command, request) {
            Ok(d) => d,
            Err(e) => {
                self.send_error(&e);
                return Ok(Flow::Continue);
            }
        };
        loop {
            // KILL, or the server shutting down: heartbeats bring this
            // check round at least twice a second on an idle stream.
            if self.handler.should_close() {
                return Ok(Flow::Quit);
            }
            let next = tokio::select! {
                next = dump.next() => next,
                more = reader.fill_some(stream) => {
                    if !more? {
                        return Ok(Flow::Quit);
                    }
                    while let Some(reply) = reader.take_buffered_packet() {
                        if let Err(e) = dump.on_reply(&reply) {
                            self.send_error(&e);
                            self.writer.flush(stream).await?;
                            return Ok(Flow::Quit);
                        }
                    }
                    continue;
                }
            };
            match next {
                // BINLOG_DUMP_NON_BLOCK at the log's end: EOF ends it.
                Ok(event) if event.is_empty() => {
                    self.send_end(0);
                    self.writer.flush(stream).await?;
                    return Ok(Flow::Quit);
                }
                Ok(event) => {
                    self.writer.packet(|o| {
                        o.push(0x00);
                        o.extend_from_slice(&event);
                    });
                    if dump.awaits_reply(&event) {
                        // The replica answers with packet 0 of its own
                        // exchange; the stream goes on at 1 (MySQL's
                        // semisync source, and what replicas check).
                        self.writer.set_seq(1);
                    }
                }
                Err(e) => {
                    self.send_error(&e);
                    self.writer.flush(stream).await?;
                    return Ok(Flow::Quit);
                }
            }
            self.writer.flush(stream).await?;
        }
    }

    async fn send_response<S>(
        &mut self,
        stream: &mut S,
        resp: &Response,
        more: bool,
        binary: bool,
        defs: Option<&mut Option<EncodedDefs>>,
    ) -> Result<(), ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        let more = if more {
            status_flags::MORE_RESULTS_EXISTS
        } else {
            0
        };
        let rs = match resp {
            Response::Ok(ok) => {
                self.send_ok(ok, more);
                return Ok(());
            }
            // A zero column count would read as an OK packet.
            Response::Rows(rs) if rs.columns.is_empty() => {
                self.send_ok(&OkInfo::default(), more);
                return Ok(());
            }
            Response::Rows(rs) => rs,
        };
        let status = self.status_flags() | more;
        self.send_metadata(rs, defs);
        if !self.deprecate_eof() {
            self.writer.packet(|o| resultset::encode_eof(o, 0, status));
        }
        self.send_rows(stream, &rs.columns, rs.rows.iter(), binary)
            .await?;
        let mut warnings = rs.warnings;
        if self.handler.streaming() {
            match self.send_streamed(stream, &rs.columns, binary).await? {
                Ok(w) => warnings = w,
                Err(e) => {
                    // MySQL ends a result set that fails midway with an
                    // error packet in place of its end packet.
                    self.send_error(&e);
                    return Ok(());
                }
            }
        }
        // The statement ended with its last row: its status now.
        let status = self.status_flags() | more;
        self.send_end_warning(status, warnings);
        Ok(())
    }

    /// The rows of a streamed result set after its first batch; the
    /// warning count once it ends, or the error that ended it.
    async fn send_streamed<S>(
        &mut self,
        stream: &mut S,
        columns: &[crate::Column],
        binary: bool,
    ) -> Result<Result<u16, Error>, ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        let mut rows = Vec::new();
        loop {
            rows.clear();
            let next = self.handler.more_rows(&mut rows).await;
            self.send_rows(stream, columns, rows.iter(), binary).await?;
            match next {
                Ok(None) => {}
                Ok(Some(warnings)) => return Ok(Ok(warnings)),
                Err(e) => return Ok(Err(e)),
            }
        }
    }

    /// A result set's column count and definitions (from the statement's
    /// cache `defs` when it has one).
    fn send_metadata(&mut self, rs: &ResultSet, defs: Option<&mut Option<EncodedDefs>>) {
        let columns = &rs.columns[..];
        let charset = self.handler.result_charset();
        self.writer
            .packet(|o| wire::put_lenenc_int(o, columns.len() as u64));
        match defs {
            Some(slot) => {
                if !slot.as_ref().is_some_and(|d| {
                    std::sync::Arc::ptr_eq(&d.columns, &rs.columns) && d.charset == charset
                }) {
                    *slot = Some(EncodedDefs::new(&rs.columns, charset));
                }
                let encoded = slot.as_ref().expect("filled above");
                debug_assert_eq!(encoded.ends.len(), columns.len());
                for payload in encoded.packets() {
                    self.writer.packet(|o| o.extend_from_slice(payload));
                }
            }
            None => {
                for c in columns {
                    self.writer
                        .packet(|o| resultset::encode_column_def_in(o, c, false, charset));
                }
            }
        }
    }

    /// Rows, flushed in pieces of about FLUSH_AT bytes.
    async fn send_rows<'r, S>(
        &mut self,
        stream: &mut S,
        columns: &[crate::Column],
        rows: impl Iterator<Item = &'r Vec<lockstep_types::Value>>,
        binary: bool,
    ) -> Result<(), ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        for row in rows {
            let scratch = &mut self.scratch;
            if binary {
                self.writer
                    .packet(|o| resultset::encode_binary_row(o, columns, row, scratch));
            } else {
                self.writer
                    .packet(|o| resultset::encode_text_row(o, columns, row, scratch));
            }
            if self.writer.buffered() >= FLUSH_AT {
                self.writer.flush(stream).await?;
            }
        }
        Ok(())
    }

    fn send_prepared(&mut self, info: crate::PreparedInfo, statement: H::Statement) {
        let (Ok(ncols), Ok(nparams)) = (
            u16::try_from(info.columns.len()),
            u16::try_from(info.params.len()),
        ) else {
            self.send_error(&Error::new(
                Code::WrongArguments,
                "Prepared statement has too many parameters or columns",
            ));
            return;
        };
        self.writer.packet(|o| {
            o.push(0);
            wire::put_u32(o, info.statement_id);
            wire::put_u16(o, ncols);
            wire::put_u16(o, nparams);
            o.push(0);
            wire::put_u16(o, 0);
        });
        let status = self.status_flags();
        let charset = self.handler.result_charset();
        for defs in [&info.params, &info.columns] {
            if defs.is_empty() {
                continue;
            }
            for c in defs {
                self.writer
                    .packet(|o| resultset::encode_column_def_in(o, c, false, charset));
            }
            if !self.deprecate_eof() {
                self.writer.packet(|o| resultset::encode_eof(o, 0, status));
            }
        }
        self.stmts.insert(
            info.statement_id,
            Stmt {
                handler: statement,
                num_params: info.params.len(),
                bound: Default::default(),
                long_data: vec![None; info.params.len()],
                long_data_error: None,
                defs: None,
                cursor: None,
            },
        );
    }

    async fn execute<S>(
        &mut self,
        stream: &mut S,
        id: u32,
        params: &[u8],
        flags: u8,
    ) -> Result<(), ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        let cursor = flags & CURSOR_TYPE_READ_ONLY != 0;
        let Some(stmt) = self.stmts.get_mut(&id) else {
            self.send_error(&unknown_stmt(id, "mysqld_stmt_execute"));
            return Ok(());
        };
        // A new execute closes the statement's cursor.
        stmt.cursor = None;
        if let Some(e) = stmt.long_data_error.take() {
            stmt.clear_long_data();
            self.send_error(&e);
            return Ok(());
        }
        let decoded = query_attrs::decode_execute(
            params,
            flags,
            self.caps & caps::QUERY_ATTRIBUTES != 0,
            stmt.num_params,
            &mut stmt.bound,
            &mut stmt.long_data,
        );
        stmt.clear_long_data();
        let mut values = match decoded {
            Ok(d) => {
                if self.caps & caps::QUERY_ATTRIBUTES != 0 {
                    self.handler.query_attributes(d.attributes);
                }
                d.params
            }
            Err(_) => {
                self.send_error(&Error::new(
                    Code::WrongArguments,
                    "Incorrect arguments to mysqld_stmt_execute",
                ));
                return Ok(());
            }
        };
        // Text parameters are in character_set_client, as a COM_QUERY is;
        // BLOB-typed ones are bytes.
        for (v, ty) in values.iter_mut().zip(&stmt.bound.types) {
            if let lockstep_types::Value::Bytes(b) = v {
                if command::is_text_param(ty.type_code) && !b.is_ascii() {
                    self.handler.param_text(b);
                }
            }
        }
        if cursor {
            self.handler.want_whole_result();
        }
        let result = self.handler.execute(&mut stmt.handler, values).await;
        // A CALL's result sets, then its reply (or its error).
        for rs in self.handler.take_results() {
            self.send_response(stream, &rs, true, true, None).await?;
        }
        match result {
            Ok(Response::Rows(rs)) if cursor && !rs.columns.is_empty() => self.open_cursor(id, rs),
            Ok(resp) => {
                // Taken out while the response borrows the writer, then
                // put back (only this connection can close the statement).
                let mut defs = self.stmts.get_mut(&id).and_then(|s| s.defs.take());
                let sent = self
                    .send_response(stream, &resp, false, true, Some(&mut defs))
                    .await;
                if let Some(stmt) = self.stmts.get_mut(&id) {
                    stmt.defs = defs;
                }
                sent?
            }
            Err(e) => self.send_error(&e),
        }
        Ok(())
    }

    /// The reply to an execute that opened a cursor: the metadata and one
    /// EOF (an OK with the EOF header for CLIENT_DEPRECATE_EOF clients)
    /// saying a cursor exists. Drivers read that status packet even when
    /// they negotiated CLIENT_DEPRECATE_EOF. Rows follow on COM_STMT_FETCH.
    fn open_cursor(&mut self, id: u32, rs: ResultSet) {
        let Some(stmt) = self.stmts.get_mut(&id) else {
            return;
        };
        let mut defs = stmt.defs.take();
        self.send_metadata(&rs, Some(&mut defs));
        let status = self.status_flags() | status_flags::CURSOR_EXISTS;
        self.send_end(status);
        if let Some(stmt) = self.stmts.get_mut(&id) {
            stmt.defs = defs;
            stmt.cursor = Some(OpenCursor {
                columns: rs.columns,
                rows: rs.rows.into_iter(),
            });
        }
    }

    /// COM_STMT_FETCH: up to `n` rows of the open cursor, then an EOF with
    /// CURSOR_EXISTS while rows remain, or LAST_ROW_SENT (the cursor
    /// closes) once they are all sent; an empty cursor answers with just
    /// that EOF.
    async fn fetch<S>(&mut self, stream: &mut S, id: u32, n: u32) -> Result<(), ProtocolError>
    where
        S: AsyncWrite + Unpin + Send,
    {
        let Some(stmt) = self.stmts.get_mut(&id) else {
            self.send_error(&unknown_stmt(id, "mysqld_stmt_fetch"));
            return Ok(());
        };
        let Some(mut cursor) = stmt.cursor.take() else {
            self.send_raw_error(
                ER_STMT_HAS_NO_OPEN_CURSOR,
                "HY000",
                &format!("The statement ({id}) has no open cursor."),
            );
            return Ok(());
        };
        let batch: Vec<_> = cursor.rows.by_ref().take(n as usize).collect();
        self.send_rows(stream, &cursor.columns, batch.iter(), true)
            .await?;
        let more = cursor.rows.len() > 0;
        let flag = if more {
            status_flags::CURSOR_EXISTS
        } else {
            status_flags::LAST_ROW_SENT
        };
        let status = self.status_flags() | flag;
        self.send_end(status);
        if let (true, Some(stmt)) = (more, self.stmts.get_mut(&id)) {
            stmt.cursor = Some(cursor);
        }
        Ok(())
    }

    /// COM_STMT_SEND_LONG_DATA has no reply; problems surface at execute.
    fn long_data(&mut self, id: u32, param: u16, data: &[u8]) {
        let max = self.config.max_allowed_packet;
        let Some(stmt) = self.stmts.get_mut(&id) else {
            return;
        };
        match stmt.long_data.get_mut(param as usize) {
            Some(slot) => {
                let buf = slot.get_or_insert_with(Vec::new);
                if buf.len() + data.len() > max {
                    stmt.long_data_error = Some(Error::new(
                        Code::NetPacketTooLarge,
                        "Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes",
                    ));
                } else {
                    buf.extend_from_slice(data);
                }
            }
            None => {
                stmt.long_data_error = Some(Error::new(
                    Code::WrongArguments,
                    "Incorrect arguments to mysqld_stmt_send_long_data",
                ))
            }
        }
    }
}
