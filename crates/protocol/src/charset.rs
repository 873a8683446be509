//! The character set a result's text columns are described in: MySQL
//! sends, for every column that is not binary, the collation id of
//! character_set_results (the column's own when that is NULL) and the
//! column's display length in that set's bytes per character.

use crate::resultset::{ColumnMeta, BINARY_COLLATION, UTF8MB4_COLLATION};
use std::borrow::Cow;

/// UTF-8 text into a character set's bytes (names and messages).
pub trait TextEncoder: Sync {
    fn encode<'a>(&self, s: &'a str) -> Cow<'a, [u8]>;
}

/// Text columns' collation id and bytes per character, and how names and
/// error messages are encoded.
#[derive(Clone, Copy)]
pub struct ResultCharset {
    pub collation: u16,
    /// Longest character in bytes (mbmaxlen): 4 utf8mb4, 3 utf8mb3, 1 latin1.
    pub maxlen: u8,
    /// None: UTF-8 text is sent as is.
    pub encoder: Option<&'static dyn TextEncoder>,
    /// character_set_results is NULL or binary: each text column is
    /// described in its own character set, this giving the longest
    /// character (in bytes) of a collation id.
    pub own: Option<fn(u16) -> u8>,
}

impl std::fmt::Debug for ResultCharset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let own = if self.own.is_some() { ", own" } else { "" };
        write!(f, "ResultCharset({}, {}{own})", self.collation, self.maxlen)
    }
}

/// The collation names the set, so it decides the encoder too.
impl PartialEq for ResultCharset {
    fn eq(&self, o: &Self) -> bool {
        self.collation == o.collation
            && self.maxlen == o.maxlen
            && self.own.is_some() == o.own.is_some()
    }
}
impl Eq for ResultCharset {}

impl Default for ResultCharset {
    /// utf8mb4_0900_ai_ci, what columns are stored in.
    fn default() -> Self {
        ResultCharset {
            collation: UTF8MB4_COLLATION,
            maxlen: 4,
            encoder: None,
            own: None,
        }
    }
}

impl ResultCharset {
    /// A name or message in this set (non-ASCII text only is converted).
    pub fn text<'a>(&self, s: &'a str) -> Cow<'a, [u8]> {
        match self.encoder {
            Some(e) if !s.is_ascii() => e.encode(s),
            _ => Cow::Borrowed(s.as_bytes()),
        }
    }

    /// `meta` of a text column (stored as utf8mb4) described in this set,
    /// or in the column's own `collation` (0: utf8mb4_0900_ai_ci) when
    /// results are sent unconverted; binary and numeric columns are left
    /// alone.
    pub fn describe(self, meta: ColumnMeta, collation: u16) -> ColumnMeta {
        if meta.collation == BINARY_COLLATION || self == ResultCharset::default() {
            return meta;
        }
        let this = match self.own {
            Some(_) if collation == 0 => return meta,
            Some(maxlen) => ResultCharset {
                collation,
                maxlen: maxlen(collation),
                encoder: None,
                own: None,
            },
            None => self,
        };
        this.describe_in(meta)
    }

    fn describe_in(self, meta: ColumnMeta) -> ColumnMeta {
        // Lengths at u32::MAX (LONGTEXT) stay so; others are characters
        // times the set's longest character.
        let length = match meta.length {
            u32::MAX => u32::MAX,
            l => (l / 4).saturating_mul(self.maxlen as u32),
        };
        ColumnMeta {
            collation: self.collation,
            length,
            ..meta
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resultset::column_meta;
    use lockstep_types::DataType;

    #[test]
    fn text_columns_take_the_result_charset() {
        let latin1 = ResultCharset {
            collation: 8,
            maxlen: 1,
            encoder: None,
            own: None,
        };
        let utf8mb3 = ResultCharset {
            collation: 33,
            maxlen: 3,
            encoder: None,
            own: None,
        };
        let m = |rc: ResultCharset, dt| {
            let m = rc.describe(column_meta(dt), 0);
            (m.collation, m.length)
        };
        assert_eq!(m(latin1, DataType::VarChar { len: 10 }), (8, 10));
        assert_eq!(m(utf8mb3, DataType::Char { len: 3 }), (33, 9));
        assert_eq!(m(utf8mb3, DataType::Text { max_len: 65535 }), (33, 196605));
        assert_eq!(
            m(latin1, DataType::Text { max_len: u32::MAX }),
            (8, u32::MAX)
        );
        assert_eq!(m(latin1, DataType::Enum { len: 1 }), (8, 1));
        // Binary, numeric and temporal columns stay binary (63).
        assert_eq!(m(latin1, DataType::Blob { max_len: 65535 }), (63, 65535));
        assert_eq!(m(latin1, DataType::VarBinary { len: 5 }), (63, 5));
        assert_eq!(m(latin1, DataType::Int { unsigned: false }), (63, 11));
        assert_eq!(m(utf8mb3, DataType::DateTime { fsp: 3 }), (63, 23));
        assert_eq!(
            m(ResultCharset::default(), DataType::VarChar { len: 10 }),
            (255, 40)
        );
        // Unconverted results: each column in its own set.
        let own = ResultCharset {
            collation: 63,
            maxlen: 1,
            encoder: None,
            own: Some(|c| if c == 28 { 2 } else { 1 }),
        };
        let m = own.describe(column_meta(DataType::VarChar { len: 10 }), 28);
        assert_eq!((m.collation, m.length), (28, 20));
        let m = own.describe(column_meta(DataType::VarChar { len: 10 }), 0);
        assert_eq!((m.collation, m.length), (255, 40));
    }
}
