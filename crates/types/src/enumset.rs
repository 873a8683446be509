//! ENUM and SET member lists.
//!
//! A column's member list lives inside its `DataType` (`EnumOf` / `SetOf`)
//! so that every place that sees the type (storing values, SHOW CREATE
//! TABLE, result metadata, the binlog) sees the members too. `DataType` is
//! `Copy`, so a list is interned once per distinct list and referenced as
//! `&'static`: equal lists share one allocation, and the total the
//! interner may ever hold is capped (`INTERN_CAP`) so that clients creating
//! ever new lists cannot grow the server without bound.
//!
//! Values are stored as text, in the member's defined spelling (a SET as
//! its members in definition order joined by ','). `index_of` / `mask_of`
//! give the number MySQL stores (1-based member index, bitmask), which
//! `col + 0` and ENUM ordering use.

use crate::error::{Code, Error};
use crate::value::fold_ci;
use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

/// Most members of an ENUM / SET, as MySQL.
pub const MAX_ENUM_MEMBERS: usize = 65535;
pub const MAX_SET_MEMBERS: usize = 64;
/// Bytes of member text the process interns at most.
const INTERN_CAP: usize = 64 << 20;

/// One interned member list.
pub struct MemberList {
    names: Vec<Box<str>>,
    /// Each member under the default collation, for lookups.
    folded: Vec<Vec<u8>>,
}

/// A reference to an interned member list (cheap to copy and compare).
#[derive(Clone, Copy)]
pub struct Members(&'static MemberList);

struct Interner {
    lists: HashMap<Vec<Box<str>>, &'static MemberList>,
    bytes: usize,
}

static INTERNED: Mutex<Option<Interner>> = Mutex::new(None);

impl Members {
    /// Interns `names` (already checked by `check_definition`).
    pub fn intern(names: Vec<String>) -> Result<Members, Error> {
        let names: Vec<Box<str>> = names.into_iter().map(String::into_boxed_str).collect();
        let mut g = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
        let interner = g.get_or_insert_with(|| Interner {
            lists: HashMap::new(),
            bytes: 0,
        });
        if let Some(found) = interner.lists.get(&names) {
            return Ok(Members(found));
        }
        let size: usize = names.iter().map(|n| n.len() * 2 + 48).sum();
        if interner.bytes + size > INTERN_CAP {
            return Err(Error::new(
                Code::OutOfResources,
                "Out of memory: too many distinct ENUM/SET member lists",
            ));
        }
        interner.bytes += size;
        let folded = names
            .iter()
            .map(|n| fold_ci(n.as_bytes()).into_owned())
            .collect();
        let list: &'static MemberList = Box::leak(Box::new(MemberList {
            names: names.clone(),
            folded,
        }));
        interner.lists.insert(names, list);
        Ok(Members(list))
    }

    pub fn names(&self) -> &'static [Box<str>] {
        &self.0.names
    }

    pub fn len(&self) -> usize {
        self.0.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.names.is_empty()
    }

    /// 1-based index of the member equal to `text` under the collation.
    pub fn index_of(&self, text: &[u8]) -> Option<usize> {
        let f = fold_ci(trim_end(text));
        self.0.folded.iter().position(|m| *m == *f).map(|i| i + 1)
    }

    /// The member numbered `n` (1-based).
    pub fn name(&self, n: usize) -> Option<&'static str> {
        n.checked_sub(1)
            .and_then(|i| self.0.names.get(i))
            .map(|s| &**s)
    }

    /// Bitmask of a stored SET value (its members joined by ','); unknown
    /// parts count as nothing.
    pub fn mask_of(&self, text: &[u8]) -> u64 {
        if text.is_empty() {
            return 0;
        }
        text.split(|&b| b == b',')
            .filter_map(|p| self.index_of(p))
            .fold(0, |m, i| m | 1u64 << (i - 1))
    }

    /// The SET value for `mask`: its members in definition order.
    pub fn set_text(&self, mask: u64) -> String {
        let mut out = String::new();
        for (i, n) in self.0.names.iter().enumerate().take(64) {
            if mask >> i & 1 == 1 {
                if !out.is_empty() {
                    out.push(',');
                }
                out.push_str(n);
            }
        }
        out
    }

    /// Longest member (ENUM) or all members joined by ',' (SET), in
    /// characters: the column's display width.
    pub fn width(&self, set: bool) -> u32 {
        let chars = self.0.names.iter().map(|n| n.chars().count());
        let w = match set {
            true => chars.sum::<usize>() + self.len().saturating_sub(1),
            false => chars.max().unwrap_or(0),
        };
        w.min(u32::MAX as usize) as u32
    }

    /// `'a','b'` with each ' doubled, as SHOW CREATE TABLE prints them.
    pub fn quoted(&self) -> String {
        let mut out = String::new();
        for (i, n) in self.0.names.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('\'');
            out.push_str(&n.replace('\'', "''"));
            out.push('\'');
        }
        out
    }
}

