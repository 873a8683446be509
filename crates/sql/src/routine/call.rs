//! Stored programs as the executor and binder meet them: a stored
//! definition parsed and compiled, a function call bound into an
//! expression, and running a program where nothing may wait.

use super::compile::compile;
use super::Program;
use crate::parser::{self, CreateRoutine, CreateTrigger, RoutineStatement, Statement};
use lockstep_engine::catalog::Catalog;
use lockstep_engine::{RoutineDef, RoutineKind};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error};
use std::future::Future;
use std::sync::Arc;

/// A stored function an expression calls.
#[derive(Debug)]
pub struct StoredFn {
    pub name: String,
    pub database: String,
    pub program: Arc<Program>,
    /// SQL SECURITY DEFINER: its definer (user, host); None for INVOKER.
    pub run_as: Option<(String, String)>,
}

/// The stored definition parsed again.
pub fn parse_def(def: &RoutineDef) -> Result<RoutineStatement, Error> {
    let mut stmts = parser::parse(&def.create_statement())?;
    match stmts.pop() {
        Some(Statement::Routine(r)) if stmts.is_empty() => Ok(*r),
        _ => Err(Error::internal("stored program does not parse back")),
    }
}

pub fn routine_program(cr: &CreateRoutine) -> Result<Program, Error> {
    let preset = cr
        .params
        .iter()
        .map(|p| (p.name.clone(), p.data_type))
        .collect();
    compile(
        &cr.name.name,
        cr.params.clone(),
        cr.returns,
        preset,
        &cr.body,
    )
}

/// Columns of a table as a trigger's NEW and OLD see them.
pub fn trigger_columns(def: &lockstep_tables::TableDef) -> Vec<(String, DataType)> {
    def.columns
        .iter()
        .map(|c| (c.name.clone(), c.data_type))
        .collect()
}

/// A trigger's program: slots `new.c` then `old.c` for each column.
pub fn trigger_program(
    ct: &CreateTrigger,
    columns: &[(String, DataType)],
) -> Result<Program, Error> {
    let mut preset = Vec::new();
    for which in ["new", "old"] {
        for (c, ty) in columns {
            preset.push((format!("{which}.{c}"), *ty));
        }
    }
    compile(&ct.name.name, Vec::new(), None, preset, &ct.body)
}

/// A table's triggers (in creation order) in action order: each placed
/// where its FOLLOWS / PRECEDES put it when it was created.
pub fn action_order(
    defs: Vec<Arc<RoutineDef>>,
) -> Result<Vec<(Arc<RoutineDef>, CreateTrigger)>, Error> {
    let mut out: Vec<(Arc<RoutineDef>, CreateTrigger)> = Vec::with_capacity(defs.len());
    for def in defs {
        let RoutineStatement::CreateTrigger(ct) = parse_def(&def)? else {
            continue;
        };
        let at = match &ct.order {
            Some((follows, other)) => out
                .iter()
                .position(|(d, _)| d.name == *other)
                .map(|i| i + usize::from(*follows)),
            None => None,
        };
        match at {
            Some(i) => out.insert(i, (def, *ct)),
            None => out.push((def, *ct)),
        }
    }
    Ok(out)
}

pub fn wrong_args(kind: &str, db: &str, name: &str, want: usize, got: usize) -> Error {
    Error::new(
        Code::SpWrongNoOfArgs,
        format!("Incorrect number of arguments for {kind} {db}.{name}; expected {want}, got {got}"),
    )
}

/// The stored function `name` of `db`, if there is one, ready to call.
pub fn bind_stored<T>(
    catalog: &Catalog,
    db: &str,
    name: &str,
    args: &[T],
) -> Result<Option<Arc<StoredFn>>, Error> {
    let Some(def) = catalog.routine(db, RoutineKind::Function, name) else {
        return Ok(None);
    };
    let RoutineStatement::Create(cr) = parse_def(&def)? else {
        return Err(Error::internal("stored function is not a routine"));
    };
    if cr.params.len() != args.len() {
        return Err(wrong_args(
            "FUNCTION",
            db,
            &def.name,
            cr.params.len(),
            args.len(),
        ));
    }
    Ok(Some(Arc::new(StoredFn {
        name: def.name.clone(),
        database: db.to_string(),
        program: Arc::new(routine_program(&cr)?),
        run_as: cr.security_definer.then(|| def.definer.clone()),
    })))
}

/// Runs a future that never waits (a program over the executor's runner)
/// to its end.
pub fn finish_now<T>(f: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(r) => r,
        std::task::Poll::Pending => Err(Error::internal("stored program waited")),
    }
}

thread_local! {
    /// Functions and triggers running on this thread (they never wait, so
    /// nothing else runs on it meanwhile): recursion is refused (1424).
    static RUNNING: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with `name` marked as running; 1424 if it already is.
pub fn guarded<T>(name: &str, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    let again = RUNNING.with(|r| {
        let mut r = r.borrow_mut();
        if r.iter().any(|n| n == name) || r.len() >= 64 {
            return true;
        }
        r.push(name.to_string());
        false
    });
    if again {
        return Err(Error::new(
            Code::SpNoRecursion,
            "Recursive stored functions and triggers are not allowed.",
        ));
    }
    let out = f();
    RUNNING.with(|r| r.borrow_mut().pop());
    out
}
