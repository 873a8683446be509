//! What the JSON functions do to documents: set, insert, replace and
//! remove at a path, append and insert into arrays, the two merges,
//! containment, overlap and string search.

use super::path::{path_text, Index, Leg};
use super::{compare, key_order, set_member, Json};
use std::cmp::Ordering;

/// JSON_SET (both), JSON_INSERT (only new places), JSON_REPLACE (only
/// existing ones).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SetMode {
    Set,
    Insert,
    Replace,
}

/// The value at a path of members and cells (no wildcards), for writing.
/// A non-array counts as an array of itself, so `[0]` names it.
fn locate_mut<'a>(mut v: &'a mut Json, legs: &[Leg]) -> Option<&'a mut Json> {
    for leg in legs {
        v = match (leg, v) {
            (Leg::Member(k), Json::Object(m)) => {
                let i = m.binary_search_by(|(x, _)| key_order(x, k)).ok()?;
                &mut m[i].1
            }
            (Leg::Cell(i), Json::Array(a)) => {
                let at = i.resolve(a.len())?;
                a.get_mut(at)?
            }
            (Leg::Cell(i), other) if i.resolve(1) == Some(0) => other,
            _ => return None,
        };
    }
    Some(v)
}

pub fn set(doc: &mut Json, legs: &[Leg], value: Json, mode: SetMode) {
    let Some((last, parent_legs)) = legs.split_last() else {
        if mode != SetMode::Insert {
            *doc = value;
        }
        return;
    };
    let Some(parent) = locate_mut(doc, parent_legs) else {
        return;
    };
    match (last, parent) {
        (Leg::Member(k), Json::Object(m)) => {
            let exists = m.binary_search_by(|(x, _)| key_order(x, k)).is_ok();
            if exists != (mode == SetMode::Insert) || mode == SetMode::Set {
                set_member(m, k.clone(), value);
            }
        }
        (Leg::Cell(i), Json::Array(a)) => match i.resolve(a.len()) {
            Some(p) if p < a.len() && mode != SetMode::Insert => a[p] = value,
            Some(p) if p >= a.len() && mode != SetMode::Replace => a.push(value),
            _ => {}
        },
        (Leg::Cell(i), other) => match i.resolve(1) {
            Some(0) if mode != SetMode::Insert => *other = value,
            Some(p) if p > 0 && mode != SetMode::Replace => {
                let old = std::mem::replace(other, Json::Null);
                *other = Json::Array(vec![old, value]);
            }
            _ => {}
        },
        _ => {}
    }
}

/// JSON_REMOVE of one path (not `$`); a missing place is no change.
pub fn remove(doc: &mut Json, legs: &[Leg]) {
    let Some((last, parent_legs)) = legs.split_last() else {
        return;
    };
    match (last, locate_mut(doc, parent_legs)) {
        (Leg::Member(k), Some(Json::Object(m))) => {
            if let Ok(i) = m.binary_search_by(|(x, _)| key_order(x, k)) {
                m.remove(i);
            }
        }
        (Leg::Cell(i), Some(Json::Array(a))) => {
            if let Some(p) = i.resolve(a.len()).filter(|p| *p < a.len()) {
                a.remove(p);
            }
        }
        _ => {}
    }
}

/// JSON_ARRAY_APPEND: onto the array at the path, or a non-array there
/// becomes an array of itself and the value.
pub fn array_append(doc: &mut Json, legs: &[Leg], value: Json) {
    match locate_mut(doc, legs) {
        Some(Json::Array(a)) => a.push(value),
        Some(other) => {
            let old = std::mem::replace(other, Json::Null);
            *other = Json::Array(vec![old, value]);
        }
        None => {}
    }
}

/// JSON_ARRAY_INSERT: the path ends in a cell; past the end appends.
pub fn array_insert(doc: &mut Json, legs: &[Leg], value: Json) {
    let Some((Leg::Cell(i), parent_legs)) = legs.split_last() else {
        return;
    };
    if let Some(Json::Array(a)) = locate_mut(doc, parent_legs) {
        let at = match i {
            Index::Start(n) => (*n).min(a.len() as u64) as usize,
            Index::Last(_) => i.resolve(a.len()).unwrap_or(0),
        };
        a.insert(at, value);
    }
}

