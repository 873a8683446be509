//! The command phase: after a valid login, the fuzzer's bytes become
//! command packets (COM_QUERY, COM_STMT_PREPARE/EXECUTE/SEND_LONG_DATA/...),
//! and each COM_STMT_EXECUTE's parameter block is also decoded directly
//! (null bitmap, new-params-bound flag, types, values).
//!
//! Input: byte 0 = options (bit 0: CLIENT_DEPRECATE_EOF, bit 1: the rest
//! is sent raw instead of framed), byte 1 = parameter count for the direct
//! decode, then chunks of [length u16 LE][payload], each framed as a command.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::command::{decode_command, decode_execute_params, Command};

fuzz_target!(|data: &[u8]| {
    let [options, num_params, rest @ ..] = data else {
        return;
    };
    let mut client = lockstep_fuzz::login_packet(options & 1 != 0);
    let mut bound = Vec::new();
    if options & 2 != 0 {
        client.extend_from_slice(rest);
    } else {
        let mut rest = rest;
        while let [lo, hi, tail @ ..] = rest {
            let n = (u16::from_le_bytes([*lo, *hi]) as usize).min(tail.len());
            let payload = &tail[..n];
            rest = &tail[n..];
            if let Ok(Command::StmtExecute { params, .. }) = decode_command(payload) {
                let mut long = vec![None; (*num_params as usize) % 4];
                let _ = decode_execute_params(params, *num_params as usize, &mut bound, &mut long);
            }
            client.extend_from_slice(&lockstep_fuzz::frame(payload, 0));
        }
    }
    lockstep_fuzz::serve_bytes(&client);
});
