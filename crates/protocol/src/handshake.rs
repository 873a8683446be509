//! Connection phase: the server's HandshakeV10, the client's
//! HandshakeResponse41 (or SSLRequest), and AuthSwitchRequest.

use crate::wire::{self, Cursor, Malformed};
use crate::{caching_sha2, native_password};

/// Capability flags (MySQL's CLIENT_*).
pub mod caps {
    pub const LONG_PASSWORD: u32 = 1;
    pub const FOUND_ROWS: u32 = 1 << 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const NO_SCHEMA: u32 = 1 << 4;
    pub const COMPRESS: u32 = 1 << 5;
    pub const ODBC: u32 = 1 << 6;
    pub const LOCAL_FILES: u32 = 1 << 7;
    pub const IGNORE_SPACE: u32 = 1 << 8;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const INTERACTIVE: u32 = 1 << 10;
    pub const SSL: u32 = 1 << 11;
    pub const IGNORE_SIGPIPE: u32 = 1 << 12;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const RESERVED: u32 = 1 << 14;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const CAN_HANDLE_EXPIRED_PASSWORDS: u32 = 1 << 22;
    pub const SESSION_TRACK: u32 = 1 << 23;
    pub const DEPRECATE_EOF: u32 = 1 << 24;
    pub const OPTIONAL_RESULTSET_METADATA: u32 = 1 << 25;
    pub const ZSTD_COMPRESSION: u32 = 1 << 26;
    pub const QUERY_ATTRIBUTES: u32 = 1 << 27;
}

/// What lockstep offers (SSL is added when TLS is configured). Not offered:
/// ZSTD_COMPRESSION, OPTIONAL_RESULTSET_METADATA (each would change packet
/// formats we do not implement).
pub const SERVER_CAPABILITIES: u32 = caps::LONG_PASSWORD
    | caps::COMPRESS
    | caps::FOUND_ROWS
    | caps::LONG_FLAG
    | caps::CONNECT_WITH_DB
    | caps::NO_SCHEMA
    | caps::IGNORE_SPACE
    | caps::PROTOCOL_41
    | caps::INTERACTIVE
    | caps::IGNORE_SIGPIPE
    | caps::TRANSACTIONS
    | caps::SECURE_CONNECTION
    | caps::MULTI_STATEMENTS
    | caps::MULTI_RESULTS
    | caps::PS_MULTI_RESULTS
    | caps::PLUGIN_AUTH
    | caps::CONNECT_ATTRS
    | caps::PLUGIN_AUTH_LENENC_CLIENT_DATA
    | caps::DEPRECATE_EOF
    | caps::SESSION_TRACK
    | caps::LOCAL_FILES
    | caps::QUERY_ATTRIBUTES;

/// utf8mb4_0900_ai_ci, MySQL 8's default collation.
pub const UTF8MB4_COLLATION: u8 = 255;

/// A fresh 20-byte challenge. Bytes are printable ASCII without NUL (some
/// clients read the second part as a C string) and without '$'.
pub fn new_scramble() -> [u8; 20] {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    let mut s = [0u8; 20];
    for b in &mut s {
        *b = loop {
            let c = rng.gen_range(0x21u8..0x7F);
            if c != b'$' {
                break c;
            }
        };
    }
    s
}

