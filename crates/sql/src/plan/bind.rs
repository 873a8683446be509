//! The binder: resolves names in the AST against the catalog and the
//! query's scopes, and builds executable plans, choosing access paths
//! (point, range, index-order or full scans) from the WHERE and ON
//! conditions.

pub use crate::expr::infer::{infer, literal_type, merge_types};
use crate::expr::json::funcs::JsonFn;
use crate::expr::{text_form, BExpr, Func, SubqueryRef};
use crate::parser::{
    self as ast, BinaryOp, Expr, JoinCondition, JoinKind, LockClause, TableRef, VarScope,
};
use crate::plan::antijoin;
use crate::plan::group_check::{self, Determined};
use crate::plan::index_hints;
use crate::plan::selectivity::Known;
use crate::plan::*;
use lockstep_engine::catalog::Catalog;
use lockstep_engine::LockMode;
use lockstep_tables::{Table, TableDef};
use lockstep_types::error::Code;
use lockstep_types::result::Column;
use lockstep_types::{DataType, Error, Value};
use std::sync::Arc;

type Result<T> = std::result::Result<T, Error>;

#[path = "bind_aggregate.rs"]
mod aggregate;
#[path = "group_concat.rs"]
mod group_concat;
#[path = "json_table.rs"]
pub mod json_table;
#[path = "lateral.rs"]
pub mod lateral;
#[path = "bind_operators.rs"]
mod operators;
#[path = "recursive.rs"]
mod recursive;
#[path = "rollup.rs"]
mod rollup;
#[path = "split.rs"]
pub mod split;
#[path = "view.rs"]
mod view;
#[path = "view_filter.rs"]
pub(crate) mod view_filter;
#[path = "window.rs"]
pub mod window;
pub use view::{view_invalid, view_query, DefinerRead};

/// One column visible to name resolution.
#[derive(Clone, Debug)]
pub struct ScopeColumn {
    pub qualifier: String,
    pub name: String,
    pub index: usize,
    pub ty: DataType,
    pub nullable: bool,
    pub org_table: String,
    pub database: String,
    /// Key and AUTO_INCREMENT flags of a base-table column (column_flags).
    pub flags: u16,
    /// A base-table text column's collation (0: utf8mb4_0900_ai_ci).
    pub collation: u16,
    /// Merged into its twin by USING or NATURAL: reachable only by its
    /// qualified name and by `t.*`.
    pub merged: bool,
    /// A base-table TIMESTAMP column: the row holds UTC, and a reference
    /// reads it in the session time zone (`Func::FromUtc`).
    pub stored_utc: bool,
}

fn is_timestamp(ty: DataType) -> bool {
    matches!(ty, DataType::Timestamp { .. })
}

/// A column reference as expressions read it: a stored TIMESTAMP (UTC)
/// in the session time zone.
pub(crate) fn session_time(e: BExpr, stored_utc: bool) -> BExpr {
    match stored_utc {
        true => BExpr::Func(Func::FromUtc, vec![e]),
        false => e,
    }
}

/// The column a condition or sort key names, seen through what the binder
/// wraps around it: collation folding and the session time zone
/// (both keep the order and equality of index keys).
pub(crate) fn unwrapped(e: &BExpr) -> &BExpr {
    match e {
        BExpr::Func(Func::FoldCase | Func::FromUtc, args) if args.len() == 1 => unwrapped(&args[0]),
        e => e,
    }
}

/// The column-definition flags MySQL derives from a table's keys: every
/// primary key part is PRI_KEY, the first part of another key UNIQUE_KEY
/// (a one-column unique key) or MULTIPLE_KEY, any key part PART_KEY.
pub fn key_flags(def: &TableDef, column: usize) -> u16 {
    use lockstep_types::result::column_flags::*;
    let mut flags = 0;
    if def.columns.get(column).is_some_and(|c| c.auto_increment) {
        flags |= AUTO_INCREMENT_FLAG;
    }
    for (i, index) in def.indexes.iter().enumerate() {
        let Some(pos) = index.columns.iter().position(|&c| c == column) else {
            continue;
        };
        flags |= PART_KEY_FLAG;
        if i == lockstep_tables::schema::PRIMARY && def.hidden_row_id.is_none() {
            flags |= PRI_KEY_FLAG;
        } else if pos == 0 && index.unique && index.columns.len() == 1 {
            flags |= UNIQUE_KEY_FLAG;
        } else if pos == 0 {
            flags |= MULTIPLE_KEY_FLAG;
        }
    }
    flags
}

#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub columns: Vec<ScopeColumn>,
    /// Width of the combined row (hidden columns included).
    pub width: usize,
    /// Types of every row position.
    pub types: Vec<(DataType, bool)>,
}

impl Scope {
    fn resolve(&self, table: Option<&str>, name: &str) -> Result<Option<&ScopeColumn>> {
        let mut found: Option<&ScopeColumn> = None;
        for c in &self.columns {
            if !c.name.eq_ignore_ascii_case(name) || (c.merged && table.is_none()) {
                continue;
            }
            if let Some(t) = table {
                // The server's own schemas name their tables in any case.
                let any_case = matches!(
                    c.database.as_str(),
                    "information_schema" | "performance_schema"
                ) && c.qualifier.eq_ignore_ascii_case(t);
                if c.qualifier != t && !any_case {
                    continue;
                }
            }
            if let Some(prev) = found {
                if prev.index != c.index {
                    return Err(Error::new(
                        Code::NonUniq,
                        format!("Column '{name}' in field list is ambiguous"),
                    ));
                }
            }
            found = Some(c);
        }
        Ok(found)
    }
}

impl AggContext {
    /// Types of the aggregate row: the GROUP BY values, then the calls.
    fn row_types(&self) -> Vec<(DataType, bool)> {
        let mut types = self.group_types.clone();
        types.extend(self.call_types.iter().copied());
        types
    }
}

/// Aggregation context while binding the SELECT list, HAVING and ORDER BY
/// of an aggregate query.
#[derive(Default)]
struct AggContext {
    group_ast: Vec<Expr>,
    group_bound: Vec<BExpr>,
    group_types: Vec<(DataType, bool)>,
    calls: Vec<AggCall>,
    call_types: Vec<(DataType, bool)>,
    /// WITH ROLLUP: the slot of the row's rollup level (`rollup.rs`).
    rollup_level: Option<usize>,
    /// Under ONLY_FULL_GROUP_BY: the columns the GROUP BY determines.
    determined: Option<crate::plan::group_check::Determined>,
    /// The clause and expression number being bound, for its errors.
    place: (&'static str, usize),
}

pub struct Binder<'a> {
    pub catalog: &'a Catalog,
    pub database: Option<String>,
    /// Enclosing scopes, innermost last.
    outer: Vec<Scope>,
    /// Set when an expression referred to an enclosing scope.
    correlated: bool,
    /// Every base table a FROM clause named (subqueries and derived tables
    /// included), each once: what the statement reads, for privilege
    /// checks and metadata locks.
    pub reads: Vec<Arc<Table>>,
    /// Base tables as the statement names them (alias, else name), views'
    /// insides excepted: LOCK TABLES matches a use by this name (1100).
    pub refs: Vec<(Arc<Table>, String)>,
    /// The session's temporary tables, which hide permanent ones of the
    /// same name.
    temporary: Option<&'a TempTables>,
    /// Common table expressions in scope (WITH), innermost last.
    ctes: Vec<ast::Cte>,
    /// Values bound at execute, bound in place of their placeholders so
    /// that result columns are typed after them (empty: placeholders stay).
    pub params: Vec<Value>,
    /// What the join order's estimates know: parameter values bound at
    /// EXECUTE (the placeholders stay in the plan), the session's zone;
    /// and the estimates that waited for a parameter.
    pub known: Known,
    /// The clause being bound, as error 1054 names it ("field list",
    /// "where clause", ...).
    clause: &'static str,
    /// Set while an operand of a grouped query's expression is bound by
    /// `bind_expr`: it binds against the aggregate row instead.
    agg: Option<AggContext>,
    /// Tables and views read under a DEFINER view's rights (checked
    /// against the definer), and the tables among them, to lock.
    pub definer_reads: Vec<DefinerRead>,
    pub view_tables: Vec<Arc<Table>>,
    /// The stored functions the statement calls (database, name), each
    /// once: the session locks the tables they use before it runs
    /// (`session::prelock`).
    pub called: std::cell::RefCell<Vec<(String, String)>>,
    /// The innermost SQL SECURITY DEFINER view being bound.
    definer_view: Option<Arc<lockstep_engine::ViewDef>>,
    /// sql_mode has ONLY_FULL_GROUP_BY (`group_check`).
    full_group_by: bool,
    /// Views being expanded, outermost first (recursion check).
    view_stack: Vec<(String, String)>,
    /// Recursive CTEs whose recursive blocks are being bound.
    working: Vec<recursive::Working>,
    /// The WHERE of the query whose FROM is being bound, when a view
    /// there may take conditions from it (view_filter).
    view_filter: Option<view_filter::Pushable>,
    /// A stored program's local variables (and a trigger's `new.col` /
    /// `old.col`): they resolve before columns, as in MySQL.
    pub locals: Vec<(String, Value)>,
    /// character_set_connection is binary: string literals are binary
    /// strings (bytes a text column reads in its own character set).
    pub binary_connection: bool,
    /// The session's user variables, to type `SELECT @v` (user_var_type.rs).
    pub user_vars: Option<&'a std::collections::HashMap<String, Value>>,
    /// The query block (by address) whose WHERE loses its key equalities
    /// into `stripped` while it is planned keyed (`semijoin`).
    strip_for: Option<usize>,
    /// Trial bindings of flattened blocks under way (`semijoin_nest`).
    pub(crate) flatten_trials: usize,
    stripped: Vec<(BExpr, BExpr)>,
    /// Every reference to an enclosing scope: (its place in `outer`,
    /// column), for the keys of LATERAL derived tables (`lateral.rs`).
    outer_refs: Vec<(usize, usize)>,
    /// The derived tables and CTEs of the FROM being bound, by alias, as
    /// bound (`split.rs`).
    block_derived: Vec<split::DerivedQuery>,
    /// Derived tables the FROM being bound computes one key at a time.
    split: Vec<split::SplitAt>,
    /// The lateral form of the derived table just bound split (`split.rs`).
    split_bound: Option<lateral::Lateral>,
}

/// A session's temporary tables by (database, name).
pub type TempTables = std::collections::HashMap<(String, String), Arc<Table>>;

/// A select-list item: its expression (`*` expanded), its column name and
/// the scope column it shows as is, if any.
type SelectItem<'s> = (Expr, String, Option<&'s ScopeColumn>);

/// The select list with `*` and `t.*` expanded.
fn select_items<'s>(s: &ast::Select, scope: &'s Scope) -> Result<Vec<SelectItem<'s>>> {
    let mut items: Vec<SelectItem<'s>> = Vec::new();
    for item in &s.projection {
        match item {
            ast::SelectItem::Wildcard => {
                if scope.columns.is_empty() {
                    return Err(Error::new(Code::NoDb, "No tables used"));
                }
                let listed = |c: &&ScopeColumn| !c.merged && !semijoin_nest::hidden(&c.qualifier);
                for c in scope.columns.iter().filter(listed) {
                    items.push((
                        Expr::Column {
                            table: Some(c.qualifier.clone()),
                            name: c.name.clone(),
                        },
                        c.name.clone(),
                        Some(c),
                    ));
                }
            }
            ast::SelectItem::QualifiedWildcard(t) => {
                let cols: Vec<_> = scope.columns.iter().filter(|c| &c.qualifier == t).collect();
                if cols.is_empty() {
                    return Err(Error::new(Code::BadTable, format!("Unknown table '{t}'")));
                }
                for c in cols {
                    items.push((
                        Expr::Column {
                            table: Some(c.qualifier.clone()),
                            name: c.name.clone(),
                        },
                        c.name.clone(),
                        Some(c),
                    ));
                }
            }
            ast::SelectItem::Expr { expr, alias, name } => {
                let origin = match expr {
                    Expr::Column { table, name } => {
                        scope.resolve(table.as_deref(), name).ok().flatten()
                    }
                    _ => None,
                };
                items.push((
                    expr.clone(),
                    alias
                        .clone()
                        .or_else(|| name.clone())
                        .unwrap_or_else(|| display(expr)),
                    origin,
                ));
            }
        }
    }
    Ok(items)
}

/// What binding a query block's clauses reads: the block, its FROM's
/// scope, its expanded select list and its window calls.
struct Block<'a, 's> {
    s: &'a ast::Select,
    q: &'a ast::Query,
    scope: &'a Scope,
    items: &'a [SelectItem<'s>],
    wins: &'a window::Windows,
}

/// What a SELECT over one table (not a join) settled about its access.
struct OneTable {
    /// The WHERE left to check per row.
    filter: Option<BExpr>,
    ordered_by_index: bool,
    first_row_only: bool,
}

impl OneTable {
    /// A join: the join planner settled the access paths already.
    fn joined(filter: Option<BExpr>) -> OneTable {
        OneTable {
            filter,
            ordered_by_index: false,
            first_row_only: false,
        }
    }
}

