//! End-to-end: a mock Handler behind `serve`, driven by a tiny client
//! written here (over an in-memory duplex stream), and by the real `mariadb`
//! command-line client over loopback TCP when it is installed.

use lockstep_protocol::command::{decode_binary_value, ParamType};
use lockstep_protocol::handshake::caps;
use lockstep_protocol::packet::{PacketReader, PacketWriter};
use lockstep_protocol::resultset::{status_flags, types};
use lockstep_protocol::wire::{self, Cursor};
use lockstep_protocol::{
    caching_sha2, column_flags, native_password, serve, serve_relocatable, Auth, BlockingTcp,
    Column, Config, Handler, Handshake, OkInfo, PreparedInfo, Response, ResultSet, Served, Status,
};
use lockstep_types::error::Code;
use lockstep_types::{DataType, DateTime, Error, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, DuplexStream};

// ---------------------------------------------------------------- mock server

struct Mock {
    in_tx: bool,
    /// The statements of the COM_QUERY not yet run.
    batch: std::collections::VecDeque<String>,
    /// A statement `gated` runs once this is notified.
    gate: Arc<tokio::sync::Notify>,
    next_stmt: u32,
    disconnected: Arc<AtomicBool>,
    /// How many times `relocate` answers no before it answers yes `moves`
    /// times.
    stays: usize,
    moves: usize,
    /// `idle_after`, and how many times `idle` was called.
    idle_after: Option<Duration>,
    idled: Arc<AtomicUsize>,
    /// Statements prepared from text containing "empty": their table
    /// result has no rows.
    empty: std::collections::HashSet<u32>,
}

fn table_columns() -> Vec<Column> {
    let mut id = Column::new("id", DataType::Int { unsigned: false });
    id.nullable = false;
    id.flags = column_flags::PRI_KEY_FLAG | column_flags::AUTO_INCREMENT_FLAG;
    (id.schema, id.table, id.org_table) = ("test".into(), "t".into(), "t".into());
    vec![
        id,
        Column::new("name", DataType::VarChar { len: 20 }),
        Column::new(
            "price",
            DataType::Decimal {
                precision: 10,
                scale: 2,
            },
        ),
        Column::new("at", DataType::DateTime { fsp: 0 }),
    ]
}

fn table_rows() -> Vec<Vec<Value>> {
    vec![
        vec![
            Value::Int(1),
            Value::str("apple"),
            Value::Decimal("1.5".parse().expect("decimal")),
            Value::DateTime(DateTime::parse("2024-05-06 07:08:09").expect("datetime")),
        ],
        vec![Value::Int(2), Value::Null, Value::Int(3), Value::Null],
    ]
}

impl Mock {
    fn new(disconnected: Arc<AtomicBool>) -> Self {
        Mock {
            in_tx: false,
            batch: Default::default(),
            gate: Default::default(),
            next_stmt: 1,
            disconnected,
            stays: 0,
            moves: 0,
            idle_after: None,
            idled: Arc::new(AtomicUsize::new(0)),
            empty: Default::default(),
        }
    }

    fn run_one(&mut self, sql: &str) -> Result<Response, Error> {
        let lower = sql.trim().to_ascii_lowercase();
        if lower.starts_with("select") && lower.contains("from t") {
            Ok(Response::Rows(ResultSet {
                columns: table_columns().into(),
                rows: table_rows(),
                warnings: 0,
            }))
        } else if lower.starts_with("select") {
            // Echo the literal after SELECT as a one-row string result.
            let text = sql.trim()[6..].trim().to_string();
            // `select warn...` reports three warnings.
            let warnings = if text.starts_with("warn") { 3 } else { 0 };
            Ok(Response::Rows(ResultSet {
                columns: vec![Column::new(text.clone(), DataType::VarChar { len: 64 })].into(),
                rows: vec![vec![Value::Bytes(text.into_bytes())]],
                warnings,
            }))
        } else if lower.starts_with("insert") {
            Ok(Response::Ok(OkInfo {
                affected_rows: 1,
                last_insert_id: 42,
                warnings: 0,
                info: String::new(),
            }))
        } else if lower == "begin" {
            self.in_tx = true;
            Ok(Response::Ok(OkInfo::default()))
        } else if lower == "commit" {
            self.in_tx = false;
            Ok(Response::Ok(OkInfo::default()))
        } else if lower.starts_with("kill") || lower.starts_with("set") || lower == "gated" {
            Ok(Response::Ok(OkInfo::default()))
        } else {
            Err(Error::parse(sql.trim()))
        }
    }
}

impl Handler for Mock {
    fn account_plugin(&mut self, user: &str, _peer: SocketAddr) -> Option<&'static str> {
        match user {
            "root" => Some(native_password::PLUGIN_NAME),
            "sha" => Some(caching_sha2::PLUGIN_NAME),
            _ => None,
        }
    }

    fn authenticate(&mut self, hs: &Handshake<'_>) -> Result<Auth, Error> {
        if hs.user == "sha" {
            return sha2_authenticate(hs);
        }
        let ok = hs.user == "root"
            && hs.auth_plugin == native_password::PLUGIN_NAME
            && native_password::verify(
                hs.scramble,
                hs.auth_response,
                &native_password::stage2_hash("pw"),
            );
        if !ok {
            return Err(Error::new(
                Code::AccessDenied,
                format!(
                    "Access denied for user '{}'@'localhost' (using password: YES)",
                    hs.user
                ),
            ));
        }
        match hs.database {
            None | Some("test") => Ok(Auth::Accepted),
            Some(db) => Err(Error::new(Code::BadDb, format!("Unknown database '{db}'"))),
        }
    }

    async fn query(&mut self, sql: &str, multi: bool) -> Option<Result<Response, Error>> {
        self.batch = if multi {
            let stmts = sql.split(';').filter(|s| !s.trim().is_empty());
            stmts.map(str::to_string).collect()
        } else {
            [sql.to_string()].into()
        };
        self.next_result().await
    }

    fn more_results(&self) -> bool {
        !self.batch.is_empty()
    }

    async fn next_result(&mut self) -> Option<Result<Response, Error>> {
        let s = self.batch.pop_front()?;
        if s.trim() == "gated" {
            self.gate.notified().await;
        }
        let r = self.run_one(&s);
        if r.is_err() {
            self.batch.clear();
        }
        Some(r)
    }

    /// The statement's id: these statements keep nothing else.
    type Statement = u32;

    fn prepare(&mut self, sql: &str) -> Result<(PreparedInfo, u32), Error> {
        let n = sql.matches('?').count();
        let id = self.next_stmt;
        self.next_stmt += 1;
        if sql.contains("empty") {
            self.empty.insert(id);
        }
        let info = PreparedInfo {
            statement_id: id,
            params: (0..n)
                .map(|_| Column::new("?", DataType::VarBinary { len: 0 }))
                .collect(),
            columns: if sql.to_ascii_lowercase().contains("from t") {
                table_columns()
            } else {
                Vec::new()
            },
        };
        Ok((info, id))
    }

    async fn execute(&mut self, id: &mut u32, params: Vec<Value>) -> Result<Response, Error> {
        if params.is_empty() {
            let empty = self.empty.contains(id);
            return Ok(Response::Rows(ResultSet {
                columns: table_columns().into(),
                rows: if empty { Vec::new() } else { table_rows() },
                warnings: 0,
            }));
        }
        // Echo the parameters back as one row typed after their values.
        Ok(Response::Rows(ResultSet {
            columns: params
                .iter()
                .enumerate()
                .map(|(i, v)| Column::typed_after(format!("p{i}"), v))
                .collect(),
            rows: vec![params],
            warnings: 0,
        }))
    }

    fn init_db(&mut self, db: &str) -> Result<(), Error> {
        if db == "test" {
            Ok(())
        } else {
            Err(Error::new(Code::BadDb, format!("Unknown database '{db}'")))
        }
    }

    fn field_list(&mut self, table: &str, _wildcard: &str) -> Result<Vec<Column>, Error> {
        if table == "t" {
            Ok(table_columns())
        } else {
            Err(Error::no_such_table("test", table))
        }
    }

    fn statistics(&mut self) -> String {
        "Uptime: 1  Threads: 1".into()
    }

    fn reset_connection(&mut self) {
        self.in_tx = false;
    }

    fn status(&self) -> Status {
        Status {
            in_transaction: self.in_tx,
            autocommit: true,
            ..Default::default()
        }
    }

    fn disconnect(&mut self) {
        self.disconnected.store(true, Ordering::SeqCst);
    }

    fn idle_after(&self) -> Option<Duration> {
        self.idle_after
    }

    fn idle(&mut self) {
        self.idled.fetch_add(1, Ordering::SeqCst);
    }

    fn relocate(&mut self) -> bool {
        if self.stays > 0 {
            self.stays -= 1;
            return false;
        }
        let yes = self.moves > 0;
        self.moves = self.moves.saturating_sub(1);
        yes
    }
}

