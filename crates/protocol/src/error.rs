//! Failures of a connection as a whole (as opposed to SQL errors, which are
//! sent to the client as ERR packets and do not end the connection).

use crate::wire::Malformed;

#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error("connection closed in the middle of a packet")]
    UnexpectedEof,
    #[error("packets out of order: expected sequence id {expected}, got {got}")]
    OutOfOrder { expected: u8, got: u8 },
    #[error("packet of {0} bytes is larger than max_allowed_packet")]
    PacketTooLarge(usize),
    #[error(transparent)]
    Malformed(#[from] Malformed),
    #[error("timed out waiting for the client")]
    Timeout,
    #[error("unsupported client: {0}")]
    Unsupported(&'static str),
    #[error("authentication failed: {0}")]
    Auth(lockstep_types::Error),
}

impl ProtocolError {
    pub(crate) fn from_read(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            ProtocolError::UnexpectedEof
        } else {
            ProtocolError::Io(e)
        }
    }
}
