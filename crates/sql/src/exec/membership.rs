//! `x IN (subquery)` for an uncorrelated subquery: its values go into a
//! hash set once per statement, as MySQL materializes such a subquery with
//! a hash index, instead of being compared one by one for every outer row
//! (which made `WHERE id IN (SELECT ...)` quadratic).
//!
//! The set answers only where hashing agrees with `Value::sql_cmp`:
//! integers against integers and strings against strings (byte-wise, after
//! the collation fold when the comparison is folded). Any other pairing
//! (a string probe among integers, decimals, dates) is compared one by one.

use crate::exec::keyset::KeySet;
use lockstep_types::value::fold_ci;
use lockstep_types::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Bytes,
}

pub(crate) struct MemberSet {
    keys: KeySet,
    /// The kind every non-NULL value has; None while there are none.
    kind: Option<Kind>,
    /// Values of more than one kind, or of a kind not hashed.
    mixed: bool,
    has_null: bool,
    /// What the set holds, for the statement's memory accounting.
    pub bytes: usize,
}

/// The hash key of a value and its kind: an integer as a 128-bit number
/// (so signed and unsigned meet), a string as its bytes.
fn key_of(v: &Value, fold: bool, out: &mut Vec<u8>) -> Option<Kind> {
    match v {
        Value::Int(i) => out.extend_from_slice(&(*i as i128).to_be_bytes()),
        Value::UInt(u) => out.extend_from_slice(&(*u as i128).to_be_bytes()),
        Value::Bytes(b) if fold => out.extend_from_slice(&fold_ci(b)),
        Value::Bytes(b) => out.extend_from_slice(b),
        _ => return None,
    }
    Some(if matches!(v, Value::Bytes(_)) {
        Kind::Bytes
    } else {
        Kind::Int
    })
}

impl MemberSet {
    /// The set of the first column of `rows`.
    pub fn build(rows: &[Vec<Value>], fold: bool) -> MemberSet {
        let mut set = MemberSet {
            keys: KeySet::default(),
            kind: None,
            mixed: false,
            has_null: false,
            bytes: 0,
        };
        for v in rows.iter().map(|r| r.first().unwrap_or(&Value::Null)) {
            if v.is_null() {
                set.has_null = true;
                continue;
            }
            let mut kind = None;
            let (_, grown) = set.keys.insert_with(|b| kind = key_of(v, fold, b));
            set.bytes += grown.unwrap_or(0);
            match (kind, set.kind) {
                (None, _) => set.mixed = true,
                (Some(k), None) => set.kind = Some(k),
                (Some(k), Some(had)) => set.mixed |= k != had,
            }
        }
        set
    }

    /// The answer for `probe` (already folded when the comparison is):
    /// Some(true) on a match, Some(None) when nothing matched but a value
    /// was NULL, Some(Some(false)) otherwise; None when the set cannot tell
    /// and the values must be compared one by one.
    pub fn lookup(&self, probe: &Value) -> Option<Option<bool>> {
        if self.mixed {
            return None;
        }
        let mut key = Vec::new();
        // The probe was folded with the expression; folding again is a no-op.
        let kind = key_of(probe, false, &mut key);
        let found = match (kind, self.kind) {
            (_, None) => false,
            (Some(k), Some(had)) if k == had => self.keys.contains(&key),
            _ => return None,
        };
        Some(match (found, self.has_null) {
            (true, _) => Some(true),
            (false, true) => None,
            (false, false) => Some(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(vals: &[Value]) -> Vec<Vec<Value>> {
        vals.iter().map(|v| vec![v.clone()]).collect()
    }

    #[test]
    fn integers_meet_across_signedness_and_nulls_make_unknown() {
        let set = MemberSet::build(&rows(&[Value::Int(3), Value::UInt(7)]), false);
        assert_eq!(set.lookup(&Value::UInt(3)), Some(Some(true)));
        assert_eq!(set.lookup(&Value::Int(7)), Some(Some(true)));
        assert_eq!(set.lookup(&Value::Int(8)), Some(Some(false)));
        // A string probe compares as a number: one by one.
        assert_eq!(set.lookup(&Value::Bytes(b"3".to_vec())), None);
        let with_null = MemberSet::build(&rows(&[Value::Int(3), Value::Null]), false);
        assert_eq!(with_null.lookup(&Value::Int(3)), Some(Some(true)));
        assert_eq!(with_null.lookup(&Value::Int(4)), Some(None));
    }

    #[test]
    fn strings_fold_when_the_comparison_does_and_mixed_sets_decline() {
        let set = MemberSet::build(&rows(&[Value::Bytes(b"Abc".to_vec())]), true);
        assert_eq!(set.lookup(&Value::Bytes(b"abc".to_vec())), Some(Some(true)));
        let exact = MemberSet::build(&rows(&[Value::Bytes(b"Abc".to_vec())]), false);
        assert_eq!(
            exact.lookup(&Value::Bytes(b"abc".to_vec())),
            Some(Some(false))
        );
        let mixed = MemberSet::build(&rows(&[Value::Int(1), Value::Bytes(b"1".to_vec())]), false);
        assert_eq!(mixed.lookup(&Value::Int(1)), None);
        let empty = MemberSet::build(&[], false);
        assert_eq!(empty.lookup(&Value::Double(1.5)), Some(Some(false)));
    }
}
