//! MySQL client/server wire protocol: packets, handshake, authentication,
//! commands, result sets.
//!
//! The server accepts a socket and calls [`serve`] with a [`Handler`] that
//! runs SQL; this crate does everything between the socket and the handler:
//! framing, TLS, the v10 handshake with mysql_native_password and
//! caching_sha2_password, command decoding,
//! prepared-statement parameter decoding, and text/binary result sets.
//!
//! ```ignore
//! let config = Arc::new(Config::default());
//! loop {
//!     let (sock, peer) = listener.accept().await?;
//!     sock.set_nodelay(true)?;
//!     if too_many {
//!         tokio::spawn(refuse(sock, &Error::new(Code::ConCount, "Too many connections")));
//!         continue;
//!     }
//!     let (config, handler) = (config.clone(), MySession::new(..));
//!     tokio::spawn(async move { serve(sock, next_id(), peer, handler, &config).await });
//! }
//! ```
//!
//! Handler methods run on the connection's task: a handler that blocks
//! (rather than awaiting) in `query`/`execute` holds a runtime thread.

mod blocking;
pub mod caching_sha2;
pub mod charset;
pub mod command;
mod compress;
mod connection;
mod error;
pub mod handshake;
pub mod native_password;
pub mod packet;
pub mod query_attrs;
pub mod resultset;
mod transport;
pub mod wire;

use lockstep_types::{Error, Value};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use blocking::BlockingTcp;
pub use connection::{refuse, serve, serve_relocatable, serve_until, Parked, Served};
pub use error::ProtocolError;
pub use lockstep_types::result::{
    column_flags, Column, OkInfo, PreparedInfo, Response, ResultSet, Status, TlsInfo,
};
pub use transport::Stream;

/// What the client presented when it connected.
#[derive(Debug)]
pub struct Handshake<'a> {
    pub user: &'a str,
    pub database: Option<&'a str>,
    /// Plugin the `auth_response` belongs to (after a switch if needed):
    /// [`native_password::PLUGIN_NAME`] or [`caching_sha2::PLUGIN_NAME`].
    pub auth_plugin: &'a str,
    pub scramble: &'a [u8; 20],
    pub auth_response: &'a [u8],
    /// `auth_response` is the password itself (caching_sha2_password full
    /// authentication, over TLS or RSA-decrypted).
    pub cleartext: bool,
    /// Capabilities in effect (client's & server's), see [`handshake::caps`].
    pub capabilities: u32,
    pub peer: SocketAddr,
    /// Set when the connection is TLS.
    pub tls: Option<&'a TlsInfo>,
    /// The connection collation the client asked for (MySQL's id).
    pub collation: u8,
    /// CLIENT_CONNECT_ATTRS pairs (performance_schema.session_connect_attrs).
    pub connect_attrs: &'a [(String, String)],
}

/// A successful answer of [`Handler::authenticate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    Accepted,
    /// caching_sha2_password: the scramble cannot be checked (nothing
    /// cached); ask the client for its password.
    FullAuthRequired,
}