fn trim_end(b: &[u8]) -> &[u8] {
    let n = b.iter().rposition(|&c| c != b' ').map_or(0, |i| i + 1);
    &b[..n]
}

/// Checks and normalizes a column's member list as CREATE TABLE gives it:
/// trailing spaces are dropped; a duplicate (under the collation) is
/// error 1291, too many members 1097 (SET) / 1117 (ENUM), a SET
/// member holding ',' 1367.
pub fn check_definition(names: Vec<String>, set: bool, column: &str) -> Result<Vec<String>, Error> {
    let kind = if set { "SET" } else { "ENUM" };
    let max = if set {
        MAX_SET_MEMBERS
    } else {
        MAX_ENUM_MEMBERS
    };
    if names.len() > max {
        return Err(match set {
            true => Error::new(
                Code::TooBigSet,
                format!("Too many strings for column {column} and SET"),
            ),
            // MariaDB's answer (MySQL's own code is not in its manual).
            false => Error::new(Code::TooManyFields, "Table definition is too large"),
        });
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let n = n.trim_end_matches(' ').to_string();
        if set && n.contains(',') {
            return Err(Error::new(
                Code::IllegalValueForType,
                format!("Illegal set '{n}' value found during parsing"),
            ));
        }
        if !seen.insert(fold_ci(n.as_bytes()).into_owned()) {
            return Err(Error::new(
                Code::DuplicatedValueInType,
                format!("Column '{column}' has duplicated value '{n}' in {kind}"),
            ));
        }
        out.push(n);
    }
    Ok(out)
}

fn truncated(column: &str) -> Error {
    Error::new(
        Code::WarnDataTruncated,
        format!("Data truncated for column '{column}' at row 1"),
    )
}

/// The stored text of `v` assigned to an ENUM column: a member by name
/// (any case, trailing spaces ignored) or by 1-based number.
pub fn store_enum(v: &crate::Value, members: Members, column: &str) -> Result<String, Error> {
    let n = match v {
        crate::Value::Bytes(b) => members.index_of(b),
        other => number(other).and_then(|n| usize::try_from(n).ok()),
    };
    n.and_then(|n| members.name(n))
        .map(str::to_string)
        .ok_or_else(|| truncated(column))
}

/// The stored text of `v` assigned to a SET column: a ',' list of members
/// in any order, duplicates allowed, or a bitmask; stored in definition
/// order.
pub fn store_set(v: &crate::Value, members: Members, column: &str) -> Result<String, Error> {
    let mask = match v {
        crate::Value::Bytes(b) if b.is_empty() => 0,
        crate::Value::Bytes(b) => {
            let mut mask = 0u64;
            for part in b.split(|&c| c == b',') {
                let i = members.index_of(part).ok_or_else(|| truncated(column))?;
                mask |= 1u64 << (i - 1);
            }
            mask
        }
        other => number(other).ok_or_else(|| truncated(column))?,
    };
    let all = match members.len() {
        64 => u64::MAX,
        n => (1u64 << n) - 1,
    };
    if mask & !all != 0 {
        return Err(truncated(column));
    }
    // A value holding a '' member reads back as the same text as one
    // without it (MySQL prints {'', 'a'} as 'a' too), and the text is
    // what is stored: the member would be lost, so it is refused.
    if let Some(i) = members.index_of(b"") {
        if mask >> (i - 1) & 1 == 1 {
            return Err(Error::unsupported(format!(
                "a SET value holding the '' member of column '{column}'"
            )));
        }
    }
    Ok(members.set_text(mask))
}

