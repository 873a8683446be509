//! Compiles a stored program's body (`SpStmt`) to steps.

use super::{Handler, Op, Program, Step, Target};
use crate::parser::{HandlerCondition, RoutineParam, SpStmt, SpTarget};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error};
use std::sync::Arc;

struct Label {
    name: String,
    /// Where ITERATE goes (None: a BEGIN block, which ITERATE cannot name).
    start: Option<usize>,
    /// LEAVE jumps to patch with the end.
    leaves: Vec<usize>,
}

struct Deferred {
    handler: usize,
    body: SpStmt,
    scopes: Vec<Vec<(String, usize)>>,
    conditions: Vec<Vec<(String, HandlerCondition)>>,
    cursors: Vec<Vec<(String, usize)>>,
}

#[derive(Default)]
struct Compiler {
    steps: Vec<Step>,
    scopes: Vec<Vec<(String, usize)>>,
    conditions: Vec<Vec<(String, HandlerCondition)>>,
    cursors: Vec<Vec<(String, usize)>>,
    slot_types: Vec<DataType>,
    handlers: Vec<Handler>,
    queries: Vec<crate::parser::Query>,
    labels: Vec<Label>,
    deferred: Vec<Deferred>,
    names: Option<Arc<[(String, usize)]>>,
}

/// Compiles a body. `preset` names the first slots: parameters, or a
/// trigger's `new.col` / `old.col`.
pub fn compile(
    name: &str,
    params: Vec<RoutineParam>,
    returns: Option<DataType>,
    preset: Vec<(String, DataType)>,
    body: &SpStmt,
) -> Result<Program, Error> {
    let mut c = Compiler::default();
    let mut scope = Vec::new();
    for (n, ty) in preset {
        scope.push((n.to_lowercase(), c.slot_types.len()));
        c.slot_types.push(ty);
    }
    c.scopes.push(scope);
    c.conditions.push(Vec::new());
    c.cursors.push(Vec::new());
    c.stmt(body)?;
    c.emit(Op::Done);
    while let Some(d) = c.deferred.pop() {
        c.scopes = d.scopes;
        c.conditions = d.conditions;
        c.cursors = d.cursors;
        c.names = None;
        c.handlers[d.handler].body = c.steps.len();
        c.stmt(&d.body)?;
        c.emit(Op::HandlerEnd);
    }
    Ok(Program {
        name: name.to_string(),
        params,
        returns,
        steps: c.steps,
        slot_types: c.slot_types,
        handlers: c.handlers,
        cursors: c.queries,
    })
}

impl Compiler {
    fn emit(&mut self, op: Op) -> usize {
        let names = self
            .names
            .get_or_insert_with(|| {
                let all: Vec<(String, usize)> = self.scopes.iter().flatten().cloned().collect();
                all.into()
            })
            .clone();
        self.steps.push(Step { op, names });
        self.steps.len() - 1
    }

    fn patch(&mut self, at: usize, to: usize) {
        match &mut self.steps[at].op {
            Op::Jump(t) | Op::JumpUnless(_, t) => *t = to,
            _ => debug_assert!(false, "patching a step that does not jump"),
        }
    }

    fn slot(&self, name: &str) -> Result<usize, Error> {
        let low = name.to_lowercase();
        for scope in self.scopes.iter().rev() {
            if let Some((_, s)) = scope.iter().rev().find(|(n, _)| *n == low) {
                return Ok(*s);
            }
        }
        Err(Error::new(
            Code::SpUndeclaredVar,
            format!("Undeclared variable: {name}"),
        ))
    }

    fn target(&self, t: &SpTarget) -> Result<Target, Error> {
        Ok(match t {
            SpTarget::Local(n) => Target::Slot(self.slot(n)?),
            SpTarget::User(n) => Target::User(n.clone()),
        })
    }

    fn cursor(&self, name: &str) -> Result<usize, Error> {
        let low = name.to_lowercase();
        for scope in self.cursors.iter().rev() {
            if let Some((_, i)) = scope.iter().find(|(n, _)| *n == low) {
                return Ok(*i);
            }
        }
        Err(Error::new(
            Code::SpCursorMismatch,
            format!("Undefined CURSOR: {name}"),
        ))
    }

