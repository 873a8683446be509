use super::rows::{column_type, put_decimal, put_value};
use super::*;
use lockstep_types::time::{Date, DateTime};
use lockstep_types::{DataType, Value};

#[test]
fn format_description_is_mysql_8_size() {
    // MySQL 8 binlogs: the FDE ends at 126 (4-byte magic + 122 bytes).
    let h = Header {
        type_code: FORMAT_DESCRIPTION,
        timestamp: 0,
        server_id: 1,
        flags: 0,
    };
    let ev = frame(&h, &format_description_body(true), 126, true);
    assert_eq!(ev.len(), 122);
    assert_eq!(&ev[9..13], &122u32.to_le_bytes());
    assert_eq!(&ev[13..17], &126u32.to_le_bytes());
    assert_eq!(ev[HEADER_LEN + 2 + 50 + 4], 19, "header length");
    assert_eq!(ev[ev.len() - 5], 1, "checksum_alg CRC32");
    let crc = crc32fast::hash(&ev[..ev.len() - 4]);
    assert_eq!(&ev[ev.len() - 4..], &crc.to_le_bytes());
    let bare = strip_checksum(&ev);
    assert_eq!((bare.len(), bare[bare.len() - 1]), (118, 0));
    assert_eq!(&bare[9..13], &118u32.to_le_bytes());
}

#[test]
fn packed_integers() {
    let enc = |v| {
        let mut o = Vec::new();
        put_packed(&mut o, v);
        o
    };
    assert_eq!(enc(250), vec![250]);
    assert_eq!(enc(251), vec![0xfc, 251, 0]);
    assert_eq!(enc(0x10000), vec![0xfd, 0, 0, 1]);
    assert_eq!(enc(1 << 24), vec![0xfe, 0, 0, 0, 1, 0, 0, 0, 0]);
}

#[test]
fn gtid_event_length_counts_itself() {
    for rest in [0u64, 100, 177, 178, 179, 65_000, 70_000] {
        let len = gtid_event_len(rest, true);
        let g = GtidInfo {
            uuid: [1; 16],
            gno: 5,
            last_committed: 3,
            sequence_number: 5,
            commit_us: 1,
            transaction_length: rest + len,
        };
        assert_eq!(
            (HEADER_LEN + gtid_body(&g).len() + 4) as u64,
            len,
            "rest {rest}"
        );
    }
    // A small transaction's GTID event: 19 + 42 + 7 + 1 + 4 + 4.
    assert_eq!(gtid_event_len(0, true), 77);
}

#[test]
fn decimal_matches_the_manual_example() {
    // MySQL internals: DECIMAL(14,4) 1234567890.1234 = 81 0D FB 38 D2 04 D2.
    let mut o = Vec::new();
    put_decimal(&mut o, "1234567890.1234", 14, 4);
    assert_eq!(o, [0x81, 0x0D, 0xFB, 0x38, 0xD2, 0x04, 0xD2]);
    let mut o = Vec::new();
    put_decimal(&mut o, "-1234567890.1234", 14, 4);
    assert_eq!(o, [0x7E, 0xF2, 0x04, 0xC7, 0x2D, 0xFB, 0x2D]);
}

fn encode(dt: DataType, v: Value) -> Vec<u8> {
    let mut o = Vec::new();
    put_value(&mut o, &column_type(dt), &v);
    o
}