/// The "sha" account (caching_sha2_password, password "s3"): its stored
/// hash and the server's cache, shared by every connection of the test.
static SHA2: std::sync::Mutex<Option<Sha2Account>> = std::sync::Mutex::new(None);

/// (stored hash, cached SHA256(SHA256(password))).
type Sha2Account = (Vec<u8>, Option<[u8; 32]>);

fn sha2_authenticate(hs: &Handshake<'_>) -> Result<Auth, Error> {
    let mut state = SHA2.lock().expect("not poisoned");
    let (stored, cache) = state.get_or_insert_with(|| (caching_sha2::stored_hash(b"s3"), None));
    let ok = if hs.cleartext {
        let good = caching_sha2::verify_password(hs.auth_response, stored);
        if good {
            *cache = Some(caching_sha2::cache_digest(hs.auth_response));
        }
        good
    } else {
        match cache {
            Some(digest) => caching_sha2::verify_scramble(hs.scramble, hs.auth_response, digest),
            None => return Ok(Auth::FullAuthRequired),
        }
    };
    if ok {
        Ok(Auth::Accepted)
    } else {
        Err(Error::new(
            Code::AccessDenied,
            "Access denied for user 'sha'@'localhost' (using password: YES)",
        ))
    }
}

fn peer() -> SocketAddr {
    "127.0.0.1:5555".parse().expect("socket address")
}

struct Server {
    task: tokio::task::JoinHandle<Result<(), lockstep_protocol::ProtocolError>>,
    disconnected: Arc<AtomicBool>,
    gate: Arc<tokio::sync::Notify>,
}

fn start(config: Config) -> (DuplexStream, Server) {
    let (client, server) = tokio::io::duplex(1 << 16);
    let disconnected = Arc::new(AtomicBool::new(false));
    let mock = Mock::new(disconnected.clone());
    let gate = mock.gate.clone();
    let task = tokio::spawn(async move { serve(server, 7, peer(), mock, &config).await });
    let server = Server {
        task,
        disconnected,
        gate,
    };
    (client, server)
}

// ---------------------------------------------------------------- tiny client

struct Client {
    stream: DuplexStream,
    reader: PacketReader,
    writer: PacketWriter,
    seq: u8,
    deprecate_eof: bool,
}

#[derive(Debug, PartialEq)]
enum Reply {
    Ok {
        affected: u64,
        last_id: u64,
        status: u16,
    },
    Err {
        code: u16,
        state: String,
        message: String,
    },
    Rows {
        columns: Vec<(String, u8, u16, u8)>,
        rows: Vec<Vec<Option<String>>>,
        status: u16,
    },
}

fn parse_err(p: &[u8]) -> Reply {
    let mut c = Cursor::new(p);
    c.skip(1).expect("header");
    let code = c.u16().expect("code");
    c.skip(1).expect("#");
    let state = String::from_utf8_lossy(c.bytes(5).expect("state")).into_owned();
    Reply::Err {
        code,
        state,
        message: String::from_utf8_lossy(c.rest()).into_owned(),
    }
}

fn parse_ok(p: &[u8]) -> Reply {
    let mut c = Cursor::new(p);
    c.skip(1).expect("header");
    let affected = c.lenenc_int().expect("affected").expect("not null");
    let last_id = c.lenenc_int().expect("last id").expect("not null");
    Reply::Ok {
        affected,
        last_id,
        status: c.u16().expect("status"),
    }
}

/// (name, type, flags, decimals) of a column definition.
fn parse_column(p: &[u8]) -> (String, u8, u16, u8) {
    let mut c = Cursor::new(p);
    for _ in 0..4 {
        c.lenenc_bytes().expect("def/schema/table/org_table");
    }
    let name = String::from_utf8_lossy(c.lenenc_bytes().expect("name")).into_owned();
    c.lenenc_bytes().expect("org_name");
    c.skip(1 + 2 + 4).expect("fixed fields");
    let ty = c.u8().expect("type");
    let flags = c.u16().expect("flags");
    let decimals = c.u8().expect("decimals");
    (name, ty, flags, decimals)
}

/// Reads HandshakeV10; returns the next sequence id and the scramble.
async fn read_greeting(stream: &mut DuplexStream, reader: &mut PacketReader) -> (u8, [u8; 20]) {
    let mut seq = 0;
    let greeting = reader
        .read(stream, &mut seq, 1 << 20)
        .await
        .expect("greeting")
        .expect("greeting present")
        .to_vec();
    let mut c = Cursor::new(&greeting);
    assert_eq!(c.u8(), Ok(10));
    c.null_terminated().expect("version");
    assert_eq!(c.u32(), Ok(7), "connection id");
    let mut scramble = [0u8; 20];
    scramble[..8].copy_from_slice(c.bytes(8).expect("part 1"));
    c.skip(1 + 2 + 1 + 2 + 2 + 1 + 10).expect("fixed part");
    scramble[8..].copy_from_slice(c.bytes(12).expect("part 2"));
    (seq, scramble)
}

