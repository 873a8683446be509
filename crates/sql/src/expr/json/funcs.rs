//! The SQL JSON functions: names, argument counts, result types and
//! evaluation, with MySQL 8's NULL rules (an SQL NULL argument gives NULL;
//! a JSON null is a value) and errors.

use super::ops::{self, SetMode};
use super::parse::{check_depth, parse_text};
use super::path::{Leg, Path};
use super::{from_sql, Json};
use crate::expr::{builds, eval, BExpr, Env, Func};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonFn {
    Object,
    Array,
    Quote,
    Unquote,
    Extract,
    Set,
    Insert,
    Replace,
    Remove,
    ArrayAppend,
    ArrayInsert,
    MergePatch,
    MergePreserve,
    Contains,
    ContainsPath,
    Length,
    Depth,
    Keys,
    Type,
    Valid,
    Search,
    Overlaps,
    MemberOf,
    Pretty,
    StorageSize,
    /// JSON_STORAGE_FREE: the space a partial update freed in a stored
    /// value. Every update here writes the whole value, so none: 0.
    StorageFree,
    /// CAST(x AS JSON).
    Cast,
    /// A comparison with a JSON operand: -1, 0 or 1 (the binder compares
    /// that with 0).
    Compare,
    /// ORDER BY a JSON value: bytes that sort in MySQL's JSON order.
    SortKey,
    /// JSON_VALUE(doc, path, ON EMPTY default, ON ERROR default) with its
    /// RETURNING type and clauses.
    JsonValue(super::value::Spec),
    /// A JSON value as an SQL scalar, for a numeric or temporal CAST:
    /// numbers stay numbers, true is 1, a string is its contents.
    Scalar,
}

const NAMES: [(&str, JsonFn); 31] = [
    ("json_object", JsonFn::Object),
    ("json_array", JsonFn::Array),
    ("json_quote", JsonFn::Quote),
    ("json_unquote", JsonFn::Unquote),
    ("json_extract", JsonFn::Extract),
    ("json_set", JsonFn::Set),
    ("json_insert", JsonFn::Insert),
    ("json_replace", JsonFn::Replace),
    ("json_remove", JsonFn::Remove),
    ("json_array_append", JsonFn::ArrayAppend),
    ("json_array_insert", JsonFn::ArrayInsert),
    ("json_merge_patch", JsonFn::MergePatch),
    ("json_merge_preserve", JsonFn::MergePreserve),
    ("json_merge", JsonFn::MergePreserve),
    ("json_contains", JsonFn::Contains),
    ("json_contains_path", JsonFn::ContainsPath),
    ("json_length", JsonFn::Length),
    ("json_depth", JsonFn::Depth),
    ("json_keys", JsonFn::Keys),
    ("json_type", JsonFn::Type),
    ("json_valid", JsonFn::Valid),
    ("json_search", JsonFn::Search),
    ("json_overlaps", JsonFn::Overlaps),
    ("member of", JsonFn::MemberOf),
    ("json_pretty", JsonFn::Pretty),
    ("json_storage_size", JsonFn::StorageSize),
    ("json_storage_free", JsonFn::StorageFree),
    ("cast_as_json", JsonFn::Cast),
    ("json_compare", JsonFn::Compare),
    ("json_sort_key", JsonFn::SortKey),
    ("json_scalar", JsonFn::Scalar),
];

