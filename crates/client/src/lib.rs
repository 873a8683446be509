//! A small async MySQL client: the v10 handshake with
//! mysql_native_password, COM_QUERY with text result sets, and
//! COM_STMT_PREPARE/EXECUTE with the binary protocol and a per-connection
//! statement cache. It is what lockstep's benchmark driver talks through, so
//! it works against any MySQL-compatible server (lockstep, MariaDB, MySQL).
//!
//! The packet framing, wire primitives, native-password scramble and binary
//! value decoding come from `lockstep-protocol`; this crate adds the client
//! side of each exchange.
//!
//! ```ignore
//! let mut c = Conn::connect(&Opts::new("127.0.0.1", 3306, "root", "")).await?;
//! c.query_drop("SET autocommit = 0").await?;
//! let r = c.execute("SELECT k FROM t WHERE id = ?", &[Value::Int(7)]).await?;
//! ```

use lockstep_protocol::command::{ParamType, COM_QUERY, COM_QUIT, COM_STMT_CLOSE};
use lockstep_protocol::command::{COM_PING, COM_STMT_EXECUTE, COM_STMT_PREPARE};
use lockstep_protocol::handshake::caps;
use lockstep_protocol::packet::{PacketReader, PacketWriter};
use lockstep_protocol::resultset::{column_flags, status_flags, types};
use lockstep_protocol::wire::{self, Cursor, NULL_MARKER};
use lockstep_protocol::{command, native_password};
use lockstep_types::error::Code;
use lockstep_types::{Date, DateTime, Decimal, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::net::TcpStream;

mod auth;

/// Largest payload accepted from the server.
const MAX_PACKET: usize = 64 << 20;
/// The largest event a dump stream may carry: one transaction's whole
/// record in lockstep's stream (MySQL's replica_max_allowed_packet, 1 GiB).
const MAX_DUMP_PACKET: usize = 1 << 30;
/// utf8mb4_general_ci: understood by MySQL 5.5+, MariaDB and lockstep.
const CLIENT_COLLATION: u8 = 45;

/// Where and as whom to connect.
#[derive(Clone, Debug)]
pub struct Opts {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub database: Option<String>,
    /// caching_sha2_password may ask for the server's RSA key to send the
    /// password encrypted (this client has no TLS): MySQL's
    /// --get-server-public-key. Off, full authentication fails with 2061.
    pub get_public_key: bool,
}

impl Opts {
    pub fn new(host: &str, port: u16, user: &str, password: &str) -> Opts {
        Opts {
            host: host.into(),
            port,
            user: user.into(),
            password: password.into(),
            database: None,
            get_public_key: false,
        }
    }

    pub fn database(mut self, db: &str) -> Opts {
        self.database = Some(db.into());
        self
    }

    pub fn get_public_key(mut self, on: bool) -> Opts {
        self.get_public_key = on;
        self
    }
}

/// A failure as the client sees it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An ERR packet: the server's code, SQLSTATE and message. The
    /// connection is still usable.
    #[error("ERROR {code} ({sqlstate}): {message}")]
    Server {
        code: u16,
        sqlstate: String,
        message: String,
    },
    /// The connection is broken and must be dropped.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The server sent something this client does not understand; the
    /// connection should be dropped.
    #[error("protocol error: {0}")]
    Protocol(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The server's error number, if this is an ERR packet.
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::Server { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// 1213: the server chose this transaction as a deadlock victim and
    /// rolled it back.
    pub fn is_deadlock(&self) -> bool {
        self.code() == Some(1213)
    }

    /// 1205: a lock wait timed out (only the statement is rolled back by
    /// default, but drivers roll back and retry the transaction).
    pub fn is_lock_timeout(&self) -> bool {
        self.code() == Some(1205)
    }

    /// Whether the connection can no longer be used.
    pub fn is_fatal(&self) -> bool {
        !matches!(self, Error::Server { .. })
    }

    fn protocol(what: impl Into<String>) -> Error {
        Error::Protocol(what.into())
    }
}

impl From<wire::Malformed> for Error {
    fn from(e: wire::Malformed) -> Self {
        Error::Protocol(e.to_string())
    }
}

impl From<lockstep_protocol::ProtocolError> for Error {
    fn from(e: lockstep_protocol::ProtocolError) -> Self {
        match e {
            lockstep_protocol::ProtocolError::Io(io) => Error::Io(io),
            other => Error::Protocol(other.to_string()),
        }
    }
}

/// Known server codes keep their `Code`; any other becomes UnknownError with
/// the original number kept in the message.
impl From<Error> for lockstep_types::Error {
    fn from(e: Error) -> Self {
        const KNOWN: &[Code] = &[
            Code::LockDeadlock,
            Code::LockWaitTimeout,
            Code::DupEntry,
            Code::Parse,
            Code::NoSuchTable,
            Code::BadField,
            Code::BadDb,
            Code::AccessDenied,
            Code::ConCount,
            Code::NotSupportedYet,
            Code::TableExists,
            Code::DbCreateExists,
            Code::UnknownStmtHandler,
            Code::QueryInterrupted,
            Code::DataTooLong,
            Code::BadNull,
        ];
        match &e {
            Error::Server { code, message, .. } => {
                match KNOWN.iter().find(|c| c.number() == *code) {
                    Some(c) => lockstep_types::Error::new(*c, message.clone()),
                    None => lockstep_types::Error::new(
                        Code::UnknownError,
                        format!("server error {code}: {message}"),
                    ),
                }
            }
            other => lockstep_types::Error::new(Code::UnknownError, other.to_string()),
        }
    }
}

/// One result-set column, as far as a client needs it.
#[derive(Clone, Debug)]
pub struct ColumnDef {
    pub name: String,
    pub type_code: u8,
    pub flags: u16,
    pub decimals: u8,
}

impl ColumnDef {
    fn unsigned(&self) -> bool {
        self.flags & column_flags::UNSIGNED_FLAG != 0
    }
}

/// What a statement returned: rows (possibly none) or an OK packet's counts.
#[derive(Clone, Debug, Default)]
pub struct QueryResult {
    pub columns: Arc<[ColumnDef]>,
    pub rows: Vec<Vec<Value>>,
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub warnings: u16,
}

impl QueryResult {
    /// The first column of the first row, if any.
    pub fn scalar(&self) -> Option<&Value> {
        self.rows.first().and_then(|r| r.first())
    }
}

/// A statement prepared on one connection: the server's id for it and its
/// parameter count. It belongs to the connection that prepared it and stays
/// valid until `close_statements`. Holding it lets a caller that runs the same
/// statements over and over skip the text lookup in the connection's cache
/// (at a thousand connections that cache's lines are cold on every call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Statement {
    id: u32,
    params: usize,
}

/// One connection. Not shareable: each task owns its own.
pub struct Conn {
    sock: TcpStream,
    reader: PacketReader,
    writer: PacketWriter,
    caps: u32,
    server_version: String,
    connection_id: u32,
    stmts: HashMap<String, Statement>,
    /// Reused for building COM_STMT_EXECUTE payloads.
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("server_version", &self.server_version)
            .field("connection_id", &self.connection_id)
            .field("cached_statements", &self.stmts.len())
            .finish()
    }
}

