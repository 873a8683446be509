//! The character sets and collations lockstep converts, as SHOW COLLATION,
//! SHOW CHARACTER SET and information_schema.COLLATIONS / CHARACTER_SETS /
//! COLLATION_CHARACTER_SET_APPLICABILITY list them (drivers read them to
//! map collation ids to encodings).

use super::charset::{charsets, collations, CollationInfo};
use super::infoschema::table;
use lockstep_engine::catalog::Catalog;
use lockstep_types::{DataType, Value};

/// Bytes per character a collation's sort key weighs (MySQL's Sortlen).
fn sortlen(name: &str) -> i64 {
    match name {
        n if n.contains("_0900_") => 0,
        n if n.contains("_unicode_") => 8,
        "latin2_czech_cs" | "tis620_thai_ci" => 4,
        "latin1_german2_ci" | "cp1250_czech_cs" => 2,
        _ => 1,
    }
}

/// MySQL 8's UCA 9.0.0 collations and `binary` do not pad with spaces.
fn pad(name: &str) -> &'static str {
    if name.contains("_0900_") || name == "binary" {
        "NO PAD"
    } else {
        "PAD SPACE"
    }
}

/// One row per collation: name, charset, id, default, compiled, sortlen, pad.
pub(super) fn collation_rows() -> Vec<Vec<Value>> {
    collations()
        .into_iter()
        .map(
            |CollationInfo {
                 name,
                 charset,
                 id,
                 is_default,
             }| {
                vec![
                    Value::str(&name),
                    Value::str(charset),
                    Value::UInt(u64::from(id)),
                    Value::str(if is_default { "Yes" } else { "" }),
                    Value::str("Yes"),
                    Value::Int(sortlen(&name)),
                    Value::str(pad(&name)),
                ]
            },
        )
        .collect()
}

/// One row per character set: name, default collation, description, maxlen.
pub(super) fn charset_rows() -> Vec<Vec<Value>> {
    charsets()
        .map(|(name, collation, description, maxlen)| {
            vec![
                Value::str(name),
                Value::str(collation),
                Value::str(description),
                Value::Int(i64::from(maxlen)),
            ]
        })
        .collect()
}

pub(super) const SHOW_COLLATION: [&str; 7] = [
    "Collation",
    "Charset",
    "Id",
    "Default",
    "Compiled",
    "Sortlen",
    "Pad_attribute",
];

pub(super) const SHOW_CHARSET: [&str; 4] =
    ["Charset", "Description", "Default collation", "Maxlen"];

/// SHOW CHARACTER SET orders its columns differently from the table.
pub(super) fn show_charset_rows() -> Vec<Vec<Value>> {
    charset_rows()
        .into_iter()
        .map(|r| vec![r[0].clone(), r[2].clone(), r[1].clone(), r[3].clone()])
        .collect()
}

pub(super) fn infoschema_tables(cat: &Catalog) {
    let vc = DataType::VarChar { len: 64 };
    let int = DataType::BigInt { unsigned: false };
    let rows = collation_rows();
    let pairs = rows
        .iter()
        .map(|r| vec![r[0].clone(), r[1].clone()])
        .collect();
    let columns = [
        ("COLLATION_NAME", vc),
        ("CHARACTER_SET_NAME", vc),
        ("ID", int),
        ("IS_DEFAULT", vc),
        ("IS_COMPILED", vc),
        ("SORTLEN", int),
        ("PAD_ATTRIBUTE", vc),
    ];
    table(cat, 70, "COLLATIONS", &columns, rows);
    let columns = [
        ("CHARACTER_SET_NAME", vc),
        ("DEFAULT_COLLATE_NAME", vc),
        ("DESCRIPTION", DataType::VarChar { len: 2048 }),
        ("MAXLEN", int),
    ];
    table(cat, 71, "CHARACTER_SETS", &columns, charset_rows());
    let columns = [("COLLATION_NAME", vc), ("CHARACTER_SET_NAME", vc)];
    table(
        cat,
        72,
        "COLLATION_CHARACTER_SET_APPLICABILITY",
        &columns,
        pairs,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_charset_has_its_default_collation_listed_once() {
        let rows = collation_rows();
        for r in charset_rows() {
            let defaults: Vec<_> = rows
                .iter()
                .filter(|c| c[1] == r[0] && c[3] == Value::str("Yes"))
                .collect();
            assert_eq!(defaults.len(), 1, "{:?}", r[0]);
            assert_eq!(defaults[0][0], r[1]);
        }
        let mut ids: Vec<_> = rows.iter().map(|r| r[2].clone()).collect();
        ids.dedup();
        assert_eq!(ids.len(), rows.len(), "collation ids are unique");
    }
}