/// A query block's bound select list, grouping, HAVING, ORDER BY and
/// windows.
struct Clauses {
    projection: Vec<BExpr>,
    columns: Vec<Column>,
    agg: Option<AggregatePlan>,
    having: Option<BExpr>,
    order: Vec<(BExpr, bool)>,
    window: Option<window::WindowPlan>,
}

pub fn is_aggregate_name(name: &str) -> bool {
    ast::window_aggregate(name)
        || matches!(
            name,
            "GROUP_CONCAT"
                | "GROUP_CONCAT_SEPARATOR"
                | "GROUP_CONCAT_ORDERED"
                | "ANY_VALUE"
                | "JSON_ARRAYAGG"
                | "JSON_OBJECTAGG"
        )
}

/// The STDDEV/VARIANCE family by name.
pub fn variance_func(name: &str) -> Option<AggFunc> {
    Some(match name {
        "STD" | "STDDEV" | "STDDEV_POP" => AggFunc::StdPop,
        "STDDEV_SAMP" => AggFunc::StdSamp,
        "VARIANCE" | "VAR_POP" => AggFunc::VarPop,
        "VAR_SAMP" => AggFunc::VarSamp,
        _ => return None,
    })
}

pub(crate) fn contains_aggregate(e: &Expr) -> bool {
    match e {
        Expr::Function { name, args, .. } => {
            is_aggregate_name(name) || args.iter().any(contains_aggregate)
        }
        Expr::Unary { expr, .. }
        | Expr::IsNull { expr, .. }
        | Expr::IsBool { expr, .. }
        | Expr::Cast { expr, .. } => contains_aggregate(expr),
        Expr::Binary { left, right, .. } => contains_aggregate(left) || contains_aggregate(right),
        Expr::InList { expr, list, .. } => {
            contains_aggregate(expr) || list.iter().any(contains_aggregate)
        }
        Expr::Between {
            expr, low, high, ..
        } => contains_aggregate(expr) || contains_aggregate(low) || contains_aggregate(high),
        Expr::Like { expr, pattern, .. } => contains_aggregate(expr) || contains_aggregate(pattern),
        Expr::Case {
            operand,
            branches,
            else_result,
        } => {
            operand.as_deref().is_some_and(contains_aggregate)
                || branches
                    .iter()
                    .any(|(a, b)| contains_aggregate(a) || contains_aggregate(b))
                || else_result.as_deref().is_some_and(contains_aggregate)
        }
        Expr::Row(items) => items.iter().any(contains_aggregate),
        _ => false,
    }
}

pub fn lock_mode(l: Option<LockClause>) -> Option<LockMode> {
    l.map(|l| match l {
        LockClause::Update => LockMode::Exclusive,
        LockClause::Share => LockMode::Shared,
    })
}