/// JSON_MERGE_PRESERVE of two documents.
pub fn merge_preserve(a: Json, b: Json) -> Json {
    match (a, b) {
        (Json::Object(mut x), Json::Object(y)) => {
            for (k, v) in y {
                match x.binary_search_by(|(xk, _)| key_order(xk, &k)) {
                    Ok(i) => {
                        let old = std::mem::replace(&mut x[i].1, Json::Null);
                        x[i].1 = merge_preserve(old, v);
                    }
                    Err(i) => x.insert(i, (k, v)),
                }
            }
            Json::Object(x)
        }
        (Json::Array(mut x), Json::Array(y)) => {
            x.extend(y);
            Json::Array(x)
        }
        (Json::Array(mut x), other) => {
            x.push(other);
            Json::Array(x)
        }
        (other, Json::Array(y)) => {
            let mut x = vec![other];
            x.extend(y);
            Json::Array(x)
        }
        (a, b) => Json::Array(vec![a, b]),
    }
}

/// JSON_MERGE_PATCH (RFC 7396): null members of the patch remove.
pub fn merge_patch(a: Json, b: Json) -> Json {
    let Json::Object(patch) = b else {
        return b;
    };
    let mut members = match a {
        Json::Object(m) => m,
        _ => Vec::new(),
    };
    for (k, v) in patch {
        let at = members.binary_search_by(|(x, _)| key_order(x, &k));
        match (v, at) {
            (Json::Null, Ok(i)) => {
                members.remove(i);
            }
            (Json::Null, Err(_)) => {}
            (v, Ok(i)) => {
                let old = std::mem::replace(&mut members[i].1, Json::Null);
                members[i].1 = merge_patch(old, v);
            }
            (v, Err(i)) => members.insert(i, (k, merge_patch(Json::Null, v))),
        }
    }
    Json::Object(members)
}

fn is_container(j: &Json) -> bool {
    matches!(j, Json::Array(_) | Json::Object(_))
}

/// Scalars of the same JSON type, or integers and decimals, that are
/// equal (the manual's "comparable and equal").
fn scalar_eq(a: &Json, b: &Json) -> bool {
    let exact = |j: &Json| matches!(j, Json::Int(_) | Json::UInt(_) | Json::Decimal(_));
    let comparable = a.type_name() == b.type_name() || (exact(a) && exact(b));
    !is_container(a) && comparable && compare(a, b) == Ordering::Equal
}

/// JSON_CONTAINS(target, candidate), by MySQL's rules: an array
/// candidate's every element in some element of the target array, a
/// non-array candidate in some element, an object's every member in the
/// target's member of that key.
pub fn contains(target: &Json, cand: &Json) -> bool {
    match (target, cand) {
        (Json::Object(t), Json::Object(c)) => c.iter().all(|(k, cv)| {
            t.binary_search_by(|(x, _)| key_order(x, k))
                .is_ok_and(|i| contains(&t[i].1, cv))
        }),
        (Json::Array(t), Json::Array(c)) => c.iter().all(|ce| t.iter().any(|te| contains(te, ce))),
        (Json::Array(t), c) => t.iter().any(|te| contains(te, c)),
        (t, c) => scalar_eq(t, c),
    }
}

/// JSON_OVERLAPS: a common element, a common member, or equal scalars.
pub fn overlaps(a: &Json, b: &Json) -> bool {
    let eq = |x: &Json, y: &Json| compare(x, y) == Ordering::Equal;
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x.iter().any(|xe| y.iter().any(|ye| eq(xe, ye))),
        (Json::Array(x), other) | (other, Json::Array(x)) => x.iter().any(|xe| eq(xe, other)),
        (Json::Object(x), Json::Object(_)) => {
            x.iter().any(|(k, v)| b.member(k).is_some_and(|w| eq(v, w)))
        }
        (Json::Object(_), _) | (_, Json::Object(_)) => false,
        (x, y) => eq(x, y),
    }
}

/// JSON_SEARCH's walk: the paths of the strings that `matches` accepts,
/// in document order, below a value that `selected` accepts (every value
/// when it is None). Stops after the first when `one`.
pub struct Search<'a> {
    pub matches: &'a dyn Fn(&str) -> bool,
    pub selected: Option<&'a dyn Fn(&Json) -> bool>,
    pub one: bool,
    pub found: Vec<String>,
}

impl Search<'_> {
    pub fn walk(&mut self, v: &Json, legs: &mut Vec<Leg>, under: bool) {
        if self.one && !self.found.is_empty() {
            return;
        }
        let under = under || self.selected.is_none_or(|sel| sel(v));
        match v {
            Json::Str(s) if under && (self.matches)(s) => self.found.push(path_text(legs)),
            Json::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    legs.push(Leg::Cell(Index::Start(i as u64)));
                    self.walk(x, legs, under);
                    legs.pop();
                }
            }
            Json::Object(m) => {
                for (k, x) in m {
                    legs.push(Leg::Member(k.clone()));
                    self.walk(x, legs, under);
                    legs.pop();
                }
            }
            _ => {}
        }
    }
}