impl Client {
    async fn connect(
        mut stream: DuplexStream,
        user: &str,
        password: &str,
        db: Option<&str>,
        plugin: &str,
        deprecate_eof: bool,
    ) -> Result<Client, Reply> {
        let mut reader = PacketReader::new();
        let (mut seq, scramble) = read_greeting(&mut stream, &mut reader).await;

        let mut flags = caps::PROTOCOL_41
            | caps::SECURE_CONNECTION
            | caps::PLUGIN_AUTH
            | caps::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | caps::MULTI_STATEMENTS
            | caps::MULTI_RESULTS
            | caps::CONNECT_ATTRS;
        if deprecate_eof {
            flags |= caps::DEPRECATE_EOF;
        }
        if db.is_some() {
            flags |= caps::CONNECT_WITH_DB;
        }
        // A caching_sha2 client would send a SHA-256 based answer; any bytes do.
        let answer = if plugin == native_password::PLUGIN_NAME {
            native_password::client_response(password, &scramble)
        } else {
            vec![0xAB; 32]
        };
        let mut w = PacketWriter::new();
        w.set_seq(seq);
        w.packet(|o| {
            wire::put_u32(o, flags);
            wire::put_u32(o, 1 << 24);
            o.push(255);
            o.extend_from_slice(&[0; 23]);
            wire::put_null_terminated(o, user.as_bytes());
            wire::put_lenenc_bytes(o, &answer);
            if let Some(db) = db {
                wire::put_null_terminated(o, db.as_bytes());
            }
            wire::put_null_terminated(o, plugin.as_bytes());
            let mut attrs = Vec::new();
            wire::put_lenenc_bytes(&mut attrs, b"_client_name");
            wire::put_lenenc_bytes(&mut attrs, b"e2e");
            wire::put_lenenc_bytes(o, &attrs);
        });
        w.flush(&mut stream).await.expect("send response");
        seq = w.seq();
        let mut reply = reader
            .read(&mut stream, &mut seq, 1 << 20)
            .await
            .expect("auth reply")
            .expect("auth reply present")
            .to_vec();
        if reply[0] == 0xFE {
            let mut c = Cursor::new(&reply[1..]);
            assert_eq!(
                c.null_terminated(),
                Ok(native_password::PLUGIN_NAME.as_bytes())
            );
            let mut s = [0u8; 20];
            s.copy_from_slice(c.bytes(20).expect("switch scramble"));
            assert_eq!(s, scramble, "switch reuses the scramble");
            w.set_seq(seq);
            w.write_packet(&native_password::client_response(password, &s));
            w.flush(&mut stream).await.expect("send switch response");
            seq = w.seq();
            reply = reader
                .read(&mut stream, &mut seq, 1 << 20)
                .await
                .expect("auth reply")
                .expect("auth reply present")
                .to_vec();
        }
        match reply[0] {
            0x00 => Ok(Client {
                stream,
                reader,
                writer: w,
                seq: 0,
                deprecate_eof,
            }),
            0xFF => Err(parse_err(&reply)),
            other => panic!("unexpected auth reply {other:#x}"),
        }
    }

    async fn send(&mut self, payload: &[u8]) {
        self.writer.set_seq(0);
        self.writer.write_packet(payload);
        self.writer.flush(&mut self.stream).await.expect("send");
        // The reply continues the sequence (a split request used several ids).
        self.seq = self.writer.seq();
    }

    async fn read(&mut self) -> Vec<u8> {
        self.reader
            .read(&mut self.stream, &mut self.seq, 64 << 20)
            .await
            .expect("read")
            .expect("server closed")
            .to_vec()
    }

    async fn read_columns(&mut self, n: usize) -> Vec<(String, u8, u16, u8)> {
        let mut cols = Vec::new();
        for _ in 0..n {
            cols.push(parse_column(&self.read().await));
        }
        if !self.deprecate_eof {
            assert_eq!(self.read().await[0], 0xFE, "EOF after column definitions");
        }
        cols
    }

    /// Reads one reply: OK, ERR, or a whole result set. `binary` selects
    /// the row format.
    async fn reply(&mut self, binary: bool) -> Reply {
        let first = self.read().await;
        match first[0] {
            0x00 => return parse_ok(&first),
            0xFF => return parse_err(&first),
            _ => {}
        }
        let n = Cursor::new(&first)
            .lenenc_int()
            .expect("column count")
            .expect("not null") as usize;
        let columns = self.read_columns(n).await;
        let mut rows = Vec::new();
        loop {
            let p = self.read().await;
            if p[0] == 0xFE && p.len() < 0xFFFFFF && (p.len() < 9 || self.deprecate_eof) {
                let status = if self.deprecate_eof {
                    match parse_ok(&p) {
                        Reply::Ok { status, .. } => status,
                        _ => unreachable!(),
                    }
                } else {
                    u16::from_le_bytes([p[3], p[4]])
                };
                return Reply::Rows {
                    columns,
                    rows,
                    status,
                };
            }
            if p[0] == 0xFF {
                return parse_err(&p);
            }
            rows.push(if binary {
                binary_row(&p, &columns)
            } else {
                text_row(&p, n)
            });
        }
    }

    async fn query(&mut self, sql: &str) -> Vec<Reply> {
        let mut payload = vec![0x03];
        payload.extend_from_slice(sql.as_bytes());
        self.send(&payload).await;
        let mut replies = Vec::new();
        loop {
            let r = self.reply(false).await;
            let more = match &r {
                Reply::Ok { status, .. } | Reply::Rows { status, .. } => {
                    status & status_flags::MORE_RESULTS_EXISTS != 0
                }
                Reply::Err { .. } => false,
            };
            replies.push(r);
            if !more {
                return replies;
            }
        }
    }
}

fn text_row(p: &[u8], n: usize) -> Vec<Option<String>> {
    let mut c = Cursor::new(p);
    (0..n)
        .map(|_| {
            if p[c.position()] == 0xFB {
                c.skip(1).expect("null");
                None
            } else {
                Some(String::from_utf8_lossy(c.lenenc_bytes().expect("value")).into_owned())
            }
        })
        .collect()
}

fn binary_row(p: &[u8], columns: &[(String, u8, u16, u8)]) -> Vec<Option<String>> {
    let mut c = Cursor::new(p);
    assert_eq!(c.u8(), Ok(0));
    let bitmap = c.bytes((columns.len() + 9) / 8).expect("bitmap").to_vec();
    columns
        .iter()
        .enumerate()
        .map(|(i, &(_, ty, flags, _))| {
            if bitmap[(i + 2) / 8] & (1 << ((i + 2) % 8)) != 0 {
                return None;
            }
            let ty = ParamType {
                type_code: ty,
                unsigned: flags & column_flags::UNSIGNED_FLAG != 0,
            };
            Some(
                decode_binary_value(&mut c, ty)
                    .expect("binary value")
                    .to_string(),
            )
        })
        .collect()
}

fn s(x: &str) -> Option<String> {
    Some(x.to_string())
}

async fn login(stream: DuplexStream, deprecate_eof: bool) -> Client {
    Client::connect(
        stream,
        "root",
        "pw",
        Some("test"),
        "mysql_native_password",
        deprecate_eof,
    )
    .await
    .expect("login succeeds")
}

// ---------------------------------------------------------------- tests

