//! Runs a compiled program. The statements, queries and variables it
//! touches go through a [`Runner`]: the session's (CALL: awaited) or the
//! executor's (functions and triggers: never pending).

use super::{Op, Program, Target};
use crate::parser::{Expr, HandlerCondition, Query, QueryBody, SelectItem, Statement};
use lockstep_types::error::{intern_sqlstate, Code};
use lockstep_types::{DataType, Error, Value};
use std::collections::VecDeque;

/// Local names and their values, as a statement's binder sees them.
pub type Locals = Vec<(String, Value)>;

#[allow(async_fn_in_trait)]
pub trait Runner {
    /// Runs an ordinary statement; what it assigns to the caller's locals
    /// (a CALL's OUT arguments that name them).
    async fn sql(&mut self, stmt: &Statement, locals: Locals) -> Result<Locals, Error>;
    /// The rows of a query (cursors, SELECT ... INTO, expressions).
    async fn rows(&mut self, q: &Query, locals: Locals) -> Result<Vec<Vec<Value>>, Error>;
    fn set_user(&mut self, name: &str, v: Value);
    fn warn(&mut self, e: Error);
    /// KILL QUERY / max_execution_time, looked at between steps.
    fn check(&self) -> Result<(), Error>;
    /// Bytes an open cursor may hold (the statement's memory cap).
    fn memory_limit(&self) -> usize;
    /// `v` as a variable of type `ty` holds it (a column's conversion:
    /// `expr::store_value`, which sits above this module).
    fn store(&self, v: Value, ty: DataType) -> Result<Value, Error>;
}

/// A running program's state.
pub struct Frame {
    pub slots: Vec<Value>,
    cursors: Vec<Option<VecDeque<Vec<Value>>>>,
}

impl Frame {
    pub fn new(p: &Program, args: Vec<Value>) -> Frame {
        let mut slots = args;
        slots.resize(p.slot_types.len(), Value::Null);
        Frame {
            slots,
            cursors: vec![None; p.cursors.len()],
        }
    }
}

enum Flow {
    Next,
    Goto(usize),
    Return(Value),
    Done,
    HandlerEnd,
    /// SELECT ... INTO found no row: a NOT FOUND handler runs, or a warning.
    NoData,
}

/// `SELECT e`.
pub fn select_of(expr: Expr) -> Query {
    let mut select = crate::parser::empty_select();
    select.projection = vec![SelectItem::Expr {
        expr,
        alias: None,
        name: None,
    }];
    crate::parser::empty_query(QueryBody::Select(Box::new(select)))
}

fn no_data() -> Error {
    Error::new(
        Code::SpFetchNoData,
        "No data - zero rows fetched, selected, or processed",
    )
}

/// Runs `p` to its end: the RETURN value of a function, None otherwise.
pub async fn run<R: Runner>(p: &Program, f: &mut Frame, r: &mut R) -> Result<Option<Value>, Error> {
    let mut pc = 0;
    // Handlers running: (where CONTINUE resumes, handler, its condition).
    let mut active: Vec<(usize, usize, Error)> = Vec::new();
    loop {
        r.check()?;
        if pc >= p.steps.len() {
            return Err(Error::internal("jump out of program"));
        }
        let flow = match step_once(p, f, pc, r, &active).await {
            Ok(flow) => flow,
            Err(e) => match handler_for(p, pc, &e) {
                Some(h) => {
                    active.push((pc + 1, h, e));
                    pc = p.handlers[h].body;
                    continue;
                }
                None => return Err(e),
            },
        };
        pc = match flow {
            Flow::Next => pc + 1,
            Flow::Goto(t) => t,
            Flow::Return(v) => return Ok(Some(v)),
            Flow::Done => return Ok(None),
            Flow::HandlerEnd => match active.pop() {
                Some((resume, h, _)) if !p.handlers[h].exit => resume,
                Some((_, h, _)) => p.handlers[h].exit_to,
                None => return Err(Error::internal("handler end without a handler")),
            },
            Flow::NoData => match handler_for(p, pc, &no_data()) {
                Some(h) => {
                    active.push((pc + 1, h, no_data()));
                    p.handlers[h].body
                }
                None => {
                    r.warn(no_data());
                    pc + 1
                }
            },
        };
    }
}

fn locals(names: &[(String, usize)], f: &Frame) -> Locals {
    names
        .iter()
        .map(|(n, s)| (n.clone(), f.slots.get(*s).cloned().unwrap_or(Value::Null)))
        .collect()
}

