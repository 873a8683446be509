//! An expression as MySQL 8 prints the ones it keeps (CHECK constraints,
//! generated columns) in SHOW CREATE TABLE and information_schema:
//! identifiers backquoted, every operation in parentheses (`(`a` > 0)`),
//! AND / OR chains flat, functions in lower case with their arguments
//! after a bare comma, text literals with their character set
//! (`_utf8mb4'x'`). Forms such expressions cannot hold, and calls the
//! parser rewrote (TRIM, EXTRACT, INTERVAL arithmetic, ...), give None:
//! the caller keeps the text as written.

use super::ast::{BinaryOp, CastType, Expr, UnaryOp};
use lockstep_types::Value;

/// `e` in MySQL's printed form, or None when it holds a form this
/// printer does not render.
pub fn mysql_text(e: &Expr) -> Option<String> {
    let mut out = String::new();
    write(e, &mut out)?;
    Some(out)
}

/// `name` backquoted, a backquote in it doubled.
fn ident(name: &str, out: &mut String) {
    out.push('`');
    out.push_str(&name.replace('`', "``"));
    out.push('`');
}

fn literal(v: &Value, out: &mut String) -> Option<()> {
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => {
            out.push_str(&v.to_string())
        }
        Value::Bytes(b) => {
            out.push_str("_utf8mb4'");
            for c in std::str::from_utf8(b).ok()?.chars() {
                match c {
                    '\'' => out.push_str("\\'"),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\0' => out.push_str("\\0"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        _ => return None,
    }
    Some(())
}

/// The operands of a chain of `op` (AND, OR), flattened as MySQL keeps
/// them.
fn chain<'a>(op: BinaryOp, e: &'a Expr, into: &mut Vec<&'a Expr>) {
    match e {
        Expr::Binary { op: o, left, right } if *o == op => {
            chain(op, left, into);
            chain(op, right, into);
        }
        e => into.push(e),
    }
}

fn list(items: &[Expr], out: &mut String) -> Option<()> {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(x, out)?;
    }
    Some(())
}

/// Calls whose arguments the parser rewrote: printed as written instead.
fn rewritten_call(name: &str, args: &[Expr]) -> bool {
    let rewritten = matches!(
        name,
        "TRIM" | "EXTRACT" | "GET_FORMAT" | "POSITION" | "CHAR" | "TIMESTAMPDIFF" | "TIMESTAMPADD"
    );
    rewritten
        || name.starts_with("GROUP_CONCAT")
        || args.iter().any(|a| matches!(a, Expr::Interval { .. }))
}

fn cast_type(to: CastType) -> String {
    match to {
        CastType::Signed => "signed".into(),
        CastType::Unsigned => "unsigned".into(),
        CastType::Char => "char charset utf8mb4".into(),
        CastType::Binary => "char charset binary".into(),
        CastType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        CastType::Double => "double".into(),
        CastType::Date => "date".into(),
        CastType::DateTime { fsp: 0 } => "datetime".into(),
        CastType::DateTime { fsp } => format!("datetime({fsp})"),
        CastType::Time { fsp: 0 } => "time".into(),
        CastType::Time { fsp } => format!("time({fsp})"),
        CastType::Json => "json".into(),
    }
}

fn write(e: &Expr, out: &mut String) -> Option<()> {
    match e {
        Expr::Literal(v) => literal(v, out)?,
        Expr::Column { table, name } => {
            if let Some(t) = table {
                ident(t, out);
                out.push('.');
            }
            ident(name, out);
        }
        Expr::Unary { op, expr } => match op {
            UnaryOp::Plus => write(expr, out)?,
            UnaryOp::Minus | UnaryOp::BitNot => {
                out.push_str(if *op == UnaryOp::Minus { "-(" } else { "~(" });
                write(expr, out)?;
                out.push(')');
            }
            UnaryOp::Not => {
                out.push_str("(not(");
                write(expr, out)?;
                out.push_str("))");
            }
        },
        Expr::Binary { op, left, right } => {
            let mut items = Vec::new();
            match op {
                BinaryOp::And | BinaryOp::Or => chain(*op, e, &mut items),
                _ => items.extend([&**left, &**right]),
            }
            out.push('(');
            for (i, x) in items.into_iter().enumerate() {
                if i > 0 {
                    // MySQL prints the word operators in lower case.
                    out.push_str(&format!(" {} ", op.symbol().to_ascii_lowercase()));
                }
                write(x, out)?;
            }
            out.push(')');
        }
        Expr::IsNull { expr, negated } => {
            out.push('(');
            write(expr, out)?;
            out.push_str(if *negated {
                " is not null)"
            } else {
                " is null)"
            });
        }
        Expr::IsBool {
            expr,
            value,
            negated,
        } => {
            out.push('(');
            write(expr, out)?;
            out.push_str(if *negated { " is not " } else { " is " });
            out.push_str(if *value { "true)" } else { "false)" });
        }
        Expr::InList {
            expr,
            list: items,
            negated,
        } => {
            out.push('(');
            write(expr, out)?;
            out.push_str(if *negated { " not in (" } else { " in (" });
            list(items, out)?;
            out.push_str("))");
        }
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => {
            out.push('(');
            write(expr, out)?;
            out.push_str(if *negated {
                " not between "
            } else {
                " between "
            });
            write(low, out)?;
            out.push_str(" and ");
            write(high, out)?;
            out.push(')');
        }
        Expr::Like {
            expr,
            pattern,
            escape: None,
            negated,
        } => {
            out.push_str(if *negated { "(not((" } else { "(" });
            write(expr, out)?;
            out.push_str(" like ");
            write(pattern, out)?;
            out.push_str(if *negated { ")))" } else { ")" });
        }
        Expr::Function {
            name,
            args,
            distinct: false,
            star: false,
            database: None,
            ..
        } if !rewritten_call(name, args) => {
            out.push_str(&name.to_ascii_lowercase());
            out.push('(');
            list(args, out)?;
            out.push(')');
        }
        Expr::Case {
            operand,
            branches,
            else_result,
        } => {
            out.push_str("(case");
            if let Some(x) = operand {
                out.push(' ');
                write(x, out)?;
            }
            for (when, then) in branches {
                out.push_str(" when ");
                write(when, out)?;
                out.push_str(" then ");
                write(then, out)?;
            }
            if let Some(x) = else_result {
                out.push_str(" else ");
                write(x, out)?;
            }
            out.push_str(" end)");
        }
        Expr::Cast { expr, to } => {
            out.push_str("cast(");
            write(expr, out)?;
            out.push_str(" as ");
            out.push_str(&cast_type(*to));
            out.push(')');
        }
        _ => return None,
    }
    Some(())
}