#[tokio::test]
async fn handshake_query_prepare_execute_quit() {
    for deprecate_eof in [true, false] {
        let (stream, server) = start(Config::default());
        let mut c = login(stream, deprecate_eof).await;

        // Text result set with typed columns and NULLs.
        let r = c.query("select * from t").await;
        let [Reply::Rows {
            columns,
            rows,
            status,
        }] = &r[..]
        else {
            panic!("expected rows, got {r:?}");
        };
        let names: Vec<_> = columns.iter().map(|c| (c.0.as_str(), c.1)).collect();
        assert_eq!(
            names,
            [
                ("id", types::LONG),
                ("name", types::VAR_STRING),
                ("price", types::NEWDECIMAL),
                ("at", types::DATETIME)
            ]
        );
        assert_ne!(columns[0].2 & column_flags::PRI_KEY_FLAG, 0);
        assert_ne!(columns[0].2 & column_flags::NOT_NULL_FLAG, 0);
        assert_eq!(columns[2].3, 2, "decimal scale");
        assert_eq!(
            rows,
            &vec![
                vec![s("1"), s("apple"), s("1.50"), s("2024-05-06 07:08:09")],
                vec![s("2"), None, s("3.00"), None],
            ]
        );
        assert_eq!(*status, status_flags::AUTOCOMMIT);

        // OK with last insert id; IN_TRANS follows the handler's status.
        assert_eq!(
            c.query("begin").await,
            [Reply::Ok {
                affected: 0,
                last_id: 0,
                status: status_flags::AUTOCOMMIT | status_flags::IN_TRANS
            }]
        );
        assert_eq!(
            c.query("insert into t values (1)").await,
            [Reply::Ok {
                affected: 1,
                last_id: 42,
                status: status_flags::AUTOCOMMIT | status_flags::IN_TRANS
            }]
        );
        c.query("commit").await;

        // Multi-statements: MORE_RESULTS between results, stop at the error.
        let r = c
            .query("select 1; insert into t values (2); bogus; select 2")
            .await;
        assert_eq!(r.len(), 3, "{r:?}");
        assert!(matches!(&r[0], Reply::Rows { rows, status, .. }
            if rows == &vec![vec![s("1")]] && status & status_flags::MORE_RESULTS_EXISTS != 0));
        assert!(matches!(&r[1], Reply::Ok { last_id: 42, status, .. }
            if status & status_flags::MORE_RESULTS_EXISTS != 0));
        assert!(matches!(&r[2], Reply::Err { code: 1064, state, .. } if state == "42000"));

        // Prepared statement with mixed parameter types and a NULL.
        let mut p = vec![0x16];
        p.extend_from_slice(b"select ?, ?, ?, ?, ?, ?");
        c.send(&p).await;
        let ok = c.read().await;
        let mut rd = Cursor::new(&ok);
        assert_eq!(rd.u8(), Ok(0));
        let stmt = rd.u32().expect("stmt id");
        assert_eq!(rd.u16(), Ok(0), "no result columns announced");
        assert_eq!(rd.u16(), Ok(6), "six parameters");
        let params = c.read_columns(6).await;
        assert_eq!(params[0].0, "?");

        let mut e = vec![0x17];
        e.extend_from_slice(&stmt.to_le_bytes());
        e.push(0);
        e.extend_from_slice(&1u32.to_le_bytes());
        e.push(0b0000_0010); // second parameter is NULL
        e.push(1);
        for t in [
            types::LONGLONG,
            types::NULL,
            types::VAR_STRING,
            types::DOUBLE,
            types::DATETIME,
            types::NEWDECIMAL,
        ] {
            e.extend_from_slice(&[t, 0]);
        }
        e.extend_from_slice(&(-7i64).to_le_bytes());
        wire::put_lenenc_bytes(&mut e, "héllo".as_bytes());
        e.extend_from_slice(&0.25f64.to_le_bytes());
        e.extend_from_slice(&[11, 0xE8, 0x07, 2, 29, 1, 2, 3, 0x40, 0xE2, 0x01, 0]);
        wire::put_lenenc_bytes(&mut e, b"9.99");
        c.send(&e).await;
        let Reply::Rows { columns, rows, .. } = c.reply(true).await else {
            panic!("execute returns rows");
        };
        assert_eq!(columns.len(), 6);
        assert_eq!(
            rows,
            vec![vec![
                s("-7"),
                None,
                s("héllo"),
                s("0.25"),
                s("2024-02-29 01:02:03.123456"),
                s("9.99")
            ]]
        );

        // Long data replaces a parameter; types are remembered.
        let mut ld = vec![0x18];
        ld.extend_from_slice(&stmt.to_le_bytes());
        ld.extend_from_slice(&2u16.to_le_bytes());
        ld.extend_from_slice(b"long ");
        c.send(&ld).await;
        ld.truncate(7);
        ld.extend_from_slice(b"data");
        c.send(&ld).await;
        let mut e2 = vec![0x17];
        e2.extend_from_slice(&stmt.to_le_bytes());
        e2.push(0);
        e2.extend_from_slice(&1u32.to_le_bytes());
        e2.push(0b0011_1011); // all NULL but the long-data one (2)
        e2.push(0);
        c.send(&e2).await;
        let Reply::Rows { rows, .. } = c.reply(true).await else {
            panic!("execute returns rows");
        };
        assert_eq!(
            rows,
            vec![vec![None, None, s("long data"), None, None, None]]
        );

        // Statement returning table rows in binary form.
        let mut p = vec![0x16];
        p.extend_from_slice(b"select * from t");
        c.send(&p).await;
        let ok = c.read().await;
        let stmt2 = u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]]);
        assert_eq!(u16::from_le_bytes([ok[5], ok[6]]), 4);
        c.read_columns(4).await;
        let mut e = vec![0x17];
        e.extend_from_slice(&stmt2.to_le_bytes());
        e.extend_from_slice(&[0, 1, 0, 0, 0]);
        c.send(&e).await;
        let Reply::Rows { rows, .. } = c.reply(true).await else {
            panic!("execute returns rows");
        };
        assert_eq!(
            rows,
            vec![
                vec![s("1"), s("apple"), s("1.50"), s("2024-05-06 07:08:09")],
                vec![s("2"), None, s("3.00"), None],
            ]
        );

        // Close, then executing the closed statement is ERR 1243.
        let mut cl = vec![0x19];
        cl.extend_from_slice(&stmt.to_le_bytes());
        c.send(&cl).await;
        c.send(&e2).await;
        assert!(matches!(c.reply(true).await, Reply::Err { code: 1243, .. }));

        c.send(&[0x01]).await;
        let end = server.task.await.expect("server task");
        assert!(end.is_ok(), "{end:?}");
        assert!(server.disconnected.load(Ordering::SeqCst));
    }
}

/// A multi-statement COM_QUERY: each result reaches the client before
/// the next statement runs (the second here waits until the client has
/// read the first), flagged SERVER_MORE_RESULTS_EXISTS but the last.
#[tokio::test]
async fn batch_results_go_out_as_each_statement_ends() {
    let (stream, server) = start(Config::default());
    let mut c = login(stream, false).await;
    c.send(b"\x03set a = 1; gated; set b = 2").await;
    let more = |r: &Reply| match r {
        Reply::Ok { status, .. } => status & status_flags::MORE_RESULTS_EXISTS != 0,
        other => panic!("expected OK, got {other:?}"),
    };
    let first = tokio::time::timeout(Duration::from_secs(5), c.reply(false))
        .await
        .expect("the first result comes while the second statement waits");
    assert!(more(&first));
    server.gate.notify_one();
    assert!(more(&c.reply(false).await));
    assert!(!more(&c.reply(false).await));
    assert_eq!(c.query("set c = 3").await.len(), 1);
}

