//! An aggregate call in a grouped block (COUNT, SUM, GROUP_CONCAT, ...):
//! which function, its bound argument and its result type. The call is
//! kept in the block's `AggContext` and read back as a column after the
//! group keys.

use super::{avg_type, group_concat, infer, is_aggregate_name, sum_type, variance_func};
use super::{AggContext, Binder, Result, Scope};
use crate::expr::{text_form, BExpr};
use crate::parser::Expr;
use crate::plan::enumset;
use crate::plan::{compares_folded, AggCall, AggFunc};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

impl Binder<'_> {
    /// Binds `name(args)` once into `ctx`; the result is the column the
    /// grouped row holds its value in.
    pub(super) fn aggregate_call(
        &mut self,
        name: &str,
        args: &[Expr],
        distinct: bool,
        star: bool,
        scope: &Scope,
        ctx: &mut AggContext,
    ) -> Result<BExpr> {
        debug_assert!(is_aggregate_name(name));
        let func = aggregate_func(name, star);
        let ordered = match name {
            "GROUP_CONCAT_ORDERED" => Some(group_concat::split(args)?),
            _ => None,
        };
        let (separator, args) = match (name, args.split_first()) {
            ("GROUP_CONCAT_SEPARATOR", Some((Expr::Literal(Value::Bytes(sep)), rest))) => {
                (sep.clone(), rest)
            }
            _ => match &ordered {
                Some(o) => (o.separator.clone(), &o.args[..]),
                None => (b",".to_vec(), args),
            },
        };
        let order = ordered.as_ref().map(|o| o.desc.clone()).unwrap_or_default();
        let arg = match star {
            true => None,
            false => self.aggregate_arg(func, name, args, distinct, order.len(), scope)?,
        };
        let arg = enumset::aggregate_arg(func, arg, &scope.types);
        let arg_ty = arg
            .as_ref()
            .map(|a| infer(a, &scope.types))
            .unwrap_or((DataType::BigInt { unsigned: false }, false));
        let text = match &arg {
            Some(BExpr::Row(items)) => items
                .iter()
                .map(|i| compares_folded(infer(i, &scope.types).0))
                .collect(),
            Some(_) => vec![compares_folded(arg_ty.0)],
            None => Vec::new(),
        };
        ctx.calls.push(AggCall {
            func,
            arg,
            distinct,
            text,
            separator,
            order,
        });
        ctx.call_types.push(aggregate_type(func, arg_ty.0));
        Ok(BExpr::Column(ctx.group_ast.len() + ctx.calls.len() - 1))
    }

    /// The argument of an aggregate, bound over the source row: one
    /// expression, or a row of them (`COUNT(DISTINCT a, b)`, GROUP_CONCAT's
    /// values followed by its `nkeys` ORDER BY keys).
    fn aggregate_arg(
        &mut self,
        func: AggFunc,
        name: &str,
        args: &[Expr],
        distinct: bool,
        nkeys: usize,
        scope: &Scope,
    ) -> Result<Option<BExpr>> {
        let mut bound: Vec<BExpr> = args
            .iter()
            .map(|a| self.bind_expr(a, scope))
            .collect::<Result<_>>()?;
        let json_args = match func {
            AggFunc::JsonArrayAgg => Some(1),
            AggFunc::JsonObjectAgg => Some(2),
            _ => None,
        };
        if let Some(n) = json_args {
            if bound.len() != n || distinct {
                return Err(Error::new(
                    Code::WrongParamcountToNativeFct,
                    format!("Incorrect parameter count in the call to native function '{name}'"),
                ));
            }
            bound = bound
                .into_iter()
                .map(|a| crate::expr::json::bind::mark(a, &scope.types))
                .collect();
        }
        let values = bound.len() - nkeys;
        if matches!(func, AggFunc::GroupConcat) {
            for a in &mut bound[..values] {
                let b = std::mem::replace(a, BExpr::Literal(Value::Null));
                let ty = infer(&b, &scope.types).0;
                *a = text_form::wrap(b, ty);
            }
        }
        for k in &mut bound[values..] {
            let b = std::mem::replace(k, BExpr::Literal(Value::Null));
            *k = group_concat::sort_key(b, &scope.types);
        }
        match bound.len() {
            0 => Err(Error::parse(format!("{name}()"))),
            1 => Ok(bound.into_iter().next()),
            // COUNT(DISTINCT a, b) and GROUP_CONCAT(a, b): a row value.
            _ => Ok(Some(BExpr::Row(bound))),
        }
    }
}

/// The aggregate a name calls; `star` is `COUNT(*)`.
fn aggregate_func(name: &str, star: bool) -> AggFunc {
    match (name, star) {
        ("COUNT", true) => AggFunc::CountStar,
        ("COUNT", false) => AggFunc::Count,
        ("SUM", _) => AggFunc::Sum,
        ("AVG", _) => AggFunc::Avg,
        ("MIN", _) => AggFunc::Min,
        ("MAX", _) => AggFunc::Max,
        ("GROUP_CONCAT" | "GROUP_CONCAT_SEPARATOR" | "GROUP_CONCAT_ORDERED", _) => {
            AggFunc::GroupConcat
        }
        ("BIT_AND", _) => AggFunc::BitAnd,
        ("BIT_OR", _) => AggFunc::BitOr,
        ("BIT_XOR", _) => AggFunc::BitXor,
        ("JSON_ARRAYAGG", _) => AggFunc::JsonArrayAgg,
        ("JSON_OBJECTAGG", _) => AggFunc::JsonObjectAgg,
        (other, _) => variance_func(other).unwrap_or(AggFunc::AnyValue),
    }
}

/// The result type of `func` over an argument of type `arg`, with its
/// nullability (COUNT and the BIT_ functions never give NULL).
fn aggregate_type(func: AggFunc, arg: DataType) -> (DataType, bool) {
    match func {
        AggFunc::CountStar | AggFunc::Count => (DataType::BigInt { unsigned: false }, false),
        AggFunc::Sum => (sum_type(arg), true),
        AggFunc::Avg => (avg_type(arg), true),
        AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => (arg, true),
        AggFunc::GroupConcat => (DataType::Text { max_len: 65535 }, true),
        AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => (DataType::Json, true),
        AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => {
            (DataType::BigInt { unsigned: true }, false)
        }
        AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
            (DataType::Double, true)
        }
    }
}
