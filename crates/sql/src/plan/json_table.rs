//! Binding JSON_TABLE: its document expression over the FROM items to its
//! left (bound by `lateral.rs` with them as the enclosing row), its paths
//! parsed once, its columns laid out in written order (nested ones in
//! place). `exec/json_table.rs` produces the rows.

use super::{column_meta, Binder};
use crate::expr::json::parse::parse;
use crate::expr::json::path::Path;
use crate::expr::json::Json;
use crate::expr::BExpr;
use crate::parser::{JsonTable, JtColumn, JtOn};
use crate::plan::{QueryBody, QueryPlan};
use lockstep_types::error::Code;
use lockstep_types::result::Column;
use lockstep_types::{DataType, Error};

type Result<T> = std::result::Result<T, Error>;

#[derive(Debug)]
pub struct JsonTablePlan {
    /// The document, over the enclosing row (the items to its left).
    pub expr: BExpr,
    pub path: Path,
    pub columns: Vec<JtCol>,
    pub width: usize,
    pub alias: String,
}

/// One column (or nested column list) at its place in the row.
#[derive(Debug)]
pub enum JtCol {
    Ordinality(usize),
    Value(ValueCol),
    Exists {
        slot: usize,
        ty: DataType,
        path: Path,
    },
    Nested {
        path: Path,
        columns: Vec<JtCol>,
        /// The row positions its columns fill, [start, end).
        slots: (usize, usize),
    },
}

#[derive(Debug)]
pub struct ValueCol {
    pub slot: usize,
    pub name: String,
    /// The JSON_TABLE's alias, for its errors.
    pub table: String,
    pub ty: DataType,
    pub path: Path,
    pub on_empty: OnAnswer,
    pub on_error: OnAnswer,
}

#[derive(Debug)]
pub enum OnAnswer {
    Null,
    Error,
    Default(Json),
}

impl Binder<'_> {
    /// The plan of JSON_TABLE `t`, bound inside the scope of its left items.
    pub(super) fn bind_json_table(&mut self, t: &JsonTable) -> Result<QueryPlan> {
        let expr = self.bind_expr(&t.expr, &Default::default())?;
        let mut out = Vec::new();
        let columns = lay_out(&t.columns, &t.alias, &mut out)?;
        for (i, c) in out.iter().enumerate() {
            if out[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(Error::new(
                    Code::DupFieldName,
                    format!("Duplicate column name '{}'", c.name),
                ));
            }
        }
        let plan = JsonTablePlan {
            expr,
            path: Path::parse(t.path.as_bytes())?,
            columns,
            width: out.len(),
            alias: t.alias.clone(),
        };
        Ok(QueryPlan {
            body: QueryBody::JsonTable(Box::new(plan)),
            columns: out.into(),
            correlated: self.correlated,
            keyed: None,
        })
    }
}

/// The columns of one COLUMNS list, their result metadata appended to
/// `out` in row order.
fn lay_out(cols: &[JtColumn], table: &str, out: &mut Vec<Column>) -> Result<Vec<JtCol>> {
    let mut bound = Vec::with_capacity(cols.len());
    for c in cols {
        let slot = out.len();
        bound.push(match c {
            JtColumn::Ordinality(name) => {
                out.push(column_meta(name, DataType::Int { unsigned: true }, true));
                JtCol::Ordinality(slot)
            }
            JtColumn::Path(c) => {
                out.push(column_meta(&c.name, c.ty, true));
                let path = Path::parse(c.path.as_bytes())?;
                if c.exists {
                    JtCol::Exists {
                        slot,
                        ty: c.ty,
                        path,
                    }
                } else {
                    JtCol::Value(ValueCol {
                        slot,
                        name: c.name.clone(),
                        table: table.to_string(),
                        ty: c.ty,
                        path,
                        on_empty: answer(&c.on_empty, &c.name)?,
                        on_error: answer(&c.on_error, &c.name)?,
                    })
                }
            }
            JtColumn::Nested { path, columns } => {
                let columns = lay_out(columns, table, out)?;
                JtCol::Nested {
                    path: Path::parse(path.as_bytes())?,
                    columns,
                    slots: (slot, out.len()),
                }
            }
        });
    }
    Ok(bound)
}

fn answer(on: &JtOn, column: &str) -> Result<OnAnswer> {
    Ok(match on {
        JtOn::Null => OnAnswer::Null,
        JtOn::Error => OnAnswer::Error,
        JtOn::Default(text) => {
            OnAnswer::Default(parse(text.as_bytes()).map_err(|e| e.in_column(column))?)
        }
    })
}