impl JsonFn {
    /// The function an SQL name calls (upper case, as the parser gives it).
    pub fn lookup(name: &str) -> Option<JsonFn> {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "member of" | "cast_as_json" | "json_compare" | "json_sort_key" | "json_scalar" => None,
            "json_member_of" => Some(JsonFn::MemberOf),
            _ => NAMES.iter().find(|(n, _)| *n == lower).map(|(_, f)| *f),
        }
    }

    /// The name MySQL's messages use.
    pub fn name(self) -> &'static str {
        if let JsonFn::JsonValue(_) = self {
            return "json_value";
        }
        NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("json", |(n, _)| n)
    }

    pub fn arity(self) -> (usize, usize) {
        use JsonFn::*;
        const ANY: usize = usize::MAX;
        match self {
            Object | Array => (0, ANY),
            Quote | Unquote | Depth | Type | Valid | Pretty | StorageSize | StorageFree | Cast
            | SortKey | Scalar => (1, 1),
            Extract | Remove => (2, ANY),
            Set | Insert | Replace | ArrayAppend | ArrayInsert => (3, ANY),
            MergePatch | MergePreserve => (2, ANY),
            Contains => (2, 3),
            ContainsPath | Search => (3, ANY),
            Length | Keys => (1, 2),
            Overlaps | MemberOf | Compare => (2, 2),
            JsonValue(_) => (4, 4),
        }
    }

    /// Whether `n` arguments make a valid call (counts and pairs).
    pub fn accepts(self, n: usize) -> bool {
        let (min, max) = self.arity();
        let paired = match self {
            JsonFn::Object => n.is_multiple_of(2),
            JsonFn::Set
            | JsonFn::Insert
            | JsonFn::Replace
            | JsonFn::ArrayAppend
            | JsonFn::ArrayInsert => n % 2 == 1,
            _ => true,
        };
        (min..=max).contains(&n) && paired
    }

    pub fn result_type(self) -> DataType {
        use JsonFn::*;
        match self {
            Quote | Unquote | Pretty => DataType::Text { max_len: u32::MAX },
            Type => DataType::VarChar { len: 51 },
            Scalar => DataType::Text { max_len: u32::MAX },
            JsonValue(spec) => spec.ty,
            SortKey => DataType::VarBinary { len: u32::MAX },
            Contains | ContainsPath | Length | Depth | Valid | Overlaps | MemberOf
            | StorageSize | StorageFree | Compare => DataType::BigInt { unsigned: false },
            _ => DataType::Json,
        }
    }
}

/// How the binder typed an argument (see `bind.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Sql,
    Json,
    Bool,
}

/// The kind a marker gives, and the argument inside it.
pub fn unmark(e: &BExpr) -> (Kind, &BExpr) {
    match e {
        BExpr::Func(Func::JsonTyped, inner) if inner.len() == 1 => (Kind::Json, &inner[0]),
        BExpr::Func(Func::BoolTyped, inner) if inner.len() == 1 => (Kind::Bool, &inner[0]),
        other => (Kind::Sql, other),
    }
}

struct Args<'a> {
    f: JsonFn,
    args: &'a [BExpr],
    row: &'a [Value],
    env: &'a mut dyn Env,
    /// Values the call may still build (query_memory_limit over a value's size).
    budget: usize,
}

impl Args<'_> {
    fn raw(&mut self, i: usize) -> Result<(Kind, Value), Error> {
        let (kind, e) = unmark(&self.args[i]);
        Ok((kind, eval(e, self.row, self.env)?))
    }

    fn parse(&mut self, i: usize, text: &[u8]) -> Result<Json, Error> {
        parse_text(text, &mut self.budget).map_err(|e| e.in_argument(i + 1, self.f.name()))
    }

    /// A JSON document argument; None for SQL NULL.
    fn doc(&mut self, i: usize) -> Result<Option<Json>, Error> {
        match self.raw(i)? {
            (_, Value::Null) => Ok(None),
            (Kind::Bool, v) => Ok(Some(Json::Bool(v.truth() == Some(true)))),
            (_, Value::Bytes(b)) => self.parse(i, &b).map(Some),
            (Kind::Json, v) => Ok(Some(from_sql(&v))),
            (Kind::Sql, _) => Err(Error::new(
                Code::InvalidTypeForJson,
                format!(
                    "Invalid data type for JSON data in argument {} to function {}; a JSON string or JSON type is required.",
                    i + 1,
                    self.f.name()
                ),
            )),
        }
    }

    /// A value argument: SQL values become JSON scalars, NULL JSON null.
    fn value(&mut self, i: usize) -> Result<Json, Error> {
        let (kind, v) = self.raw(i)?;
        self.convert(i, kind, v)
    }

    fn convert(&mut self, i: usize, kind: Kind, v: Value) -> Result<Json, Error> {
        Ok(match (kind, v) {
            (Kind::Json, Value::Bytes(b)) => self.parse(i, &b)?,
            (Kind::Bool, v) if !v.is_null() => Json::Bool(v.truth() == Some(true)),
            (_, v) => {
                let len = v.to_text().map_or(0, |t| t.len());
                self.charge(1 + len / std::mem::size_of::<Json>())?;
                from_sql(&v)
            }
        })
    }

    fn charge(&mut self, n: usize) -> Result<(), Error> {
        self.budget = self.budget.checked_sub(n).ok_or_else(super::too_big)?;
        Ok(())
    }

    /// A path argument; None for SQL NULL.
    fn path(&mut self, i: usize) -> Result<Option<Path>, Error> {
        match self.raw(i)?.1 {
            Value::Null => Ok(None),
            v => Path::parse(&v.to_text().unwrap_or_default()).map(Some),
        }
    }

    /// A path that must name one place (no wildcards or ranges: 3149).
    fn exact_path(&mut self, i: usize) -> Result<Option<Path>, Error> {
        let p = self.path(i)?;
        if p.as_ref().is_some_and(Path::has_wildcard) {
            return Err(wildcard_error());
        }
        Ok(p)
    }

    /// A trailing path that may be left out: None when it is SQL NULL (the
    /// result is NULL), Some(None) when the call has none.
    fn optional_path(&mut self, i: usize) -> Result<Option<Option<Path>>, Error> {
        if self.args.len() <= i {
            return Ok(Some(None));
        }
        Ok(self.exact_path(i)?.map(Some))
    }

    fn text(&mut self, i: usize) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.raw(i)?.1.to_text())
    }

    /// The result as a JSON value: within the depth limit, and NULL with
    /// warning 1301 where its text passes max_allowed_packet.
    fn finish(&mut self, j: Json) -> Result<Value, Error> {
        check_depth(&j)?;
        self.text_result(j.to_text())
    }

    fn text_result(&mut self, text: String) -> Result<Value, Error> {
        match builds(self.f.name(), text.len(), self.env)? {
            true => Ok(Value::Bytes(text.into_bytes())),
            false => Ok(Value::Null),
        }
    }
}

