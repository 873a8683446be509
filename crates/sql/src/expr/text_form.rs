//! The text a typed value converts to where a string is wanted (CONCAT,
//! CAST AS CHAR, the string functions). A `Value::DateTime` does not
//! carry its precision and a FLOAT is held as a double, so the binder,
//! which knows the argument's type, wraps the argument in
//! `Func::TextForm`: DATETIME(3) gives exactly 3 fractional digits
//! ('2024-01-02 03:04:05.120'), a FLOAT its shortest text ('1.1').

use super::{BExpr, Func};
use crate::parser::CastType;
use lockstep_types::value::format_float;
use lockstep_types::{DataType, Value};

/// How a value of a known type prints as text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextForm {
    /// DATETIME(n) / TIMESTAMP(n): n fractional digits.
    Temporal(u8),
    /// FLOAT: at most 6 significant digits of its single-precision value.
    Float,
}

impl TextForm {
    /// The form a value of `ty` needs, when its plain text differs.
    fn of(ty: DataType) -> Option<TextForm> {
        match ty {
            DataType::DateTime { fsp } | DataType::Timestamp { fsp } => {
                Some(TextForm::Temporal(fsp.min(6)))
            }
            DataType::Float => Some(TextForm::Float),
            _ => None,
        }
    }

    /// The result's type: a VARCHAR as long as the longest text.
    pub fn result_type(self) -> DataType {
        let len = match self {
            TextForm::Temporal(0) => 19,
            TextForm::Temporal(fsp) => 20 + fsp as u32,
            TextForm::Float => 12,
        };
        DataType::VarChar { len }
    }
}

/// The text type a value of `ty` becomes where its text form differs
/// from its plain text (None: it does not).
pub fn result_type_of(ty: DataType) -> Option<DataType> {
    TextForm::of(ty).map(TextForm::result_type)
}

/// Evaluates `Func::TextForm`: values of other kinds (a DATE, text that
/// already is text, NULL) pass through.
pub fn apply(form: TextForm, v: Value) -> Value {
    match (form, v) {
        (TextForm::Temporal(fsp), Value::DateTime(dt)) => Value::Bytes(dt.format(fsp).into_bytes()),
        (TextForm::Float, Value::Double(d)) => Value::Bytes(format_float(d).into_bytes()),
        (_, v) => v,
    }
}

/// Wraps `e` (of type `ty`) so that it converts to text in its type's
/// form; other expressions are returned as they are.
pub fn wrap(e: BExpr, ty: DataType) -> BExpr {
    match TextForm::of(ty) {
        Some(form) if !matches!(e, BExpr::Func(Func::TextForm(_), _)) => {
            BExpr::Func(Func::TextForm(form), vec![e])
        }
        _ => e,
    }
}

/// Whether argument `i` of `f` is read as text (so a DATETIME(n) or
/// FLOAT there must arrive in its text form). Number arguments (positions,
/// lengths, counts) are not.
pub fn is_text_param(f: Func, i: usize) -> bool {
    use super::strings::StrFn;
    match f {
        Func::Concat
        | Func::ConcatWs
        | Func::Length
        | Func::CharLength
        | Func::Lower
        | Func::Upper
        | Func::Trim
        | Func::Ltrim
        | Func::Rtrim
        | Func::Replace
        | Func::Instr
        | Func::Sha1 => true,
        Func::Substring | Func::Left | Func::Right | Func::Repeat | Func::Sha2 => i == 0,
        Func::Lpad | Func::Rpad => i != 1,
        Func::SubstringIndex => i < 2,
        Func::Regexp(_) => i < 2,
        Func::Str(s) => match s {
            StrFn::Ascii
            | StrFn::Ord
            | StrFn::Reverse
            | StrFn::Position
            | StrFn::FindInSet
            | StrFn::Strcmp
            | StrFn::Md5
            | StrFn::Crc32
            | StrFn::ToBase64
            | StrFn::Quote
            | StrFn::Soundex
            | StrFn::BitLength => true,
            StrFn::Locate => i < 2,
            StrFn::Insert => i == 0 || i == 3,
            _ => false,
        },
        _ => false,
    }
}

/// A function's arguments with their text forms applied where `f` reads
/// text; `type_of` gives an argument's type.
pub fn text_args(f: Func, args: Vec<BExpr>, type_of: &dyn Fn(&BExpr) -> DataType) -> Vec<BExpr> {
    args.into_iter()
        .enumerate()
        .map(|(i, a)| match is_text_param(f, i) {
            true => {
                let ty = type_of(&a);
                wrap(a, ty)
            }
            false => a,
        })
        .collect()
}

/// CAST(e AS CHAR / BINARY) reads `e` as text.
pub fn cast_operand(e: BExpr, to: CastType, ty: DataType) -> BExpr {
    match to {
        CastType::Char | CastType::Binary => wrap(e, ty),
        _ => e,
    }
}

/// A value of type `from` about to be stored in a column of type `to`:
/// a text column gets it in its type's text form (INSERT ... SELECT of a
/// DATETIME(3) into a VARCHAR keeps 3 digits).
pub fn for_column(v: Value, from: DataType, to: DataType) -> Value {
    match TextForm::of(from) {
        Some(form) if to.is_string() && to.members().is_none() => apply(form, v),
        _ => v,
    }
}

/// `e` (of type `from`) as an expression assigned to a column of type
/// `to`: wrapped into its text form when the column holds text.
pub fn assigned(e: BExpr, from: DataType, to: DataType) -> BExpr {
    match to.is_string() && to.members().is_none() {
        true => wrap(e, from),
        false => e,
    }
}
