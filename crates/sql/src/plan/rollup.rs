//! GROUP BY ... WITH ROLLUP in the binder: the aggregate row carries one
//! more value, the rollup level of the row (how many GROUP BY values it
//! keeps: all of them for a group, fewer for a super-aggregate row), which
//! GROUPING() reads.

use super::{AggContext, Binder};
use crate::expr::BExpr;
use crate::parser::{BinaryOp, Expr};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

type Result<T> = std::result::Result<T, Error>;

/// Reserves the level's slot in the aggregate row; returns the slot.
pub(super) fn reserve_level(ctx: &mut AggContext) -> usize {
    let slot = super::window::reserve_slot(ctx, (DataType::BigInt { unsigned: false }, false));
    ctx.rollup_level = Some(slot);
    slot
}

impl Binder<'_> {
    /// Which GROUP BY expression `e` is: written the same, or the same
    /// column under another spelling (`t.a` for `a`).
    fn group_position(
        &mut self,
        e: &Expr,
        scope: &super::Scope,
        ctx: &AggContext,
    ) -> Option<usize> {
        if let Some(i) = ctx.group_ast.iter().position(|g| g == e) {
            return Some(i);
        }
        let bound = self.bind_expr(e, scope).ok()?;
        let BExpr::Column(c) = super::bind::unwrapped(&bound) else {
            return None;
        };
        ctx.group_bound
            .iter()
            .position(|g| matches!(super::bind::unwrapped(g), BExpr::Column(x) if x == c))
    }

    /// GROUPING(e1, ..): per argument (the last the lowest bit), 1 where the
    /// row rolls that GROUP BY expression up.
    pub(super) fn grouping(
        &mut self,
        args: &[Expr],
        scope: &super::Scope,
        ctx: &AggContext,
    ) -> Result<BExpr> {
        let Some(level) = ctx.rollup_level else {
            return Err(Error::new(
                Code::InvalidGroupFuncUse,
                "Invalid use of group function",
            ));
        };
        if args.is_empty() {
            return Err(Error::parse("GROUPING()"));
        }
        let mut out: Option<BExpr> = None;
        for (k, a) in args.iter().enumerate() {
            let Some(i) = self.group_position(a, scope, ctx) else {
                return Err(Error::new(
                    Code::FieldInGroupingNotGroupBy,
                    format!(
                        "Argument #{} of GROUPING function is not in GROUP BY",
                        k + 1
                    ),
                ));
            };
            // Rolled up where the level keeps i values or fewer.
            let bit = BExpr::Binary(
                BinaryOp::LtEq,
                Box::new(BExpr::Column(level)),
                Box::new(BExpr::Literal(Value::Int(i as i64))),
            );
            out = Some(match out {
                None => bit,
                Some(prev) => BExpr::Binary(
                    BinaryOp::Plus,
                    Box::new(BExpr::Binary(
                        BinaryOp::Multiply,
                        Box::new(prev),
                        Box::new(BExpr::Literal(Value::Int(2))),
                    )),
                    Box::new(bit),
                ),
            });
        }
        Ok(out.expect("at least one argument"))
    }
}
