//! Stored functions (and trigger bodies) run inside the executor: every
//! statement is bound and run at once on the statement's transaction, so
//! a lock wait unwinds the whole statement as any other would.

use super::{Exec, Result as ExecResult};
use crate::parser::{Query, Statement};
use crate::plan::bind::Binder;
use crate::routine::call::{finish_now, guarded, StoredFn};
use crate::routine::run::{run, Frame, Locals, Runner};
use crate::routine::Program;
use lockstep_engine::Error as EngineError;
use lockstep_types::error::Code;
use lockstep_types::{Error, Value};

struct ExecRunner<'e, 'a> {
    exec: &'e mut Exec<'a>,
    database: String,
    /// SQL SECURITY DEFINER: the account whose rights the body has.
    run_as: Option<(String, String)>,
}

fn not_in_function(what: &str) -> Error {
    Error::new(
        Code::CommitNotAllowedInSfOrTrg,
        format!(
            "Explicit or implicit commit is not allowed in stored function or trigger ({what})."
        ),
    )
}

impl<'a> ExecRunner<'_, 'a> {
    fn binder(&self, locals: Locals) -> Binder<'a> {
        let engine: &'a lockstep_engine::Engine = self.exec.engine;
        let mut b = Binder::new(&engine.catalog, Some(self.database.clone()));
        b.locals = locals;
        b
    }

    /// An engine error as the program sees it: a lock wait is kept for
    /// the statement to wait on, and the program stops.
    fn sql_error(&mut self, e: EngineError) -> Error {
        match e {
            EngineError::Sql(e) => e,
            wait => {
                self.exec.pending = Some(wait);
                Error::new(Code::LockWaitTimeout, "lock wait pending")
            }
        }
    }

    /// Statements in stored functions and triggers run with the definer's
    /// rights (SQL SECURITY DEFINER, and triggers) or the caller's
    /// (INVOKER): the tables a statement writes and reads are checked as at
    /// top level.
    fn check_rights(
        &self,
        stmt: Option<&Statement>,
        reads: &[std::sync::Arc<lockstep_tables::Table>],
    ) -> Result<(), Error> {
        let Some(rights) = &self.exec.ctx.grants else {
            return Ok(());
        };
        let accounts = &self.exec.engine.accounts;
        let rights = rights.for_program(accounts, self.run_as.as_ref())?;
        if let Some(stmt) = stmt {
            rights.check(stmt, Some(&self.database))?;
        }
        rights.check_reads(reads)
    }

    fn dml(&mut self, stmt: &Statement, locals: Locals) -> ExecResult<()> {
        let mut b = self.binder(locals);
        let used = |id: u32| super::trigger::check_not_in_use(id).map_err(EngineError::Sql);
        match stmt {
            Statement::Insert(i) => {
                let plan = b.bind_insert(i)?;
                self.check_rights(Some(stmt), &b.reads)
                    .map_err(EngineError::Sql)?;
                used(plan.table.id)?;
                let mut inner = Exec::new(self.exec.engine, self.exec.txn, self.exec.ctx, &[]);
                inner.insert(&plan)?;
            }
            Statement::Update(u) => {
                let plan = b.bind_update(u)?;
                self.check_rights(Some(stmt), &b.reads)
                    .map_err(EngineError::Sql)?;
                used(plan.table.id)?;
                let mut inner = Exec::new(self.exec.engine, self.exec.txn, self.exec.ctx, &[]);
                inner.update(&plan)?;
            }
            Statement::Delete(d) => {
                let plan = b.bind_delete(d)?;
                self.check_rights(Some(stmt), &b.reads)
                    .map_err(EngineError::Sql)?;
                used(plan.table.id)?;
                let mut inner = Exec::new(self.exec.engine, self.exec.txn, self.exec.ctx, &[]);
                inner.delete(&plan)?;
            }
            _ => return Err(EngineError::Sql(Error::internal("not DML"))),
        }
        Ok(())
    }
}

impl ExecRunner<'_, '_> {
    async fn statement(&mut self, stmt: &Statement, locals: Locals) -> Result<(), Error> {
        match stmt {
            Statement::Select(_) => Err(Error::new(
                Code::SpNoRetset,
                "Not allowed to return a result set from a function",
            )),
            Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_) => {
                self.dml(stmt, locals).map_err(|e| self.sql_error(e))
            }
            Statement::Set(list) => {
                for a in list {
                    let (crate::parser::SetTarget::User(name), Some(e)) = (&a.target, &a.value)
                    else {
                        return Err(Error::unsupported("SET of a system variable here"));
                    };
                    let q = crate::routine::run::select_of(e.clone());
                    let v = self.rows(&q, locals.clone()).await?;
                    let v = v.into_iter().next().and_then(|r| r.into_iter().next());
                    self.set_user(name, v.unwrap_or(Value::Null));
                }
                Ok(())
            }
            Statement::Do(q) => self.rows(q, locals).await.map(|_| ()),
            Statement::Routine(_) => Err(Error::unsupported("CALL in a function or trigger")),
            _ => Err(not_in_function("statement")),
        }
    }
}

impl Runner for ExecRunner<'_, '_> {
    async fn sql(&mut self, stmt: &Statement, locals: Locals) -> Result<Locals, Error> {
        self.statement(stmt, locals).await.map(|()| Vec::new())
    }

    async fn rows(&mut self, q: &Query, locals: Locals) -> Result<Vec<Vec<Value>>, Error> {
        let mut b = self.binder(locals);
        let plan = b.bind_query(q)?;
        self.check_rights(None, &b.reads)?;
        let mut inner = Exec::new(self.exec.engine, self.exec.txn, self.exec.ctx, &[]);
        let r = inner.query(&plan);
        r.map_err(|e| self.sql_error(e))
    }

    fn set_user(&mut self, name: &str, v: Value) {
        self.exec.ctx.user_vars.insert(name.to_string(), v);
    }

    fn warn(&mut self, e: Error) {
        self.exec
            .ctx
            .warnings
            .push(crate::exec::Condition::warning(e.number(), e.message));
    }

    fn check(&self) -> Result<(), Error> {
        self.exec.ctx.interrupt.check()
    }

    fn memory_limit(&self) -> usize {
        self.exec.ctx.memory.statement
    }

    fn store(&self, v: Value, ty: lockstep_types::DataType) -> Result<Value, Error> {
        crate::expr::store_value(v, ty, "")
    }
}

impl Exec<'_> {
    /// Runs `p` over `frame` here; the function's value, if it returned one.
    pub(crate) fn run_program(
        &mut self,
        name: &str,
        database: &str,
        p: &Program,
        frame: &mut Frame,
        run_as: Option<&(String, String)>,
    ) -> Result<Option<Value>, Error> {
        let database = database.to_string();
        guarded(name, || {
            let mut r = ExecRunner {
                exec: self,
                database,
                run_as: run_as.cloned(),
            };
            finish_now(run(p, frame, &mut r))
        })
    }

    pub(crate) fn run_stored(&mut self, f: &StoredFn, args: Vec<Value>) -> Result<Value, Error> {
        let p = &f.program;
        let args = args
            .into_iter()
            .zip(&p.params)
            .map(|(v, prm)| crate::expr::store_value(v, prm.data_type, &prm.name))
            .collect::<Result<Vec<_>, _>>()?;
        let mut frame = Frame::new(p, args);
        let key = format!("FUNCTION {}.{}", f.database, f.name);
        let v = self.run_program(&key, &f.database, p, &mut frame, f.run_as.as_ref())?;
        Ok(v.unwrap_or(Value::Null))
    }
}