/// Display name of an expression, as MySQL names an unaliased column.
pub fn display(e: &Expr) -> String {
    match e {
        Expr::Literal(Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
        Expr::Literal(v) => v.to_string(),
        Expr::Column { name, .. } => name.clone(),
        Expr::Param(_) => "?".into(),
        Expr::UserVar(n) => format!("@{n}"),
        Expr::SystemVar { scope, name } => match scope {
            VarScope::Default => format!("@@{name}"),
            VarScope::Session => format!("@@session.{name}"),
            VarScope::Global => format!("@@global.{name}"),
        },
        Expr::Function {
            name,
            args,
            distinct,
            star,
            database,
            ..
        } => {
            let inner = if *star {
                "*".to_string()
            } else {
                args.iter().map(display).collect::<Vec<_>>().join(",")
            };
            let db = database.as_ref().map_or(String::new(), |d| format!("{d}."));
            format!(
                "{db}{}({}{})",
                name,
                if *distinct { "DISTINCT " } else { "" },
                inner
            )
        }
        Expr::Binary { op, left, right } => {
            format!("{} {} {}", display(left), op.symbol(), display(right))
        }
        Expr::Unary {
            op: ast::UnaryOp::Minus,
            expr,
        } => format!("-{}", display(expr)),
        Expr::Unary {
            op: ast::UnaryOp::Not,
            expr,
        } => format!("NOT {}", display(expr)),
        _ => "expr".into(),
    }
}

pub fn column_meta(name: &str, ty: DataType, nullable: bool) -> Column {
    Column {
        schema: String::new(),
        table: String::new(),
        org_table: String::new(),
        name: name.to_string(),
        org_name: String::new(),
        data_type: ty,
        nullable,
        flags: 0,
        collation: 0,
    }
}

impl<'a> Binder<'a> {
    pub fn new(catalog: &'a Catalog, database: Option<String>) -> Self {
        Binder {
            catalog,
            database,
            outer: Vec::new(),
            outer_refs: Vec::new(),
            block_derived: Vec::new(),
            split: Vec::new(),
            split_bound: None,
            correlated: false,
            reads: Vec::new(),
            refs: Vec::new(),
            temporary: None,
            ctes: Vec::new(),
            params: Vec::new(),
            known: Default::default(),
            clause: "field list",
            agg: None,
            definer_reads: Vec::new(),
            view_tables: Vec::new(),
            called: Default::default(),
            definer_view: None,
            full_group_by: false,
            view_stack: Vec::new(),
            working: Vec::new(),
            view_filter: None,
            locals: Vec::new(),
            binary_connection: false,
            user_vars: None,
            strip_for: None,
            flatten_trials: 0,
            stripped: Vec::new(),
        }
    }

    /// How many query blocks enclose the one being bound.
    pub(crate) fn outer_depth(&self) -> usize {
        self.outer.len()
    }

    /// Binds the subquery `q` (block `s`) in `scope` once more, its WHERE's
    /// key equalities taken out: the plan and the (inner, outer) key pairs.
    pub(crate) fn bind_stripped(
        &mut self,
        q: &ast::Query,
        s: &ast::Select,
        scope: Scope,
    ) -> (Option<QueryPlan>, Vec<(BExpr, BExpr)>) {
        let enclosing = std::mem::take(&mut self.stripped);
        self.outer.push(scope);
        let saved = std::mem::replace(&mut self.correlated, false);
        let prev = self.strip_for.replace(s as *const ast::Select as usize);
        let plan = self.bind_query(q).ok();
        self.strip_for = prev;
        self.outer.pop();
        self.correlated = saved;
        (plan, std::mem::replace(&mut self.stripped, enclosing))
    }

    /// Whether block `s` is being planned keyed (`semijoin`).
    pub(crate) fn is_stripping(&self, s: &ast::Select) -> bool {
        self.strip_for == Some(s as *const ast::Select as usize)
    }

    /// Block `s` bound as written (`semijoin_nest` binds a rewritten one).
    pub(crate) fn bind_select_flat(
        &mut self,
        s: &ast::Select,
        q: &ast::Query,
    ) -> Result<QueryPlan> {
        self.bind_select_clauses(s, q)
    }

    /// What binding a block adds to the binder, to undo a trial binding.
    pub(crate) fn mark(&self) -> [usize; 5] {
        let c = usize::from(self.correlated);
        let (r, d, v, o) = (
            self.reads.len(),
            self.definer_reads.len(),
            self.view_tables.len(),
            self.outer_refs.len(),
        );
        [r, d, v, o, c]
    }

    pub(crate) fn rewind(&mut self, [r, d, v, o, c]: [usize; 5]) {
        self.reads.truncate(r);
        self.definer_reads.truncate(d);
        self.view_tables.truncate(v);
        self.outer_refs.truncate(o);
        self.correlated = c != 0;
    }

    /// The base table `name` means, if it is one (not a view or CTE).
    pub(crate) fn base_table(&self, name: &ast::ObjectName) -> Option<Arc<Table>> {
        let cte = name.database.is_none() && self.ctes.iter().any(|c| c.name == name.name);
        (!cte).then(|| self.table(name).ok()).flatten()
    }

    /// The WHERE of block `s`, without its key equalities when it is being
    /// planned keyed; `before` says whether its FROM reads an enclosing row.
    fn strip_keys(
        &mut self,
        s: &ast::Select,
        filter: Option<BExpr>,
        before: bool,
    ) -> Option<BExpr> {
        if self.strip_for != Some(s as *const ast::Select as usize) {
            return filter;
        }
        let (rest, correlated) = crate::plan::semijoin::strip(filter, &mut self.stripped);
        self.correlated = before || correlated;
        rest
    }

    /// The value of a local variable (or NEW.col / OLD.col) the name means.
    fn local(&self, table: Option<&str>, name: &str) -> Option<Value> {
        if self.locals.is_empty() {
            return None;
        }
        let key = match table {
            Some(t) if t.eq_ignore_ascii_case("new") || t.eq_ignore_ascii_case("old") => {
                format!("{t}.{name}").to_lowercase()
            }
            Some(_) => return None,
            None => name.to_lowercase(),
        };
        let found = self.locals.iter().rev().find(|(n, _)| *n == key);
        found.map(|(_, v)| v.clone())
    }

    /// Names resolve to these temporary tables first.
    /// Checks grouped queries as sql_mode's ONLY_FULL_GROUP_BY asks.
    pub fn with_full_group_by(mut self, on: bool) -> Self {
        self.full_group_by = on;
        self
    }

    pub fn with_temporary(mut self, tables: &'a TempTables) -> Self {
        self.temporary = (!tables.is_empty()).then_some(tables);
        self
    }

    pub fn table(&self, name: &ast::ObjectName) -> Result<Arc<Table>> {
        let db = match &name.database {
            Some(d) => d.clone(),
            None => self.database.clone().ok_or_else(Error::no_db)?,
        };
        if let Some(temporary) = self.temporary {
            // The system schemas' tables, built for a query that reads
            // them, are named in any case (see session/infoschema.rs).
            let key = if lockstep_engine::catalog::is_system_schema(&db) {
                (db.to_ascii_lowercase(), name.name.to_ascii_uppercase())
            } else {
                (db.clone(), name.name.clone())
            };
            if let Some(t) = temporary.get(&key) {
                return Ok(t.clone());
            }
        }
        match self.catalog.table(&db, &name.name) {
            Some(t) => Ok(t),
            // Changing rows through a view is not built.
            None if self.catalog.view(&db, &name.name).is_some() => {
                Err(Error::unsupported("changing rows through a view"))
            }
            None => Err(Error::no_such_table(&db, &name.name)),
        }
    }

    // ---------- queries ----------

    pub fn bind_query(&mut self, q: &ast::Query) -> Result<QueryPlan> {
        if q.with.is_empty() {
            return self.bind_query_body(q);
        }
        let outer = self.ctes.len();
        self.ctes.extend(q.with.iter().cloned());
        let plan = self.bind_query_body(q);
        self.ctes.truncate(outer);
        plan
    }

    /// A common table expression named by an unqualified table name: bound
    /// as a derived table (its own query sees only the CTEs before it).
    fn bind_cte(
        &mut self,
        name: &ast::ObjectName,
        alias: &Option<String>,
        scope: &mut Scope,
        place: &mut Placement,
    ) -> Option<Result<Source>> {
        if name.database.is_some() {
            return None;
        }
        let alias_or_name = || alias.clone().unwrap_or_else(|| name.name.clone());
        if let Some((plan, columns)) = self.working_table(name) {
            return Some(self.derived(plan, alias_or_name(), &columns, scope, place));
        }
        let at = self.ctes.iter().rposition(|c| c.name == name.name)?;
        let later = self.ctes.split_off(at);
        let cte = &later[0];
        let alias = alias.clone().unwrap_or_else(|| name.name.clone());
        let plan = match self.bind_recursive(cte) {
            Some(plan) => plan,
            None => self.bind_pushed(&cte.query, &alias, &cte.columns),
        };
        let columns = cte.columns.clone();
        self.ctes.extend(later);
        Some(plan.and_then(|p| self.derived(Arc::new(p), alias, &columns, scope, place)))
    }

    /// A derived table's or CTE's query, read as `alias` (`columns`: its
    /// column list), with the conditions of the enclosing block it can
    /// take (view_filter.rs); the block's conditions are kept for its
    /// other tables.
    fn bind_pushed(
        &mut self,
        q: &ast::Query,
        alias: &str,
        columns: &[String],
    ) -> Result<QueryPlan> {
        let outer = self.view_filter.take();
        let pushed = outer
            .as_ref()
            .and_then(|p| view_filter::pushed(q, p, alias, columns));
        let q = pushed.as_ref().unwrap_or(q);
        self.note_derived(q, alias, columns);
        let plan = self.bind_derived_query(q, alias);
        self.view_filter = outer;
        plan
    }

    fn bind_query_body(&mut self, q: &ast::Query) -> Result<QueryPlan> {
        match &q.body {
            ast::QueryBody::Select(s) => self.bind_select(s, q),
            ast::QueryBody::Union {
                left,
                right,
                all,
                op,
            } => {
                let mut l = self.bind_query(left)?;
                let mut r = self.bind_query(right)?;
                if l.columns.len() != r.columns.len() {
                    return Err(Error::new(
                        Code::WrongArguments,
                        "The used SELECT statements have a different number of columns",
                    ));
                }
                let columns = super::set_columns::unify(&mut l, &mut r);
                let mut order = Vec::new();
                for item in &q.order_by {
                    let pos = match &item.expr {
                        Expr::Literal(Value::Int(n))
                            if *n >= 1 && (*n as usize) <= columns.len() =>
                        {
                            *n as usize - 1
                        }
                        Expr::Column { name, .. } => columns
                            .iter()
                            .position(|c| c.name.eq_ignore_ascii_case(name))
                            .ok_or_else(|| Error::bad_field(name, "order clause"))?,
                        _ => return Err(Error::unsupported("expressions in ORDER BY of a UNION")),
                    };
                    order.push((pos, item.desc));
                }
                let correlated = l.correlated || r.correlated;
                let (limit, offset) = self.bind_limit(q)?;
                Ok(QueryPlan {
                    body: QueryBody::Union {
                        left: Box::new(l),
                        right: Box::new(r),
                        all: *all,
                        op: *op,
                        order,
                        limit,
                        offset,
                    },
                    columns,
                    correlated,
                    keyed: None,
                })
            }
        }
    }

    fn bind_select(&mut self, s: &ast::Select, q: &ast::Query) -> Result<QueryPlan> {
        let outer_clause = self.clause;
        let anti = self.antijoined(s, q);
        let s = anti.as_ref().unwrap_or(s);
        if let Some(plan) = self.bind_flattened(s, q) {
            self.clause = outer_clause;
            return Ok(plan);
        }
        // The derived tables noted are this block's (split.rs).
        let derived = std::mem::take(&mut self.block_derived);
        let plan = self.bind_select_clauses(s, q);
        self.block_derived = derived;
        self.clause = outer_clause;
        plan
    }

    fn bind_select_clauses(&mut self, s: &ast::Select, q: &ast::Query) -> Result<QueryPlan> {
        let was_correlated = std::mem::replace(&mut self.correlated, false);
        let (scope, mut source, filter) = self.bind_planned_from(s)?;
        let joined = matches!(source, Source::Join { .. });
        let Clauses {
            projection,
            columns,
            agg,
            having,
            order,
            window,
        } = self.bind_clauses(s, q, &scope, &source, &filter)?;
        let lock = lock_mode(q.lock);
        let (limit, offset) = self.bind_limit(q)?;
        let one = match joined {
            true => OneTable::joined(filter),
            false => self.one_table(s, &mut source, filter, &scope, (&agg, &order)),
        };
        let correlated = self.correlated;
        self.correlated = was_correlated || correlated;
        if correlated && !joined && !one.ordered_by_index && !one.first_row_only {
            // Looked up by the enclosing row's values, not scanned per row.
            source = crate::plan::hash_join::correlated_lookup(source, &one.filter);
        }
        let mut select = SelectPlan {
            source,
            filter: one.filter,
            aggregate: agg,
            having,
            projection,
            order,
            ordered_by_index: one.ordered_by_index,
            first_row_only: one.first_row_only,
            window,
            distinct: s.distinct,
            text_columns: columns.iter().map(|c| c.data_type.is_string()).collect(),
            moves: Vec::new(),
            order_from: Vec::new(),
            limit,
            offset,
            lock,
        };
        crate::plan::prune::prune(&mut select);
        Ok(QueryPlan {
            body: QueryBody::Select(Box::new(select)),
            columns: columns.into(),
            correlated,
            keyed: None,
        })
    }

    /// FROM and WHERE bound; with several tables, their order and access
    /// paths are chosen now, before the select list binds against the row
    /// layout the order gives (binding FROM again takes the same pushed
    /// conditions).
    fn bind_planned_from(&mut self, s: &ast::Select) -> Result<(Scope, Source, Option<BExpr>)> {
        self.view_filter = view_filter::pushable_where(s);
        let from = self.bind_from(s, &mut Placement::default());
        let planned = match from {
            Ok((scope, source @ Source::Join { .. }, filter)) => {
                self.plan_joins(s, scope, source, filter)
            }
            other => other,
        };
        self.view_filter = None;
        planned
    }

    /// The select list, window calls, HAVING and ORDER BY, grouped or not.
    fn bind_clauses(
        &mut self,
        s: &ast::Select,
        q: &ast::Query,
        scope: &Scope,
        source: &Source,
        filter: &Option<BExpr>,
    ) -> Result<Clauses> {
        let items = select_items(s, scope)?;
        // Window calls are numbered here and bound around (window.rs).
        window::check_aliases(s, &items)?;
        let mut wins = window::Windows::default();
        let shown: Vec<Expr> = items.iter().map(|(e, _, _)| wins.extract(e)).collect();
        let mut order_exprs = Vec::new();
        for o in &q.order_by {
            order_exprs.push(wins.extract(&self.resolve_alias(&o.expr, &items)?));
        }
        wins.note_aliases(&items);

        let aggregate_query = !s.group_by.is_empty()
            || wins.has_aggregate()
            || items.iter().any(|(e, _, _)| contains_aggregate(e))
            || s.having.as_ref().is_some_and(contains_aggregate)
            || q.order_by.iter().any(|o| contains_aggregate(&o.expr));
        let blk = Block {
            s,
            q,
            scope,
            items: &items,
            wins: &wins,
        };
        match aggregate_query {
            true => self.bind_grouped(&blk, (source, filter), shown, order_exprs),
            false => self.bind_ungrouped(&blk, shown, order_exprs),
        }
    }

    /// One table's access path from the WHERE, whether an index gives the
    /// ORDER BY or MIN/MAX, and what is left of the WHERE to check per row.
    fn one_table(
        &mut self,
        s: &ast::Select,
        source: &mut Source,
        filter: Option<BExpr>,
        scope: &Scope,
        (agg, order): (&Option<AggregatePlan>, &[(BExpr, bool)]),
    ) -> OneTable {
        let conjuncts = self.one_table_access(source, &filter, scope);
        let mut ordered_by_index = false;
        if agg.is_none() && !s.distinct && !order.is_empty() {
            if let Source::Table(scan) = &mut *source {
                ordered_by_index = use_index_order(scan, order, &conjuncts);
            }
        }
        let first_row_only = match (agg, &mut *source) {
            (Some(a), Source::Table(scan)) => min_max_from_index(a, scan),
            _ => false,
        };
        // The WHERE applies to the table's rows as the scan meets them.
        let filter = match source {
            Source::Table(scan) => {
                let (filter, check) = take_implied(conjuncts, &scan.def, scan.offset, &scan.access);
                scan.range_check = check;
                filter
            }
            _ => conjoin(conjuncts),
        };
        OneTable {
            filter,
            ordered_by_index,
            first_row_only,
        }
    }

    /// The select list, HAVING and ORDER BY of a grouped query (GROUP BY
    /// or aggregates), bound over the group rows.
    fn bind_grouped(
        &mut self,
        blk: &Block<'_, '_>,
        (source, filter): (&Source, &Option<BExpr>),
        mut shown: Vec<Expr>,
        mut order_exprs: Vec<Expr>,
    ) -> Result<Clauses> {
        let mut ctx = self.bind_group_by(blk)?;
        if self.full_group_by {
            let width = blk.scope.types.len();
            let det = Determined::new(source, filter, &ctx.group_bound, width);
            ctx.determined = Some(det);
        }
        self.clause = "field list";
        let exprs = &mut [&mut shown, &mut order_exprs];
        let window =
            self.windows_over_groups(blk.wins, &blk.s.windows, blk.scope, &mut ctx, exprs)?;
        let mut projection = Vec::new();
        for (i, e) in shown.iter().enumerate() {
            ctx.place = ("SELECT list", i + 1);
            projection.push(self.bind_agg_expr(e, blk.scope, &mut ctx)?);
        }
        self.clause = "having clause";
        let mut having = None;
        if let Some(h) = &blk.s.having {
            let h = self.substitute_aliases(h, blk.items, &blk.s.group_by);
            ctx.place = ("HAVING clause", 1);
            having = Some(self.bind_agg_expr(&h, blk.scope, &mut ctx)?);
        }
        self.clause = "order clause";
        let mut order = Vec::new();
        for (i, (o, e)) in blk.q.order_by.iter().zip(&order_exprs).enumerate() {
            ctx.place = ("ORDER BY clause", i + 1);
            order.push((self.bind_agg_expr(e, blk.scope, &mut ctx)?, o.desc));
        }
        // Over the group rows: the group keys, then the aggregate results.
        let mut types = ctx.group_types.clone();
        types.extend(ctx.call_types.iter().cloned());
        let projection: Vec<BExpr> = projection
            .into_iter()
            .map(|p| collated(p, &types))
            .collect();
        let columns = blk
            .items
            .iter()
            .zip(&projection)
            .map(|((_, name, origin), p)| self.meta(name, p, &types, *origin))
            .collect();
        Ok(Clauses {
            projection,
            columns,
            having: having.map(|h| collated(h, &types)),
            order: order
                .into_iter()
                .map(|(e, d)| (group_concat::sort_key(e, &types), d))
                .collect(),
            agg: Some(AggregatePlan {
                group_text: ctx.group_types.iter().map(|t| t.0.is_string()).collect(),
                group_by: ctx.group_bound,
                calls: ctx.calls,
                rollup: ctx.rollup_level,
            }),
            window,
        })
    }

    /// GROUP BY's expressions, bound; the aggregate context starts from them.
    fn bind_group_by(&mut self, blk: &Block<'_, '_>) -> Result<AggContext> {
        let mut ctx = AggContext {
            group_ast: Vec::new(),
            group_bound: Vec::new(),
            group_types: Vec::new(),
            calls: Vec::new(),
            call_types: Vec::new(),
            rollup_level: None,
            determined: None,
            // Window definitions: not checked (0), as lenient as can be.
            place: ("", 0),
        };
        self.clause = "group statement";
        for g in &blk.s.group_by {
            // GROUP BY may name a select alias or position; a name
            // that is also a column of the FROM means the column.
            let from_column = matches!(g, Expr::Column { table: None, name }
                if blk.scope.resolve(None, name).is_ok_and(|c| c.is_some()));
            let g = match from_column {
                true => g.clone(),
                false => self.resolve_alias(g, blk.items)?,
            };
            let b = self.bind_expr(&g, blk.scope)?;
            ctx.group_types.push(infer(&b, &blk.scope.types));
            ctx.group_ast.push(g);
            ctx.group_bound.push(b);
        }
        if blk.s.rollup {
            rollup::reserve_level(&mut ctx);
        }
        Ok(ctx)
    }

    /// The select list, HAVING and ORDER BY of a query without grouping.
    fn bind_ungrouped(
        &mut self,
        blk: &Block<'_, '_>,
        mut shown: Vec<Expr>,
        mut order_exprs: Vec<Expr>,
    ) -> Result<Clauses> {
        let mut projection = Vec::new();
        let mut columns = Vec::new();
        let mut having = None;
        let mut order = Vec::new();
        self.clause = "field list";
        let mut types = blk.scope.types.clone();
        let exprs = &mut [&mut shown, &mut order_exprs];
        let window =
            self.windows_over_rows(blk.wins, &blk.s.windows, blk.scope, &mut types, exprs)?;
        for ((_, name, origin), e) in blk.items.iter().zip(&shown) {
            let b = collated(self.bind_expr(e, blk.scope)?, &types);
            let mut column = self.meta(name, &b, &types, *origin);
            // `SELECT ?` is typed after its bound value but may be NULL
            // on the next execute: MySQL 8.0.22+ sends it nullable.
            column.nullable |= matches!(e, Expr::Param(_));
            columns.push(column);
            projection.push(b);
        }
        self.clause = "having clause";
        if let Some(h) = &blk.s.having {
            let h = self.substitute_aliases(h, blk.items, &blk.s.group_by);
            having = Some(collated(self.bind_expr(&h, blk.scope)?, &blk.scope.types));
        }
        self.clause = "order clause";
        for (o, e) in blk.q.order_by.iter().zip(&order_exprs) {
            let b = self.bind_expr(e, blk.scope)?;
            order.push((group_concat::sort_key(b, &types), o.desc));
        }
        Ok(Clauses {
            projection,
            columns,
            agg: None,
            having,
            order,
            window,
        })
    }

    /// FROM and WHERE, with the tables at the offsets `place` gives.
    fn bind_from(
        &mut self,
        s: &ast::Select,
        place: &mut Placement,
    ) -> Result<(Scope, Source, Option<BExpr>)> {
        let mut scope = Scope::default();
        let mut sources = Vec::new();
        for item in &s.from {
            sources.push(self.bind_table_ref(item, &mut scope, place)?);
        }
        let source = sources
            .into_iter()
            .reduce(|left, right| Source::Join {
                left: Box::new(left),
                right: Box::new(right),
                kind: JoinKind::Inner,
                on: None,
                hash: None,
                not_exists: false,
            })
            .unwrap_or(Source::Dual);
        self.clause = "where clause";
        let before = self.correlated;
        let filter = s
            .selection
            .as_ref()
            .map(|e| self.bind_expr(e, &scope).map(|b| collated(b, &scope.types)))
            .transpose()?;
        let filter = self.strip_keys(s, filter, before);
        self.clause = "field list";
        Ok((scope, source, filter))
    }

    /// Orders the tables of a join and picks their access paths. Another
    /// order than the written one lays the tables out anew, so FROM and
    /// WHERE bind again with the tables at their new offsets.
    fn plan_joins(
        &mut self,
        s: &ast::Select,
        scope: Scope,
        source: Source,
        filter: Option<BExpr>,
    ) -> Result<(Scope, Source, Option<BExpr>)> {
        use crate::plan::join_order::{leaf_count, Joins, MAX_UNITS};
        if leaf_count(&source) > MAX_UNITS {
            return Ok(written_order_plan(scope, source, filter, &self.known));
        }
        let mut joins = Joins::new(source, filter, &scope.types);
        let candidates = self.split_candidates(&joins, &scope);
        joins.offer_splits(candidates.iter().map(|c| (c.unit, c.split)));
        let (order, taken) = joins.best_order(&self.known, s.straight_join);
        // Units taken the other way that are tables: hashed anti-joins,
        // by their position in the order.
        let hashed: Vec<usize> = order
            .iter()
            .enumerate()
            .filter(|(_, u)| taken.contains(u) && !candidates.iter().any(|c| c.unit == **u))
            .map(|(at, _)| at)
            .collect();
        if order.iter().enumerate().all(|(i, &u)| i == u) && hashed.len() == taken.len() {
            let (source, filter) = joins.build(&self.known, &hashed);
            return Ok((scope, source, filter));
        }
        let moved = joins.moved(&order);
        self.take_splits(candidates, &taken, &moved);
        let mut place = Placement {
            offsets: Some(joins.placement(&order)),
            next: 0,
        };
        let bound = self.bind_from(s, &mut place);
        self.split.clear();
        let (scope, source, filter) = bound?;
        let mut joins = Joins::new(source, filter, &scope.types);
        joins.reorder(&order);
        let (source, filter) = joins.build(&self.known, &hashed);
        Ok((scope, source, filter))
    }

    /// The access path of a lone table (or none, for a derived table or no
    /// FROM) from the WHERE; returns the WHERE's conjuncts.
    fn one_table_access(
        &mut self,
        source: &mut Source,
        filter: &Option<BExpr>,
        scope: &Scope,
    ) -> Vec<BExpr> {
        let conjuncts = filter.as_ref().map(split_conjuncts).unwrap_or_default();
        // Implied equalities between one table's own columns give no key.
        let prop = crate::plan::equalities::propagate(conjuncts, &scope.types);
        if let Source::Table(scan) = source {
            scan.access = best_access(scan, &prop.conjuncts, &self.known);
        }
        prop.conjuncts
    }

    /// LIMIT and OFFSET: constants or parameters.
    fn bind_limit(&mut self, q: &ast::Query) -> Result<(Option<BExpr>, Option<BExpr>)> {
        let empty = Scope::default();
        let limit = q
            .limit
            .as_ref()
            .map(|e| self.bind_expr(e, &empty))
            .transpose()?;
        let offset = q
            .offset
            .as_ref()
            .map(|e| self.bind_expr(e, &empty))
            .transpose()?;
        Ok((limit, offset))
    }

    /// ORDER BY / GROUP BY may name a select-list alias or position.
    fn resolve_alias(
        &self,
        e: &Expr,
        items: &[(Expr, String, Option<&ScopeColumn>)],
    ) -> Result<Expr> {
        match e {
            Expr::Literal(Value::Int(n)) => {
                let n = *n;
                if n >= 1 && (n as usize) <= items.len() {
                    Ok(items[n as usize - 1].0.clone())
                } else {
                    Err(Error::bad_field(&n.to_string(), "order clause"))
                }
            }
            Expr::Column { table: None, name } => {
                match items.iter().find(|(ex, alias, _)| alias.eq_ignore_ascii_case(name) && !matches!(ex, Expr::Column { name: n2, .. } if n2.eq_ignore_ascii_case(name))) {
                    Some((ex, _, _)) => Ok(ex.clone()),
                    None => Ok(e.clone()),
                }
            }
            _ => Ok(e.clone()),
        }
    }

    /// HAVING may use select aliases anywhere inside it. A name that is
    /// also a column the query groups by means that column: MySQL prefers
    /// the standard reading there.
    fn substitute_aliases(
        &self,
        e: &Expr,
        items: &[(Expr, String, Option<&ScopeColumn>)],
        group_by: &[Expr],
    ) -> Expr {
        let grouped = |name: &str| {
            group_by
                .iter()
                .any(|g| matches!(g, Expr::Column { name: n, .. } if n.eq_ignore_ascii_case(name)))
        };
        let mut e = e.clone();
        crate::parser::rewrite_exprs(&mut e, &mut |c| {
            let name = match c {
                // An aggregate's argument names the rows' columns.
                Expr::Function { name, .. } => return !is_aggregate_name(name),
                Expr::Column { table: None, name } if !grouped(name) => name,
                _ => return true,
            };
            if let Some((ex, _, _)) = items.iter().find(|(_, a, _)| a.eq_ignore_ascii_case(name)) {
                *c = ex.clone();
            }
            false
        });
        e
    }

    fn meta(
        &self,
        name: &str,
        e: &BExpr,
        types: &[(DataType, bool)],
        origin: Option<&ScopeColumn>,
    ) -> Column {
        let (ty, nullable) = match e {
            BExpr::UserVar(n) => super::user_var_type::of(self.user_vars, n),
            _ => None,
        }
        .unwrap_or_else(|| infer(e, types));
        let mut c = column_meta(name, ty, nullable);
        if let (Some(o), BExpr::Column(_)) = (origin, unwrapped(e)) {
            c.table = o.qualifier.clone();
            c.org_table = o.org_table.clone();
            c.org_name = o.name.clone();
            c.schema = o.database.clone();
            c.flags = o.flags;
            c.collation = o.collation;
        }
        c
    }

    fn bind_agg_expr(&mut self, e: &Expr, scope: &Scope, ctx: &mut AggContext) -> Result<BExpr> {
        if let Some(i) = ctx.group_ast.iter().position(|g| g == e) {
            return Ok(BExpr::Column(i));
        }
        match e {
            Expr::Function {
                name,
                args,
                distinct,
                star,
                database: None,
                ..
            } if is_aggregate_name(name) => {
                self.aggregate_call(name, args, *distinct, *star, scope, ctx)
            }
            Expr::Column { .. } => self.grouped_column(e, scope, ctx),
            Expr::Function {
                name,
                args,
                database: None,
                ..
            } if name == "GROUPING" => self.grouping(args, scope, ctx),
            Expr::Function {
                name,
                args,
                database: Some(db),
                ..
            } => {
                let bound = args
                    .iter()
                    .map(|a| self.bind_agg_expr(a, scope, ctx))
                    .collect::<Result<Vec<_>>>()?;
                self.stored_call(db, name, bound)
            }
            Expr::IsNull { expr, negated } => Ok(BExpr::IsNull(
                Box::new(self.bind_agg_expr(expr, scope, ctx)?),
                *negated,
            )),
            Expr::Case {
                operand,
                branches,
                else_result,
            } => self.bind_case(operand, branches, else_result, &scope.types, |b, x| {
                b.bind_agg_expr(x, scope, ctx)
            }),
            // A subquery cannot see source columns once grouped.
            Expr::Subquery(_) | Expr::Exists { .. } => self.bind_expr(e, &Scope::default()),
            other => self.bind_grouped_operands(other, scope, ctx),
        }
    }

    /// A column in a grouped block: its group key's slot, an enclosing
    /// query's column as it is, else any value of the group (MySQL
    /// without ONLY_FULL_GROUP_BY), kept as an ANY_VALUE call.
    fn grouped_column(&mut self, e: &Expr, scope: &Scope, ctx: &mut AggContext) -> Result<BExpr> {
        let b = self.bind_expr(e, scope)?;
        if let Some(i) = ctx
            .group_bound
            .iter()
            .position(|g| matches!((unwrapped(g), unwrapped(&b)), (BExpr::Column(x), BExpr::Column(y)) if x == y))
        {
            return Ok(BExpr::Column(i));
        }
        if matches!(unwrapped(&b), BExpr::Outer { .. }) {
            return Ok(b);
        }
        self.check_determined(&b, scope, ctx)?;
        let ty = infer(&b, &scope.types);
        ctx.calls.push(AggCall {
            func: AggFunc::AnyValue,
            arg: Some(b),
            distinct: false,
            text: Vec::new(),
            separator: Vec::new(),
            order: Vec::new(),
        });
        ctx.call_types.push(ty);
        Ok(BExpr::Column(ctx.group_ast.len() + ctx.calls.len() - 1))
    }

    /// CASE with each operand bound by `bind` (plain or grouped), in
    /// written order: operand, then each WHEN and THEN, then ELSE.
    fn bind_case(
        &mut self,
        operand: &Option<Box<Expr>>,
        branches: &[(Expr, Expr)],
        else_result: &Option<Box<Expr>>,
        types: &[(DataType, bool)],
        mut bind: impl FnMut(&mut Self, &Expr) -> Result<BExpr>,
    ) -> Result<BExpr> {
        let operand = match operand {
            Some(o) => Some(Box::new(bind(self, o)?)),
            None => None,
        };
        let branches = branches
            .iter()
            .map(|(w, t)| Ok((bind(self, w)?, bind(self, t)?)))
            .collect::<Result<_>>()?;
        let else_result = match else_result {
            Some(o) => Some(Box::new(bind(self, o)?)),
            None => None,
        };
        Ok(crate::expr::json::bind::case(
            operand,
            branches,
            else_result,
            types,
        ))
    }

    /// Under ONLY_FULL_GROUP_BY, a column the GROUP BY does not determine
    /// is an error (1055, or 1140 without GROUP BY).
    fn check_determined(&self, b: &BExpr, scope: &Scope, ctx: &AggContext) -> Result<()> {
        let (Some(det), BExpr::Column(p)) = (&ctx.determined, unwrapped(b)) else {
            return Ok(());
        };
        if det.allows(*p) || ctx.place.1 == 0 {
            return Ok(());
        }
        let name = match scope.columns.iter().find(|c| c.index == *p) {
            Some(c) if c.database.is_empty() => format!("{}.{}", c.qualifier, c.name),
            Some(c) => format!("{}.{}.{}", c.database, c.qualifier, c.name),
            None => format!("#{p}"),
        };
        let (place, number) = ctx.place;
        let grouped = !ctx.group_ast.is_empty();
        Err(group_check::not_determined(grouped, place, number, &name))
    }

    fn bind_table_ref(
        &mut self,
        item: &TableRef,
        scope: &mut Scope,
        place: &mut Placement,
    ) -> Result<Source> {
        match item {
            TableRef::Table { name, alias, hints } => {
                self.bind_named_table(name, alias, hints, scope, place)
            }
            TableRef::Derived { query, alias } => {
                let plan = Arc::new(self.bind_pushed(query, alias, &[])?);
                self.derived(plan, alias.clone(), &[], scope, place)
            }
            TableRef::Lateral(l) => self.bind_lateral(l, scope, place),
            TableRef::Join {
                left,
                right,
                kind,
                on,
            } => self.bind_join(left, right, *kind, on, scope, place),
        }
    }

    /// A name in FROM: a CTE, a view, or a base table.
    fn bind_named_table(
        &mut self,
        name: &ast::ObjectName,
        alias: &Option<String>,
        hints: &[ast::IndexHint],
        scope: &mut Scope,
        place: &mut Placement,
    ) -> Result<Source> {
        let derived = self.ctes.iter().any(|c| c.name == name.name) || self.view(name).is_some();
        if let (true, Some(h)) = (derived, hints.first()) {
            // No index to name in a view or a CTE.
            let key = h.names.first().cloned().unwrap_or_default();
            return Err(Error::new(
                Code::KeyDoesNotExist,
                format!("Key '{key}' doesn't exist in table '{}'", name.name),
            ));
        }
        if let Some(cte) = self.bind_cte(name, alias, scope, place) {
            return cte;
        }
        if let Some(view) = self.view(name) {
            return self.bind_view(view, alias, scope, place);
        }
        let table = self.table(name)?;
        self.note_read(&table);
        let def = table.def();
        let offset = place.next(scope.width);
        let qualifier = alias.clone().unwrap_or_else(|| name.name.clone());
        let shown = antijoin::shown(&qualifier).to_string();
        self.note_ref(&table, &shown);
        if scope.columns.iter().any(|c| c.qualifier == qualifier) {
            return Err(Error::new(
                Code::NonUniq,
                format!("Not unique table/alias: '{qualifier}'"),
            ));
        }
        let first = scope.columns.len();
        base_columns(&def, &qualifier, offset, scope);
        if antijoin::is_hidden(&qualifier) {
            // Named only through the hidden alias (plan/antijoin.rs).
            scope.columns[first..]
                .iter_mut()
                .for_each(|c| c.merged = true);
        }
        let hints = index_hints::resolve(&def, hints)?;
        Ok(Source::Table(TableScan {
            table,
            alias: shown,
            def,
            offset,
            access: Access::full(),
            needed: None,
            range_check: None,
            hints,
            filter: None,
        }))
    }

    /// `left kind JOIN right on`; a RIGHT JOIN is the LEFT JOIN of its
    /// sides swapped, its columns listed in the written order again.
    fn bind_join(
        &mut self,
        left: &TableRef,
        right: &TableRef,
        kind: JoinKind,
        on: &JoinCondition,
        scope: &mut Scope,
        place: &mut Placement,
    ) -> Result<Source> {
        let swapped = kind == JoinKind::Right;
        let (first, second, kind) = match kind {
            JoinKind::Right => (right, left, JoinKind::Left),
            k => (left, right, k),
        };
        let start = scope.columns.len();
        let l = self.bind_table_ref(first, scope, place);
        let l = l.map_err(|e| match swapped {
            true => lateral::right_join_error(first, second, e),
            false => e,
        })?;
        let left_cols = scope.columns.len();
        let r = self.bind_table_ref(second, scope, place)?;
        // An anti-join's ON is the subquery's WHERE (plan/antijoin.rs).
        let clause = match second {
            TableRef::Table { alias: Some(a), .. } if antijoin::is_hidden(a) => "where clause",
            _ => "on clause",
        };
        let on = match on {
            JoinCondition::On(e) => {
                let outer = std::mem::replace(&mut self.clause, clause);
                let on = self.bind_expr(e, scope);
                self.clause = outer;
                Some(collated(on?, &scope.types))
            }
            JoinCondition::Using(cols) => merge_using(scope, start, left_cols, cols)?,
            JoinCondition::Natural => {
                let cols = common_names(&scope.columns[start..], left_cols - start);
                merge_using(scope, start, left_cols, &cols)?
            }
            JoinCondition::None => None,
        };
        if swapped {
            written_order(scope, start, left_cols);
        }
        Ok(Source::Join {
            left: Box::new(l),
            right: Box::new(r),
            kind,
            on,
            hash: None,
            not_exists: false,
        })
    }

    // ---------- expressions ----------

    pub fn bind_expr(&mut self, e: &Expr, scope: &Scope) -> Result<BExpr> {
        match self.agg.take() {
            Some(mut ctx) => {
                let bound = self.bind_agg_expr(e, scope, &mut ctx);
                self.agg = Some(ctx);
                bound
            }
            None => self.bind_plain(e, scope),
        }
    }

    /// The forms `bind_agg_expr` has no rule of its own for (IN lists,
    /// BETWEEN, LIKE, IS TRUE, rows, ...): bound as anywhere else, each
    /// operand through the grouped binding.
    fn bind_grouped_operands(
        &mut self,
        e: &Expr,
        scope: &Scope,
        ctx: &mut AggContext,
    ) -> Result<BExpr> {
        self.agg = Some(std::mem::take(ctx));
        let bound = self.bind_plain(e, scope);
        *ctx = self.agg.take().unwrap_or_default();
        bound
    }

    /// The types of the row operands are bound over: in a grouped block the
    /// grouped row (group keys, then aggregate results), else the scope's.
    fn operand_types<'s>(&self, scope: &'s Scope) -> std::borrow::Cow<'s, [(DataType, bool)]> {
        match &self.agg {
            Some(ctx) => std::borrow::Cow::Owned(ctx.row_types()),
            None => std::borrow::Cow::Borrowed(&scope.types),
        }
    }

    fn bind_plain(&mut self, e: &Expr, scope: &Scope) -> Result<BExpr> {
        Ok(match e {
            Expr::Literal(v) => BExpr::Literal(v.clone()),
            Expr::Window(w) => match w.slot {
                Some(i) => BExpr::Column(i),
                None => return Err(window::misplaced(w)),
            },
            Expr::Column { table, name } => self.bind_column(table.as_deref(), name, scope)?,
            Expr::Param(i) => match self.params.get(*i) {
                Some(v) => BExpr::Literal(v.clone()),
                None => BExpr::Param(*i),
            },
            Expr::UserVar(n) => BExpr::UserVar(n.to_ascii_lowercase()),
            Expr::SystemVar { scope: s, name } => BExpr::SystemVar {
                global: *s == VarScope::Global,
                name: name.to_ascii_lowercase(),
            },
            Expr::Unary { op, expr } => {
                let x = self.bind_expr(expr, scope)?;
                let x = crate::plan::enumset::unary(*op, x, &self.operand_types(scope));
                BExpr::Unary(*op, Box::new(x))
            }
            Expr::Binary { op, left, right } => self.bind_binary(*op, left, right, scope)?,
            Expr::IsNull { expr, negated } => {
                BExpr::IsNull(Box::new(self.bind_expr(expr, scope)?), *negated)
            }
            Expr::IsBool {
                expr,
                value,
                negated,
            } => BExpr::IsBool {
                expr: Box::new(self.bind_expr(expr, scope)?),
                value: *value,
                negated: *negated,
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => self.bind_in_list(expr, list, *negated, scope)?,
            Expr::InSubquery {
                expr,
                query,
                negated,
            } => self.bind_in_subquery(expr, query, *negated, scope)?,
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => self.bind_between(expr, low, high, *negated, scope)?,
            Expr::Like {
                expr,
                pattern,
                escape,
                negated,
            } => self.bind_like(expr, pattern, escape.as_deref(), *negated, scope)?,
            Expr::Exists { query, negated } => BExpr::Exists {
                query: self.subquery(query, scope)?,
                negated: *negated,
            },
            Expr::Subquery(query) => self.scalar_subquery(query, scope)?,
            Expr::Function {
                name,
                args,
                database: Some(db),
                ..
            } => {
                let bound = args
                    .iter()
                    .map(|a| self.bind_expr(a, scope))
                    .collect::<Result<Vec<_>>>()?;
                self.stored_call(db, name, bound)?
            }
            Expr::Function {
                name,
                args,
                spelled,
                ..
            } => self.bind_call((name, spelled.as_deref()), args, scope)?,
            Expr::Case {
                operand,
                branches,
                else_result,
            } => self.bind_case(operand, branches, else_result, &scope.types, |b, x| {
                b.bind_expr(x, scope)
            })?,
            Expr::Cast { expr, to } => self.bind_cast(expr, *to, scope)?,
            Expr::Interval { .. } => return Err(Error::parse("INTERVAL")),
            Expr::Default => BExpr::Default,
            Expr::Row(items) => BExpr::Row(
                items
                    .iter()
                    .map(|x| self.bind_expr(x, scope))
                    .collect::<Result<_>>()?,
            ),
        })
    }

    /// A column name: a routine's local variable first, then the block's
    /// columns, then the enclosing queries'.
    fn bind_column(&mut self, table: Option<&str>, name: &str, scope: &Scope) -> Result<BExpr> {
        if let Some(v) = self.local(table, name) {
            return Ok(BExpr::Literal(v));
        }
        match scope.resolve(table, name)? {
            Some(c) => Ok(session_time(BExpr::Column(c.index), c.stored_utc)),
            None => self.bind_outer_column(table, name),
        }
    }

    /// A binary operator; row comparisons and date ± INTERVAL have forms
    /// of their own.
    fn bind_binary(
        &mut self,
        op: BinaryOp,
        left: &Expr,
        right: &Expr,
        scope: &Scope,
    ) -> Result<BExpr> {
        if let (Expr::Row(l), Expr::Row(r)) = (left, right) {
            return self.row_comparison(op, l, r, scope);
        }
        // date + INTERVAL n unit, INTERVAL n unit + date, date - INTERVAL.
        let minus = op == BinaryOp::Minus;
        match (left, right) {
            (d, Expr::Interval { value, unit }) if minus || op == BinaryOp::Plus => {
                return self.interval(d, value, unit, minus, scope);
            }
            (Expr::Interval { value, unit }, d) if op == BinaryOp::Plus => {
                return self.interval(d, value, unit, false, scope);
            }
            _ => {}
        }
        let (l, r) = (self.bind_expr(left, scope)?, self.bind_expr(right, scope)?);
        let types = self.operand_types(scope);
        let (l, r) = crate::plan::enumset::binary(op, l, r, &types);
        Ok(crate::expr::json::bind::binary(op, l, r, &types))
    }

    fn bind_between(
        &mut self,
        expr: &Expr,
        low: &Expr,
        high: &Expr,
        negated: bool,
        scope: &Scope,
    ) -> Result<BExpr> {
        let low = self.bind_expr(low, scope)?;
        let high = self.bind_expr(high, scope)?;
        let x = self.bind_expr(expr, scope)?;
        let x = crate::plan::enumset::between(x, [&low, &high], &self.operand_types(scope));
        Ok(BExpr::Between {
            expr: Box::new(x),
            low: Box::new(low),
            high: Box::new(high),
            negated,
        })
    }

    /// `(SELECT ...)` as a value: one column (1241 otherwise).
    fn scalar_subquery(&mut self, query: &ast::Query, scope: &Scope) -> Result<BExpr> {
        let q = self.subquery(query, scope)?;
        if q.columns.len() != 1 {
            return Err(Error::new(
                Code::OperandColumns,
                "Operand should contain 1 column(s)",
            ));
        }
        Ok(BExpr::Subquery(q))
    }

    /// CAST(expr AS to); CAST AS JSON is a JSON function.
    fn bind_cast(&mut self, expr: &Expr, to: ast::CastType, scope: &Scope) -> Result<BExpr> {
        let x = self.bind_expr(expr, scope)?;
        let types = self.operand_types(scope);
        if to == ast::CastType::Json {
            return crate::expr::json::bind::call(JsonFn::Cast, "CAST", vec![x], &types);
        }
        let x = crate::plan::enumset::cast_operand(x, to, &types);
        let ty = infer(&x, &types).0;
        let x = text_form::cast_operand(x, to, ty);
        let x = crate::expr::json::bind::cast_operand(x, to, &types);
        Ok(BExpr::Cast(Box::new(x), to))
    }

    /// A derived table's columns in scope under `alias`, renamed to
    /// `names` when given (a CTE's column list).
    fn derived(
        &mut self,
        plan: Arc<QueryPlan>,
        alias: String,
        names: &[String],
        scope: &mut Scope,
        place: &mut Placement,
    ) -> Result<Source> {
        if !names.is_empty() && names.len() != plan.columns.len() {
            return Err(Error::new(
                Code::ViewWrongList,
                "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
            ));
        }
        let offset = place.next(scope.width);
        for (i, c) in plan.columns.iter().enumerate() {
            set_type(&mut scope.types, offset + i, (c.data_type, c.nullable));
            scope.columns.push(ScopeColumn {
                qualifier: alias.clone(),
                name: names.get(i).unwrap_or(&c.name).clone(),
                index: offset + i,
                ty: c.data_type,
                nullable: c.nullable,
                org_table: alias.clone(),
                database: String::new(),
                flags: 0,
                collation: c.collation,
                merged: false,
                stored_utc: false,
            });
        }
        scope.width += plan.columns.len();
        Ok(Source::Derived {
            plan,
            offset,
            // Computed one key at a time when the join planning chose so.
            lateral: self.split_bound.take().map(Arc::new),
        })
    }

    fn date_arith(&mut self, subtract: bool, args: &[Expr], scope: &Scope) -> Result<BExpr> {
        let [date, interval] = args else {
            return Err(Error::parse("DATE_ADD"));
        };
        let (value, unit) = match interval {
            Expr::Interval { value, unit } => (&**value, unit.to_ascii_uppercase()),
            other => (other, "DAY".to_string()),
        };
        self.interval(date, value, &unit, subtract, scope)
    }

    /// `date ± value unit` as Func::DateAdd (datetime.rs).
    fn interval(
        &mut self,
        date: &Expr,
        value: &Expr,
        unit: &str,
        subtract: bool,
        scope: &Scope,
    ) -> Result<BExpr> {
        if crate::expr::datetime::Unit::parse(unit).is_none() {
            return Err(Error::unsupported(format!("INTERVAL unit {unit}")));
        }
        let mut amount = self.bind_expr(value, scope)?;
        if subtract {
            amount = BExpr::Unary(ast::UnaryOp::Minus, Box::new(amount));
        }
        Ok(BExpr::Func(
            Func::DateAdd,
            vec![
                self.bind_expr(date, scope)?,
                amount,
                BExpr::Literal(Value::str(unit)),
            ],
        ))
    }

    /// TIMESTAMPDIFF(unit, a, b) / TIMESTAMPADD(unit, n, d): the unit is a
    /// bare word, which the parser reads as a column name.
    fn timestamp_function(&mut self, name: &str, args: &[Expr], scope: &Scope) -> Result<BExpr> {
        let [Expr::Column {
            table: None,
            name: unit,
        }, a, b] = args
        else {
            return Err(Error::new(
                Code::WrongParamcountToNativeFct,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ));
        };
        if crate::expr::datetime::Unit::parse(unit).is_none() {
            return Err(Error::parse(unit));
        }
        if name == "TIMESTAMPADD" {
            return self.interval(b, a, unit, false, scope);
        }
        Ok(BExpr::Func(
            Func::TimestampDiff,
            vec![
                BExpr::Literal(Value::str(unit)),
                self.bind_expr(a, scope)?,
                self.bind_expr(b, scope)?,
            ],
        ))
    }

    fn row_comparison(
        &mut self,
        op: BinaryOp,
        l: &[Expr],
        r: &[Expr],
        scope: &Scope,
    ) -> Result<BExpr> {
        if l.len() != r.len() {
            return Err(Error::new(
                Code::OperandColumns,
                format!("Operand should contain {} column(s)", l.len()),
            ));
        }
        if op != BinaryOp::Eq && op != BinaryOp::NotEq {
            return Err(Error::unsupported("row comparison other than = and <>"));
        }
        let mut all: Option<BExpr> = None;
        for (a, b) in l.iter().zip(r) {
            let eq = BExpr::Binary(
                BinaryOp::Eq,
                Box::new(self.bind_expr(a, scope)?),
                Box::new(self.bind_expr(b, scope)?),
            );
            all = Some(match all {
                None => eq,
                Some(p) => BExpr::Binary(BinaryOp::And, Box::new(p), Box::new(eq)),
            });
        }
        let all = all.unwrap_or(BExpr::Literal(Value::Int(1)));
        Ok(if op == BinaryOp::NotEq {
            BExpr::Unary(ast::UnaryOp::Not, Box::new(all))
        } else {
            all
        })
    }

    /// Records a stored function the statement calls.
    fn note_call(&self, db: &str, name: &str) {
        let mut called = self.called.borrow_mut();
        let known = |(d, n): &(String, String)| d == db && n.eq_ignore_ascii_case(name);
        if !called.iter().any(known) {
            called.push((db.to_string(), name.to_string()));
        }
    }

    /// `types` are the types of the row the arguments read; `spelled` the
    /// name as written when that differs from `name`.
    fn function(
        &self,
        (name, spelled): (&str, Option<&str>),
        args: Vec<BExpr>,
        types: &[(DataType, bool)],
    ) -> Result<BExpr> {
        let Some(f) = Func::lookup(name) else {
            // MySQL looks for a stored function in the current database
            // (its 1305 names it as written).
            let Some(db) = &self.database else {
                return Err(Error::no_db());
            };
            return self.stored_call(db, spelled.unwrap_or(name), args);
        };
        let (min, max) = f.arity();
        if args.len() < min || args.len() > max {
            return Err(Error::new(
                Code::WrongParamcountToNativeFct,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ));
        }
        fsp_argument(f, &args)?;
        let args = text_form::text_args(f, args, &|a| infer(a, types).0);
        Ok(BExpr::Func(f, args))
    }

    /// A call of the stored function `name` of `db` (named by the call,
    /// `db.f()`, or the current database); 1305 when there is none.
    fn stored_call(&self, db: &str, name: &str, args: Vec<BExpr>) -> Result<BExpr> {
        match crate::routine::call::bind_stored(self.catalog, db, name, &args)? {
            Some(stored) => {
                self.note_call(&stored.database, &stored.name);
                Ok(BExpr::Stored(stored, args))
            }
            None => Err(Error::new(
                Code::SpDoesNotExist,
                format!("FUNCTION {db}.{name} does not exist"),
            )),
        }
    }

    fn subquery(&mut self, q: &ast::Query, scope: &Scope) -> Result<SubqueryRef> {
        // Inside a grouped query's expression the subquery sees no columns
        // of the source rows (the row it runs with is the aggregate row).
        let grouped = self.agg.take();
        let outer = match grouped {
            Some(_) => Scope::default(),
            None => scope.clone(),
        };
        let plan = self.subquery_in(q, outer);
        self.agg = grouped;
        plan
    }

    fn subquery_in(&mut self, q: &ast::Query, scope: Scope) -> Result<SubqueryRef> {
        let keyed_scope = scope.clone();
        self.outer.push(scope);
        let saved = std::mem::replace(&mut self.correlated, false);
        let plan = self.bind_query(q);
        self.outer.pop();
        let inner_correlated = self.correlated;
        self.correlated = saved;
        let plan = plan?;
        // A reference two levels out also makes the enclosing query correlated.
        if inner_correlated && !self.outer.is_empty() {
            self.correlated = true;
        }
        Ok(SubqueryRef(Arc::new(self.plan_keyed(q, keyed_scope, plan))))
    }
}