pub fn wildcard_error() -> Error {
    Error::new(
        Code::InvalidJsonPathWildcard,
        "In this situation, path expressions may not contain the * and ** tokens or an array range.",
    )
}

fn one_or_all(f: JsonFn, v: &[u8]) -> Result<bool, Error> {
    match v.to_ascii_lowercase().as_slice() {
        b"one" => Ok(true),
        b"all" => Ok(false),
        _ => Err(Error::new(
            Code::JsonBadOneOrAllArg,
            format!(
                "The oneOrAll argument to {} may take these values: 'one' or 'all'.",
                f.name()
            ),
        )),
    }
}

/// Values a call may build: the statement's memory cap over a value's size.
fn budget(env: &mut dyn Env) -> usize {
    let limit = env
        .system_var(false, "query_memory_limit")
        .ok()
        .and_then(|v| v.to_i64())
        .map_or(usize::MAX, |l| l.max(0) as usize);
    limit / std::mem::size_of::<Json>()
}

pub fn eval_json(
    f: JsonFn,
    args: &[BExpr],
    row: &[Value],
    env: &mut dyn Env,
) -> Result<Value, Error> {
    let budget = budget(env);
    let mut a = Args {
        f,
        args,
        row,
        env,
        budget,
    };
    use JsonFn::*;
    match f {
        Object => object(&mut a),
        Array => {
            let items = (0..args.len())
                .map(|i| a.value(i))
                .collect::<Result<_, _>>()?;
            a.finish(Json::Array(items))
        }
        Quote => match a.text(0)? {
            None => Ok(Value::Null),
            Some(t) => {
                let mut out = String::new();
                super::quote_into(&mut out, &String::from_utf8_lossy(&t));
                a.text_result(out)
            }
        },
        Unquote => unquote(&mut a),
        Extract => extract(&mut a),
        Set | Insert | Replace | ArrayAppend | ArrayInsert => modify(&mut a),
        Remove => remove(&mut a),
        MergePatch => merge_patch(&mut a),
        MergePreserve => merge_preserve(&mut a),
        Contains => contains(&mut a),
        ContainsPath => contains_path(&mut a),
        Length | Keys => length_or_keys(&mut a),
        Depth | Type | Pretty | StorageSize | StorageFree | Cast | SortKey | Scalar => {
            about_doc(&mut a)
        }
        Valid => valid(&mut a),
        JsonValue(spec) => json_value(spec, &mut a),
        Search => search(&mut a),
        Overlaps => match (a.doc(0)?, a.doc(1)?) {
            (Some(x), Some(y)) => Ok(bool_value(ops::overlaps(&x, &y))),
            _ => Ok(Value::Null),
        },
        MemberOf => member_of(&mut a),
        Compare => compare(&mut a),
    }
}

fn bool_value(b: bool) -> Value {
    Value::Int(b as i64)
}