async fn eval<R: Runner>(e: &Expr, l: Locals, r: &mut R) -> Result<Value, Error> {
    let rows = r.rows(&select_of(e.clone()), l).await?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|row| row.into_iter().next())
        .unwrap_or(Value::Null))
}

fn assign<R: Runner>(
    p: &Program,
    f: &mut Frame,
    r: &mut R,
    t: &Target,
    v: Value,
) -> Result<(), Error> {
    match t {
        Target::Slot(s) => {
            let ty = p.slot_types[*s];
            f.slots[*s] = r.store(v, ty)?;
        }
        Target::User(n) => r.set_user(n, v),
    }
    Ok(())
}

async fn step_once<R: Runner>(
    p: &Program,
    f: &mut Frame,
    pc: usize,
    r: &mut R,
    active: &[(usize, usize, Error)],
) -> Result<Flow, Error> {
    let step = &p.steps[pc];
    macro_rules! l {
        () => {
            locals(&step.names, f)
        };
    }
    match &step.op {
        Op::Sql(s) => {
            for (name, v) in r.sql(s, l!()).await? {
                if let Some((_, slot)) = step.names.iter().rev().find(|(n, _)| *n == name) {
                    assign(p, f, r, &Target::Slot(*slot), v)?;
                }
            }
        }
        Op::Set {
            locals: sets,
            others,
        } => {
            for (t, e) in sets {
                let v = eval(e, locals(&step.names, f), r).await?;
                assign(p, f, r, t, v)?;
            }
            if !others.is_empty() {
                r.sql(&Statement::Set(others.clone()), l!()).await?;
            }
        }
        Op::Init { slots, default } => {
            let v = match default {
                Some(e) => eval(e, l!(), r).await?,
                None => Value::Null,
            };
            for s in slots {
                assign(p, f, r, &Target::Slot(*s), v.clone())?;
            }
        }
        Op::Jump(t) => return Ok(Flow::Goto(*t)),
        Op::JumpUnless(e, t) => {
            if eval(e, l!(), r).await?.truth() != Some(true) {
                return Ok(Flow::Goto(*t));
            }
        }
        Op::CaseNotFound => {
            return Err(Error::new(
                Code::SpCaseNotFound,
                "Case not found for CASE statement",
            ))
        }
        Op::Return(e) => {
            let v = eval(e, l!(), r).await?;
            let v = match p.returns {
                Some(ty) => r.store(v, ty)?,
                None => v,
            };
            return Ok(Flow::Return(v));
        }
        Op::SelectInto(..) | Op::Open(_) | Op::Fetch(..) | Op::Close(_) => {
            return data_step(p, f, pc, r).await
        }
        Op::Signal {
            resignal,
            condition,
            items,
        } => return signal(*resignal, condition, items, l!(), r, active).await,
        Op::HandlerEnd => return Ok(Flow::HandlerEnd),
        Op::Done if p.returns.is_some() => {
            return Err(Error::new(
                Code::SpNoReturn,
                format!("FUNCTION {} ended without RETURN", p.name),
            ))
        }
        Op::Done => return Ok(Flow::Done),
    }
    Ok(Flow::Next)
}

/// SELECT ... INTO and the cursor steps.
async fn data_step<R: Runner>(
    p: &Program,
    f: &mut Frame,
    pc: usize,
    r: &mut R,
) -> Result<Flow, Error> {
    let step = &p.steps[pc];
    match &step.op {
        Op::SelectInto(q, targets) => {
            let rows = r.rows(q, locals(&step.names, f)).await?;
            if rows.len() > 1 {
                return Err(Error::new(
                    Code::TooManyRows,
                    "Result consisted of more than one row",
                ));
            }
            let Some(row) = rows.into_iter().next() else {
                return Ok(Flow::NoData);
            };
            let wrong = Error::new(
                Code::WrongNumberOfColumnsInSelect,
                "The used SELECT statements have a different number of columns",
            );
            assign_row(p, f, r, targets, row, wrong)?;
        }
        Op::Open(c) => {
            if f.cursors[*c].is_some() {
                return Err(Error::new(
                    Code::SpCursorAlreadyOpen,
                    "Cursor is already open",
                ));
            }
            let rows = r.rows(&p.cursors[*c], locals(&step.names, f)).await?;
            f.cursors[*c] = Some(rows.into());
        }
        Op::Fetch(c, targets) => return fetch(p, f, r, *c, targets),
        Op::Close(c) => match f.cursors[*c].take() {
            Some(_) => {}
            None => return Err(Error::new(Code::SpCursorNotOpen, "Cursor is not open")),
        },
        _ => {}
    }
    Ok(Flow::Next)
}