/// A dump stream packet: its payload after the OK byte, None at EOF.
fn dump_packet(p: &[u8]) -> Result<Option<Vec<u8>>> {
    match p.first() {
        Some(0x00) => Ok(Some(p[1..].to_vec())),
        Some(0xff) => Err(err_packet(p)),
        Some(0xfe) if p.len() < 9 => Ok(None),
        _ => Err(Error::protocol("unexpected packet in a binlog stream")),
    }
}

/// The reading half of a dump connection (`Conn::split_dump`).
pub struct DumpReader {
    sock: tokio::net::tcp::OwnedReadHalf,
    reader: PacketReader,
}

impl DumpReader {
    /// As `Conn::read_dump_packet`.
    pub async fn read_dump_packet(&mut self, seq: &mut u8) -> Result<Option<Vec<u8>>> {
        match self
            .reader
            .read(&mut self.sock, seq, MAX_DUMP_PACKET)
            .await?
        {
            Some(p) => dump_packet(p),
            None => Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "server closed the connection",
            ))),
        }
    }
}

/// The writing half of a dump connection: semisync replies.
pub struct DumpWriter {
    sock: tokio::net::tcp::OwnedWriteHalf,
}

impl DumpWriter {
    /// One packet with sequence id 0 (a semisync reply starts its own).
    pub async fn send_reply(&mut self, payload: &[u8]) -> Result<()> {
        use tokio::io::AsyncWriteExt;
        debug_assert!(payload.len() < 0xff_ffff, "a reply fits one packet");
        let mut p = Vec::with_capacity(4 + payload.len());
        p.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
        p.push(0);
        p.extend_from_slice(payload);
        self.sock.write_all(&p).await?;
        Ok(())
    }
}

