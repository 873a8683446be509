//! Packet framing and the connection phase: the fuzzer's bytes are the
//! whole client side of a connection (handshake response, auth switch
//! answer, then commands), and the handshake-response parser alone.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::handshake::parse_handshake_response;

fuzz_target!(|data: &[u8]| {
    let _ = parse_handshake_response(data);
    // As sent: framing errors, wrong sequence ids, short packets.
    lockstep_fuzz::serve_bytes(data);
    // Framed as the handshake response, so the parser sees the bytes.
    lockstep_fuzz::serve_bytes(&lockstep_fuzz::frame(data, 1));
});