/// The plugin a login is checked with: the account's; for an unknown
/// user the client's if lockstep has it (so the failure looks the same),
/// else mysql_native_password.
pub fn choose_plugin(client: &[u8], account: Option<&'static str>) -> &'static str {
    let known = [native_password::PLUGIN_NAME, caching_sha2::PLUGIN_NAME];
    account
        .or_else(|| known.into_iter().find(|p| p.as_bytes() == client))
        .unwrap_or(native_password::PLUGIN_NAME)
}

/// HandshakeV10, the first packet of a connection. `capabilities`:
/// SERVER_CAPABILITIES, plus SSL when TLS is configured.
pub fn encode_handshake(
    out: &mut Vec<u8>,
    server_version: &str,
    connection_id: u32,
    scramble: &[u8; 20],
    status_flags: u16,
    capabilities: u32,
) {
    out.push(10);
    wire::put_null_terminated(out, server_version.as_bytes());
    wire::put_u32(out, connection_id);
    out.extend_from_slice(&scramble[..8]);
    out.push(0);
    wire::put_u16(out, capabilities as u16);
    out.push(UTF8MB4_COLLATION);
    wire::put_u16(out, status_flags);
    wire::put_u16(out, (capabilities >> 16) as u16);
    out.push(21); // length of the auth data including its NUL
    out.extend_from_slice(&[0; 10]);
    out.extend_from_slice(&scramble[8..]);
    out.push(0);
    wire::put_null_terminated(out, native_password::PLUGIN_NAME.as_bytes());
}

/// The client's HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeResponse<'a> {
    /// Capabilities as the client sent them.
    pub capabilities: u32,
    pub max_packet: u32,
    pub collation: u8,
    pub user: &'a [u8],
    pub auth_response: &'a [u8],
    pub database: Option<&'a [u8]>,
    pub auth_plugin: Option<&'a [u8]>,
    /// CLIENT_CONNECT_ATTRS: the client's key/value pairs, in order.
    pub connect_attrs: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientHello<'a> {
    /// The client asks for TLS before sending its credentials.
    SslRequest,
    /// A pre-4.1 client, which lockstep does not serve.
    Protocol320,
    Response(HandshakeResponse<'a>),
}

/// COM_CHANGE_USER after its command byte: the new account's credentials,
/// read with the capabilities the connection negotiated (`caps`).
/// `max_packet` is not in this packet (0); `collation` is the character
/// set the client sends (0 if none, or an id above 255).
pub fn parse_change_user(payload: &[u8], caps: u32) -> Result<HandshakeResponse<'_>, Malformed> {
    let mut c = Cursor::new(payload);
    let user = c.null_terminated()?;
    let auth_response = if caps & caps::SECURE_CONNECTION != 0 {
        let n = c.u8()? as usize;
        c.bytes(n)?
    } else {
        c.null_terminated()?
    };
    let database = c.null_terminated_or_rest();
    let mut collation = 0;
    if !c.is_empty() {
        collation = u8::try_from(c.u16()?).unwrap_or(0);
    }
    let auth_plugin = if caps & caps::PLUGIN_AUTH != 0 && !c.is_empty() {
        Some(c.null_terminated_or_rest())
    } else {
        None
    };
    Ok(HandshakeResponse {
        capabilities: caps,
        max_packet: 0,
        collation,
        user,
        auth_response,
        database: (!database.is_empty()).then_some(database),
        auth_plugin,
        connect_attrs: connect_attrs(&mut c, caps),
    })
}

pub fn parse_handshake_response(payload: &[u8]) -> Result<ClientHello<'_>, Malformed> {
    let mut c = Cursor::new(payload);
    if payload.len() < 4 {
        return Err(Malformed("handshake response too short"));
    }
    let capabilities = c.u32()?;
    if capabilities & caps::PROTOCOL_41 == 0 {
        return Ok(ClientHello::Protocol320);
    }
    let max_packet = c.u32()?;
    let collation = c.u8()?;
    c.skip(23)?;
    if c.is_empty() && capabilities & caps::SSL != 0 {
        return Ok(ClientHello::SslRequest);
    }
    let user = c.null_terminated()?;
    let auth_response = if capabilities & caps::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        c.lenenc_bytes()?
    } else if capabilities & caps::SECURE_CONNECTION != 0 {
        let n = c.u8()? as usize;
        c.bytes(n)?
    } else {
        c.null_terminated()?
    };
    let database = if capabilities & caps::CONNECT_WITH_DB != 0 && !c.is_empty() {
        Some(c.null_terminated_or_rest())
    } else {
        None
    };
    let auth_plugin = if capabilities & caps::PLUGIN_AUTH != 0 && !c.is_empty() {
        Some(c.null_terminated_or_rest())
    } else {
        None
    };
    Ok(ClientHello::Response(HandshakeResponse {
        capabilities,
        max_packet,
        collation,
        user,
        auth_response,
        database: database.filter(|d| !d.is_empty()),
        auth_plugin,
        connect_attrs: connect_attrs(&mut c, capabilities),
    }))
}

/// Most connection attributes kept per connection, and most bytes of them
/// (MySQL keeps 512 bytes by default; drivers send a few hundred).
const MAX_ATTRS: usize = 64;
const MAX_ATTR_BYTES: usize = 8192;

/// The CLIENT_CONNECT_ATTRS block at `c`: pairs of length-encoded strings
/// inside a length-encoded total. Only informative: a malformed or
/// oversized block keeps the pairs read so far rather than failing the
/// login.
fn connect_attrs(c: &mut Cursor<'_>, caps: u32) -> Vec<(String, String)> {
    let mut attrs = Vec::new();
    if caps & caps::CONNECT_ATTRS == 0 || c.is_empty() {
        return attrs;
    }
    let Ok(block) = c.lenenc_bytes() else {
        return attrs;
    };
    let mut b = Cursor::new(block);
    let mut bytes = 0;
    while !b.is_empty() && attrs.len() < MAX_ATTRS {
        let (Ok(k), Ok(v)) = (b.lenenc_bytes(), b.lenenc_bytes()) else {
            break;
        };
        bytes += k.len() + v.len();
        if bytes > MAX_ATTR_BYTES {
            break;
        }
        let text = |x: &[u8]| String::from_utf8_lossy(x).into_owned();
        attrs.push((text(k), text(v)));
    }
    attrs
}