#[test]
fn temporal_and_string_images() {
    let date = Date {
        year: 2024,
        month: 2,
        day: 29,
    };
    // DATE: day | month << 5 | year << 9, 3 bytes little-endian.
    let x = 29u32 | (2 << 5) | (2024 << 9);
    assert_eq!(
        encode(DataType::Date, Value::Date(date)),
        x.to_le_bytes()[..3]
    );
    let dt = DateTime {
        date,
        hour: 1,
        minute: 2,
        second: 3,
        micro: 456_789,
    };
    let got = encode(DataType::DateTime { fsp: 6 }, Value::DateTime(dt));
    let int = ((2024u64 * 13 + 2) << 22 | 29 << 17 | 1 << 12 | 2 << 6 | 3) + 0x80_0000_0000;
    assert_eq!(got[..5], int.to_be_bytes()[3..]);
    assert_eq!(got[5..], 456_789u32.to_be_bytes()[1..]);
    // VARCHAR(100) utf8mb4: 400 bytes at most, so a 2-byte length.
    assert_eq!(
        encode(DataType::VarChar { len: 100 }, Value::str("ab")),
        [2, 0, b'a', b'b']
    );
    assert_eq!(
        encode(DataType::VarChar { len: 10 }, Value::str("ab")),
        [2, b'a', b'b']
    );
    assert_eq!(
        encode(DataType::Text { max_len: 65_535 }, Value::str("a")),
        [1, 0, b'a']
    );
    assert_eq!(
        encode(DataType::BigInt { unsigned: true }, Value::UInt(u64::MAX)),
        [0xff; 8]
    );
    assert_eq!(
        encode(DataType::Time { fsp: 0 }, Value::str("-00:00:01")),
        [0x7f, 0xff, 0xff]
    );
}

#[test]
fn negative_time_with_fraction_as_mysql_stores_it() {
    // -1.5 s: integer part -2 (0x7ffffe), fraction -50 hundredths (0xce);
    // MySQL's reader turns them back into -1 and -0.5.
    assert_eq!(
        encode(DataType::Time { fsp: 1 }, Value::str("-00:00:01.5")),
        [0x7f, 0xff, 0xfe, 0xce]
    );
    // TIME(4) -1.0001 s: -2 and -1 (0xffff) in units of 100 us.
    assert_eq!(
        encode(DataType::Time { fsp: 4 }, Value::str("-00:00:01.0001")),
        [0x7f, 0xff, 0xfe, 0xff, 0xff]
    );
    // A whole negative second has no fraction to borrow from.
    assert_eq!(
        encode(DataType::Time { fsp: 2 }, Value::str("-00:00:01")),
        [0x7f, 0xff, 0xff, 0x00]
    );
}

#[test]
fn enum_and_set_travel_as_index_and_bitmask() {
    use lockstep_types::enumset::Members;
    let names = |n: usize| (0..n).map(|i| format!("m{i}")).collect::<Vec<_>>();
    let small = Members::intern(names(3)).expect("intern");
    let wide = Members::intern(names(300)).expect("intern");
    let e = DataType::EnumOf { members: small };
    assert_eq!(column_type(e).code, 254);
    assert_eq!(column_type(e).meta, [247, 1]);
    assert_eq!(encode(e, Value::str("m2")), [3]);
    let w = DataType::EnumOf { members: wide };
    assert_eq!(column_type(w).meta, [247, 2]);
    assert_eq!(encode(w, Value::str("m299")), 300u16.to_le_bytes());
    let s = DataType::SetOf {
        members: Members::intern(names(9)).expect("intern"),
    };
    assert_eq!(column_type(s).meta, [248, 2]);
    assert_eq!(encode(s, Value::str("m0,m8")), [1, 1]);
}

#[test]
fn stored_programs_and_checks_are_not_row_events() {
    use crate::{Event, RoutineDef, RoutineKind};
    let routine = RoutineDef {
        database: "d".into(),
        name: "p".into(),
        kind: RoutineKind::Procedure,
        definer: ("root".into(), "%".into()),
        definition: "() SELECT 1".into(),
        table: String::new(),
        created: 0,
    };
    let none = |_: u32| None;
    let put = ddl::statement(&Event::PutRoutine { routine }, &none).expect("DDL");
    assert_eq!(
        put,
        Some((
            "d".into(),
            "CREATE DEFINER=`root`@`%` PROCEDURE `p`() SELECT 1".into()
        ))
    );
    let drop = Event::DropRoutine {
        database: "d".into(),
        kind: RoutineKind::Function,
        name: "f".into(),
    };
    let dropped = ddl::statement(&drop, &none).expect("DDL");
    assert_eq!(dropped, Some(("d".into(), "DROP FUNCTION `d`.`f`".into())));
    let checks = Event::SetChecks {
        table: 7,
        checks: Vec::new(),
    };
    assert_eq!(ddl::statement(&checks, &none), Ok(None));
}