/// A join of more tables than the order search takes: written order,
/// access paths from the WHERE and ON, the WHERE checked on whole rows.
fn written_order_plan(
    scope: Scope,
    mut source: Source,
    filter: Option<BExpr>,
    known: &Known,
) -> (Scope, Source, Option<BExpr>) {
    let conjuncts = filter.as_ref().map(split_conjuncts).unwrap_or_default();
    let prop = crate::plan::equalities::propagate(conjuncts, &scope.types);
    let usable = [&prop.conjuncts[..], &prop.derived[..]].concat();
    choose_accesses(&mut source, &usable, true, known);
    (scope, source, conjoin(prop.conjuncts))
}

/// Where the tables of a FROM clause go in the combined row: one after
/// another as written, or at offsets a join order chose.
#[derive(Default)]
struct Placement {
    offsets: Option<Vec<usize>>,
    next: usize,
}

impl Placement {
    /// The offset of the next table, `width` when written order applies.
    fn next(&mut self, width: usize) -> usize {
        let at = self
            .offsets
            .as_ref()
            .and_then(|o| o.get(self.next).copied());
        self.next += 1;
        at.unwrap_or(width)
    }
}

/// A base table's columns into `scope` at `offset` under `qualifier`; the
/// hidden row id takes a slot but no name.
fn base_columns(def: &TableDef, qualifier: &str, offset: usize, scope: &mut Scope) {
    for (i, c) in def.columns.iter().enumerate() {
        set_type(&mut scope.types, offset + i, (c.data_type, c.nullable));
        if Some(i) == def.hidden_row_id {
            continue;
        }
        scope.columns.push(ScopeColumn {
            qualifier: qualifier.to_string(),
            name: c.name.clone(),
            index: offset + i,
            ty: c.data_type,
            nullable: c.nullable,
            org_table: def.name.clone(),
            database: def.database.clone(),
            flags: key_flags(def, i),
            collation: c.collation,
            merged: false,
            stored_utc: is_timestamp(c.data_type),
        });
    }
    scope.width += def.columns.len();
}

