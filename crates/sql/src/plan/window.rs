//! Window functions in the binder: taking `f(..) OVER (..)` calls out of
//! the select list and ORDER BY, resolving named windows (WINDOW w AS ..)
//! with MySQL's inheritance rules, and building the [`WindowPlan`] the
//! executor (`exec/window.rs`) runs after WHERE, GROUP BY and HAVING.
//!
//! Each call's value is computed into a slot of the row past the values
//! the query has before windowing (the source row, or the aggregate row),
//! so the projection and ORDER BY read it as a plain column.

use super::{avg_type, infer, is_aggregate_name, sum_type, Binder};
use crate::expr::{collate_key, BExpr, Func};
use crate::parser::{BinaryOp, Expr, FrameBound, UnaryOp, WindowCall, WindowSpec};
use crate::plan::{AggCall, AggFunc};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

type Result<T> = std::result::Result<T, Error>;

/// The window stage of a SELECT.
#[derive(Debug)]
pub struct WindowPlan {
    /// Width of the rows the stage hands on; every call fills its slot.
    pub width: usize,
    /// Distinct (PARTITION BY, ORDER BY) pairs: one sort each.
    pub sorts: Vec<WindowSort>,
    pub funcs: Vec<WindowFunc>,
}

#[derive(Debug)]
pub struct WindowSort {
    /// Compared under the collation (text keys folded).
    pub partition: Vec<BExpr>,
    pub order: Vec<(BExpr, bool)>,
}

#[derive(Debug)]
pub struct WindowFunc {
    pub kind: WinKind,
    /// The value argument (None: ranking functions, COUNT(*)).
    pub arg: Option<BExpr>,
    /// NTILE's buckets, LAG/LEAD's offset, NTH_VALUE's n: a constant or a
    /// placeholder, checked when the statement runs.
    pub n: Option<BExpr>,
    /// LAG/LEAD's default, over the current row.
    pub default: Option<BExpr>,
    /// Index into `WindowPlan::sorts`.
    pub sort: usize,
    pub frame: Frame,
    pub slot: usize,
    /// The function's name as MySQL prints it in errors (lower case).
    pub name: String,
    /// The window's name as errors print it.
    pub window: String,
}

#[derive(Clone, Debug)]
pub enum WinKind {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    NthValue,
    /// An aggregate over the frame.
    Agg(AggCall),
}

#[derive(Debug)]
pub struct Frame {
    pub rows: bool,
    pub start: Bound,
    pub end: Bound,
}

#[derive(Debug)]
pub enum Bound {
    UnboundedPreceding,
    CurrentRow,
    UnboundedFollowing,
    /// ROWS n PRECEDING / FOLLOWING: n a constant or placeholder.
    Rows {
        n: BExpr,
        preceding: bool,
    },
    /// RANGE: `target` is the ORDER BY value the bound reaches from the
    /// current row (key ± n in the sort's direction); `n` is checked.
    Range {
        target: BExpr,
        n: BExpr,
    },
}

