//! EXPLAIN's key_len: how many bytes of an index key an access uses, as
//! MySQL 8 counts them for InnoDB (utf8mb4 text at 4 bytes a character,
//! 2 length bytes for variable-length parts, 1 for a nullable part).
//! Tools read it to see how many key parts a lookup actually uses.

use crate::plan::Access;
use lockstep_tables::{ColumnDef, TableDef};
use lockstep_types::DataType;

/// Bytes of packed DECIMAL for `digits` decimal digits (MySQL's dig2bytes).
fn decimal_digits(digits: u64) -> u64 {
    const PARTIAL: [u64; 9] = [0, 1, 1, 2, 2, 3, 3, 4, 4];
    digits / 9 * 4 + PARTIAL[(digits % 9) as usize]
}

/// Bytes of fractional seconds for `fsp` digits.
fn fraction(fsp: u8) -> u64 {
    u64::from(fsp).div_ceil(2)
}

/// The bytes one key part takes.
pub fn part_len(col: &ColumnDef) -> u64 {
    let base = match col.data_type {
        DataType::TinyInt { .. } | DataType::Year | DataType::Enum { .. } => 1,
        DataType::SmallInt { .. } => 2,
        DataType::MediumInt { .. } | DataType::Date => 3,
        DataType::Int { .. } | DataType::Float => 4,
        DataType::BigInt { .. } | DataType::Double | DataType::Set { .. } => 8,
        // MySQL's pack lengths: 1 or 2 bytes of index, 1..8 of bitmask.
        DataType::EnumOf { members } => 1 + u64::from(members.len() > 255),
        DataType::SetOf { members } => (members.len() as u64).div_ceil(8).max(1),
        DataType::Decimal { precision, scale } => {
            let (p, s) = (u64::from(precision), u64::from(scale));
            decimal_digits(p - s.min(p)) + decimal_digits(s)
        }
        DataType::Char { len } => u64::from(len) * 4,
        DataType::VarChar { len } => u64::from(len) * 4 + 2,
        DataType::Binary { len } => u64::from(len),
        DataType::VarBinary { len } => u64::from(len) + 2,
        // InnoDB caps an index key part at 3072 bytes.
        DataType::Text { max_len } | DataType::Blob { max_len } => u64::from(max_len).min(3072) + 2,
        DataType::DateTime { fsp } => 5 + fraction(fsp),
        DataType::Timestamp { fsp } => 4 + fraction(fsp),
        DataType::Time { fsp } => 3 + fraction(fsp),
        DataType::Bit { width } => u64::from(width).div_ceil(8),
        DataType::Json | DataType::Null => 0,
    };
    base + u64::from(col.nullable)
}

/// The key_len of `access` on `def`: the largest of its ranges (the key
/// parts each fixes, plus the one it bounds); a whole-index scan uses
/// every part. None for a scan of the clustered index.
pub fn key_len(def: &TableDef, access: &Access) -> Option<u64> {
    let index = def.indexes.get(access.index)?;
    if access.is_full_scan() && access.index == 0 {
        return None;
    }
    let parts = |n: usize| -> u64 {
        let cols = index.columns.iter().take(n);
        cols.map(|&c| part_len(&def.columns[c])).sum()
    };
    if access.is_full_scan() {
        return Some(parts(index.columns.len()));
    }
    let used = |r: &crate::plan::KeyRange| {
        let bounded = r.lower.is_some() || r.upper.is_some();
        (r.eq.len() + usize::from(bounded)).min(index.columns.len())
    };
    access.ranges.iter().map(|r| parts(used(r))).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(data_type: DataType, nullable: bool) -> ColumnDef {
        ColumnDef {
            name: "c".into(),
            data_type,
            nullable,
            default: None,
            auto_increment: false,
            default_now: false,
            on_update_now: false,
            collation: 0,
        }
    }

    #[test]
    fn parts_count_as_mysql_8() {
        assert_eq!(part_len(&col(DataType::Int { unsigned: false }, false)), 4);
        assert_eq!(part_len(&col(DataType::Int { unsigned: false }, true)), 5);
        assert_eq!(part_len(&col(DataType::VarChar { len: 10 }, true)), 43);
        assert_eq!(part_len(&col(DataType::Char { len: 3 }, false)), 12);
        let dec = DataType::Decimal {
            precision: 12,
            scale: 2,
        };
        assert_eq!(part_len(&col(dec, false)), 6);
        assert_eq!(part_len(&col(DataType::DateTime { fsp: 6 }, false)), 8);
        assert_eq!(part_len(&col(DataType::Bit { width: 9 }, false)), 2);
    }
}