fn set_type(types: &mut Vec<(DataType, bool)>, pos: usize, t: (DataType, bool)) {
    if types.len() <= pos {
        types.resize(pos + 1, (DataType::Binary { len: 0 }, true));
    }
    types[pos] = t;
}

/// Comparisons on text columns under the default collation.
fn collated(e: BExpr, types: &[(DataType, bool)]) -> BExpr {
    crate::expr::collate(e, &|x| infer(x, types).0)
}

pub fn sum_type(t: DataType) -> DataType {
    match t {
        DataType::Float | DataType::Double => DataType::Double,
        DataType::Decimal { precision, scale } => DataType::Decimal {
            precision: (precision + 22).min(65),
            scale,
        },
        _ => DataType::Decimal {
            precision: 32,
            scale: 0,
        },
    }
}

pub fn avg_type(t: DataType) -> DataType {
    match t {
        DataType::Float | DataType::Double => DataType::Double,
        DataType::Decimal { precision, scale } => DataType::Decimal {
            precision: (precision + 4).min(65),
            scale: (scale + 4).min(30),
        },
        _ => DataType::Decimal {
            precision: 14,
            scale: 4,
        },
    }
}

// ---------- access path selection ----------

pub fn split_conjuncts(e: &BExpr) -> Vec<BExpr> {
    let mut out = Vec::new();
    fn walk(e: &BExpr, out: &mut Vec<BExpr>) {
        if let BExpr::Binary(BinaryOp::And, l, r) = e {
            walk(l, out);
            walk(r, out);
        } else {
            out.push(e.clone());
        }
    }
    walk(e, &mut out);
    out
}

