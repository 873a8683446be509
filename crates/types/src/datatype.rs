//! Column data types as MySQL declares them.

use crate::enumset::Members;
use std::fmt;

/// A column's declared type. Integer widths keep their MySQL name so that
/// range checks and result-set metadata match what a client expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DataType {
    TinyInt {
        unsigned: bool,
    },
    SmallInt {
        unsigned: bool,
    },
    MediumInt {
        unsigned: bool,
    },
    Int {
        unsigned: bool,
    },
    BigInt {
        unsigned: bool,
    },
    /// Exact decimal: precision (total digits) and scale (digits after the point).
    Decimal {
        precision: u8,
        scale: u8,
    },
    Float,
    Double,
    Char {
        len: u32,
    },
    VarChar {
        len: u32,
    },
    /// TINYTEXT/TEXT/MEDIUMTEXT/LONGTEXT: `max_len` is the byte limit.
    Text {
        max_len: u32,
    },
    Binary {
        len: u32,
    },
    VarBinary {
        len: u32,
    },
    /// TINYBLOB/BLOB/MEDIUMBLOB/LONGBLOB.
    Blob {
        max_len: u32,
    },
    Date,
    DateTime {
        fsp: u8,
    },
    Timestamp {
        fsp: u8,
    },
    // New variants go last: catalogs store the variant's index.
    /// The type of a NULL literal (result metadata only, never a column).
    Null,
    /// TIME: values are text 'hh:mm:ss[.ffffff]', hours -838..838.
    Time {
        fsp: u8,
    },
    /// YEAR: 1901..2155, or 0; an unsigned integer.
    Year,
    /// BIT(width), 1..64 bits: an unsigned integer, sent as its raw
    /// big-endian bytes.
    Bit {
        width: u8,
    },
    /// ENUM/SET as catalogs before `EnumOf`/`SetOf` kept them: text of at
    /// most `len` characters, not checked against members.
    Enum {
        len: u32,
    },
    Set {
        len: u32,
    },
    /// JSON: text, not checked.
    Json,
    /// ENUM / SET with their member lists (see `enumset`).
    EnumOf {
        members: Members,
    },
    SetOf {
        members: Members,
    },
}

impl DataType {
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DataType::TinyInt { .. }
                | DataType::SmallInt { .. }
                | DataType::MediumInt { .. }
                | DataType::Int { .. }
                | DataType::BigInt { .. }
                | DataType::Year
        )
    }

    pub fn is_unsigned(self) -> bool {
        match self {
            DataType::TinyInt { unsigned }
            | DataType::SmallInt { unsigned }
            | DataType::MediumInt { unsigned }
            | DataType::Int { unsigned }
            | DataType::BigInt { unsigned } => unsigned,
            DataType::Year | DataType::Bit { .. } => true,
            _ => false,
        }
    }

    pub fn is_string(self) -> bool {
        matches!(
            self,
            DataType::Char { .. }
                | DataType::VarChar { .. }
                | DataType::Text { .. }
                | DataType::Enum { .. }
                | DataType::Set { .. }
                | DataType::EnumOf { .. }
                | DataType::SetOf { .. }
        )
    }

    /// An ENUM's or SET's members, and whether it is a SET.
    pub fn members(self) -> Option<(Members, bool)> {
        match self {
            DataType::EnumOf { members } => Some((members, false)),
            DataType::SetOf { members } => Some((members, true)),
            _ => None,
        }
    }

    pub fn is_binary(self) -> bool {
        matches!(
            self,
            DataType::Binary { .. } | DataType::VarBinary { .. } | DataType::Blob { .. }
        )
    }

    /// Inclusive range of an integer type, as (min, max) in i128 so that
    /// both signed and unsigned BIGINT fit.
    pub fn integer_range(self) -> Option<(i128, i128)> {
        let (bits, unsigned) = match self {
            DataType::TinyInt { unsigned } => (8, unsigned),
            DataType::SmallInt { unsigned } => (16, unsigned),
            DataType::MediumInt { unsigned } => (24, unsigned),
            DataType::Int { unsigned } => (32, unsigned),
            DataType::BigInt { unsigned } => (64, unsigned),
            DataType::Year => return Some((0, 2155)),
            _ => return None,
        };
        Some(if unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        })
    }

    /// Maximum number of bytes (strings) a value of this type may hold.
    pub fn max_bytes(self) -> Option<u32> {
        match self {
            DataType::Char { len }
            | DataType::VarChar { len }
            | DataType::Binary { len }
            | DataType::VarBinary { len } => Some(len),
            DataType::Text { max_len } | DataType::Blob { max_len } => Some(max_len),
            DataType::Enum { len } | DataType::Set { len } => Some(len),
            DataType::EnumOf { members } => Some(members.width(false)),
            DataType::SetOf { members } => Some(members.width(true)),
            DataType::Json => Some(u32::MAX),
            _ => None,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let uns = |u: bool| if u { " unsigned" } else { "" };
        match *self {
            DataType::TinyInt { unsigned } => write!(f, "tinyint{}", uns(unsigned)),
            DataType::SmallInt { unsigned } => write!(f, "smallint{}", uns(unsigned)),
            DataType::MediumInt { unsigned } => write!(f, "mediumint{}", uns(unsigned)),
            DataType::Int { unsigned } => write!(f, "int{}", uns(unsigned)),
            DataType::BigInt { unsigned } => write!(f, "bigint{}", uns(unsigned)),
            DataType::Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            DataType::Float => write!(f, "float"),
            DataType::Double => write!(f, "double"),
            DataType::Char { len } => write!(f, "char({len})"),
            DataType::VarChar { len } => write!(f, "varchar({len})"),
            DataType::Text { max_len } => f.write_str(match max_len {
                0..=255 => "tinytext",
                256..=65535 => "text",
                65536..=16777215 => "mediumtext",
                _ => "longtext",
            }),
            DataType::Binary { len } => write!(f, "binary({len})"),
            DataType::VarBinary { len } => write!(f, "varbinary({len})"),
            DataType::Blob { max_len } => f.write_str(match max_len {
                0..=255 => "tinyblob",
                256..=65535 => "blob",
                65536..=16777215 => "mediumblob",
                _ => "longblob",
            }),
            DataType::Date => write!(f, "date"),
            DataType::DateTime { fsp: 0 } => write!(f, "datetime"),
            DataType::DateTime { fsp } => write!(f, "datetime({fsp})"),
            DataType::Timestamp { fsp: 0 } => write!(f, "timestamp"),
            DataType::Timestamp { fsp } => write!(f, "timestamp({fsp})"),
            DataType::Null => write!(f, "null"),
            DataType::Time { fsp: 0 } => write!(f, "time"),
            DataType::Time { fsp } => write!(f, "time({fsp})"),
            DataType::Year => write!(f, "year"),
            DataType::Bit { width } => write!(f, "bit({width})"),
            // Without the members, the closest type that re-creates.
            DataType::Enum { len } | DataType::Set { len } => write!(f, "varchar({len})"),
            DataType::EnumOf { members } => write!(f, "enum({})", members.quoted()),
            DataType::SetOf { members } => write!(f, "set({})", members.quoted()),
            DataType::Json => write!(f, "json"),
        }
    }
}