fn object(a: &mut Args) -> Result<Value, Error> {
    let mut members = Vec::with_capacity(a.args.len() / 2);
    for i in (0..a.args.len()).step_by(2) {
        let Some(key) = a.text(i)? else {
            return Err(Error::new(
                Code::JsonDocumentNullKey,
                "JSON documents may not contain NULL member names.",
            ));
        };
        let key = String::from_utf8_lossy(&key).into_owned();
        members.push((key, a.value(i + 1)?));
    }
    a.finish(Json::object(members))
}

fn unquote(a: &mut Args) -> Result<Value, Error> {
    let (kind, v) = a.raw(0)?;
    let Some(text) = v.to_text() else {
        return Ok(Value::Null);
    };
    let quoted = text.len() >= 2 && text[0] == b'"' && text[text.len() - 1] == b'"';
    if kind != Kind::Json && !quoted {
        return Ok(Value::Bytes(text));
    }
    let j = a.parse(0, &text)?;
    a.text_result(j.unquoted())
}

fn extract(a: &mut Args) -> Result<Value, Error> {
    let doc = a.doc(0)?;
    let mut paths = Vec::with_capacity(a.args.len() - 1);
    for i in 1..a.args.len() {
        paths.push(a.path(i)?);
    }
    let (Some(doc), Some(paths)) = (doc, paths.into_iter().collect::<Option<Vec<_>>>()) else {
        return Ok(Value::Null);
    };
    if let [p] = &paths[..] {
        if !p.has_wildcard() {
            return match p.get(&doc) {
                Some(v) => a.finish(v.clone()),
                None => Ok(Value::Null),
            };
        }
    }
    let found: Vec<Json> = paths.iter().flat_map(|p| p.find(&doc)).cloned().collect();
    if found.is_empty() {
        return Ok(Value::Null);
    }
    a.finish(Json::Array(found))
}

/// JSON_VALUE: the one value at the path, or what ON EMPTY / ON ERROR
/// answers (`value.rs`).
fn json_value(spec: super::value::Spec, a: &mut Args) -> Result<Value, Error> {
    use super::value::{pick, typed, Answer};
    let (Some(doc), Some(path)) = (a.doc(0)?, a.exact_path(1)?) else {
        return Ok(Value::Null);
    };
    let miss = match pick(spec, &path.find(&doc)) {
        Ok(v) => return Ok(v),
        Err(miss) => miss,
    };
    match miss.answer {
        Answer::Error => return Err(miss.error),
        _ if miss.warns => a.env.warn(miss.error)?,
        _ => {}
    }
    match (miss.answer, a.raw(miss.default_arg)?.1) {
        (Answer::Default, v) if !v.is_null() => typed(&super::from_sql(&v), spec.ty, "json_value"),
        _ => Ok(Value::Null),
    }
}

/// JSON_SET, JSON_INSERT, JSON_REPLACE, JSON_ARRAY_APPEND and
/// JSON_ARRAY_INSERT: (path, value) pairs applied left to right.
fn modify(a: &mut Args) -> Result<Value, Error> {
    let Some(mut doc) = a.doc(0)? else {
        return Ok(Value::Null);
    };
    for i in (1..a.args.len()).step_by(2) {
        let Some(path) = a.exact_path(i)? else {
            return Ok(Value::Null);
        };
        let value = a.value(i + 1)?;
        let legs = &path.legs;
        match a.f {
            JsonFn::Set => ops::set(&mut doc, legs, value, SetMode::Set),
            JsonFn::Insert => ops::set(&mut doc, legs, value, SetMode::Insert),
            JsonFn::Replace => ops::set(&mut doc, legs, value, SetMode::Replace),
            JsonFn::ArrayAppend => ops::array_append(&mut doc, legs, value),
            _ => {
                if !matches!(legs.last(), Some(Leg::Cell(_))) {
                    return Err(Error::new(
                        Code::InvalidJsonPathArrayCell,
                        "A path expression is not a path to a cell in an array.",
                    ));
                }
                ops::array_insert(&mut doc, legs, value)
            }
        }
        check_depth(&doc)?;
    }
    a.finish(doc)
}