impl WindowPlan {
    /// Every expression the stage evaluates over its input rows.
    pub fn for_each_expr(&self, f: &mut dyn FnMut(&BExpr)) {
        for s in &self.sorts {
            s.partition.iter().for_each(&mut *f);
            s.order.iter().for_each(|(e, _)| f(e));
        }
        for w in &self.funcs {
            w.arg.iter().chain(&w.n).chain(&w.default).for_each(&mut *f);
            for b in [&w.frame.start, &w.frame.end] {
                match b {
                    Bound::Rows { n, .. } => f(n),
                    Bound::Range { target, n } => {
                        f(target);
                        f(n)
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Calls `f` on every window call of `e` outside aggregates and
/// subqueries (those stay where they are and are refused when bound).
fn visit(e: &mut Expr, f: &mut dyn FnMut(&mut WindowCall)) {
    match e {
        Expr::Window(w) => f(w),
        Expr::Function { name, args, .. } if !is_aggregate_name(name) => {
            args.iter_mut().for_each(|a| visit(a, f))
        }
        Expr::Unary { expr, .. }
        | Expr::IsNull { expr, .. }
        | Expr::IsBool { expr, .. }
        | Expr::Cast { expr, .. }
        | Expr::InSubquery { expr, .. }
        | Expr::Interval { value: expr, .. } => visit(expr, f),
        Expr::Binary { left, right, .. } => {
            visit(left, f);
            visit(right, f);
        }
        Expr::InList { expr, list, .. } => {
            visit(expr, f);
            list.iter_mut().for_each(|a| visit(a, f));
        }
        Expr::Between {
            expr, low, high, ..
        } => {
            visit(expr, f);
            visit(low, f);
            visit(high, f);
        }
        Expr::Like { expr, pattern, .. } => {
            visit(expr, f);
            visit(pattern, f);
        }
        Expr::Case {
            operand,
            branches,
            else_result,
        } => {
            for x in operand.iter_mut().chain(else_result.iter_mut()) {
                visit(x, f);
            }
            for (w, t) in branches {
                visit(w, f);
                visit(t, f);
            }
        }
        Expr::Row(items) => items.iter_mut().for_each(|a| visit(a, f)),
        _ => {}
    }
}

/// Whether `e` holds a window call where it would be computed.
pub fn has_window(e: &Expr) -> bool {
    first_window(e).is_some()
}

/// The first window call of `e`, where it would be computed.
fn first_window(e: &Expr) -> Option<WindowCall> {
    let mut found = None;
    visit(&mut e.clone(), &mut |w| {
        found.get_or_insert_with(|| w.clone());
    });
    found
}

/// The window calls of a query block, numbered in the order met.
#[derive(Default)]
pub struct Windows {
    pub calls: Vec<WindowCall>,
    /// Select-list aliases a window's PARTITION BY / ORDER BY may name,
    /// with their expressions (as ORDER BY may).
    aliases: Vec<(String, Expr)>,
}

impl Windows {
    /// Notes the select items' aliases (once calls were met: a query
    /// without windows copies nothing).
    pub fn note_aliases(&mut self, items: &[(Expr, String, Option<&super::ScopeColumn>)]) {
        if self.calls.is_empty() {
            return;
        }
        self.aliases = items
            .iter()
            .filter(|(e, alias, _)| {
                !matches!(e, Expr::Column { name, .. } if name.eq_ignore_ascii_case(alias))
            })
            .map(|(e, alias, _)| (alias.clone(), e.clone()))
            .collect();
    }

    /// `e`, or the select item it names by its alias.
    fn unalias<'e>(&'e self, e: &'e Expr) -> &'e Expr {
        match e {
            Expr::Column { table: None, name } => self
                .aliases
                .iter()
                .find(|(a, _)| a.eq_ignore_ascii_case(name))
                .map_or(e, |(_, x)| x),
            _ => e,
        }
    }

    /// `e` with each window call numbered (its slot, relative until
    /// [`place`]); equal calls share a number.
    pub fn extract(&mut self, e: &Expr) -> Expr {
        let mut e = e.clone();
        visit(&mut e, &mut |w| {
            let k = match self.calls.iter().position(|c| c == &*w) {
                Some(k) => k,
                None => {
                    self.calls.push(w.clone());
                    self.calls.len() - 1
                }
            };
            w.slot = Some(k);
        });
        e
    }

    /// Whether an argument or window of some call holds an aggregate: the
    /// query groups (`SUM(SUM(x)) OVER ()`).
    pub fn has_aggregate(&self) -> bool {
        self.calls.iter().any(|c| {
            let Expr::Function { args, .. } = &c.func else {
                return false;
            };
            args.iter()
                .chain(&c.window.partition_by)
                .chain(c.window.order_by.iter().map(|o| &o.expr))
                .any(super::contains_aggregate)
        })
    }
}

/// 3594: GROUP BY or HAVING naming the alias of a select item that holds
/// a window function (its value does not exist yet there).
pub fn check_aliases(
    s: &crate::parser::Select,
    items: &[(Expr, String, Option<&super::ScopeColumn>)],
) -> Result<()> {
    let windowed = |name: &str| {
        items.iter().any(|(e, alias, _)| {
            let mut found = false;
            if alias.eq_ignore_ascii_case(name) {
                crate::parser::visit_expr(e, &mut |x| found |= matches!(x, Expr::Window(_)));
            }
            found
        })
    };
    let mut found: Option<String> = None;
    let mut look = |e: &Expr| {
        if let Expr::Column { table: None, name } = e {
            if found.is_none() && windowed(name) {
                found = Some(name.clone());
            }
        }
    };
    s.group_by.iter().for_each(&mut look);
    if let Some(h) = &s.having {
        crate::parser::visit_expr(h, &mut look);
    }
    match found {
        Some(name) => Err(Error::new(
            Code::WindowInvalidFuncAliasUse,
            format!("You cannot use the alias '{name}' of an expression containing a window function in this context.'"),
        )),
        None => Ok(()),
    }
}

/// Reserves a slot of type `ty` in the aggregate row for a value the
/// executor computes after grouping: a call that yields NULL until the
/// executor overwrites it. Returns the slot.
pub(super) fn reserve_slot(ctx: &mut super::AggContext, ty: (DataType, bool)) -> usize {
    ctx.calls.push(AggCall {
        func: AggFunc::AnyValue,
        arg: Some(BExpr::Literal(Value::Null)),
        distinct: false,
        text: Vec::new(),
        separator: Vec::new(),
        order: Vec::new(),
    });
    ctx.call_types.push(ty);
    ctx.group_ast.len() + ctx.calls.len() - 1
}

/// Moves every window call (in `plan` and in `exprs`) from its number to
/// slot `base + number`.
fn place(plan: &mut WindowPlan, base: usize, exprs: &mut [&mut Vec<Expr>]) -> WindowPlan {
    for e in exprs.iter_mut().flat_map(|v| v.iter_mut()) {
        visit(e, &mut |w| w.slot = w.slot.map(|k| k + base));
    }
    for f in &mut plan.funcs {
        f.slot += base;
    }
    WindowPlan {
        width: base + plan.funcs.len(),
        sorts: std::mem::take(&mut plan.sorts),
        funcs: std::mem::take(&mut plan.funcs),
    }
}

fn window_error(code: Code, msg: String) -> Error {
    Error::new(code, msg)
}

const UNNAMED: &str = "<unnamed window>";

/// Checks the WINDOW clause: names unique, references defined, no cycles,
/// and every window valid once inherited (unused ones too, as MySQL).
pub fn check_named(named: &[(String, WindowSpec)]) -> Result<()> {
    for (i, (name, _)) in named.iter().enumerate() {
        if named[..i].iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Err(window_error(
                Code::WindowDuplicateName,
                format!("Window '{name}' is defined twice."),
            ));
        }
    }
    for (name, spec) in named {
        resolve(name, spec, named)?;
    }
    Ok(())
}

/// `spec` with what it inherits from the named window it refines.
pub fn resolve(
    name: &str,
    spec: &WindowSpec,
    named: &[(String, WindowSpec)],
) -> Result<WindowSpec> {
    let mut out = spec.clone();
    let mut seen: Vec<&str> = vec![name];
    let mut child = name.to_string();
    let mut base = spec.base.clone();
    let child_partitions = !spec.partition_by.is_empty();
    while let Some(b) = base {
        let Some((bname, bspec)) = named.iter().find(|(n, _)| n.eq_ignore_ascii_case(&b)) else {
            return Err(window_error(
                Code::WindowNoSuchWindow,
                format!("Window name '{b}' is not defined."),
            ));
        };
        if seen.iter().any(|s| s.eq_ignore_ascii_case(bname)) {
            return Err(window_error(
                Code::WindowCircularity,
                "There is a circularity in the window dependency graph.".into(),
            ));
        }
        seen.push(bname);
        if child_partitions {
            return Err(window_error(
                Code::WindowNoChildPartitioning,
                "A window which depends on another cannot define partitioning.".into(),
            ));
        }
        if bspec.frame.is_some() {
            return Err(window_error(
                Code::WindowNoInheritFrame,
                format!("Window '{bname}' has a frame definition, so cannot be referenced by another window."),
            ));
        }
        if !out.order_by.is_empty() && !bspec.order_by.is_empty() {
            return Err(window_error(
                Code::WindowNoRedefineOrderBy,
                format!("Window '{child}' cannot inherit '{bname}' since both contain an ORDER BY clause."),
            ));
        }
        if out.order_by.is_empty() {
            out.order_by = bspec.order_by.clone();
        }
        out.partition_by = bspec.partition_by.clone();
        child = bname.clone();
        base = bspec.base.clone();
    }
    out.base = None;
    Ok(out)
}

/// How the expressions of window calls bind: over the source row, or over
/// the aggregate row (adding aggregate calls as they are met).
pub type BindFn<'b, 'a> =
    dyn FnMut(&mut Binder<'a>, &Expr) -> Result<(BExpr, (DataType, bool))> + 'b;

/// What binding the calls gives: the plan (slots relative, width not yet
/// known) and each call's result type, by number.
pub struct BoundWindows {
    pub plan: WindowPlan,
    pub types: Vec<(DataType, bool)>,
}

impl<'a> Binder<'a> {
    /// Windows over the aggregate row (`SUM(SUM(x)) OVER ()`): their
    /// arguments add aggregate calls; their values take slots reserved as
    /// placeholder calls after those, which the window stage fills.
    pub(super) fn windows_over_groups(
        &mut self,
        w: &Windows,
        named: &[(String, WindowSpec)],
        scope: &super::Scope,
        ctx: &mut super::AggContext,
        exprs: &mut [&mut Vec<Expr>],
    ) -> Result<Option<WindowPlan>> {
        if w.calls.is_empty() && named.is_empty() {
            return Ok(None);
        }
        let mut bind = |b: &mut Binder<'a>, e: &Expr| {
            let x = b.bind_agg_expr(e, scope, ctx)?;
            let mut types = ctx.group_types.clone();
            types.extend(ctx.call_types.iter().cloned());
            let t = infer(&x, &types);
            Ok((x, t))
        };
        let mut bound = self.bind_windows(w, named, &mut bind)?;
        let base = ctx.group_ast.len() + ctx.calls.len();
        for t in bound.types {
            reserve_slot(ctx, t);
        }
        Ok(Some(place(&mut bound.plan, base, exprs)))
    }

    /// Windows over the source row: their values go past its end, and
    /// `types` (the row's types) grows by their types.
    pub(super) fn windows_over_rows(
        &mut self,
        w: &Windows,
        named: &[(String, WindowSpec)],
        scope: &super::Scope,
        types: &mut Vec<(DataType, bool)>,
        exprs: &mut [&mut Vec<Expr>],
    ) -> Result<Option<WindowPlan>> {
        if w.calls.is_empty() && named.is_empty() {
            return Ok(None);
        }
        let mut bind = |b: &mut Binder<'a>, e: &Expr| {
            let x = b.bind_expr(e, scope)?;
            let t = infer(&x, &scope.types);
            Ok((x, t))
        };
        let mut bound = self.bind_windows(w, named, &mut bind)?;
        let base = scope.width.max(scope.types.len());
        types.resize(base, (DataType::Null, true));
        types.extend(bound.types);
        Ok(Some(place(&mut bound.plan, base, exprs)))
    }

    /// Binds the window calls `w` and checks the WINDOW clause.
    fn bind_windows(
        &mut self,
        w: &Windows,
        named: &[(String, WindowSpec)],
        bind: &mut BindFn<'_, 'a>,
    ) -> Result<BoundWindows> {
        check_named(named)?;
        let mut plan = WindowPlan {
            width: 0,
            sorts: Vec::new(),
            funcs: Vec::new(),
        };
        let mut types = Vec::new();
        // The windows (as written, after inheritance) of plan.sorts.
        let mut sorts: Vec<WindowSpec> = Vec::new();
        for (k, call) in w.calls.iter().enumerate() {
            let spec = match &call.window.base {
                // OVER w / OVER (w): the named window itself.
                Some(b) if is_bare(&call.window) => {
                    let found = named.iter().find(|(n, _)| n.eq_ignore_ascii_case(b));
                    let Some((n, s)) = found else {
                        return Err(window_error(
                            Code::WindowNoSuchWindow,
                            format!("Window name '{b}' is not defined."),
                        ));
                    };
                    (n.clone(), resolve(n, s, named)?)
                }
                _ => (UNNAMED.to_string(), resolve(UNNAMED, &call.window, named)?),
            };
            let (mut func, ty) = self.bind_window_call(call, &spec, w, &mut plan, bind)?;
            let same = |s: &WindowSpec| {
                s.partition_by == spec.1.partition_by && s.order_by == spec.1.order_by
            };
            match sorts.iter().position(same) {
                // An equal window sorted already: the new sort goes.
                Some(i) => {
                    plan.sorts.truncate(func.sort);
                    func.sort = i;
                }
                None => sorts.push(spec.1.clone()),
            }
            plan.funcs.push(WindowFunc { slot: k, ..func });
            types.push(ty);
        }
        self.check_unused(w, named, bind)?;
        Ok(BoundWindows { plan, types })
    }

    /// Binds (and drops) the windows of the WINDOW clause nothing refers
    /// to: MySQL checks them like the others (unknown columns, nested
    /// window functions, positions, frames).
    fn check_unused(
        &mut self,
        w: &Windows,
        named: &[(String, WindowSpec)],
        bind: &mut BindFn<'_, 'a>,
    ) -> Result<()> {
        let refers = |n: &str, spec: &WindowSpec| {
            spec.base
                .as_deref()
                .is_some_and(|b| b.eq_ignore_ascii_case(n))
        };
        for (name, spec) in named {
            let used = w.calls.iter().any(|c| refers(name, &c.window))
                || named.iter().any(|(_, s)| refers(name, s));
            if used {
                continue;
            }
            let spec = resolve(name, spec, named)?;
            let np = spec.partition_by.len();
            let (mut order, mut types) = (Vec::new(), Vec::new());
            let exprs = spec
                .partition_by
                .iter()
                .chain(spec.order_by.iter().map(|o| &o.expr));
            for (i, e) in exprs.enumerate() {
                check_position(e, name)?;
                if has_window(w.unalias(e)) {
                    return Err(nested_in_spec(name));
                }
                let (b, t) = bind(self, w.unalias(e))?;
                if i >= np {
                    order.push(b);
                    types.push(t.0);
                }
            }
            self.bind_frame(&spec, name, &order, &types)?;
        }
        Ok(())
    }

    /// One call: its sort (shared with equal windows), frame and arguments.
    fn bind_window_call(
        &mut self,
        call: &WindowCall,
        (wname, spec): &(String, WindowSpec),
        w: &Windows,
        plan: &mut WindowPlan,
        bind: &mut BindFn<'_, 'a>,
    ) -> Result<(WindowFunc, (DataType, bool))> {
        let nested = spec
            .partition_by
            .iter()
            .chain(spec.order_by.iter().map(|o| &o.expr))
            .any(|e| has_window(w.unalias(e)));
        if nested {
            return Err(nested_in_spec(wname));
        }
        let mut sort = WindowSort {
            partition: Vec::new(),
            order: Vec::new(),
        };
        for p in &spec.partition_by {
            check_position(p, wname)?;
            let (b, t) = bind(self, w.unalias(p))?;
            sort.partition.push(collate_key(b, t.0.is_string()));
        }
        let mut order_types = Vec::new();
        let mut order_raw = Vec::new();
        for o in &spec.order_by {
            check_position(&o.expr, wname)?;
            let (b, t) = bind(self, w.unalias(&o.expr))?;
            order_raw.push(b.clone());
            // As a query's ORDER BY: an ENUM / SET by its member number.
            let key = crate::plan::enumset::sort_key_of(b, t.0);
            sort.order.push((collate_key(key, t.0.is_string()), o.desc));
            order_types.push(t.0);
        }
        let frame = self.bind_frame(spec, wname, &order_raw, &order_types)?;
        plan.sorts.push(sort);
        let (mut func, ty) = self.bind_window_func(call, bind)?;
        func.sort = plan.sorts.len() - 1;
        func.frame = frame;
        func.window = wname.to_string();
        Ok((func, ty))
    }

    /// The frame of `spec`, or MySQL's default: RANGE UNBOUNDED PRECEDING
    /// to CURRENT ROW (peers included) with ORDER BY, else the partition.
    fn bind_frame(
        &mut self,
        spec: &WindowSpec,
        wname: &str,
        order: &[BExpr],
        order_types: &[DataType],
    ) -> Result<Frame> {
        let Some(f) = &spec.frame else {
            let end = match order.is_empty() {
                true => Bound::UnboundedFollowing,
                false => Bound::CurrentRow,
            };
            return Ok(Frame {
                rows: false,
                start: Bound::UnboundedPreceding,
                end,
            });
        };
        if f.start == FrameBound::UnboundedFollowing {
            return Err(window_error(
                Code::WindowFrameStartIllegal,
                format!("Window '{wname}': frame start cannot be UNBOUNDED FOLLOWING."),
            ));
        }
        if f.end == FrameBound::UnboundedPreceding {
            return Err(window_error(
                Code::WindowFrameEndIllegal,
                format!("Window '{wname}': frame end cannot be UNBOUNDED PRECEDING."),
            ));
        }
        // A frame that ends before it starts, whatever the offsets (SQL
        // 2014 7.15 SR 8.c/d, as MySQL checks).
        let backwards = matches!(
            (&f.start, &f.end),
            (FrameBound::CurrentRow, FrameBound::Preceding(_))
                | (
                    FrameBound::Following(_),
                    FrameBound::CurrentRow | FrameBound::Preceding(_)
                )
        );
        if backwards {
            return Err(frame_illegal(wname));
        }
        let ctx = FrameCtx {
            rows: f.rows,
            desc: spec.order_by.first().is_some_and(|o| o.desc),
            wname,
            order,
            order_types,
        };
        Ok(Frame {
            rows: f.rows,
            start: self.bind_bound(&f.start, &ctx)?,
            end: self.bind_bound(&f.end, &ctx)?,
        })
    }

    fn bind_bound(&mut self, b: &FrameBound, ctx: &FrameCtx) -> Result<Bound> {
        let (value, preceding) = match b {
            FrameBound::UnboundedPreceding => return Ok(Bound::UnboundedPreceding),
            FrameBound::UnboundedFollowing => return Ok(Bound::UnboundedFollowing),
            FrameBound::CurrentRow => return Ok(Bound::CurrentRow),
            FrameBound::Preceding(v) => (v, true),
            FrameBound::Following(v) => (v, false),
        };
        let wname = ctx.wname;
        let (amount, unit) = match value {
            Expr::Interval { value, unit } => (&**value, Some(unit)),
            v => (v, None),
        };
        if !matches!(amount, Expr::Literal(_) | Expr::Param(_)) {
            return Err(window_error(
                Code::WindowRangeBoundNotConstant,
                format!("Window '{wname}' has a non-constant frame bound."),
            ));
        }
        let n = self.bind_expr(amount, &super::Scope::default())?;
        match &n {
            // INTERVAL '1:30' HOUR_MINUTE: text the unit reads.
            BExpr::Literal(Value::Bytes(_)) if unit.is_some() => {}
            BExpr::Literal(v) => check_offset(v, ctx.rows, wname)?,
            _ => {}
        }
        if ctx.rows {
            if unit.is_some() {
                return Err(window_error(
                    Code::WindowRowsIntervalUse,
                    format!("Window '{wname}': INTERVAL can only be used with RANGE frames."),
                ));
            }
            return Ok(Bound::Rows { n, preceding });
        }
        let target = range_target(ctx, unit.map(|u| u.as_str()), &n, preceding)?;
        Ok(Bound::Range { target, n })
    }

    /// The function of a call, its arguments bound; sort, frame and slot
    /// are filled in by the caller.
    fn bind_window_func(
        &mut self,
        call: &WindowCall,
        bind: &mut BindFn<'_, 'a>,
    ) -> Result<(WindowFunc, (DataType, bool))> {
        let Expr::Function {
            name, args, star, ..
        } = &call.func
        else {
            return Err(Error::parse("OVER"));
        };
        let mut bound = Vec::new();
        for a in args {
            if let Some(inner) = first_window(a) {
                return Err(misplaced(&inner));
            }
            bound.push(bind(self, a)?);
        }
        let mut f = WindowFunc {
            kind: WinKind::RowNumber,
            arg: None,
            n: None,
            default: None,
            sort: 0,
            frame: Frame {
                rows: true,
                start: Bound::UnboundedPreceding,
                end: Bound::UnboundedFollowing,
            },
            slot: 0,
            name: name.to_ascii_lowercase(),
            window: String::new(),
        };
        let ty = fill_func(&mut f, name, *star, bound)?;
        Ok((f, ty))
    }
}

type Arg = (BExpr, (DataType, bool));

/// The kind, arguments and result type of a window function `name` with
/// bound arguments `args`.
fn fill_func(
    f: &mut WindowFunc,
    name: &str,
    star: bool,
    args: Vec<Arg>,
) -> Result<(DataType, bool)> {
    let argc = args.len();
    let mut it = args.into_iter();
    let mut value = |f: &mut WindowFunc| {
        let (arg, t) = it.next().expect("counted");
        f.arg = Some(arg);
        (t.0, true)
    };
    let ranking = match name {
        "ROW_NUMBER" => Some(WinKind::RowNumber),
        "RANK" => Some(WinKind::Rank),
        "DENSE_RANK" => Some(WinKind::DenseRank),
        "PERCENT_RANK" => Some(WinKind::PercentRank),
        "CUME_DIST" => Some(WinKind::CumeDist),
        _ => None,
    };
    Ok(match (name, argc) {
        (_, 0) if ranking.is_some() => {
            f.kind = ranking.expect("matched");
            match f.kind {
                WinKind::PercentRank | WinKind::CumeDist => (DataType::Double, false),
                _ => (DataType::BigInt { unsigned: true }, false),
            }
        }
        ("NTILE", 1) => {
            f.kind = WinKind::Ntile;
            f.n = Some(constant_arg(it.next(), name)?);
            (DataType::BigInt { unsigned: true }, false)
        }
        ("LAG" | "LEAD", 1..=3) => {
            f.kind = if name == "LAG" {
                WinKind::Lag
            } else {
                WinKind::Lead
            };
            let (t, _) = value(f);
            f.n = it.next().map(|a| constant_arg(Some(a), name)).transpose()?;
            let d = it.next();
            let merged = match &d {
                Some((_, dt)) => super::merge_types([(t, true), *dt].into_iter()),
                None => t,
            };
            f.default = d.map(|(e, _)| e);
            (merged, true)
        }
        ("FIRST_VALUE", 1) | ("LAST_VALUE", 1) => {
            f.kind = match name {
                "FIRST_VALUE" => WinKind::FirstValue,
                _ => WinKind::LastValue,
            };
            value(f)
        }
        ("NTH_VALUE", 2) => {
            f.kind = WinKind::NthValue;
            let t = value(f);
            f.n = Some(constant_arg(it.next(), name)?);
            t
        }
        (_, 1) | (_, 0) if ranking.is_none() && (argc == 1 || star) => {
            let (call, ty) = window_aggregate(name, star, it.next())?;
            f.arg = call.arg.clone();
            f.kind = WinKind::Agg(call);
            ty
        }
        _ => return Err(Error::parse(format!("{name}("))),
    })
}

/// A bare reference to a named window: `OVER w` or `OVER (w)`.
fn is_bare(w: &WindowSpec) -> bool {
    w.partition_by.is_empty() && w.order_by.is_empty() && w.frame.is_none()
}

/// 3593: a window function where none may stand (WHERE, GROUP BY,
/// HAVING, inside an aggregate or another window function).
pub fn misuse(name: &str) -> Error {
    Error::new(
        Code::WindowInvalidFuncUse,
        format!(
            "You cannot use the window function '{}' in this context.'",
            name.to_ascii_lowercase()
        ),
    )
}

/// The error for a window call `e` left where no window function may be.
pub fn misplaced(w: &WindowCall) -> Error {
    match &w.func {
        Expr::Function { name, .. } => misuse(name),
        _ => misuse("?"),
    }
}

/// 3592: an integer in PARTITION BY / ORDER BY of a window (MySQL once
/// read it as a position).
fn check_position(e: &Expr, wname: &str) -> Result<()> {
    if let Expr::Literal(Value::Int(_) | Value::UInt(_)) = e {
        return Err(window_error(
            Code::WindowIllegalOrderBy,
            format!("Window '{wname}': ORDER BY or PARTITION BY uses legacy position indication which is not supported, use expression."),
        ));
    }
    Ok(())
}

/// NTILE/LAG/LEAD/NTH_VALUE's count: a constant or a placeholder.
fn constant_arg(a: Option<(BExpr, (DataType, bool))>, name: &str) -> Result<BExpr> {
    match a {
        Some((e @ (BExpr::Literal(_) | BExpr::Param(_)), _)) => {
            if let BExpr::Literal(v) = &e {
                check_count(v, name)?;
            }
            Ok(e)
        }
        _ => Err(wrong_arguments(name)),
    }
}

pub fn wrong_arguments(name: &str) -> Error {
    Error::new(
        Code::WrongArguments,
        format!("Incorrect arguments to {}", name.to_ascii_lowercase()),
    )
}

/// A count argument: a non-negative integer (NTILE and NTH_VALUE: at
/// least 1). Returns it.
pub fn check_count(v: &Value, name: &str) -> Result<u64> {
    let ok = match v {
        Value::Int(i) if *i >= 0 => Some(*i as u64),
        Value::UInt(u) => Some(*u),
        _ => None,
    };
    match ok {
        Some(0) if name.eq_ignore_ascii_case("NTILE") || name.eq_ignore_ascii_case("NTH_VALUE") => {
            Err(wrong_arguments(name))
        }
        Some(n) => Ok(n),
        None => Err(wrong_arguments(name)),
    }
}

/// A frame offset: ROWS takes a non-negative integer, RANGE any
/// non-negative number (3586 otherwise).
pub fn check_offset(v: &Value, rows: bool, wname: &str) -> Result<()> {
    let ok = match v {
        Value::Int(i) => *i >= 0,
        Value::UInt(_) => true,
        Value::Decimal(d) => !rows && !d.is_sign_negative(),
        Value::Double(d) => !rows && *d >= 0.0,
        _ => false,
    };
    match ok {
        true => Ok(()),
        false => Err(frame_illegal(wname)),
    }
}

fn nested_in_spec(wname: &str) -> Error {
    window_error(
        Code::WindowNestedFuncInSpec,
        format!("You cannot nest a window function in the specification of window '{wname}'."),
    )
}

fn frame_illegal(wname: &str) -> Error {
    window_error(
        Code::WindowFrameIllegal,
        format!("Window '{wname}': frame start or end is negative, NULL or of non-integral type"),
    )
}

struct FrameCtx<'c> {
    rows: bool,
    /// The (single) ORDER BY key sorts descending.
    desc: bool,
    wname: &'c str,
    order: &'c [BExpr],
    order_types: &'c [DataType],
}

/// The ORDER BY value a RANGE bound reaches: key - n for PRECEDING in an
/// ascending sort, key + n for FOLLOWING (the other way round descending).
fn range_target(ctx: &FrameCtx, unit: Option<&str>, n: &BExpr, preceding: bool) -> Result<BExpr> {
    let wname = ctx.wname;
    let key_type = match ctx.order_types {
        [t] if is_numeric(*t) || is_temporal(*t) => *t,
        _ => {
            return Err(window_error(
                Code::WindowRangeFrameOrderType,
                format!("Window '{wname}' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type"),
            ))
        }
    };
    let temporal = is_temporal(key_type);
    if temporal && unit.is_none() {
        return Err(window_error(
            Code::WindowRangeFrameTemporalType,
            format!("Window '{wname}' with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed."),
        ));
    }
    if !temporal && unit.is_some() {
        return Err(window_error(
            Code::WindowRangeFrameNumericType,
            format!("Window '{wname}' with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed."),
        ));
    }
    // The sort direction of the single key (collate_key left it alone).
    let key = ctx.order[0].clone();
    let minus = preceding != ctx.desc;
    Ok(match unit {
        Some(unit) => {
            if crate::expr::datetime::Unit::parse(unit).is_none() {
                return Err(Error::unsupported(format!("INTERVAL unit {unit}")));
            }
            let mut amount = n.clone();
            if minus {
                amount = BExpr::Unary(UnaryOp::Minus, Box::new(amount));
            }
            let unit = BExpr::Literal(Value::str(&unit.to_ascii_uppercase()));
            BExpr::Func(Func::DateAdd, vec![key, amount, unit])
        }
        None => {
            let op = if minus {
                BinaryOp::Minus
            } else {
                BinaryOp::Plus
            };
            BExpr::Binary(op, Box::new(key), Box::new(n.clone()))
        }
    })
}

fn is_numeric(t: DataType) -> bool {
    t.is_integer()
        || matches!(
            t,
            DataType::Decimal { .. } | DataType::Float | DataType::Double | DataType::Bit { .. }
        )
}

fn is_temporal(t: DataType) -> bool {
    matches!(
        t,
        DataType::Date
            | DataType::DateTime { .. }
            | DataType::Timestamp { .. }
            | DataType::Time { .. }
    )
}

/// An aggregate computed over a frame, and its result type.
fn window_aggregate(
    name: &str,
    star: bool,
    arg: Option<(BExpr, (DataType, bool))>,
) -> Result<(AggCall, (DataType, bool))> {
    let (arg, at) = match arg {
        Some((a, t)) => (Some(a), t.0),
        None => (None, DataType::BigInt { unsigned: false }),
    };
    let (func, ty) = match name {
        "COUNT" if star => (
            AggFunc::CountStar,
            (DataType::BigInt { unsigned: false }, false),
        ),
        "COUNT" => (
            AggFunc::Count,
            (DataType::BigInt { unsigned: false }, false),
        ),
        "SUM" => (AggFunc::Sum, (sum_type(at), true)),
        "AVG" => (AggFunc::Avg, (avg_type(at), true)),
        "MIN" => (AggFunc::Min, (at, true)),
        "MAX" => (AggFunc::Max, (at, true)),
        "BIT_AND" | "BIT_OR" | "BIT_XOR" => {
            let f = match name {
                "BIT_AND" => AggFunc::BitAnd,
                "BIT_OR" => AggFunc::BitOr,
                _ => AggFunc::BitXor,
            };
            (f, (DataType::BigInt { unsigned: true }, false))
        }
        _ => match super::variance_func(name) {
            Some(f) => (f, (DataType::Double, true)),
            None => return Err(Error::parse(format!("{name}("))),
        },
    };
    if star && func != AggFunc::CountStar {
        return Err(Error::parse(format!("{name}(*")));
    }
    let text = vec![super::compares_folded(at)];
    Ok((
        AggCall {
            func,
            arg,
            distinct: false,
            text,
            separator: Vec::new(),
            order: Vec::new(),
        },
        ty,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(base: Option<&str>, order: bool, frame: bool) -> WindowSpec {
        WindowSpec {
            base: base.map(str::to_string),
            partition_by: Vec::new(),
            order_by: match order {
                true => vec![crate::parser::OrderItem {
                    expr: Expr::Column {
                        table: None,
                        name: "a".into(),
                    },
                    desc: false,
                }],
                false => Vec::new(),
            },
            frame: frame.then_some(crate::parser::WindowFrame {
                rows: true,
                start: FrameBound::UnboundedPreceding,
                end: FrameBound::CurrentRow,
            }),
        }
    }

    #[test]
    fn named_window_rules() {
        let n = |v: Vec<(&str, WindowSpec)>| -> Vec<(String, WindowSpec)> {
            v.into_iter().map(|(a, b)| (a.to_string(), b)).collect()
        };
        let cyc = n(vec![
            ("a", spec(Some("b"), false, false)),
            ("b", spec(Some("a"), false, false)),
        ]);
        assert_eq!(check_named(&cyc).unwrap_err().number(), 3580);
        let dup = n(vec![
            ("a", spec(None, false, false)),
            ("A", spec(None, false, false)),
        ]);
        assert_eq!(check_named(&dup).unwrap_err().number(), 3591);
        let frame = n(vec![
            ("a", spec(None, false, true)),
            ("b", spec(Some("a"), false, false)),
        ]);
        assert_eq!(check_named(&frame).unwrap_err().number(), 3582);
        let order = n(vec![
            ("a", spec(None, true, false)),
            ("b", spec(Some("a"), true, false)),
        ]);
        assert_eq!(check_named(&order).unwrap_err().number(), 3583);
        let ok = n(vec![
            ("a", spec(None, true, false)),
            ("b", spec(Some("a"), false, true)),
        ]);
        let r = resolve("b", &ok[1].1, &ok).unwrap();
        assert_eq!(r.order_by.len(), 1);
        assert!(r.frame.is_some());
        let missing = n(vec![("b", spec(Some("zz"), false, false))]);
        assert_eq!(check_named(&missing).unwrap_err().number(), 3579);
    }
}