/// Which row positions hold values when a table is read: those left of
/// its offset in a plan, or those of the tables placed before it while
/// the join order is searched.
pub type Avail<'a> = &'a dyn Fn(usize) -> bool;

/// Whether `e` can be evaluated before the table at `offset` is read:
/// it refers only to columns left of it, parameters and constants.
fn available(e: &BExpr, avail: Avail) -> bool {
    match e {
        BExpr::Literal(_)
        | BExpr::Param(_)
        | BExpr::UserVar(_)
        | BExpr::SystemVar { .. }
        | BExpr::Outer { .. } => true,
        BExpr::Column(i) => avail(*i),
        BExpr::Unary(_, x) | BExpr::Cast(x, _) => available(x, avail),
        BExpr::Binary(_, l, r) => available(l, avail) && available(r, avail),
        BExpr::Func(f, args) => {
            !crate::plan::semijoin::volatile(f) && args.iter().all(|a| available(a, avail))
        }
        _ => false,
    }
}

/// One end of a range: the bound and whether it is inclusive.
type RangeBound = Option<(BExpr, bool)>;

/// Per column of a table: what the conditions say about it.
#[derive(Default, Clone)]
struct ColumnConstraint {
    eq: Option<BExpr>,
    in_list: Option<Vec<BExpr>>,
    lower: Option<(BExpr, bool)>,
    upper: Option<(BExpr, bool)>,
    /// OR of ranges (each lower, upper).
    ranges: Option<Vec<(RangeBound, RangeBound)>>,
    /// Which conjunct gave `eq`, `lower` and `upper`.
    eq_from: Option<usize>,
    lower_from: Option<usize>,
    upper_from: Option<usize>,
}

/// The expression under a collation fold (index keys are folded too).
fn unfold(e: &BExpr) -> &BExpr {
    match e {
        BExpr::Func(Func::FoldCase, args) if args.len() == 1 => &args[0],
        e => e,
    }
}

fn column_of(e: &BExpr, lo: usize, hi: usize) -> Option<usize> {
    match unwrapped(e) {
        BExpr::Column(i) if *i >= lo && *i < hi => Some(*i - lo),
        _ => None,
    }
}

/// A single-column range condition: (column, lower, upper, is equality).
fn range_of(
    e: &BExpr,
    lo: usize,
    hi: usize,
    avail: Avail,
) -> Option<(usize, RangeBound, RangeBound, bool)> {
    match e {
        BExpr::Binary(op, l, r) => {
            let (col, val, flipped) =
                if let (Some(c), true) = (column_of(l, lo, hi), available(r, avail)) {
                    (c, unfold(r).clone(), false)
                } else if let (Some(c), true) = (column_of(r, lo, hi), available(l, avail)) {
                    (c, unfold(l).clone(), true)
                } else {
                    return None;
                };
            use BinaryOp::*;
            let op = if flipped {
                match op {
                    Lt => Gt,
                    LtEq => GtEq,
                    Gt => Lt,
                    GtEq => LtEq,
                    o => *o,
                }
            } else {
                *op
            };
            match op {
                Eq => Some((col, Some((val.clone(), true)), Some((val, true)), true)),
                Lt => Some((col, None, Some((val, false)), false)),
                LtEq => Some((col, None, Some((val, true)), false)),
                Gt => Some((col, Some((val, false)), None, false)),
                GtEq => Some((col, Some((val, true)), None, false)),
                _ => None,
            }
        }
        BExpr::Between {
            expr,
            low,
            high,
            negated: false,
        } => {
            let c = column_of(expr, lo, hi)?;
            if available(low, avail) && available(high, avail) {
                Some((
                    c,
                    Some(((**low).clone(), true)),
                    Some(((**high).clone(), true)),
                    false,
                ))
            } else {
                None
            }
        }
        _ => None,
    }
}

fn constraints(
    conjuncts: &[BExpr],
    lo: usize,
    width: usize,
    avail: Avail,
) -> Vec<ColumnConstraint> {
    let hi = lo + width;
    let mut cons = vec![ColumnConstraint::default(); width];
    for (at, c) in conjuncts.iter().enumerate() {
        if let Some((col, lower, upper, is_eq)) = range_of(c, lo, hi, avail) {
            let cc = &mut cons[col];
            if is_eq {
                cc.eq = lower.map(|(v, _)| v);
                cc.eq_from = Some(at);
            } else {
                if lower.is_some() {
                    cc.lower = lower;
                    cc.lower_from = Some(at);
                }
                if upper.is_some() {
                    cc.upper = upper;
                    cc.upper_from = Some(at);
                }
            }
            continue;
        }
        match c {
            BExpr::InList {
                expr,
                list,
                negated: false,
            } => {
                if let Some(col) = column_of(expr, lo, hi) {
                    if list.iter().all(|x| available(x, avail)) && !list.is_empty() {
                        cons[col].in_list = Some(list.clone());
                    }
                }
            }
            BExpr::Binary(BinaryOp::Or, _, _) => {
                // OR of ranges on one column (select_random_ranges).
                let mut parts = Vec::new();
                fn disjuncts(e: &BExpr, out: &mut Vec<BExpr>) {
                    if let BExpr::Binary(BinaryOp::Or, l, r) = e {
                        disjuncts(l, out);
                        disjuncts(r, out);
                    } else {
                        out.push(e.clone());
                    }
                }
                disjuncts(c, &mut parts);
                let mut col_seen = None;
                let mut ranges = Vec::new();
                let mut ok = true;
                for p in &parts {
                    match range_of(p, lo, hi, avail) {
                        Some((col, l, u, _)) if col_seen.is_none_or(|s| s == col) => {
                            col_seen = Some(col);
                            ranges.push((l, u));
                        }
                        _ => {
                            ok = false;
                            break;
                        }
                    }
                }
                if ok {
                    if let Some(col) = col_seen {
                        cons[col].ranges = Some(ranges);
                    }
                }
            }
            _ => {}
        }
    }
    cons
}

/// Picks the access path of every table in the source tree.
pub fn choose_accesses(
    source: &mut Source,
    conjuncts: &[BExpr],
    where_applies: bool,
    known: &Known,
) {
    match source {
        Source::Dual | Source::Derived { .. } => {}
        Source::Table(scan) => {
            scan.access = best_access(scan, conjuncts, known);
        }
        Source::Join {
            left,
            right,
            kind,
            on,
            ..
        } => {
            let mut left_conj = if where_applies {
                conjuncts.to_vec()
            } else {
                Vec::new()
            };
            let mut right_conj = if where_applies && *kind != JoinKind::Left {
                conjuncts.to_vec()
            } else {
                Vec::new()
            };
            if let Some(on) = on {
                let on_conj = split_conjuncts(on);
                right_conj.extend(on_conj.iter().cloned());
                if *kind == JoinKind::Inner || *kind == JoinKind::Cross {
                    left_conj.extend(on_conj);
                }
            }
            choose_accesses(left, &left_conj, true, known);
            let right_where = where_applies && *kind != JoinKind::Left;
            let applies = right_where || !right_conj.is_empty();
            choose_accesses(right, &right_conj, applies, known);
        }
    }
}