fn remove(a: &mut Args) -> Result<Value, Error> {
    let doc = a.doc(0)?;
    let mut paths = Vec::new();
    for i in 1..a.args.len() {
        let Some(p) = a.exact_path(i)? else {
            return Ok(Value::Null);
        };
        if p.legs.is_empty() {
            return Err(Error::new(
                Code::JsonVacuousPath,
                "The path expression '$' is not allowed in this context.",
            ));
        }
        paths.push(p);
    }
    let Some(mut doc) = doc else {
        return Ok(Value::Null);
    };
    for p in &paths {
        ops::remove(&mut doc, &p.legs);
    }
    a.finish(doc)
}

/// A NULL patch makes the result NULL until a later patch that is not an
/// object replaces it (as MySQL).
fn merge_patch(a: &mut Args) -> Result<Value, Error> {
    let mut acc = a.doc(0)?;
    for i in 1..a.args.len() {
        acc = match (acc, a.doc(i)?) {
            (_, None) => None,
            (_, Some(p @ (Json::Null | Json::Bool(_) | Json::Array(_))))
            | (_, Some(p @ (Json::Int(_) | Json::UInt(_) | Json::Str(_)))) => Some(p),
            (_, Some(p @ (Json::Double(_) | Json::Decimal(_)))) => Some(p),
            (None, Some(Json::Object(_))) => None,
            (Some(x), Some(p)) => Some(ops::merge_patch(x, p)),
        };
    }
    match acc {
        Some(j) => a.finish(j),
        None => Ok(Value::Null),
    }
}

fn merge_preserve(a: &mut Args) -> Result<Value, Error> {
    let mut docs = Vec::with_capacity(a.args.len());
    for i in 0..a.args.len() {
        docs.push(a.doc(i)?);
    }
    let Some(docs) = docs.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(Value::Null);
    };
    let mut it = docs.into_iter();
    let first = it.next().unwrap_or(Json::Null);
    let merged = it.fold(first, ops::merge_preserve);
    a.finish(merged)
}

fn contains(a: &mut Args) -> Result<Value, Error> {
    let target = a.doc(0)?;
    let cand = a.doc(1)?;
    let Some(path) = a.optional_path(2)? else {
        return Ok(Value::Null);
    };
    let (Some(target), Some(cand)) = (target, cand) else {
        return Ok(Value::Null);
    };
    let at = match &path {
        Some(p) => p.get(&target),
        None => Some(&target),
    };
    Ok(at.map_or(Value::Null, |t| bool_value(ops::contains(t, &cand))))
}

fn contains_path(a: &mut Args) -> Result<Value, Error> {
    let doc = a.doc(0)?;
    let mode = a.text(1)?;
    let mut paths = Vec::new();
    for i in 2..a.args.len() {
        paths.push(a.path(i)?);
    }
    let (Some(doc), Some(mode), Some(paths)) =
        (doc, mode, paths.into_iter().collect::<Option<Vec<_>>>())
    else {
        return Ok(Value::Null);
    };
    let one = one_or_all(a.f, &mode)?;
    let mut hits = paths.iter().map(|p| !p.find(&doc).is_empty());
    Ok(bool_value(if one {
        hits.any(|h| h)
    } else {
        hits.all(|h| h)
    }))
}

/// JSON_LENGTH and JSON_KEYS: of the document, or of the value at a path.
fn length_or_keys(a: &mut Args) -> Result<Value, Error> {
    let doc = a.doc(0)?;
    let Some(path) = a.optional_path(1)? else {
        return Ok(Value::Null);
    };
    let Some(doc) = doc else {
        return Ok(Value::Null);
    };
    let Some(v) = path.as_ref().map_or(Some(&doc), |p| p.get(&doc)) else {
        return Ok(Value::Null);
    };
    match (a.f, v) {
        (JsonFn::Length, Json::Array(x)) => Ok(Value::Int(x.len() as i64)),
        (JsonFn::Length, Json::Object(m)) => Ok(Value::Int(m.len() as i64)),
        (JsonFn::Length, _) => Ok(Value::Int(1)),
        (_, Json::Object(m)) => {
            let keys = m.iter().map(|(k, _)| Json::Str(k.clone())).collect();
            a.finish(Json::Array(keys))
        }
        _ => Ok(Value::Null),
    }
}

