//! The command phase: after a valid login, the fuzzer's bytes become
//! command packets (COM_QUERY, COM_STMT_PREPARE/EXECUTE/SEND_LONG_DATA/...),
//! and each COM_STMT_EXECUTE's parameter block is also decoded directly
//! (null bitmap, new-params-bound flag, types, values).
//!
//! With CLIENT_QUERY_ATTRIBUTES, COM_QUERY's attribute block and the
//! attribute form of the execute block are decoded directly too.
//!
//! Input: byte 0 = options (bit 0: CLIENT_DEPRECATE_EOF, bit 1: the rest
//! is sent raw instead of framed, bit 2: CLIENT_QUERY_ATTRIBUTES), byte 1 =
//! parameter count for the direct decode, then chunks of [length u16 LE]
//! [payload], each framed as a command.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lockstep_protocol::command::{decode_command, decode_execute_params, Command};
use lockstep_protocol::query_attrs;

fuzz_target!(|data: &[u8]| {
    let [options, num_params, rest @ ..] = data else {
        return;
    };
    let attributes = options & 4 != 0;
    let mut client = lockstep_fuzz::login_packet_with(options & 1 != 0, attributes);
    let mut attr_bound = query_attrs::Bound::default();
    let mut bound = Vec::new();
    if options & 2 != 0 {
        client.extend_from_slice(rest);
    } else {
        let mut rest = rest;
        while let [lo, hi, tail @ ..] = rest {
            let n = (u16::from_le_bytes([*lo, *hi]) as usize).min(tail.len());
            let payload = &tail[..n];
            rest = &tail[n..];
            match decode_command(payload) {
                Ok(Command::StmtExecute { params, flags, .. }) => {
                    let n = *num_params as usize;
                    let mut long = vec![None; n % 4];
                    let _ = decode_execute_params(params, n, &mut bound, &mut long);
                    let _ = query_attrs::decode_execute(
                        params,
                        flags,
                        attributes,
                        n,
                        &mut attr_bound,
                        &mut long,
                    );
                }
                Ok(Command::Query(body)) if attributes => {
                    let _ = query_attrs::split_query(body);
                }
                _ => {}
            }
            client.extend_from_slice(&lockstep_fuzz::frame(payload, 0));
        }
    }
    lockstep_fuzz::serve_bytes(&client);
});