#[tokio::test]
async fn result_set_end_carries_the_warning_count() {
    for deprecate_eof in [true, false] {
        let (stream, _server) = start(Config::default());
        let mut c = login(stream, deprecate_eof).await;
        c.send(b"\x03select warn").await;
        assert_eq!(c.read().await, [1], "column count");
        c.read_columns(1).await;
        c.read().await; // the row
        let end = c.read().await;
        assert_eq!(end[0], 0xFE);
        // EOF: header, warnings, status. OK: header, two lenenc zeros,
        // status, warnings.
        let at = if deprecate_eof { 5 } else { 1 };
        assert_eq!(u16::from_le_bytes([end[at], end[at + 1]]), 3, "{end:?}");
    }
}

#[tokio::test]
async fn other_commands() {
    let (stream, server) = start(Config::default());
    let mut c = login(stream, true).await;

    c.send(&[0x0E]).await;
    assert!(matches!(c.reply(false).await, Reply::Ok { .. }), "ping");

    c.send(b"\x02test").await;
    assert!(matches!(c.reply(false).await, Reply::Ok { .. }), "init db");
    c.send(b"\x02nope").await;
    assert!(matches!(
        c.reply(false).await,
        Reply::Err { code: 1049, .. }
    ));

    c.send(&[0x09]).await;
    assert_eq!(c.read().await, b"Uptime: 1  Threads: 1");

    c.send(b"\x04t\0").await;
    let mut n = 0;
    loop {
        let p = c.read().await;
        if p[0] == 0xFE {
            break;
        }
        assert_eq!(
            *p.last().expect("default"),
            0xFB,
            "field list default is NULL"
        );
        n += 1;
    }
    assert_eq!(n, 4);

    c.send(&[0x0C, 9, 0, 0, 0]).await;
    assert!(
        matches!(c.reply(false).await, Reply::Ok { .. }),
        "process kill"
    );

    // Multi-statements off: the whole text goes to the handler as one statement.
    c.send(&[0x1B, 1, 0]).await;
    assert_eq!(c.read().await[0], 0xFE);
    assert!(matches!(
        &c.query("select 1; select 2").await[..],
        [Reply::Rows { .. }]
    ));
    c.send(&[0x1B, 0, 0]).await;
    assert_eq!(c.read().await[0], 0xFE);
    assert_eq!(c.query("select 1; select 2").await.len(), 2);

    // Fetch of a statement never prepared (cursor_fetch covers the rest).
    c.send(&[0x1C, 1, 0, 0, 0, 1, 0, 0, 0]).await;
    assert!(
        matches!(c.reply(false).await, Reply::Err { code: 1243, .. }),
        "fetch"
    );
    c.send(&[0x1A, 99, 0, 0, 0]).await;
    assert!(
        matches!(c.reply(false).await, Reply::Err { code: 1243, .. }),
        "reset unknown"
    );
    c.send(&[0x1F]).await;
    assert!(
        matches!(c.reply(false).await, Reply::Ok { .. }),
        "reset connection"
    );
    c.send(&[0x63]).await;
    assert!(
        matches!(c.reply(false).await, Reply::Err { code: 1047, .. }),
        "unknown command"
    );
    c.send(&[0x19, 1]).await;
    assert!(
        matches!(c.reply(false).await, Reply::Err { code: 1835, .. }),
        "truncated close"
    );
    c.send(&[0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0]).await;
    assert!(matches!(
        c.reply(false).await,
        Reply::Err { code: 1243, .. }
    ));
    c.send(b"\x03\xff\xfe").await;
    assert!(
        matches!(c.reply(false).await, Reply::Err { code: 1064, .. }),
        "invalid utf-8"
    );

    // A statement whose parameters cannot be decoded is 1210, not a crash.
    c.send(b"\x16select ?").await;
    let ok = c.read().await;
    c.read_columns(1).await;
    let mut e = vec![0x17];
    e.extend_from_slice(&ok[1..5]);
    e.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, types::LONGLONG, 0, 1, 2]);
    c.send(&e).await;
    assert!(matches!(c.reply(true).await, Reply::Err { code: 1210, .. }));

    // The connection still works; closing the stream ends it cleanly.
    assert!(matches!(
        &c.query("select 3").await[..],
        [Reply::Rows { .. }]
    ));
    drop(c);
    assert!(server.task.await.expect("server task").is_ok());
    assert!(server.disconnected.load(Ordering::SeqCst));
}

#[tokio::test]
async fn authentication() {
    // Wrong password.
    let (stream, server) = start(Config::default());
    let r = Client::connect(stream, "root", "bad", None, "mysql_native_password", true).await;
    assert!(matches!(r.err(), Some(Reply::Err { code: 1045, ref state, .. }) if state == "28000"));
    assert!(server.task.await.expect("server task").is_err());
    assert!(server.disconnected.load(Ordering::SeqCst));

    // A MySQL 8 client starting with caching_sha2_password is switched.
    let (stream, server) = start(Config::default());
    let mut c = Client::connect(stream, "root", "pw", None, "caching_sha2_password", true)
        .await
        .expect("switch then login");
    assert!(matches!(
        &c.query("select 1").await[..],
        [Reply::Rows { .. }]
    ));
    c.send(&[0x01]).await;
    assert!(server.task.await.expect("server task").is_ok());

    // Unknown database from the handler.
    let (stream, _server) = start(Config::default());
    let r = Client::connect(
        stream,
        "root",
        "pw",
        Some("zzz"),
        "mysql_native_password",
        true,
    )
    .await;
    assert!(matches!(r.err(), Some(Reply::Err { code: 1049, .. })));
}

#[tokio::test]
async fn limits_and_timeouts() {
    // A packet over max_allowed_packet gets 1153 and the connection closes.
    let config = Config {
        max_allowed_packet: 1024,
        ..Config::default()
    };
    let (stream, server) = start(config);
    let mut c = login(stream, true).await;
    let mut big = vec![0x03];
    big.extend_from_slice(&[b' '; 2000]);
    c.send(&big).await;
    assert!(matches!(
        c.reply(false).await,
        Reply::Err { code: 1153, .. }
    ));
    assert!(server.task.await.expect("server task").is_err());

    // Half a handshake, then silence: dropped after connect_timeout.
    let config = Config {
        connect_timeout: Duration::from_millis(200),
        ..Config::default()
    };
    let (mut stream, server) = start(config);
    stream
        .write_all(&[50, 0, 0, 1, 0x0F])
        .await
        .expect("partial write");
    let r = tokio::time::timeout(Duration::from_secs(5), server.task)
        .await
        .expect("server gave up")
        .expect("server task");
    assert!(matches!(r, Err(lockstep_protocol::ProtocolError::Timeout)));

    // Idle past wait_timeout: ERR 4031, then closed.
    let config = Config {
        wait_timeout: Duration::from_millis(200),
        ..Config::default()
    };
    let (stream, server) = start(config);
    let mut c = login(stream, true).await;
    c.seq = 0;
    let p = c.read().await;
    assert!(matches!(parse_err(&p), Reply::Err { code: 4031, .. }));
    assert!(server.task.await.expect("server task").is_err());
}