/// The SQL side of a connection. `serve` turns every command into calls of
/// these methods and sends their results to the client.
pub trait Handler: Send {
    /// The authentication plugin of the account `user` logs in as from
    /// `peer` (None: no such account; the client's plugin is used and the
    /// login fails in `authenticate`).
    fn account_plugin(&mut self, _user: &str, _peer: SocketAddr) -> Option<&'static str> {
        None
    }
    /// Verify credentials (native_password::verify, caching_sha2) and
    /// select the initial database.
    fn authenticate(&mut self, hs: &Handshake<'_>) -> Result<Auth, Error>;
    /// Run a COM_QUERY. `multi` = client set CLIENT_MULTI_STATEMENTS (or
    /// COM_SET_OPTION on). Runs its first statement only and returns that
    /// result (None: nothing to answer, or a LOAD DATA LOCAL waits for its
    /// file, see `local_infile`); the connection sends it, and asks
    /// `next_result` for the next while `more_results` says one follows,
    /// so each result reaches the client as its statement ends.
    fn query(
        &mut self,
        sql: &str,
        multi: bool,
    ) -> impl Future<Output = Option<Result<Response, Error>>> + Send;
    /// Whether the COM_QUERY has another result after the one just
    /// returned (sent with SERVER_MORE_RESULTS_EXISTS). An error ends it.
    fn more_results(&self) -> bool {
        false
    }
    /// Runs the COM_QUERY's next statement, once the result before it has
    /// been sent (its streamed rows too): its result, or None as `query`.
    fn next_result(&mut self) -> impl Future<Output = Option<Result<Response, Error>>> + Send {
        async { None }
    }
    /// The text of a COM_QUERY or COM_STMT_PREPARE as the client sent it
    /// (bytes in its character set); default: it must be UTF-8.
    fn statement_text<'a>(&mut self, sql: &'a [u8]) -> Result<std::borrow::Cow<'a, str>, Error> {
        connection::utf8(sql).map(std::borrow::Cow::Borrowed)
    }
    /// What the handler keeps of one prepared statement. The connection
    /// holds it beside its own state of the statement, in the one map a
    /// COM_STMT_EXECUTE looks up, lends it to `execute`, and drops it on
    /// COM_STMT_CLOSE, COM_RESET_CONNECTION or disconnect. (A second map on
    /// the handler's side cost another two cold lookups per execute with
    /// a thousand connections.)
    type Statement: Send;
    /// COM_STMT_PREPARE; `PreparedInfo::statement_id` names the statement
    /// to the client.
    fn prepare(&mut self, sql: &str) -> Result<(PreparedInfo, Self::Statement), Error>;
    /// Bytes of the command just handled and of its reply (Bytes_received,
    /// Bytes_sent).
    fn traffic(&mut self, _received: u64, _sent: u64) {}
    /// A COM_STMT_EXECUTE text parameter (not ASCII) as the client sent
    /// it: made into the UTF-8 the statement reads (default: as is).
    fn param_text(&mut self, _bytes: &mut Vec<u8>) {}
    fn execute(
        &mut self,
        statement: &mut Self::Statement,
        params: Vec<Value>,
    ) -> impl Future<Output = Result<Response, Error>> + Send;
    /// Whether the result set just returned has more rows to come, which
    /// the connection asks for with `more_rows` before ending it.
    fn streaming(&self) -> bool {
        false
    }
    /// The next rows of a streamed result set, appended to `rows`: Ok(None)
    /// while more follow, Ok(Some(warnings)) with the last. An error ends
    /// the result set (sent in place of its end packet).
    fn more_rows(
        &mut self,
        _rows: &mut Vec<Vec<Value>>,
    ) -> impl Future<Output = Result<Option<u16>, Error>> + Send {
        async { Ok(Some(0)) }
    }
    /// The query attributes (CLIENT_QUERY_ATTRIBUTES) of the COM_QUERY or
    /// COM_STMT_EXECUTE about to run (empty: none); called before each
    /// one by a client that negotiated them.
    fn query_attributes(&mut self, _attributes: Vec<query_attrs::Attribute>) {}
    /// Asked when `query` or `next_result` gives None: the file name of a
    /// LOAD DATA LOCAL INFILE the handler waits for. The connection sends
    /// the request, hands each packet of the file to `infile_data`, then
    /// calls `infile_end` for the statement's result (the statements
    /// after it follow through `next_result`).
    fn local_infile(&mut self) -> Option<Vec<u8>> {
        None
    }
    fn infile_data(&mut self, _data: &[u8]) -> impl Future<Output = ()> + Send {
        async {}
    }
    fn infile_end(&mut self) -> impl Future<Output = Result<Response, Error>> + Send {
        async {
            Err(Error::new(
                lockstep_types::error::Code::UnknownError,
                "no LOAD DATA is pending",
            ))
        }
    }
    /// The next `execute` opens a cursor: its rows are wanted whole.
    fn want_whole_result(&mut self) {}
    /// Result sets an `execute` produced before its reply (a CALL's),
    /// each sent with SERVER_MORE_RESULTS_EXISTS.
    fn take_results(&mut self) -> Vec<Response> {
        Vec::new()
    }
    fn reset_statement(&mut self, _statement: &mut Self::Statement) {}
    fn init_db(&mut self, db: &str) -> Result<(), Error>;
    fn field_list(&mut self, table: &str, wildcard: &str) -> Result<Vec<Column>, Error>;
    fn statistics(&mut self) -> String;
    /// COM_RESET_CONNECTION: roll back, drop prepared statements, reset
    /// session variables.
    fn reset_connection(&mut self);
    /// COM_CHANGE_USER, before the new login is checked: end the session
    /// as COM_RESET_CONNECTION does and forget its database (the login
    /// names the new one, if any).
    fn change_user(&mut self) {
        self.reset_connection();
    }
    fn status(&self) -> Status;
    /// What the statements since the last OK packet changed of the
    /// session (CLIENT_SESSION_TRACK), taken for the next OK: called for
    /// every OK, so nothing piles up for a client that did not ask.
    fn take_state_changes(&mut self) -> Vec<lockstep_types::result::StateChange> {
        Vec::new()
    }
    /// How text columns are described and names and error messages
    /// encoded (character_set_results); asked before each set of column
    /// definitions.
    fn result_charset(&mut self) -> charset::ResultCharset {
        charset::ResultCharset::default()
    }
    /// Checked after every command and between binlog dump events: true
    /// ends the connection (e.g. the session was killed with KILL
    /// CONNECTION, or the server is shutting down).
    fn should_close(&self) -> bool {
        false
    }
    /// Notified when the connection is killed: its wait for the next
    /// command ends then (asked once per command loop).
    fn kill_signal(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        None
    }
    /// Called once when the connection ends for any reason (roll back open work).
    fn disconnect(&mut self) {}
    /// The client said goodbye (COM_QUIT) before the connection ends: a
    /// connection that ends without it was aborted (Aborted_clients).
    fn quit(&mut self) {}
    /// Asked between commands by [`serve_relocatable`]: true lifts the
    /// connection off its task (`Served::Relocate`) so that it can go on
    /// on another runtime. Only plain TCP connections move; TLS ones stay.
    fn relocate(&mut self) -> bool {
        false
    }
    /// How long the client may stay silent before `idle` is called (None:
    /// never). Asked before each wait for a command.
    fn idle_after(&self) -> Option<Duration> {
        None
    }
    /// How long the client may stay silent between commands before the
    /// connection is closed (None: `Config::wait_timeout`). Asked before
    /// each wait for a command, so `SET SESSION wait_timeout` applies from
    /// the next wait on.
    fn wait_timeout(&self) -> Option<Duration> {
        None
    }
    /// The client has sent nothing for `idle_after`: give back what an idle
    /// session should not hold (its throttling slot). The wait for the
    /// command goes on.
    fn idle(&mut self) {}
    /// COM_REGISTER_SLAVE (`request`: the payload after the command
    /// byte), which replicas send before their dump.
    fn register_replica(&mut self, _request: &[u8]) -> Result<(), Error> {
        Err(Error::new(
            lockstep_types::error::Code::UnknownCom,
            "Unknown command",
        ))
    }
    /// COM_BINLOG_DUMP_GTID or COM_BINLOG_DUMP (`command`; `request`: the
    /// payload after the command byte): the stream of packets to send
    /// until the client goes away (an empty one: EOF, then the end). The
    /// connection is the stream's from then on.
    fn binlog_dump(&mut self, _command: u8, _request: &[u8]) -> Result<Box<dyn BinlogDump>, Error> {
        Err(Error::new(
            lockstep_types::error::Code::UnknownCom,
            "Unknown command",
        ))
    }
}