/// AuthSwitchRequest asking the client to answer `scramble` with `plugin`.
pub fn encode_auth_switch(out: &mut Vec<u8>, plugin: &str, scramble: &[u8; 20]) {
    out.push(0xFE);
    wire::put_null_terminated(out, plugin.as_bytes());
    out.extend_from_slice(scramble);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greeting_layout() {
        let scramble = *b"ABCDEFGHIJKLMNOPQRST";
        let mut out = Vec::new();
        encode_handshake(
            &mut out,
            "8.0.36-lockstep",
            7,
            &scramble,
            2,
            SERVER_CAPABILITIES,
        );
        let mut c = Cursor::new(&out);
        assert_eq!(c.u8(), Ok(10));
        assert_eq!(c.null_terminated(), Ok(&b"8.0.36-lockstep"[..]));
        assert_eq!(c.u32(), Ok(7));
        assert_eq!(c.bytes(8), Ok(&b"ABCDEFGH"[..]));
        assert_eq!(c.u8(), Ok(0));
        let low = c.u16().expect("caps low") as u32;
        assert_eq!(c.u8(), Ok(255));
        assert_eq!(c.u16(), Ok(2));
        let high = c.u16().expect("caps high") as u32;
        assert_eq!(low | high << 16, SERVER_CAPABILITIES);
        assert_eq!(SERVER_CAPABILITIES & caps::SSL, 0);
        assert_eq!(c.u8(), Ok(21));
        c.skip(10).expect("reserved");
        assert_eq!(c.null_terminated(), Ok(&b"IJKLMNOPQRST"[..]));
        assert_eq!(c.null_terminated(), Ok(&b"mysql_native_password"[..]));
        assert!(c.is_empty());
    }

    #[test]
    fn plugin_choice() {
        let sha2 = caching_sha2::PLUGIN_NAME;
        let native = native_password::PLUGIN_NAME;
        // The account decides; the client's choice only for unknown users.
        assert_eq!(choose_plugin(native.as_bytes(), Some(sha2)), sha2);
        assert_eq!(choose_plugin(sha2.as_bytes(), Some(native)), native);
        assert_eq!(choose_plugin(sha2.as_bytes(), None), sha2);
        assert_eq!(choose_plugin(b"dialog", None), native);
    }

    fn response(caps: u32, tail: &[u8]) -> Vec<u8> {
        let mut p = Vec::new();
        wire::put_u32(&mut p, caps);
        wire::put_u32(&mut p, 1 << 24);
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(tail);
        p
    }

    #[test]
    fn parses_handshake_response() {
        let caps = SERVER_CAPABILITIES;
        let mut tail = Vec::new();
        wire::put_null_terminated(&mut tail, b"root");
        wire::put_lenenc_bytes(&mut tail, &[9; 20]);
        wire::put_null_terminated(&mut tail, b"test");
        wire::put_null_terminated(&mut tail, b"caching_sha2_password");
        let mut attrs = Vec::new();
        wire::put_lenenc_bytes(&mut attrs, b"_client_name");
        wire::put_lenenc_bytes(&mut attrs, b"libmysql");
        wire::put_lenenc_bytes(&mut tail, &attrs);
        let p = response(caps, &tail);
        let ClientHello::Response(r) = parse_handshake_response(&p).expect("parses") else {
            panic!("expected a response");
        };
        assert_eq!(r.user, b"root");
        assert_eq!(r.auth_response, &[9; 20]);
        assert_eq!(r.database, Some(&b"test"[..]));
        assert_eq!(r.auth_plugin, Some(&b"caching_sha2_password"[..]));
        assert_eq!(r.collation, 45);

        // Old-style one-byte auth length, no database, no plugin.
        let mut tail = Vec::new();
        wire::put_null_terminated(&mut tail, b"u");
        tail.push(0);
        let p = response(caps::PROTOCOL_41 | caps::SECURE_CONNECTION, &tail);
        let ClientHello::Response(r) = parse_handshake_response(&p).expect("parses") else {
            panic!("expected a response");
        };
        assert_eq!(
            (r.user, r.auth_response, r.database, r.auth_plugin),
            (&b"u"[..], &b""[..], None, None)
        );

        let ssl = response(caps | caps::SSL, &[]);
        assert_eq!(parse_handshake_response(&ssl), Ok(ClientHello::SslRequest));
        assert_eq!(
            parse_handshake_response(&[0, 0, 0, 0, 1]),
            Ok(ClientHello::Protocol320)
        );
        for cut in 0..p.len() {
            let _ = parse_handshake_response(&p[..cut]);
        }
        assert!(parse_handshake_response(&response(caps, b"root")).is_err());
    }
}