#[tokio::test]
async fn timers_count_silence_from_the_last_command() {
    // The loop keeps one idle and one wait_timeout timer across commands,
    // armed at the first and moved on only when they fire early: commands
    // closer together than either limit, for longer than both, must not
    // idle the session or close it.
    let config = Config {
        wait_timeout: Duration::from_millis(300),
        ..Config::default()
    };
    let (client, server) = tokio::io::duplex(1 << 16);
    let mut mock = Mock::new(Arc::new(AtomicBool::new(false)));
    mock.idle_after = Some(Duration::from_millis(150));
    let idled = mock.idled.clone();
    let task = tokio::spawn(async move { serve(server, 7, peer(), mock, &config).await });
    let mut c = login(client, true).await;
    let begun = std::time::Instant::now();
    while begun.elapsed() < Duration::from_millis(700) {
        assert!(matches!(
            &c.query("select 1").await[..],
            [Reply::Rows { .. }]
        ));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(idled.load(Ordering::SeqCst), 0, "never silent for 150 ms");
    // Silent past idle_after, short of wait_timeout: idle once, still open.
    tokio::time::sleep(Duration::from_millis(220)).await;
    assert_eq!(idled.load(Ordering::SeqCst), 1, "idle once per silence");
    assert!(matches!(
        &c.query("select 2").await[..],
        [Reply::Rows { .. }]
    ));
    // Then past wait_timeout: ERR 4031 and the end.
    c.seq = 0;
    let p = c.read().await;
    assert!(matches!(parse_err(&p), Reply::Err { code: 4031, .. }));
    assert!(task.await.expect("server task").is_err());
    assert_eq!(idled.load(Ordering::SeqCst), 2, "idle again before the end");
}

#[tokio::test]
async fn random_commands_get_ok_or_err() {
    use rand::{Rng, SeedableRng};
    let (stream, server) = start(Config::default());
    let mut c = login(stream, true).await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    // Commands without a reply, or with one that is not OK/ERR, are left
    // out, and COM_CHANGE_USER (a failed one ends the connection).
    let skip = [0x01, 0x09, 0x11, 0x16, 0x18, 0x19, 0x1B];
    for _ in 0..2000 {
        let mut p = vec![rng.gen()];
        if skip.contains(&p[0]) {
            continue;
        }
        let len = rng.gen_range(0..40);
        p.extend((0..len).map(|_| rng.gen::<u8>()));
        c.send(&p).await;
        let reply = c.read().await;
        assert!(matches!(reply[0], 0x00 | 0xFF), "{p:?} got {reply:?}");
    }
    c.send(&[0x0E]).await;
    assert!(matches!(c.reply(false).await, Reply::Ok { .. }));
    drop(c);
    assert!(server.task.await.expect("server task").is_ok());
}

#[tokio::test]
async fn refuse_sends_error_without_sqlstate() {
    let (mut client, server) = tokio::io::duplex(1024);
    let e = Error::new(Code::ConCount, "Too many connections");
    lockstep_protocol::refuse(server, &e).await.expect("refuse");
    let mut seq = 0;
    let p = PacketReader::new()
        .read(&mut client, &mut seq, 1024)
        .await
        .expect("read")
        .expect("packet")
        .to_vec();
    assert_eq!(&p[..3], &[0xFF, 0x10, 0x04]);
    assert_eq!(&p[3..], b"Too many connections");
}

#[tokio::test]
async fn large_result_and_query_split_over_packets() {
    let (stream, server) = start(Config::default());
    let mut c = login(stream, true).await;
    // A 17 MiB query arrives as two packets and is joined.
    let literal = "x".repeat(17 << 20);
    let r = c.query(&format!("select {literal}")).await;
    let [Reply::Rows { rows, .. }] = &r[..] else {
        panic!("expected rows");
    };
    assert_eq!(rows[0][0].as_ref().map(String::len), Some(17 << 20));
    c.send(&[0x01]).await;
    assert!(server.task.await.expect("server task").is_ok());
}

// ---------------------------------------------------------------- mariadb CLI

#[tokio::test]
async fn mariadb_command_line_client() {
    let Some(bin) = ["mariadb", "mysql"].into_iter().find(|b| {
        std::process::Command::new(b)
            .arg("--version")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }) else {
        eprintln!("no mariadb/mysql client installed; skipping");
        return;
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let mut id = 1;
        while let Ok((sock, peer)) = listener.accept().await {
            id += 1;
            let mock = Mock::new(Arc::new(AtomicBool::new(false)));
            tokio::spawn(async move {
                let _ = serve(sock, id, peer, mock, &Config::default()).await;
            });
        }
    });
    let run = |sql: &'static str, password: &'static str| {
        let bin = bin.to_string();
        tokio::task::spawn_blocking(move || {
            let mut child = std::process::Command::new(bin)
                .args([
                    "--protocol=tcp",
                    "-h",
                    "127.0.0.1",
                    "-u",
                    "root",
                    "-D",
                    "test",
                    "--batch",
                    "--skip-ssl",
                ])
                .arg(format!("-P{port}"))
                .arg("-e")
                .arg(sql)
                .env("MYSQL_PWD", password)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn client");
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while child.try_wait().expect("wait").is_none() {
                if std::time::Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("client hung");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            child.wait_with_output().expect("output")
        })
    };
    let out = run(
        "select * from t; insert into t values (1); select 'hello'",
        "pw",
    )
    .await
    .expect("client thread");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(
        stdout,
        "id\tname\tprice\tat\n1\tapple\t1.50\t2024-05-06 07:08:09\n2\tNULL\t3.00\tNULL\n'hello'\n'hello'\n"
    );

    let out = run("bogus", "pw").await.expect("client thread");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("ERROR 1064 (42000)"), "{stderr}");

    let out = run("select 1", "wrong").await.expect("client thread");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ERROR 1045 (28000)"), "{stderr}");
}

/// A caching_sha2_password login as a MySQL 8 client does it; returns the
/// packets the server sent after the handshake response.
async fn sha2_login(mut stream: DuplexStream, password: &str) -> Vec<Vec<u8>> {
    use rsa::pkcs8::DecodePublicKey;
    let mut reader = PacketReader::new();
    let (seq, nonce) = read_greeting(&mut stream, &mut reader).await;
    let mut w = PacketWriter::new();
    w.set_seq(seq);
    w.packet(|o| {
        let flags = caps::PROTOCOL_41
            | caps::SECURE_CONNECTION
            | caps::PLUGIN_AUTH
            | caps::PLUGIN_AUTH_LENENC_CLIENT_DATA;
        wire::put_u32(o, flags);
        wire::put_u32(o, 1 << 24);
        o.push(255);
        o.extend_from_slice(&[0; 23]);
        wire::put_null_terminated(o, b"sha");
        wire::put_lenenc_bytes(
            o,
            &caching_sha2::client_response(password.as_bytes(), &nonce),
        );
        wire::put_null_terminated(o, caching_sha2::PLUGIN_NAME.as_bytes());
    });
    let mut seen = Vec::new();
    loop {
        w.flush(&mut stream).await.expect("send");
        let mut seq = w.seq();
        let reply = reader
            .read(&mut stream, &mut seq, 1 << 20)
            .await
            .expect("reply")
            .expect("reply present")
            .to_vec();
        w.set_seq(seq);
        seen.push(reply.clone());
        match reply.as_slice() {
            [0x01, 0x03] => {
                let mut seq = w.seq();
                let ok = reader.read(&mut stream, &mut seq, 1 << 20).await;
                seen.push(ok.expect("ok").expect("ok present").to_vec());
                return seen;
            }
            [0x01, 0x04] => w.write_packet(&[caching_sha2::REQUEST_PUBLIC_KEY]),
            [0x01, pem @ ..] => {
                let pem = std::str::from_utf8(pem).expect("PEM text");
                let key = rsa::RsaPublicKey::from_public_key_pem(pem).expect("public key");
                let mut plain = password.as_bytes().to_vec();
                plain.push(0);
                caching_sha2::xor_nonce(&mut plain, &nonce);
                let sealed = key
                    .encrypt(
                        &mut rand::thread_rng(),
                        rsa::Oaep::new::<sha1::Sha1>(),
                        &plain,
                    )
                    .expect("encrypt");
                w.write_packet(&sealed);
            }
            _ => return seen,
        }
    }
}