/// A binlog dump in progress: each `next` is one packet's payload after
/// its OK byte (an event), waiting as long as needed for one; an error
/// ends the stream with an ERR packet.
pub trait BinlogDump: Send {
    /// Must be cancel-safe: a reply from the client interrupts the wait.
    fn next(&mut self) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, Error>> + Send + '_>>;
    /// A packet the client sent on the dump connection (a semisync
    /// replica's reply); an error ends the stream.
    fn on_reply(&mut self, _payload: &[u8]) -> Result<(), Error> {
        Ok(())
    }
    /// Whether `packet` (just returned by `next`) asks the client for a
    /// reply (a MySQL semisync event with the need-ack flag): the packets
    /// after it restart at sequence number 1.
    fn awaits_reply(&self, _packet: &[u8]) -> bool {
        false
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Reported in the handshake, e.g. "8.0.36-lockstep".
    pub server_version: String,
    /// Largest payload accepted from a client.
    pub max_allowed_packet: usize,
    /// Limit for the whole handshake and authentication.
    pub connect_timeout: Duration,
    /// Limit for the idle time between commands.
    pub wait_timeout: Duration,
    /// Set: CLIENT_SSL is offered and an SSLRequest upgrades to TLS.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Refuse plain connections (error 3159).
    pub require_secure_transport: bool,
    /// RSA key for caching_sha2_password full authentication over plain
    /// connections (None: such clients must use TLS).
    pub rsa_keys: Option<Arc<caching_sha2::LazyRsaKeys>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            server_version: "8.0.36-lockstep".into(),
            max_allowed_packet: 64 << 20,
            connect_timeout: Duration::from_secs(10),
            wait_timeout: Duration::from_secs(8 * 3600),
            tls: None,
            require_secure_transport: false,
            rsa_keys: None,
        }
    }
}