    fn list(&mut self, body: &[SpStmt]) -> Result<(), Error> {
        body.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &SpStmt) -> Result<(), Error> {
        match s {
            SpStmt::Block { label, decls, body } => self.block(label, decls, body)?,
            SpStmt::Sql(st) => {
                self.emit(Op::Sql(st.clone()));
            }
            SpStmt::Set { locals, others } => {
                let locals = locals
                    .iter()
                    .map(|(t, e)| Ok((self.target(t)?, e.clone())))
                    .collect::<Result<_, Error>>()?;
                self.emit(Op::Set {
                    locals,
                    others: others.clone(),
                });
            }
            SpStmt::If {
                branches,
                otherwise,
            } => self.branches(None, branches, otherwise.as_deref(), false)?,
            SpStmt::Case {
                operand,
                branches,
                otherwise,
            } => self.branches(operand.as_ref(), branches, otherwise.as_deref(), true)?,
            SpStmt::While { .. } | SpStmt::Repeat { .. } | SpStmt::Loop { .. } => {
                self.loop_stmt(s)?
            }
            SpStmt::Leave(l) => {
                let at = self.emit(Op::Jump(0));
                self.label(l, "LEAVE")?.leaves.push(at);
            }
            SpStmt::Iterate(l) => {
                let start = self.label(l, "ITERATE")?.start;
                match start {
                    Some(s) => self.emit(Op::Jump(s)),
                    None => return Err(no_label("ITERATE", l)),
                };
            }
            SpStmt::Return(e) => {
                self.emit(Op::Return(e.clone()));
            }
            SpStmt::SelectInto { .. }
            | SpStmt::Open(_)
            | SpStmt::Close(_)
            | SpStmt::Fetch { .. }
            | SpStmt::Signal { .. } => self.data_stmt(s)?,
        }
        Ok(())
    }

    /// WHILE, REPEAT and LOOP.
    fn loop_stmt(&mut self, s: &SpStmt) -> Result<(), Error> {
        match s {
            SpStmt::While { label, cond, body } => {
                let start = self.open_loop(label);
                let test = self.emit(Op::JumpUnless(cond.clone(), 0));
                self.list(body)?;
                self.emit(Op::Jump(start));
                let end = self.steps.len();
                self.patch(test, end);
                self.close_label();
            }
            SpStmt::Repeat { label, body, until } => {
                let start = self.open_loop(label);
                self.list(body)?;
                // UNTIL true ends the loop: jump back while it is not.
                let not = crate::parser::Expr::Unary {
                    op: crate::parser::UnaryOp::Not,
                    expr: Box::new(until.clone()),
                };
                let test = self.emit(Op::JumpUnless(not, 0));
                self.emit(Op::Jump(start));
                let end = self.steps.len();
                self.patch(test, end);
                self.close_label();
            }
            SpStmt::Loop { label, body } => {
                let start = self.open_loop(label);
                self.list(body)?;
                self.emit(Op::Jump(start));
                self.close_label();
            }
            _ => {}
        }
        Ok(())
    }

    /// SELECT ... INTO, cursors and SIGNAL.
    fn data_stmt(&mut self, s: &SpStmt) -> Result<(), Error> {
        match s {
            SpStmt::SelectInto { query, targets } => {
                let t = targets
                    .iter()
                    .map(|t| self.target(t))
                    .collect::<Result<_, _>>()?;
                self.emit(Op::SelectInto(query.clone(), t));
            }
            SpStmt::Open(c) => {
                let i = self.cursor(c)?;
                self.emit(Op::Open(i));
            }
            SpStmt::Close(c) => {
                let i = self.cursor(c)?;
                self.emit(Op::Close(i));
            }
            SpStmt::Fetch { cursor, targets } => {
                let i = self.cursor(cursor)?;
                let t = targets
                    .iter()
                    .map(|t| self.target(t))
                    .collect::<Result<_, _>>()?;
                self.emit(Op::Fetch(i, t));
            }
            SpStmt::Signal {
                resignal,
                condition,
                items,
            } => {
                let condition = match condition {
                    Some(HandlerCondition::Named(n)) => Some(self.named(n)?),
                    other => other.clone(),
                };
                self.emit(Op::Signal {
                    resignal: *resignal,
                    condition,
                    items: items.clone(),
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// A loop starts here: LEAVE and ITERATE may name its label.
    fn open_loop(&mut self, label: &Option<String>) -> usize {
        let start = self.steps.len();
        self.labels.push(Label {
            name: label.clone().unwrap_or_default(),
            start: Some(start),
            leaves: Vec::new(),
        });
        start
    }

    fn label(&mut self, name: &str, what: &str) -> Result<&mut Label, Error> {
        self.labels
            .iter_mut()
            .rev()
            .find(|l| l.name.eq_ignore_ascii_case(name) && !l.name.is_empty())
            .ok_or_else(|| no_label(what, name))
    }

    fn close_label(&mut self) {
        let label = self.labels.pop().expect("a label is open");
        let end = self.steps.len();
        for at in label.leaves {
            self.patch(at, end);
        }
    }

    fn named(&self, name: &str) -> Result<HandlerCondition, Error> {
        for scope in self.conditions.iter().rev() {
            if let Some((_, c)) = scope.iter().find(|(n, _)| n == name) {
                return Ok(c.clone());
            }
        }
        Err(Error::new(
            Code::SpCondMismatch,
            format!("Undefined CONDITION: {name}"),
        ))
    }
}

fn no_label(what: &str, name: &str) -> Error {
    Error::new(
        Code::SpLilabelMismatch,
        format!("{what} with no matching label: {name}"),
    )
}

#[path = "compile_block.rs"]
mod block;
