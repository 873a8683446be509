//! Stored programs compiled to a flat list of steps (jumps instead of
//! nested blocks), so one driver (`run.rs`) runs them both where
//! statements are awaited (CALL in a session) and where they must not wait
//! (functions inside an expression, triggers inside a row change).

pub mod call;
pub mod compile;
pub mod run;

use crate::parser::{
    Expr, HandlerCondition, ParamMode, Query, RoutineParam, SetAssignment, SpDecl, SpStmt,
    Statement,
};
use lockstep_types::DataType;
use std::sync::Arc;

/// Where a value goes: a local slot or a user variable.
#[derive(Clone, Debug)]
pub enum Target {
    Slot(usize),
    User(String),
}

#[derive(Clone, Debug)]
pub enum Op {
    Sql(Box<Statement>),
    Set {
        locals: Vec<(Target, Expr)>,
        others: Vec<SetAssignment>,
    },
    /// DECLARE: the slots take the default (or NULL) each time the block
    /// is entered.
    Init {
        slots: Vec<usize>,
        default: Option<Expr>,
    },
    Jump(usize),
    /// Goes on when `Expr` is true, else jumps.
    JumpUnless(Expr, usize),
    /// CASE without ELSE that matched nothing (1339).
    CaseNotFound,
    Return(Expr),
    SelectInto(Box<Query>, Vec<Target>),
    Open(usize),
    Fetch(usize, Vec<Target>),
    Close(usize),
    Signal {
        resignal: bool,
        condition: Option<HandlerCondition>,
        items: Vec<(String, Expr)>,
    },
    /// The end of a handler's body: back to where it was raised
    /// (CONTINUE) or past its block (EXIT).
    HandlerEnd,
    /// The end of the program.
    Done,
}

/// One step and the local names visible to it (innermost last).
#[derive(Clone, Debug)]
pub struct Step {
    pub op: Op,
    pub names: Arc<[(String, usize)]>,
}

#[derive(Clone, Debug)]
pub struct Handler {
    pub exit: bool,
    pub conditions: Vec<HandlerCondition>,
    /// Steps of the block it is declared in (its body's own steps are
    /// elsewhere, so an error there does not call it again).
    pub from: usize,
    pub to: usize,
    pub body: usize,
    /// Where EXIT goes: the end of its block.
    pub exit_to: usize,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub name: String,
    pub params: Vec<RoutineParam>,
    pub returns: Option<DataType>,
    pub steps: Vec<Step>,
    /// Types of the local slots (parameters first).
    pub slot_types: Vec<DataType>,
    pub handlers: Vec<Handler>,
    pub cursors: Vec<Query>,
}

impl Program {
    /// Slots of the parameters whose value goes back to the caller.
    pub fn out_params(&self) -> impl Iterator<Item = (usize, &RoutineParam)> {
        self.params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.mode != ParamMode::In)
    }
}

/// Calls `f` on `s` and every statement nested in it (handler bodies too).
pub fn each_stmt(s: &SpStmt, f: &mut dyn FnMut(&SpStmt)) {
    f(s);
    let list = |l: &[SpStmt], f: &mut dyn FnMut(&SpStmt)| l.iter().for_each(|x| each_stmt(x, f));
    match s {
        SpStmt::Block { decls, body, .. } => {
            for d in decls {
                if let SpDecl::Handler { body, .. } = d {
                    each_stmt(body, f);
                }
            }
            list(body, f);
        }
        SpStmt::If {
            branches,
            otherwise,
        }
        | SpStmt::Case {
            branches,
            otherwise,
            ..
        } => {
            branches.iter().for_each(|(_, b)| list(b, f));
            if let Some(o) = otherwise {
                list(o, f);
            }
        }
        SpStmt::While { body, .. } | SpStmt::Repeat { body, .. } | SpStmt::Loop { body, .. } => {
            list(body, f)
        }
        _ => {}
    }
}

/// Calls `f` on every expression of `s` and of the statements nested in
/// it (subqueries included).
pub fn each_expr(s: &SpStmt, f: &mut dyn FnMut(&Expr)) {
    let query = |q: &Query, f: &mut dyn FnMut(&Expr)| {
        crate::parser::visit_statement(&Statement::Select(Box::new(q.clone())), f)
    };
    each_stmt(s, &mut |s| match s {
        SpStmt::Block { decls, .. } => {
            for d in decls {
                match d {
                    SpDecl::Var {
                        default: Some(e), ..
                    } => crate::parser::visit_expr(e, f),
                    SpDecl::Cursor { query: q, .. } => query(q, f),
                    _ => {}
                }
            }
        }
        SpStmt::Sql(st) => crate::parser::visit_statement(st, f),
        SpStmt::Set { locals, others } => {
            locals
                .iter()
                .for_each(|(_, e)| crate::parser::visit_expr(e, f));
            others
                .iter()
                .filter_map(|a| a.value.as_ref())
                .for_each(|e| crate::parser::visit_expr(e, f));
        }
        SpStmt::If { branches, .. } => {
            branches
                .iter()
                .for_each(|(c, _)| crate::parser::visit_expr(c, f));
        }
        SpStmt::Case {
            operand, branches, ..
        } => {
            operand.iter().for_each(|e| crate::parser::visit_expr(e, f));
            branches
                .iter()
                .for_each(|(c, _)| crate::parser::visit_expr(c, f));
        }
        SpStmt::While { cond: e, .. } | SpStmt::Repeat { until: e, .. } | SpStmt::Return(e) => {
            crate::parser::visit_expr(e, f)
        }
        SpStmt::SelectInto { query: q, .. } => query(q, f),
        SpStmt::Signal { items, .. } => items
            .iter()
            .for_each(|(_, e)| crate::parser::visit_expr(e, f)),
        _ => {}
    });
}