pub fn best_access(scan: &TableScan, conjuncts: &[BExpr], known: &Known) -> Access {
    best_access_by(scan, conjuncts, &|i| i < scan.offset, known)
}

/// The access path of `scan`'s table whose keys may use the positions
/// `avail` allows (and only the indexes its hints allow): the best key
/// by what it fixes (a whole unique key, then equalities, IN lists,
/// ranges); when the best has only a range, the cheapest of the ranges
/// and a full scan by their index dives (`range_by_cost`).
pub fn best_access_by(
    scan: &TableScan,
    conjuncts: &[BExpr],
    avail: Avail,
    known: &Known,
) -> Access {
    let mut candidates = scored_accesses(scan, conjuncts, avail);
    let Some(at) = (0..candidates.len()).max_by_key(|&i| (candidates[i].0, usize::MAX - i)) else {
        return Access::full();
    };
    if candidates[at].0 < RANGE_ONLY {
        if let Some(access) = range_by_cost(scan, &candidates, at, known) {
            return access;
        }
    }
    candidates.swap_remove(at).1
}

/// Scores below this fix no key column by equality: a range at best.
const RANGE_ONLY: i64 = 90;

/// What starting a full scan costs, in rows read.
const SCAN_SETUP: f64 = 16.0;

/// Among access paths that only range over their first key column
/// (`candidates[best]` the best scored), the cheapest by index dives,
/// or a full scan when that costs less: a secondary index's row costs
/// a lookup more than a scanned one. None: keep the best scored, when
/// its rows are unknown, or only the clustered index ranges (which never
/// costs more than a full scan, so needs no dive). A bound that is a
/// parameter not yet bound leaves a probe, so EXECUTE plans again per
/// range of its rows (`session::replan`).
fn range_by_cost(
    scan: &TableScan,
    candidates: &[(i64, Access)],
    best: usize,
    known: &Known,
) -> Option<Access> {
    use crate::plan::index_dive::{dive, Dive, SECONDARY_ROW_COST};
    let ranges = || candidates.iter().filter(|(s, _)| *s < RANGE_ONLY);
    if ranges().all(|(_, a)| a.index == 0) {
        return None;
    }
    // A scan pays for starting too: a tiny table keeps its index.
    let scan_cost = scan.table.approximate_rows() as f64 + SCAN_SETUP;
    let mut cheapest = match index_hints::forced(&scan.hints) {
        true => (f64::INFINITY, candidates[best].1.clone()),
        false => (scan_cost, Access::full()),
    };
    for (_, access) in ranges() {
        let rows = match dive(scan, access, known) {
            Dive::Rows(rows) => rows,
            Dive::WaitsForParam if std::ptr::eq(access, &candidates[best].1) => {
                known
                    .probes
                    .borrow_mut()
                    .push(crate::plan::selectivity::Probe::range(scan, access));
                return None;
            }
            _ if std::ptr::eq(access, &candidates[best].1) => return None,
            _ => continue,
        };
        let per_row = if access.index == 0 {
            1.0
        } else {
            SECONDARY_ROW_COST
        };
        if rows * per_row < cheapest.0 {
            cheapest = (rows * per_row, access.clone());
        }
    }
    Some(cheapest.1)
}

/// Every index the conjuncts give a key for, with its access path and
/// its score by what the key fixes.
fn scored_accesses(scan: &TableScan, conjuncts: &[BExpr], avail: Avail) -> Vec<(i64, Access)> {
    let (def, offset) = (&scan.def, scan.offset);
    let cons = constraints(conjuncts, offset, def.columns.len(), avail);
    let mut out = Vec::new();
    for (idx, index) in def.indexes.iter().enumerate() {
        if !index_hints::usable(&scan.hints, idx) {
            continue;
        }
        let mut ranges = vec![KeyRange::default()];
        let mut score = 0i64;
        let mut complete_eq = true;
        for &col in &index.columns {
            let c = &cons[col];
            if let Some(v) = &c.eq {
                for r in &mut ranges {
                    r.eq.push(v.clone());
                }
                score += 100;
                continue;
            }
            if let Some(list) = &c.in_list {
                if list.len() <= 1000 {
                    let mut next = Vec::new();
                    for r in &ranges {
                        for v in list {
                            let mut r2 = r.clone();
                            r2.eq.push(v.clone());
                            next.push(r2);
                        }
                    }
                    ranges = next;
                    score += 90;
                    continue;
                }
            }
            complete_eq = false;
            if c.lower.is_some() || c.upper.is_some() {
                for r in &mut ranges {
                    r.lower = c.lower.clone();
                    r.upper = c.upper.clone();
                }
                score += 50;
            } else if let Some(rs) = &c.ranges {
                let mut next = Vec::new();
                for r in &ranges {
                    for (l, u) in rs {
                        let mut r2 = r.clone();
                        r2.lower = l.clone();
                        r2.upper = u.clone();
                        next.push(r2);
                    }
                }
                ranges = next;
                score += 40;
            }
            break;
        }
        if score == 0 {
            continue;
        }
        if complete_eq && index.unique {
            score += 1000;
        }
        // The clustered index needs no second lookup.
        if idx == 0 {
            score += 5;
        }
        let access = Access {
            index: idx,
            ranges,
            reverse: false,
        };
        out.push((score, access));
    }
    out
}

/// Splits the conjuncts of a one-table filter into those the key range of
/// `access` guarantees for every row it visits and the rest; returns (the
/// rest, the guaranteed ones), each ANDed together. A guaranteed conjunct
/// compares an integer key column with a value, and took part in the range
/// as it is: the scan then never meets a row that fails it, as long as the
/// value is an exact integer key. The executor checks that per execution
/// and evaluates the guaranteed part only when it is not. sysbench's
/// `id BETWEEN ? AND ?` and `id = ?` then cost nothing per row.
pub fn take_implied(
    conjuncts: Vec<BExpr>,
    def: &TableDef,
    offset: usize,
    access: &Access,
) -> (Option<BExpr>, Option<BExpr>) {
    let implied = implied_conjuncts(&conjuncts, def, offset, access);
    split_implied(conjuncts, &implied)
}

/// `take_implied` over `conjuncts` (the conditions the table's own filter
/// holds) when the access was chosen from `conjuncts ++ extra`.
pub fn take_implied_with(
    conjuncts: Vec<BExpr>,
    extra: &[BExpr],
    def: &TableDef,
    offset: usize,
    access: &Access,
) -> (Option<BExpr>, Option<BExpr>) {
    let mine = conjuncts.len();
    let mut all = conjuncts;
    all.extend_from_slice(extra);
    let implied = implied_conjuncts(&all, def, offset, access);
    all.truncate(mine);
    split_implied(all, &implied)
}

fn split_implied(conjuncts: Vec<BExpr>, implied: &[usize]) -> (Option<BExpr>, Option<BExpr>) {
    let (mut rest, mut check) = (Vec::new(), Vec::new());
    for (at, c) in conjuncts.into_iter().enumerate() {
        if implied.contains(&at) {
            check.push(c);
        } else {
            rest.push(c);
        }
    }
    (conjoin(rest), conjoin(check))
}

/// Positions in `conjuncts` that the key range of `access` guarantees.
fn implied_conjuncts(
    conjuncts: &[BExpr],
    def: &TableDef,
    offset: usize,
    access: &Access,
) -> Vec<usize> {
    // One range only: with several, a row in one need not satisfy another.
    let [range] = &access.ranges[..] else {
        return Vec::new();
    };
    let width = def.columns.len();
    let avail = |i: usize| i < offset;
    let cons = constraints(conjuncts, offset, width, &avail);
    let columns = &def.indexes[access.index].columns;
    let mut out = Vec::new();
    for (at, c) in conjuncts.iter().enumerate() {
        let Some((col, lower, upper, is_eq)) = range_of(c, offset, offset + width, &avail) else {
            continue;
        };
        if !def.columns[col].data_type.is_integer() {
            continue;
        }
        let cc = &cons[col];
        let position = columns.iter().position(|&x| x == col);
        let guaranteed = if is_eq {
            position.is_some_and(|p| p < range.eq.len()) && cc.eq_from == Some(at)
        } else {
            // The column right after the equality prefix, bounded by
            // exactly this conjunct's bounds.
            position == Some(range.eq.len())
                && cc.eq.is_none()
                && (lower.is_none() || cc.lower_from == Some(at))
                && (upper.is_none() || cc.upper_from == Some(at))
                && (range.lower.is_some() || range.upper.is_some())
        };
        if guaranteed {
            out.push(at);
        }
    }
    out
}

/// The AND of `conjuncts` (None for none).
pub fn conjoin(conjuncts: Vec<BExpr>) -> Option<BExpr> {
    conjuncts
        .into_iter()
        .reduce(|l, r| BExpr::Binary(BinaryOp::And, Box::new(l), Box::new(r)))
}

/// MIN(col)/MAX(col) without GROUP BY where `col` follows the access
/// path's equality prefix in its index: the first row in index order (the
/// last, for MAX) that passes the filter is the answer, so the scan stops
/// there instead of reading the whole range.
fn min_max_from_index(agg: &AggregatePlan, scan: &mut TableScan) -> bool {
    let [call] = &agg.calls[..] else { return false };
    if !agg.group_by.is_empty()
        || call.distinct
        || !matches!(call.func, AggFunc::Min | AggFunc::Max)
    {
        return false;
    }
    let Some(col) = call
        .arg
        .as_ref()
        .and_then(|a| column_of(a, scan.offset, scan.offset + scan.def.columns.len()))
    else {
        return false;
    };
    if scan.def.columns[col].nullable || scan.access.ranges.len() != 1 {
        return false;
    }
    let index = &scan.def.indexes[scan.access.index];
    if index.columns.get(scan.access.ranges[0].eq.len()) != Some(&col) {
        return false;
    }
    scan.access.reverse = call.func == AggFunc::Max;
    true
}

/// Serves ORDER BY from an index when the sort columns follow the
/// access path's equality prefix in an index. Returns whether it did.
pub fn use_index_order(scan: &mut TableScan, order: &[(BExpr, bool)], conjuncts: &[BExpr]) -> bool {
    let desc = order[0].1;
    if order.iter().any(|(_, d)| *d != desc) {
        return false;
    }
    let mut cols = Vec::new();
    for (e, _) in order {
        match column_of(e, scan.offset, scan.offset + scan.def.columns.len()) {
            Some(c) => cols.push(c),
            None => return false,
        }
    }
    let fits = |access: &Access| -> bool {
        if access.ranges.len() != 1 {
            return false;
        }
        let index = &scan.def.indexes[access.index];
        let eq = access.ranges[0].eq.len();
        index.columns.len() >= eq + cols.len() && index.columns[eq..eq + cols.len()] == cols[..]
    };
    if fits(&scan.access) && index_hints::orders(&scan.hints, scan.access.index) {
        scan.access.reverse = desc;
        return true;
    }
    if scan.access.is_full_scan() {
        // A full scan in the order of an index that starts with the sort columns.
        let _ = conjuncts;
        for (idx, index) in scan.def.indexes.iter().enumerate() {
            if !index_hints::orders(&scan.hints, idx) {
                continue;
            }
            if index.columns.len() >= cols.len() && index.columns[..cols.len()] == cols[..] {
                scan.access = Access {
                    index: idx,
                    ranges: vec![KeyRange::default()],
                    reverse: desc,
                };
                return true;
            }
        }
    }
    false
}

// ---------- DML ----------

/// Scope of a single table's stored row, at offset 0.
pub fn table_scope(def: &TableDef, qualifier: &str) -> Scope {
    let mut scope = Scope::default();
    base_columns(def, qualifier, 0, &mut scope);
    scope
}

/// How VALUES(col) reaches the row being inserted (a name no query can
/// give a table).
const NEW_ROW: &str = " new row";

/// The scope of ON DUPLICATE KEY UPDATE: the existing row under the
/// table's name, and after it the row being inserted, reached by
/// VALUES(col) and by the row alias (`AS new`: `new.col`; with column
/// aliases `AS new(a, b)` also by `a` alone, for the INSERT's columns).
fn new_row_scope(
    def: &TableDef,
    targets: &[usize],
    alias: Option<&(String, Vec<String>)>,
) -> Result<Scope> {
    let mut scope = table_scope(def, &def.name);
    let width = def.columns.len();
    let existing = scope.columns.clone();
    let mut add = |qualifier: &str, name: &str, c: &ScopeColumn, merged: bool| {
        scope.columns.push(ScopeColumn {
            qualifier: qualifier.to_string(),
            name: name.to_string(),
            index: width + c.index,
            merged,
            ..c.clone()
        });
    };
    for c in &existing {
        add(NEW_ROW, &c.name, c, true);
    }
    match alias {
        Some((row, names)) if names.is_empty() => {
            existing.iter().for_each(|c| add(row, &c.name, c, true));
        }
        Some((row, names)) => {
            if names.len() != targets.len() {
                return Err(Error::new(
                    Code::ViewWrongList,
                    "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
                ));
            }
            for (name, &pos) in names.iter().zip(targets) {
                let c = existing.iter().find(|c| c.index == pos);
                let c = c.ok_or_else(|| Error::internal("insert target outside the table"))?;
                add(row, name, c, false);
            }
        }
        None => {}
    }
    scope.types.extend_from_within(..width);
    scope.width = 2 * width;
    Ok(scope)
}