fn err_packet(p: &[u8]) -> Error {
    let mut c = Cursor::new(p);
    let _ = c.u8();
    let code = c.u16().unwrap_or(0);
    let mut sqlstate = String::from("HY000");
    let rest = c.rest();
    let msg = if rest.first() == Some(&b'#') && rest.len() >= 6 {
        sqlstate = String::from_utf8_lossy(&rest[1..6]).into_owned();
        &rest[6..]
    } else {
        rest
    };
    Error::Server {
        code,
        sqlstate,
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

struct Ok {
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
}

fn ok_packet(p: &[u8]) -> Result<Ok> {
    let mut c = Cursor::new(p);
    c.u8()?;
    let affected_rows = c.lenenc_int()?.unwrap_or(0);
    let last_insert_id = c.lenenc_int()?.unwrap_or(0);
    let status = c.u16().unwrap_or(0);
    let warnings = c.u16().unwrap_or(0);
    Ok(Ok {
        affected_rows,
        last_insert_id,
        status,
        warnings,
    })
}

fn parse_column_def(p: &[u8]) -> Result<ColumnDef> {
    let mut c = Cursor::new(p);
    for _ in 0..4 {
        c.lenenc_bytes()?; // catalog, schema, table, org_table
    }
    let name = String::from_utf8_lossy(c.lenenc_bytes()?).into_owned();
    c.lenenc_bytes()?; // org_name
    c.lenenc_int()?; // length of the fixed fields (0x0C)
    c.u16()?; // collation
    c.u32()?; // display length
    let type_code = c.u8()?;
    let flags = c.u16()?;
    let decimals = c.u8()?;
    Ok(ColumnDef {
        name,
        type_code,
        flags,
        decimals,
    })
}

/// A text-protocol cell, typed by its column.
fn text_value(col: &ColumnDef, b: &[u8]) -> Value {
    let s = || std::str::from_utf8(b).ok();
    let v = match col.type_code {
        types::TINY | types::SHORT | types::INT24 | types::LONG | types::LONGLONG | types::YEAR => {
            if col.unsigned() {
                s().and_then(|s| s.parse::<u64>().ok()).map(|u| {
                    if u <= i64::MAX as u64 {
                        Value::Int(u as i64)
                    } else {
                        Value::UInt(u)
                    }
                })
            } else {
                s().and_then(|s| s.parse::<i64>().ok()).map(Value::Int)
            }
        }
        types::DECIMAL | types::NEWDECIMAL => s()
            .and_then(|s| s.parse::<Decimal>().ok())
            .map(Value::Decimal),
        types::FLOAT | types::DOUBLE => s().and_then(|s| s.parse::<f64>().ok()).map(Value::Double),
        types::DATE | types::NEWDATE => {
            s().and_then(DateTime::parse).map(|dt| Value::Date(dt.date))
        }
        types::DATETIME | types::TIMESTAMP => s().and_then(DateTime::parse).map(Value::DateTime),
        _ => None,
    };
    v.unwrap_or_else(|| Value::Bytes(b.to_vec()))
}

fn text_row(cols: &[ColumnDef], p: &[u8]) -> Result<Vec<Value>> {
    let mut c = Cursor::new(p);
    let mut row = Vec::with_capacity(cols.len());
    for col in cols {
        if p.get(c.position()) == Some(&NULL_MARKER) {
            c.skip(1)?;
            row.push(Value::Null);
        } else {
            row.push(text_value(col, c.lenenc_bytes()?));
        }
    }
    Ok(row)
}

fn binary_row(cols: &[ColumnDef], p: &[u8]) -> Result<Vec<Value>> {
    let mut c = Cursor::new(p);
    c.u8()?; // 0x00 header
    let bitmap = c.bytes((cols.len() + 9) / 8)?;
    let mut row = Vec::with_capacity(cols.len());
    for (i, col) in cols.iter().enumerate() {
        // The binary row's NULL bitmap is offset by two bits.
        if bitmap[(i + 2) / 8] & (1 << ((i + 2) % 8)) != 0 {
            row.push(Value::Null);
            continue;
        }
        let ty = ParamType {
            type_code: col.type_code,
            unsigned: col.unsigned(),
        };
        let v = command::decode_binary_value(&mut c, ty)?;
        // decode_binary_value reads DATETIME/TIMESTAMP with a zero time as
        // DateTime; DATE columns come back as Date already.
        row.push(v);
    }
    Ok(row)
}

/// Appends one parameter's type (2 bytes) and, unless NULL, its value.
fn encode_param(types_out: &mut Vec<u8>, values: &mut Vec<u8>, v: &Value) {
    let (ty, unsigned) = match v {
        Value::Null => (types::NULL, false),
        Value::Int(i) => {
            wire::put_u64(values, *i as u64);
            (types::LONGLONG, false)
        }
        Value::UInt(u) => {
            wire::put_u64(values, *u);
            (types::LONGLONG, true)
        }
        Value::Double(d) => {
            values.extend_from_slice(&d.to_le_bytes());
            (types::DOUBLE, false)
        }
        Value::Decimal(d) => {
            wire::put_lenenc_bytes(values, d.to_string().as_bytes());
            (types::NEWDECIMAL, false)
        }
        Value::Bytes(b) => {
            wire::put_lenenc_bytes(values, b);
            (types::VAR_STRING, false)
        }
        Value::Date(d) => {
            put_binary_date(values, d, None);
            (types::DATE, false)
        }
        Value::DateTime(dt) => {
            put_binary_date(values, &dt.date, Some(dt));
            (types::DATETIME, false)
        }
    };
    types_out.push(ty);
    types_out.push(if unsigned { 0x80 } else { 0 });
}

fn put_binary_date(out: &mut Vec<u8>, d: &Date, time: Option<&DateTime>) {
    let len = match time {
        None => 4,
        Some(t) if t.micro != 0 => 11,
        Some(_) => 7,
    };
    out.push(len);
    wire::put_u16(out, d.year);
    out.push(d.month);
    out.push(d.day);
    if let Some(t) = time {
        out.push(t.hour);
        out.push(t.minute);
        out.push(t.second);
        if len == 11 {
            wire::put_u32(out, t.micro);
        }
    }
}

/// Parsed HandshakeV10.
struct Greeting {
    version: String,
    connection_id: u32,
    caps: u32,
    scramble: [u8; 20],
}

fn parse_greeting(p: &[u8]) -> Result<Greeting> {
    if p.first() == Some(&0xFF) {
        return Err(err_packet(p));
    }
    let mut c = Cursor::new(p);
    if c.u8()? != 10 {
        return Err(Error::protocol("server does not speak protocol v10"));
    }
    let version = String::from_utf8_lossy(c.null_terminated()?).into_owned();
    let connection_id = c.u32()?;
    let mut scramble = [0u8; 20];
    scramble[..8].copy_from_slice(c.bytes(8)?);
    c.u8()?;
    let mut caps = c.u16()? as u32;
    if !c.is_empty() {
        c.u8()?; // collation
        c.u16()?; // status
        caps |= (c.u16()? as u32) << 16;
        let auth_len = c.u8()? as usize;
        c.skip(10)?;
        if caps & caps::SECURE_CONNECTION != 0 {
            // The second part is max(13, auth_len - 8) bytes with a NUL.
            let n = auth_len.saturating_sub(8).max(13);
            let part2 = c.bytes(n)?;
            let take = part2.len().min(12);
            scramble[8..8 + take].copy_from_slice(&part2[..take]);
        }
    }
    Ok(Greeting {
        version,
        connection_id,
        caps,
        scramble,
    })
}

impl Conn {
    /// Connects and authenticates with mysql_native_password, or
    /// caching_sha2_password when the account's plugin is that (`auth`).
    pub async fn connect(opts: &Opts) -> Result<Conn> {
        let sock = TcpStream::connect((opts.host.as_str(), opts.port)).await?;
        sock.set_nodelay(true)?;
        let mut conn = Conn {
            sock,
            reader: PacketReader::new(),
            writer: PacketWriter::new(),
            caps: 0,
            server_version: String::new(),
            connection_id: 0,
            stmts: HashMap::new(),
            scratch: Vec::new(),
        };
        let mut seq = 0u8;
        let greeting = {
            let p = conn.read(&mut seq).await?;
            parse_greeting(p)?
        };
        if greeting.caps & caps::PROTOCOL_41 == 0 {
            return Err(Error::protocol("server does not support protocol 4.1"));
        }
        let mut want = caps::LONG_PASSWORD
            | caps::LONG_FLAG
            | caps::PROTOCOL_41
            | caps::TRANSACTIONS
            | caps::SECURE_CONNECTION
            | caps::MULTI_RESULTS
            | caps::PS_MULTI_RESULTS
            | caps::PLUGIN_AUTH
            | caps::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | caps::DEPRECATE_EOF;
        if opts.database.is_some() {
            want |= caps::CONNECT_WITH_DB;
        }
        conn.caps = want & greeting.caps;
        conn.server_version = greeting.version;
        conn.connection_id = greeting.connection_id;

        let auth = native_password::client_response(&opts.password, &greeting.scramble);
        let mut p = Vec::with_capacity(128);
        wire::put_u32(&mut p, conn.caps);
        wire::put_u32(&mut p, MAX_PACKET as u32);
        p.push(CLIENT_COLLATION);
        p.extend_from_slice(&[0; 23]);
        wire::put_null_terminated(&mut p, opts.user.as_bytes());
        if conn.caps & caps::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            wire::put_lenenc_bytes(&mut p, &auth);
        } else {
            p.push(auth.len() as u8);
            p.extend_from_slice(&auth);
        }
        if let Some(db) = &opts.database {
            if conn.caps & caps::CONNECT_WITH_DB != 0 {
                wire::put_null_terminated(&mut p, db.as_bytes());
            }
        }
        if conn.caps & caps::PLUGIN_AUTH != 0 {
            // We answer the greeting's scramble as native password even if
            // it proposed another plugin; the server then asks to switch.
            wire::put_null_terminated(&mut p, native_password::PLUGIN_NAME.as_bytes());
        }
        conn.writer.set_seq(seq);
        conn.writer.write_packet(&p);
        conn.writer.flush(&mut conn.sock).await?;
        seq = conn.writer.seq();
        let mut auth = auth::Auth::new(&opts.password, opts.get_public_key, greeting.scramble);
        loop {
            let p = conn.read(&mut seq).await?;
            match p.first() {
                Some(0x00) => break,
                Some(0xFF) => return Err(err_packet(p)),
                Some(0xFE) => {
                    // AuthSwitchRequest: plugin name, then its data.
                    let resp = auth.switch(&p[1..])?;
                    seq = conn.send_auth(seq, &resp).await?;
                }
                Some(0x01) => {
                    // AuthMoreData (caching_sha2_password).
                    if let auth::Step::Send(resp) = auth.more_data(&p[1..])? {
                        seq = conn.send_auth(seq, &resp).await?;
                    }
                }
                _ => return Err(Error::protocol("unexpected packet during authentication")),
            }
        }
        Ok(conn)
    }

    /// Sends one packet of the authentication exchange; the next
    /// sequence id.
    async fn send_auth(&mut self, seq: u8, payload: &[u8]) -> Result<u8> {
        self.writer.set_seq(seq);
        self.writer.write_packet(payload);
        self.writer.flush(&mut self.sock).await?;
        Ok(self.writer.seq())
    }

    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    pub fn connection_id(&self) -> u32 {
        self.connection_id
    }

    async fn read(&mut self, seq: &mut u8) -> Result<&[u8]> {
        self.read_at_most(seq, MAX_PACKET).await
    }

    async fn read_at_most(&mut self, seq: &mut u8, limit: usize) -> Result<&[u8]> {
        match self.reader.read(&mut self.sock, seq, limit).await? {
            Some(p) => Ok(p),
            None => Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "server closed the connection",
            ))),
        }
    }

    /// Sends one command packet (sequence id 0); returns the sequence id
    /// the reply starts with.
    async fn send_command(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> Result<u8> {
        self.writer.set_seq(0);
        self.writer.packet(fill);
        self.writer.flush(&mut self.sock).await?;
        Ok(self.writer.seq())
    }

    /// Sends a binlog dump command (COM_BINLOG_DUMP_GTID and the like:
    /// `command` is its whole payload) and returns the sequence id of the
    /// stream's first packet. Read the stream with `read_dump_packet`.
    pub async fn send_dump(&mut self, command: &[u8]) -> Result<u8> {
        self.send_command(|o| o.extend_from_slice(command)).await
    }

    /// The next packet of a dump stream: its payload after the leading
    /// OK byte (0x00). An ERR packet ends the stream as `Error::Server`,
    /// an EOF packet (0xfe) as `Ok(None)`.
    pub async fn read_dump_packet(&mut self, seq: &mut u8) -> Result<Option<Vec<u8>>> {
        dump_packet(self.read_at_most(seq, MAX_DUMP_PACKET).await?)
    }

    /// A dump connection in two halves: events are read on one task while
    /// semisync replies are sent from another.
    pub fn split_dump(self) -> (DumpReader, DumpWriter) {
        let (read, write) = self.sock.into_split();
        (
            DumpReader {
                sock: read,
                reader: self.reader,
            },
            DumpWriter { sock: write },
        )
    }

    fn deprecate_eof(&self) -> bool {
        self.caps & caps::DEPRECATE_EOF != 0
    }

    /// Reads `n` column definitions and, without DEPRECATE_EOF, the EOF
    /// packet after them.
    async fn read_column_defs(&mut self, seq: &mut u8, n: usize) -> Result<Vec<ColumnDef>> {
        let mut cols = Vec::with_capacity(n);
        for _ in 0..n {
            let p = self.read(seq).await?;
            cols.push(parse_column_def(p)?);
        }
        if n > 0 && !self.deprecate_eof() {
            let p = self.read(seq).await?;
            if p.first() != Some(&0xFE) {
                return Err(Error::protocol("expected EOF after column definitions"));
            }
        }
        Ok(cols)
    }

    /// Reads the reply to COM_QUERY or COM_STMT_EXECUTE. Further results
    /// (MORE_RESULTS_EXISTS) are read and dropped; the first is returned.
    async fn read_result(&mut self, mut seq: u8, binary: bool) -> Result<QueryResult> {
        let mut first: Option<QueryResult> = None;
        loop {
            let (res, status) = self.read_one_result(&mut seq, binary).await?;
            if first.is_none() {
                first = Some(res);
            }
            if status & status_flags::MORE_RESULTS_EXISTS == 0 {
                return Ok(first.unwrap_or_default());
            }
        }
    }

    async fn read_one_result(&mut self, seq: &mut u8, binary: bool) -> Result<(QueryResult, u16)> {
        let ncols = {
            let p = self.read(seq).await?;
            match p.first() {
                Some(0x00) => {
                    let ok = ok_packet(p)?;
                    return Ok((
                        QueryResult {
                            columns: Arc::from(Vec::new()),
                            rows: Vec::new(),
                            affected_rows: ok.affected_rows,
                            last_insert_id: ok.last_insert_id,
                            warnings: ok.warnings,
                        },
                        ok.status,
                    ));
                }
                Some(0xFF) => return Err(err_packet(p)),
                Some(0xFB) => return Err(Error::protocol("LOCAL INFILE is not supported")),
                _ => Cursor::new(p)
                    .lenenc_int()?
                    .ok_or_else(|| Error::protocol("bad column count"))?
                    as usize,
            }
        };
        let cols: Arc<[ColumnDef]> = self.read_column_defs(seq, ncols).await?.into();
        self.read_rows(seq, cols, binary).await
    }

    async fn read_rows(
        &mut self,
        seq: &mut u8,
        cols: Arc<[ColumnDef]>,
        binary: bool,
    ) -> Result<(QueryResult, u16)> {
        let deprecate_eof = self.deprecate_eof();
        let mut rows = Vec::new();
        loop {
            let p = self.read(seq).await?;
            match p.first() {
                // The terminator: EOF, or an OK with the 0xFE header under
                // DEPRECATE_EOF. A row cannot start with 0xFE unless its
                // first value is at least 16 MiB long.
                Some(0xFE) if p.len() < 9 || (deprecate_eof && p.len() < 0xFF_FFFF) => {
                    let status = if deprecate_eof {
                        ok_packet(p)?.status
                    } else {
                        let mut c = Cursor::new(p);
                        c.u8()?;
                        c.u16()?;
                        c.u16()?
                    };
                    return Ok((
                        QueryResult {
                            columns: cols,
                            rows,
                            ..Default::default()
                        },
                        status,
                    ));
                }
                Some(0xFF) => return Err(err_packet(p)),
                _ => {
                    let row = if binary {
                        binary_row(&cols, p)?
                    } else {
                        text_row(&cols, p)?
                    };
                    rows.push(row);
                }
            }
        }
    }

    /// COM_QUERY: runs `sql` and returns its result, rows in the text protocol.
    pub async fn query(&mut self, sql: &str) -> Result<QueryResult> {
        let seq = self
            .send_command(|out| {
                out.push(COM_QUERY);
                out.extend_from_slice(sql.as_bytes());
            })
            .await?;
        self.read_result(seq, false).await
    }

    /// COM_QUERY, returning only the affected-row count.
    pub async fn query_drop(&mut self, sql: &str) -> Result<u64> {
        Ok(self.query(sql).await?.affected_rows)
    }

    /// COM_PING.
    pub async fn ping(&mut self) -> Result<()> {
        let seq = self.send_command(|out| out.push(COM_PING)).await?;
        self.read_result(seq, false).await.map(|_| ())
    }

    /// COM_STMT_PREPARE, or the statement this connection already prepared
    /// for the same text (prepared statements are cached by their text).
    pub async fn prepare(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.stmts.get(sql) {
            return Ok(*s);
        }
        let mut seq = self
            .send_command(|out| {
                out.push(COM_STMT_PREPARE);
                out.extend_from_slice(sql.as_bytes());
            })
            .await?;
        let (id, ncols, nparams) = {
            let p = self.read(&mut seq).await?;
            match p.first() {
                Some(0x00) => {
                    let mut c = Cursor::new(p);
                    c.u8()?;
                    let id = c.u32()?;
                    let ncols = c.u16()? as usize;
                    let nparams = c.u16()? as usize;
                    (id, ncols, nparams)
                }
                Some(0xFF) => return Err(err_packet(p)),
                _ => return Err(Error::protocol("bad COM_STMT_PREPARE reply")),
            }
        };
        self.read_column_defs(&mut seq, nparams).await?;
        self.read_column_defs(&mut seq, ncols).await?;
        let stmt = Statement {
            id,
            params: nparams,
        };
        self.stmts.insert(sql.to_string(), stmt);
        Ok(stmt)
    }

    /// Runs a prepared statement (prepared on first use, then cached by its
    /// text) with `params` in the binary protocol.
    pub async fn execute(&mut self, sql: &str, params: &[Value]) -> Result<QueryResult> {
        let stmt = self.prepare(sql).await?;
        self.execute_statement(stmt, params).await
    }

    /// Runs `stmt`, which this connection prepared, with `params` in the
    /// binary protocol.
    pub async fn execute_statement(
        &mut self,
        stmt: Statement,
        params: &[Value],
    ) -> Result<QueryResult> {
        if stmt.params != params.len() {
            return Err(Error::Server {
                code: 1210,
                sqlstate: "HY000".into(),
                message: format!(
                    "statement has {} parameters, {} given",
                    stmt.params,
                    params.len()
                ),
            });
        }
        let mut values = std::mem::take(&mut self.scratch);
        values.clear();
        let seq = self
            .send_command(|out| {
                out.push(COM_STMT_EXECUTE);
                wire::put_u32(out, stmt.id);
                out.push(0); // CURSOR_TYPE_NO_CURSOR
                wire::put_u32(out, 1); // iteration count
                if !params.is_empty() {
                    let bitmap = out.len();
                    out.resize(bitmap + params.len().div_ceil(8), 0);
                    for (i, v) in params.iter().enumerate() {
                        if v.is_null() {
                            out[bitmap + i / 8] |= 1 << (i % 8);
                        }
                    }
                    // Types are sent every time: the same statement may be
                    // run with differently typed values.
                    out.push(1);
                    for v in params {
                        encode_param(out, &mut values, v);
                    }
                    out.extend_from_slice(&values);
                }
            })
            .await?;
        self.scratch = values;
        let mut seq = seq;
        // The execute reply repeats the column definitions; the binary rows
        // are decoded with those (they may differ from the prepare reply's).
        let (res, mut status) = self.read_one_result(&mut seq, true).await?;
        while status & status_flags::MORE_RESULTS_EXISTS != 0 {
            status = self.read_one_result(&mut seq, true).await?.1;
        }
        Ok(res)
    }

    /// Runs a prepared statement, returning only the affected-row count.
    pub async fn execute_drop(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        Ok(self.execute(sql, params).await?.affected_rows)
    }

    /// Closes every cached prepared statement (COM_STMT_CLOSE has no reply).
    pub async fn close_statements(&mut self) -> Result<()> {
        let ids: Vec<u32> = self.stmts.drain().map(|(_, s)| s.id).collect();
        for id in ids {
            self.writer.set_seq(0);
            self.writer.packet(|out| {
                out.push(COM_STMT_CLOSE);
                wire::put_u32(out, id);
            });
        }
        self.writer.flush(&mut self.sock).await?;
        Ok(())
    }

    /// Number of statements in the cache.
    pub fn cached_statements(&self) -> usize {
        self.stmts.len()
    }

    /// COM_QUIT, then close the socket.
    pub async fn close(mut self) -> Result<()> {
        self.writer.set_seq(0);
        self.writer.write_packet(&[COM_QUIT]);
        self.writer.flush(&mut self.sock).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(type_code: u8, flags: u16) -> ColumnDef {
        ColumnDef {
            name: "c".into(),
            type_code,
            flags,
            decimals: 0,
        }
    }

    #[test]
    fn text_values_by_type() {
        assert!(matches!(
            text_value(&col(types::LONG, 0), b"-5"),
            Value::Int(-5)
        ));
        assert!(matches!(
            text_value(
                &col(types::LONGLONG, column_flags::UNSIGNED_FLAG),
                b"18446744073709551615"
            ),
            Value::UInt(u64::MAX)
        ));
        match text_value(&col(types::NEWDECIMAL, 0), b"12.50") {
            Value::Decimal(d) => assert_eq!(d.to_string(), "12.50"),
            other => panic!("{other:?}"),
        }
        match text_value(&col(types::DATETIME, 0), b"2024-01-02 03:04:05") {
            Value::DateTime(dt) => assert_eq!((dt.date.year, dt.hour, dt.second), (2024, 3, 5)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            text_value(&col(types::VAR_STRING, 0), b"abc"),
            Value::Bytes(ref b) if b == b"abc"
        ));
    }

    #[test]
    fn err_packet_fields() {
        let mut p = vec![0xFF];
        wire::put_u16(&mut p, 1213);
        p.extend_from_slice(b"#40001Deadlock found");
        let e = err_packet(&p);
        assert!(e.is_deadlock());
        assert_eq!(e.to_string(), "ERROR 1213 (40001): Deadlock found");
        let t: lockstep_types::Error = e.into();
        assert_eq!(t.number(), 1213);
    }

    #[test]
    fn binary_rows_round_trip_through_the_server_encoder() {
        use lockstep_protocol::resultset::encode_binary_row;
        use lockstep_protocol::Column;
        use lockstep_types::DataType;
        let cols = [
            Column::new("a", DataType::Int { unsigned: false }),
            Column::new("b", DataType::VarChar { len: 10 }),
            Column::new("c", DataType::BigInt { unsigned: false }),
        ];
        let row = [Value::Int(-3), Value::Null, Value::Int(1 << 40)];
        let mut out = Vec::new();
        encode_binary_row(&mut out, &cols, &row, &mut Vec::new());
        let defs = [
            col(types::LONG, 0),
            col(types::VAR_STRING, 0),
            col(types::LONGLONG, 0),
        ];
        let back = binary_row(&defs, &out).expect("decodes");
        assert!(matches!(back[0], Value::Int(-3)));
        assert!(back[1].is_null());
        assert!(matches!(back[2], Value::Int(v) if v == 1 << 40));
    }

    #[test]
    fn params_encode_as_the_server_decodes_them() {
        let params = [
            Value::Int(-7),
            Value::Null,
            Value::str("héllo"),
            Value::Decimal("12.34".parse().expect("decimal")),
            Value::DateTime(DateTime::parse("2024-05-06 07:08:09").expect("datetime")),
        ];
        let mut bitmap = vec![0u8; 1];
        let (mut tys, mut vals) = (Vec::new(), Vec::new());
        for (i, p) in params.iter().enumerate() {
            if p.is_null() {
                bitmap[0] |= 1 << i;
            }
            encode_param(&mut tys, &mut vals, p);
        }
        let mut data = bitmap;
        data.push(1);
        data.extend_from_slice(&tys);
        data.extend_from_slice(&vals);
        let mut bound = Vec::new();
        let back = command::decode_execute_params(&data, 5, &mut bound, &mut [])
            .expect("server decodes our params");
        assert!(matches!(back[0], Value::Int(-7)));
        assert!(back[1].is_null());
        assert!(matches!(&back[2], Value::Bytes(b) if b == "héllo".as_bytes()));
        assert!(matches!(&back[3], Value::Decimal(d) if d.to_string() == "12.34"));
        assert!(matches!(&back[4], Value::DateTime(dt) if dt.minute == 8));
    }
}