fn fetch<R: Runner>(
    p: &Program,
    f: &mut Frame,
    r: &mut R,
    c: usize,
    targets: &[Target],
) -> Result<Flow, Error> {
    let Some(rows) = f.cursors[c].as_mut() else {
        return Err(Error::new(Code::SpCursorNotOpen, "Cursor is not open"));
    };
    let Some(row) = rows.pop_front() else {
        return Err(no_data());
    };
    let wrong = Error::new(
        Code::SpWrongNoOfFetchArgs,
        "Incorrect number of FETCH variables",
    );
    assign_row(p, f, r, targets, row, wrong)?;
    Ok(Flow::Next)
}

/// A row's values into `targets`; `wrong` when the counts differ.
fn assign_row<R: Runner>(
    p: &Program,
    f: &mut Frame,
    r: &mut R,
    targets: &[Target],
    row: Vec<Value>,
    wrong: Error,
) -> Result<(), Error> {
    if row.len() != targets.len() {
        return Err(wrong);
    }
    for (t, v) in targets.iter().zip(row) {
        assign(p, f, r, t, v)?;
    }
    Ok(())
}

/// SIGNAL / RESIGNAL: the error it raises (a warning-class SQLSTATE
/// unhandled is only a warning).
async fn signal<R: Runner>(
    resignal: bool,
    condition: &Option<HandlerCondition>,
    items: &[(String, Expr)],
    l: Locals,
    r: &mut R,
    active: &[(usize, usize, Error)],
) -> Result<Flow, Error> {
    let (mut errno, mut state, mut message) = match (condition, active.last()) {
        (Some(HandlerCondition::SqlState(s)), _) => {
            let (n, m) = match &s[..2] {
                "01" => (1642, "Unhandled user-defined warning condition"),
                "02" => (1643, "Unhandled user-defined not found condition"),
                _ => (1644, "Unhandled user-defined exception condition"),
            };
            (n, intern_sqlstate(s), m.to_string())
        }
        (Some(HandlerCondition::Code(n)), _) => (*n, "HY000", format!("Unhandled condition {n}")),
        (Some(_), _) => return Err(Error::internal("SIGNAL of a class")),
        (None, Some((_, _, e))) if resignal => (e.number(), e.sqlstate(), e.message.clone()),
        (None, _) => {
            return Err(Error::new(
                Code::ResignalWithoutActiveHandler,
                "RESIGNAL when handler not active",
            ))
        }
    };
    for (name, e) in items {
        let v = eval(e, l.clone(), r).await?;
        match name.as_str() {
            "MESSAGE_TEXT" => message = v.to_string(),
            "MYSQL_ERRNO" => errno = v.to_i64().unwrap_or(0).clamp(0, 65535) as u16,
            _ => {}
        }
    }
    if resignal && condition.is_none() {
        state = intern_sqlstate(state);
    }
    let e = Error::new(Code::Signal(errno, state), message);
    if state.starts_with("01") {
        r.warn(e);
        return Ok(Flow::Next);
    }
    Err(e)
}

/// The handler `p` runs for error `e` raised at `pc`: the innermost block's,
/// a specific code before a SQLSTATE before a class.
fn handler_for(p: &Program, pc: usize, e: &Error) -> Option<usize> {
    if matches!(
        e.code,
        Code::QueryInterrupted | Code::QueryTimeout | Code::SpRecursionLimit
    ) {
        return None;
    }
    let state = e.sqlstate();
    let rank = |c: &HandlerCondition| -> Option<u8> {
        match c {
            HandlerCondition::Code(n) if *n == e.number() => Some(3),
            HandlerCondition::SqlState(s) if s == state => Some(2),
            HandlerCondition::NotFound if state.starts_with("02") => Some(1),
            HandlerCondition::SqlWarning if state.starts_with("01") => Some(1),
            HandlerCondition::SqlException
                if !state.starts_with("00")
                    && !state.starts_with("01")
                    && !state.starts_with("02") =>
            {
                Some(1)
            }
            _ => None,
        }
    };
    p.handlers
        .iter()
        .enumerate()
        .filter(|(_, h)| h.from <= pc && pc < h.to)
        .filter_map(|(i, h)| Some((h.from, h.conditions.iter().filter_map(rank).max()?, i)))
        .max_by_key(|(from, rank, _)| (*from, *rank))
        .map(|(_, _, i)| i)
}