/// The one-document functions: JSON_DEPTH, JSON_TYPE, JSON_PRETTY,
/// JSON_STORAGE_SIZE and CAST(x AS JSON).
fn about_doc(a: &mut Args) -> Result<Value, Error> {
    let doc = if a.f == JsonFn::Cast {
        match a.raw(0)? {
            (_, Value::Null) => None,
            (Kind::Sql, v) if !matches!(v, Value::Bytes(_)) => Some(from_sql(&v)),
            _ => a.doc(0)?,
        }
    } else {
        a.doc(0)?
    };
    let Some(doc) = doc else {
        return Ok(Value::Null);
    };
    match a.f {
        JsonFn::Depth => Ok(Value::Int(doc.depth() as i64)),
        JsonFn::Type => Ok(Value::str(doc.type_name())),
        JsonFn::Pretty => a.text_result(doc.to_pretty()),
        JsonFn::StorageSize => Ok(Value::Int(super::storage_size(&doc) as i64)),
        JsonFn::StorageFree => Ok(Value::Int(0)),
        JsonFn::Scalar => Ok(match doc {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Int(b as i64),
            Json::Int(i) => Value::Int(i),
            Json::UInt(u) => Value::UInt(u),
            Json::Double(d) => Value::Double(d),
            Json::Decimal(d) => Value::Decimal(d),
            Json::Str(s) => Value::Bytes(s.into_bytes()),
            container => container.into_value(),
        }),
        JsonFn::SortKey => {
            let mut key = Vec::new();
            super::sort_key(&doc, &mut key);
            Ok(Value::Bytes(key))
        }
        _ => a.finish(doc),
    }
}

fn valid(a: &mut Args) -> Result<Value, Error> {
    Ok(match a.raw(0)? {
        (_, Value::Null) => Value::Null,
        (Kind::Json, _) => Value::Int(1),
        (_, Value::Bytes(b)) => {
            let mut budget = a.budget;
            bool_value(parse_text(&b, &mut budget).is_ok())
        }
        _ => Value::Int(0),
    })
}

fn search(a: &mut Args) -> Result<Value, Error> {
    let doc = a.doc(0)?;
    let mode = a.text(1)?;
    let pattern = a.text(2)?;
    let escape = if a.args.len() > 3 { a.text(3)? } else { None };
    let mut paths = Vec::new();
    for i in 4..a.args.len() {
        paths.push(a.path(i)?);
    }
    let (Some(doc), Some(mode), Some(pattern), Some(paths)) = (
        doc,
        mode,
        pattern,
        paths.into_iter().collect::<Option<Vec<_>>>(),
    ) else {
        return Ok(Value::Null);
    };
    let one = one_or_all(a.f, &mode)?;
    let escape = match escape.as_deref() {
        None | Some([]) => b'\\',
        Some([c]) => *c,
        Some(_) => {
            return Err(Error::new(
                Code::WrongArguments,
                "Incorrect arguments to ESCAPE",
            ))
        }
    };
    let matches = |s: &str| crate::expr::like(s.as_bytes(), &pattern, escape);
    let chosen: Vec<*const Json> = paths
        .iter()
        .flat_map(|p| p.find(&doc))
        .map(|v| v as *const Json)
        .collect();
    let selected = |v: &Json| chosen.contains(&(v as *const Json));
    let mut s = ops::Search {
        matches: &matches,
        selected: if paths.is_empty() {
            None
        } else {
            Some(&selected)
        },
        one,
        found: Vec::new(),
    };
    s.walk(&doc, &mut Vec::new(), false);
    let mut found: Vec<Json> = s.found.into_iter().map(Json::Str).collect();
    match found.len() {
        0 => Ok(Value::Null),
        1 => a.finish(found.remove(0)),
        _ => a.finish(Json::Array(found)),
    }
}

fn member_of(a: &mut Args) -> Result<Value, Error> {
    let (kind, v) = a.raw(0)?;
    if v.is_null() {
        return Ok(Value::Null);
    }
    let value = a.convert(0, kind, v)?;
    let Some(doc) = a.doc(1)? else {
        return Ok(Value::Null);
    };
    let eq = |x: &Json| super::compare(x, &value).is_eq();
    Ok(bool_value(match &doc {
        Json::Array(items) => items.iter().any(eq),
        other => eq(other),
    }))
}

fn compare(a: &mut Args) -> Result<Value, Error> {
    let mut sides = Vec::with_capacity(2);
    for i in 0..2 {
        let (kind, v) = a.raw(i)?;
        if v.is_null() {
            return Ok(Value::Null);
        }
        sides.push(a.convert(i, kind, v)?);
    }
    Ok(Value::Int(super::compare(&sides[0], &sides[1]) as i64))
}