/// A numeric value as a whole non-negative number (None: not one).
fn number(v: &crate::Value) -> Option<u64> {
    match v {
        crate::Value::Int(i) => u64::try_from(*i).ok(),
        crate::Value::UInt(u) => Some(*u),
        crate::Value::Double(d) if *d >= 0.0 && d.is_finite() => Some(d.round() as u64),
        crate::Value::Decimal(d) => d.round().to_i128().and_then(|i| u64::try_from(i).ok()),
        _ => None,
    }
}

impl PartialEq for Members {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0) || self.0.names == other.0.names
    }
}

impl Eq for Members {}

impl std::hash::Hash for Members {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.names.hash(h)
    }
}

impl fmt::Debug for Members {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.quoted())
    }
}

impl serde::Serialize for Members {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let names: Vec<&str> = self.0.names.iter().map(|n| &**n).collect();
        names.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        Members::intern(names).map_err(|e| serde::de::Error::custom(e.message))
    }
}

/// The column type of `ENUM(names)` / `SET(names)` for column `col`.
pub fn data_type(names: Vec<String>, set: bool, col: &str) -> Result<crate::DataType, Error> {
    let names = check_definition(names, set, col)?;
    let members = Members::intern(names)?;
    Ok(match set {
        true => crate::DataType::SetOf { members },
        false => crate::DataType::EnumOf { members },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    fn m(names: &[&str]) -> Members {
        Members::intern(names.iter().map(|s| s.to_string()).collect()).unwrap()
    }

    #[test]
    fn interned_lists_are_shared_and_compare_by_content() {
        let a = m(&["x", "y"]);
        let b = m(&["x", "y"]);
        assert!(std::ptr::eq(a.0, b.0));
        assert_ne!(a, m(&["y", "x"]));
    }

    #[test]
    fn enum_values() {
        let e = m(&["a", "B", "it's"]);
        assert_eq!(store_enum(&Value::str("b "), e, "c").unwrap(), "B");
        assert_eq!(store_enum(&Value::Int(3), e, "c").unwrap(), "it's");
        assert!(store_enum(&Value::Int(0), e, "c").is_err());
        assert!(store_enum(&Value::str("q"), e, "c").is_err());
        assert_eq!(e.quoted(), "'a','B','it''s'");
    }

    #[test]
    fn set_values() {
        let s = m(&["x", "y", "z"]);
        assert_eq!(store_set(&Value::str("z,X,z"), s, "c").unwrap(), "x,z");
        assert_eq!(store_set(&Value::Int(6), s, "c").unwrap(), "y,z");
        assert_eq!(store_set(&Value::str(""), s, "c").unwrap(), "");
        assert!(store_set(&Value::Int(8), s, "c").is_err());
        assert!(store_set(&Value::str("x,w"), s, "c").is_err());
        assert_eq!(s.mask_of(b"x,z"), 5);
        assert_eq!(s.width(true), 5);
    }

    #[test]
    fn definitions() {
        let d =
            |v: &[&str], set| check_definition(v.iter().map(|s| s.to_string()).collect(), set, "c");
        assert_eq!(d(&["a ", "b"], false).unwrap(), vec!["a", "b"]);
        assert_eq!(d(&["a", "A"], false).unwrap_err().number(), 1291);
        assert_eq!(d(&["a,b"], true).unwrap_err().number(), 1367);
        let many: Vec<String> = (0..65).map(|i| i.to_string()).collect();
        assert_eq!(
            check_definition(many, true, "c").unwrap_err().number(),
            1097
        );
    }
}
