//! Authentication after the handshake response: an auth switch to
//! mysql_native_password or caching_sha2_password, and the latter's
//! AuthMoreData exchanges (fast-auth success, or full authentication:
//! over this plain connection only with the server's RSA public key, which
//! is requested only when the caller allows it, as MySQL's
//! GET_SOURCE_PUBLIC_KEY / --get-server-public-key).

use crate::{Error, Result};
use lockstep_protocol::wire::Cursor;
use lockstep_protocol::{caching_sha2, native_password};

const FAST_AUTH_OK: u8 = 3;
const PERFORM_FULL_AUTH: u8 = 4;
const REQUEST_PUBLIC_KEY: u8 = 2;

pub(crate) struct Auth<'a> {
    password: &'a str,
    get_public_key: bool,
    /// The nonce of the plugin in use.
    nonce: [u8; 20],
}

/// What to do with an AuthMoreData packet.
pub(crate) enum Step {
    Send(Vec<u8>),
    /// The server's verdict (OK or ERR) follows.
    Wait,
}

impl<'a> Auth<'a> {
    pub fn new(password: &'a str, get_public_key: bool, nonce: [u8; 20]) -> Auth<'a> {
        Auth {
            password,
            get_public_key,
            nonce,
        }
    }

    /// An AuthSwitchRequest (after its 0xFE): the new plugin's answer.
    pub fn switch(&mut self, body: &[u8]) -> Result<Vec<u8>> {
        let mut c = Cursor::new(body);
        let plugin = c.null_terminated()?.to_vec();
        let data = c.rest();
        if data.len() < 20 {
            return Err(Error::protocol("short auth switch scramble"));
        }
        self.nonce.copy_from_slice(&data[..20]);
        let pw = self.password.as_bytes();
        if plugin == native_password::PLUGIN_NAME.as_bytes() {
            Ok(native_password::client_response(self.password, &self.nonce))
        } else if plugin == caching_sha2::PLUGIN_NAME.as_bytes() {
            Ok(caching_sha2::client_response(pw, &self.nonce))
        } else {
            Err(Error::protocol(format!(
                "server asks for auth plugin {}",
                String::from_utf8_lossy(&plugin)
            )))
        }
    }

    /// An AuthMoreData packet's data (after its 0x01).
    pub fn more_data(&mut self, data: &[u8]) -> Result<Step> {
        match data {
            [FAST_AUTH_OK] => Ok(Step::Wait),
            [PERFORM_FULL_AUTH] if self.get_public_key => Ok(Step::Send(vec![REQUEST_PUBLIC_KEY])),
            [PERFORM_FULL_AUTH] => Err(Error::Server {
                code: 2061,
                sqlstate: "HY000".into(),
                message: "Authentication plugin 'caching_sha2_password' reported error: Authentication requires secure connection.".into(),
            }),
            pem => caching_sha2::encrypt_password(pem, self.password.as_bytes(), &self.nonce)
                .map(Step::Send)
                .map_err(|e| Error::protocol(format!("the server's public key: {e}"))),
        }
    }
}