#[tokio::test]
async fn caching_sha2_full_then_fast() {
    let dir = std::env::temp_dir().join(format!("lockstep-e2e-rsa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = Config {
        rsa_keys: Some(Arc::new(caching_sha2::LazyRsaKeys::new(&dir))),
        ..Config::default()
    };
    // Nothing cached: full authentication, the key requested, then OK.
    let (stream, _server) = start(config.clone());
    let seen = sha2_login(stream, "s3").await;
    assert_eq!(seen[0], [0x01, 0x04]);
    assert!(seen[1].starts_with(b"\x01-----BEGIN PUBLIC KEY-----"));
    assert_eq!(seen[2][0], 0x00, "OK after full authentication");
    // Cached: fast_auth_success then OK.
    let (stream, _server) = start(config.clone());
    let seen = sha2_login(stream, "s3").await;
    assert_eq!(seen[0], [0x01, 0x03]);
    assert_eq!(seen[1][0], 0x00);
    // A wrong password fails on the fast path.
    let (stream, _server) = start(config.clone());
    let seen = sha2_login(stream, "nope").await;
    assert!(matches!(parse_err(&seen[0]), Reply::Err { code: 1045, .. }));
    // Without a key, plain-text full authentication is refused.
    *SHA2.lock().expect("not poisoned") = None;
    let (stream, _server) = start(Config::default());
    let seen = sha2_login(stream, "s3").await;
    assert_eq!(seen[0], [0x01, 0x04]);
    assert!(matches!(parse_err(&seen[1]), Reply::Err { code: 1045, .. }));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A relocatable connection leaves its task between commands and goes on
/// where it stopped: transaction state, prepared statements and a command
/// the client sent ahead (already in the reader's buffer) survive, and the
/// handler is told of the end only once, at the real end.
#[tokio::test]
async fn relocation_keeps_the_connection() {
    let (client, server) = tokio::io::duplex(1 << 16);
    let disconnected = Arc::new(AtomicBool::new(false));
    let mut mock = Mock::new(disconnected.clone());
    mock.moves = 3;
    let task = tokio::spawn(async move {
        let config = Config::default();
        let mut moved = 0;
        let mut served =
            serve_relocatable(server, 7, peer(), mock, &config, std::future::pending()).await;
        loop {
            match served {
                Served::Closed(r) => return (r, moved),
                Served::Relocate(parked) => {
                    moved += 1;
                    let parked = parked.map_stream(Ok).expect("same stream");
                    // On another task, as the server moves it to the pool.
                    let config = config.clone();
                    served = tokio::spawn(async move {
                        parked.resume(&config, std::future::pending()).await
                    })
                    .await
                    .expect("resumed task");
                }
            }
        }
    });
    let mut c = login(client, true).await;
    // Relocated after the handshake, before this command.
    assert!(matches!(&c.query("begin").await[..], [Reply::Ok { .. }]));
    // A prepared statement made before the next move ...
    let mut p = vec![0x16];
    p.extend_from_slice(b"select ?");
    c.send(&p).await;
    let ok = c.read().await;
    let stmt = Cursor::new(&ok[1..]).u32().expect("stmt id");
    c.read_columns(1).await;
    // ... and two commands sent back to back: the second is read ahead.
    c.writer.set_seq(0);
    c.writer.write_packet(b"\x03select 1");
    c.writer.set_seq(0);
    c.writer.write_packet(b"\x03select 2");
    c.writer.flush(&mut c.stream).await.expect("send both");
    for want in ["1", "2"] {
        c.seq = 1;
        let r = tokio::time::timeout(Duration::from_secs(10), c.reply(false))
            .await
            .expect("both commands answered");
        assert!(
            matches!(&r, Reply::Rows { rows, status, .. }
                if rows == &vec![vec![s(want)]] && status & status_flags::IN_TRANS != 0),
            "{r:?}"
        );
    }
    assert!(!disconnected.load(Ordering::SeqCst));
    // The statement still executes after the moves.
    let mut e = vec![0x17];
    e.extend_from_slice(&stmt.to_le_bytes());
    e.push(0);
    e.extend_from_slice(&1u32.to_le_bytes());
    e.push(0);
    e.push(1);
    e.extend_from_slice(&[types::LONGLONG, 0]);
    e.extend_from_slice(&5i64.to_le_bytes());
    c.send(&e).await;
    assert!(matches!(c.reply(true).await, Reply::Rows { .. }));
    c.send(&[0x01]).await;
    let (result, moved) = task.await.expect("server task");
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(moved, 3);
    assert!(disconnected.load(Ordering::SeqCst));
}

// ------------------------------------------------------ a thread of its own

/// Serves one connection over loopback TCP on a thread of its own, with
/// blocking reads (`BlockingTcp`), as the server does for its first
/// connections. The test's client talks through a duplex stream bridged to
/// the socket. The thread returns whether the connection asked to move
/// (it is then resumed on the reactor, where the server's pool would run it)
/// and how it ended.
async fn start_on_thread(
    mock: Mock,
    config: Config,
    shutdown: tokio::sync::oneshot::Receiver<()>,
) -> (
    DuplexStream,
    std::thread::JoinHandle<(bool, Result<(), lockstep_protocol::ProtocolError>)>,
) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    let thread = std::thread::spawn(move || {
        let (sock, peer) = listener.accept().expect("accept");
        sock.set_nodelay(true).expect("nodelay");
        // As the server's dedicated threads: a runtime of one worker.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let stream = BlockingTcp::new(sock).expect("blocking socket");
            let mut shutdown = std::pin::pin!(async move {
                let _ = shutdown.await;
            });
            match serve_relocatable(stream, 7, peer, mock, &config, shutdown.as_mut()).await {
                Served::Closed(r) => (false, r),
                Served::Relocate(parked) => {
                    let parked = parked
                        .map_stream(|s| s.into_std().and_then(tokio::net::TcpStream::from_std))
                        .expect("onto the reactor");
                    match parked.resume(&config, shutdown).await {
                        Served::Closed(r) => (true, r),
                        Served::Relocate(_) => panic!("moved twice"),
                    }
                }
            }
        })
    });
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (client, mut bridge) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let _ = tokio::io::copy_bidirectional(&mut tcp, &mut bridge).await;
    });
    (client, thread)
}

/// Joins the server thread without blocking the test's runtime.
async fn join(
    thread: std::thread::JoinHandle<(bool, Result<(), lockstep_protocol::ProtocolError>)>,
) -> (bool, Result<(), lockstep_protocol::ProtocolError>) {
    tokio::time::timeout(
        Duration::from_secs(10),
        tokio::task::spawn_blocking(move || thread.join().expect("server thread")),
    )
    .await
    .expect("the server thread ends")
    .expect("joined")
}