impl Binder<'_> {
    fn column_position(def: &TableDef, name: &str) -> Result<usize> {
        def.column_index(name)
            .filter(|i| Some(*i) != def.hidden_row_id)
            .ok_or_else(|| Error::bad_field(name, "field list"))
    }

    pub fn bind_insert(&mut self, ins: &ast::Insert) -> Result<InsertPlan> {
        let table = self.table(&ins.table)?;
        self.note_ref(&table, &ins.table.name);
        let def = table.def();
        // VALUES () with no column list: a row of defaults.
        let empty_rows = matches!(&ins.source, ast::InsertSource::Values(rows)
            if rows.iter().all(|r| r.is_empty()));
        let targets: Vec<usize> = if ins.columns.is_empty() && empty_rows {
            Vec::new()
        } else if ins.columns.is_empty() {
            def.visible_columns().map(|(i, _)| i).collect()
        } else {
            ins.columns
                .iter()
                .map(|c| Self::column_position(&def, c))
                .collect::<Result<_>>()?
        };
        let generated = self.catalog.generated(table.id);
        super::generated::check_insert(&generated, &def, &targets, &ins.source)?;
        let empty = Scope::default();
        let source = match &ins.source {
            ast::InsertSource::Values(rows) => {
                let mut out = Vec::with_capacity(rows.len());
                for (n, r) in rows.iter().enumerate() {
                    if r.len() != targets.len() {
                        return Err(Error::new(
                            Code::WrongValueCountOnRow,
                            format!("Column count doesn't match value count at row {}", n + 1),
                        ));
                    }
                    let mut row = Vec::with_capacity(r.len());
                    for (e, t) in r.iter().zip(&targets) {
                        let b = self.bind_expr(e, &empty)?;
                        let b = self.binary_into_text(b, &def.columns[*t]);
                        let from = infer(&b, &empty.types).0;
                        row.push(text_form::assigned(b, from, def.columns[*t].data_type));
                    }
                    out.push(row);
                }
                InsertSource::Values(out)
            }
            ast::InsertSource::Query(q) => InsertSource::Query(Arc::new(self.bind_query(q)?)),
        };
        // ON DUPLICATE KEY UPDATE sees the existing row at 0.. and the
        // row being inserted at width.. (VALUES(col), or the row alias).
        let mut on_duplicate = Vec::new();
        if !ins.on_duplicate.is_empty() {
            let scope = new_row_scope(&def, &targets, ins.row_alias.as_ref())?;
            for (col, e) in &ins.on_duplicate {
                let pos = Self::column_position(&def, col)?;
                if super::generated::skip_assignment(&generated, &def, pos, e)? {
                    continue;
                }
                on_duplicate.push((pos, self.bind_expr(e, &scope)?));
            }
        }
        Ok(InsertPlan {
            table,
            def,
            targets,
            source,
            ignore: ins.ignore,
            replace: ins.replace,
            on_duplicate,
        })
    }

    /// A binary string literal (hex, `_binary`, any string literal under
    /// SET NAMES binary) for a text column in another character set than
    /// utf8mb4: its bytes are text in that set, decoded here to the UTF-8
    /// rows hold (bytes not valid in the set stay, for the store's 1366).
    fn binary_into_text(&self, b: BExpr, c: &lockstep_tables::ColumnDef) -> BExpr {
        let Some(cs) = crate::charset::non_utf8(c.collation) else {
            return b;
        };
        let bytes = match &b {
            BExpr::Cast(x, ast::CastType::Binary) => match &**x {
                BExpr::Literal(Value::Bytes(bytes)) => bytes,
                _ => return b,
            },
            BExpr::Literal(Value::Bytes(bytes)) if self.binary_connection => bytes,
            _ => return b,
        };
        if !c.data_type.is_string() {
            return b;
        }
        match crate::charset::decode_strict(bytes, cs) {
            Some(s) => BExpr::Literal(Value::Bytes(s.into_bytes())),
            None => b,
        }
    }

    /// VALUES(col): in ON DUPLICATE KEY UPDATE the value the row being
    /// inserted has for `col`; anywhere else NULL, as in MySQL.
    fn values_of(&mut self, args: &[Expr], scope: &Scope) -> Result<BExpr> {
        let [arg @ Expr::Column { name, .. }] = args else {
            return Err(Error::parse("VALUES("));
        };
        match scope.resolve(Some(NEW_ROW), name)? {
            Some(c) => Ok(session_time(BExpr::Column(c.index), c.stored_utc)),
            None => {
                self.bind_expr(arg, scope)?;
                Ok(BExpr::Literal(Value::Null))
            }
        }
    }

    pub fn bind_update(&mut self, u: &ast::Update) -> Result<ModifyPlan> {
        let table = self.table(&u.table)?;
        let def = table.def();
        let qualifier = u.alias.clone().unwrap_or_else(|| u.table.name.clone());
        self.note_ref(&table, &qualifier);
        let scope = table_scope(&def, &qualifier);
        let mut assignments = Vec::new();
        let generated = self.catalog.generated(table.id);
        for (col, e) in &u.assignments {
            let pos = match col.rsplit_once('.') {
                // `t.col` or `db.t.col` must name the table.
                Some((q, name)) if q.rsplit('.').next() == Some(&qualifier) => {
                    def.column_index(name)
                }
                Some(_) => None,
                None => def.column_index(col),
            };
            let pos = pos
                .filter(|i| Some(*i) != def.hidden_row_id)
                .ok_or_else(|| Error::bad_field(col, "field list"))?;
            if super::generated::skip_assignment(&generated, &def, pos, e)? {
                continue;
            }
            let b = match e {
                Expr::Default => {
                    let c = &def.columns[pos];
                    let default = BExpr::Literal(c.default.clone().unwrap_or(Value::Null));
                    // A TIMESTAMP's default is kept in UTC.
                    session_time(default, is_timestamp(c.data_type))
                }
                e => {
                    let b = self.bind_expr(e, &scope)?;
                    let from = infer(&b, &scope.types).0;
                    text_form::assigned(b, from, def.columns[pos].data_type)
                }
            };
            assignments.push((pos, b));
        }
        let plan = self.bind_modify(
            table,
            def,
            &scope,
            &u.selection,
            &u.order_by,
            &u.limit,
            assignments,
        )?;
        Ok(ModifyPlan {
            ignore: u.ignore,
            ..plan
        })
    }

    pub fn bind_delete(&mut self, d: &ast::Delete) -> Result<ModifyPlan> {
        let table = self.table(&d.table)?;
        let def = table.def();
        let qualifier = d.alias.clone().unwrap_or_else(|| d.table.name.clone());
        self.note_ref(&table, &qualifier);
        let scope = table_scope(&def, &qualifier);
        let plan = self.bind_modify(
            table,
            def,
            &scope,
            &d.selection,
            &d.order_by,
            &d.limit,
            Vec::new(),
        )?;
        Ok(ModifyPlan {
            ignore: d.ignore,
            ..plan
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn bind_modify(
        &mut self,
        table: Arc<Table>,
        def: Arc<TableDef>,
        scope: &Scope,
        selection: &Option<Expr>,
        order_by: &[ast::OrderItem],
        limit: &Option<Expr>,
        assignments: Vec<(usize, BExpr)>,
    ) -> Result<ModifyPlan> {
        self.clause = "where clause";
        let filter = selection
            .as_ref()
            .map(|e| self.bind_expr(e, scope).map(|b| collated(b, &scope.types)))
            .transpose()?;
        self.clause = "order clause";
        let mut order = Vec::new();
        for o in order_by {
            let b = self.bind_expr(&o.expr, scope)?;
            order.push((group_concat::sort_key(b, &scope.types), o.desc));
        }
        let limit = limit
            .as_ref()
            .map(|e| self.bind_expr(e, &Scope::default()))
            .transpose()?;
        let conjuncts = filter.as_ref().map(split_conjuncts).unwrap_or_default();
        let mut scan = TableScan {
            table: table.clone(),
            alias: def.name.clone(),
            def: def.clone(),
            offset: 0,
            access: Access::full(),
            needed: None,
            range_check: None,
            hints: None,
            filter: None,
        };
        scan.access = best_access(&scan, &conjuncts, &self.known);
        let ordered_by_index = !order.is_empty() && use_index_order(&mut scan, &order, &conjuncts);
        let (filter, range_check) = take_implied(conjuncts, &def, 0, &scan.access);
        scan.range_check = range_check;
        Ok(ModifyPlan {
            table,
            def,
            scan,
            filter,
            order,
            ordered_by_index,
            limit,
            assignments,
            ignore: false,
        })
    }
}

/// USING (cols) between the columns `start..left_end` (left) and
/// `left_end..` (right) of `scope`: the equalities to join on. Each right
/// column is merged into its left twin (the left side is the preserved
/// one of an outer join), and the merged columns come first in `*`.
fn merge_using(
    scope: &mut Scope,
    start: usize,
    left_end: usize,
    cols: &[String],
) -> Result<Option<BExpr>> {
    let mut cond: Option<BExpr> = None;
    let mut front = Vec::new();
    for c in cols {
        let find = |range: std::ops::Range<usize>, s: &Scope| {
            range
                .into_iter()
                .find(|&i| !s.columns[i].merged && s.columns[i].name.eq_ignore_ascii_case(c))
        };
        let (Some(l), Some(r)) = (
            find(start..left_end, scope),
            find(left_end..scope.columns.len(), scope),
        ) else {
            return Err(Error::bad_field(c, "from clause"));
        };
        scope.columns[r].merged = true;
        let eq = BExpr::Binary(
            BinaryOp::Eq,
            Box::new(BExpr::Column(scope.columns[l].index)),
            Box::new(BExpr::Column(scope.columns[r].index)),
        );
        cond = Some(match cond {
            None => eq,
            Some(prev) => BExpr::Binary(BinaryOp::And, Box::new(prev), Box::new(eq)),
        });
        front.push(l);
    }
    // Coalesced columns first, in the order USING names them.
    let mut reordered: Vec<ScopeColumn> = front.iter().map(|&i| scope.columns[i].clone()).collect();
    for (i, c) in scope.columns.iter().enumerate().skip(start) {
        if !front.contains(&i) {
            reordered.push(c.clone());
        }
    }
    scope.columns.truncate(start);
    scope.columns.extend(reordered);
    Ok(cond)
}

/// The column names both sides of a NATURAL join have, in left order.
fn common_names(columns: &[ScopeColumn], left_len: usize) -> Vec<String> {
    let (left, right) = columns.split_at(left_len);
    left.iter()
        .filter(|l| !l.merged)
        .filter(|l| {
            right
                .iter()
                .any(|r| !r.merged && r.name.eq_ignore_ascii_case(&l.name))
        })
        .map(|l| l.name.clone())
        .collect()
}

/// After a RIGHT JOIN was bound as a LEFT JOIN of its swapped sides: the
/// written left side's columns come first again (`*` lists them in the
/// written order), after any merged USING columns.
fn written_order(scope: &mut Scope, start: usize, left_end: usize) {
    let segment: Vec<ScopeColumn> = scope.columns.drain(start..).collect();
    let bound_first = left_end - start;
    let (preserved, other) = segment.split_at(bound_first);
    let using: Vec<&ScopeColumn> = preserved
        .iter()
        .filter(|c| is_using_front(c, other))
        .collect();
    let rest_first: Vec<&ScopeColumn> = preserved
        .iter()
        .filter(|c| !is_using_front(c, other))
        .collect();
    scope.columns.extend(using.into_iter().cloned());
    scope.columns.extend(other.iter().cloned());
    scope.columns.extend(rest_first.into_iter().cloned());
}

/// A preserved-side column whose twin on the other side was merged into it.
fn is_using_front(c: &ScopeColumn, other: &[ScopeColumn]) -> bool {
    other
        .iter()
        .any(|o| o.merged && o.name.eq_ignore_ascii_case(&c.name))
}

/// NOW(n), SYSDATE(n), CURTIME(n), UTC_TIMESTAMP(n), UTC_TIME(n): MySQL
/// refuses n over 6 with 1426, naming the function as MySQL does (a
/// synonym by its main name).
fn fsp_argument(f: Func, args: &[BExpr]) -> Result<()> {
    let name = match f {
        Func::Now => "now",
        Func::SysDate => "sysdate",
        Func::UtcTimestamp => "utc_timestamp",
        Func::CurTime => "curtime",
        Func::UtcTime => "utc_time",
        _ => return Ok(()),
    };
    match args.first().and_then(|a| match a {
        BExpr::Literal(v) => v.to_i64(),
        _ => None,
    }) {
        Some(n) if n > 6 => Err(Error::new(
            Code::TooBigPrecision,
            format!("Too-big precision {n} specified for '{name}'. Maximum is 6."),
        )),
        _ => Ok(()),
    }
}