#[tokio::test]
async fn blocking_socket_keeps_timers_and_shutdown() {
    // Commands, then silence inside the blocking read: `idle` is still
    // called (each read gives way to the timers every slice), and the
    // shutdown signal ends the connection.
    let mut mock = Mock::new(Arc::new(AtomicBool::new(false)));
    mock.idle_after = Some(Duration::from_millis(40));
    let idled = mock.idled.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let (stream, thread) = start_on_thread(mock, Config::default(), stopped).await;
    let mut c = login(stream, true).await;
    for _ in 0..50 {
        assert!(matches!(
            &c.query("select 1").await[..],
            [Reply::Rows { rows, .. }] if rows == &vec![vec![s("1")]]
        ));
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(idled.load(Ordering::SeqCst), 1, "idle once per silence");
    assert!(matches!(
        &c.query("select 2").await[..],
        [Reply::Rows { .. }]
    ));
    stop.send(()).expect("server waiting");
    let (moved, result) = join(thread).await;
    assert!(!moved);
    assert!(result.is_ok(), "{result:?}");

    // Silence past wait_timeout: ERR 4031 and the end.
    let config = Config {
        wait_timeout: Duration::from_millis(150),
        ..Config::default()
    };
    let (_keep, stopped) = tokio::sync::oneshot::channel();
    let mock = Mock::new(Arc::new(AtomicBool::new(false)));
    let (stream, thread) = start_on_thread(mock, config, stopped).await;
    let mut c = login(stream, true).await;
    c.seq = 0;
    let p = tokio::time::timeout(Duration::from_secs(5), c.read())
        .await
        .expect("timed out by the server");
    assert!(matches!(parse_err(&p), Reply::Err { code: 4031, .. }));
    let (_, result) = join(thread).await;
    assert!(result.is_err());
}

#[tokio::test]
async fn blocking_socket_moves_to_the_reactor() {
    // A big result (more than a socket buffer, so writes block and resume)
    // on the thread, then the move between two commands, then more.
    let disconnected = Arc::new(AtomicBool::new(false));
    let mut mock = Mock::new(disconnected.clone());
    // Asked before each command: the first runs on the thread, the second
    // after the move.
    mock.stays = 1;
    mock.moves = 1;
    let (_keep, stopped) = tokio::sync::oneshot::channel();
    let (stream, thread) = start_on_thread(mock, Config::default(), stopped).await;
    let mut c = login(stream, true).await;
    let big = format!("select '{}'", "x".repeat(3 << 20));
    for _ in 0..2 {
        match &c.query(&big).await[..] {
            [Reply::Rows { rows, .. }] => {
                assert_eq!(rows[0][0].as_ref().map(String::len), Some((3 << 20) + 2))
            }
            other => panic!("{other:?}"),
        }
    }
    c.send(&[0x01]).await;
    let (moved, result) = join(thread).await;
    assert!(moved);
    assert!(result.is_ok(), "{result:?}");
    assert!(disconnected.load(Ordering::SeqCst));
}

impl Client {
    /// COM_STMT_PREPARE of a statement without parameters: its id.
    async fn prepare(&mut self, sql: &str) -> u32 {
        let mut p = vec![0x16];
        p.extend_from_slice(sql.as_bytes());
        self.send(&p).await;
        let ok = self.read().await;
        assert_eq!(ok[0], 0, "prepare OK");
        let ncols = u16::from_le_bytes([ok[5], ok[6]]) as usize;
        self.read_columns(ncols).await;
        u32::from_le_bytes([ok[1], ok[2], ok[3], ok[4]])
    }

    /// The status flags of an EOF packet (or OK with the EOF header).
    fn end_status(&self, p: &[u8]) -> u16 {
        assert_eq!(p[0], 0xFE, "EOF expected, got {p:?}");
        if self.deprecate_eof {
            match parse_ok(p) {
                Reply::Ok { status, .. } => status,
                other => panic!("{other:?}"),
            }
        } else {
            u16::from_le_bytes([p[3], p[4]])
        }
    }

    /// COM_STMT_FETCH: the binary rows and the status of the closing EOF.
    async fn fetch(&mut self, stmt: u32, n: u32) -> Result<(usize, u16), Reply> {
        let mut f = vec![0x1C];
        f.extend_from_slice(&stmt.to_le_bytes());
        f.extend_from_slice(&n.to_le_bytes());
        self.send(&f).await;
        let mut rows = 0;
        loop {
            let p = self.read().await;
            match p[0] {
                0x00 => rows += 1,
                0xFF => return Err(parse_err(&p)),
                _ => return Ok((rows, self.end_status(&p))),
            }
        }
    }
}

/// COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY: the metadata and one EOF
/// with CURSOR_EXISTS (even for CLIENT_DEPRECATE_EOF clients, which read
/// it), then COM_STMT_FETCH hands out rows; an empty result set too has a
/// cursor, and every fetch gets a reply (rows, EOF, or an error).
#[tokio::test]
async fn cursor_fetch() {
    let (exists, last) = (status_flags::CURSOR_EXISTS, status_flags::LAST_ROW_SENT);
    for deprecate_eof in [true, false] {
        let (stream, _server) = start(Config::default());
        let mut c = login(stream, deprecate_eof).await;
        for (sql, total) in [("select * from t", 2), ("select * from t empty", 0)] {
            let stmt = c.prepare(sql).await;
            let mut e = vec![0x17];
            e.extend_from_slice(&stmt.to_le_bytes());
            e.push(1); // CURSOR_TYPE_READ_ONLY
            e.extend_from_slice(&1u32.to_le_bytes());
            c.send(&e).await;
            let count = c.read().await;
            assert_eq!(count, [4], "{sql}: column count");
            for _ in 0..4 {
                parse_column(&c.read().await);
            }
            let eof = c.read().await;
            assert_ne!(c.end_status(&eof) & exists, 0, "{sql}: cursor exists");
            if total == 2 {
                let (rows, status) = c.fetch(stmt, 1).await.expect("fetch");
                assert_eq!((rows, status & (exists | last)), (1, exists));
            }
            let (rows, status) = c.fetch(stmt, 5).await.expect("fetch");
            assert_eq!((rows, status & (exists | last)), (total.min(1), last));
            let closed = c.fetch(stmt, 1).await;
            assert!(
                matches!(closed, Err(Reply::Err { code: 1421, .. })),
                "{closed:?}"
            );
        }
        // Fetch of an unknown statement is an error, not silence.
        let unknown = c.fetch(999, 1).await;
        assert!(
            matches!(unknown, Err(Reply::Err { code: 1243, .. })),
            "{unknown:?}"
        );
        // Without the flag the rows come at once, as before.
        let stmt = c.prepare("select * from t").await;
        let mut e = vec![0x17];
        e.extend_from_slice(&stmt.to_le_bytes());
        e.extend_from_slice(&[0, 1, 0, 0, 0]);
        c.send(&e).await;
        let Reply::Rows { rows, status, .. } = c.reply(true).await else {
            panic!("rows");
        };
        assert_eq!((rows.len(), status & exists), (2, 0));
    }
}
