//! CREATE / DROP / CALL of stored procedures and functions, CREATE / DROP
//! TRIGGER, and SHOW about them, as a session runs them. A CALL runs the
//! program with the session as its runner: each statement inside runs as
//! if the client had sent it, and the result sets of its SELECTs are
//! returned before the CALL's own OK.

use super::{ok, Session, R};
use crate::parser::{
    CreateRoutine, CreateTrigger, Expr, ObjectName, ParamMode, Query, RoutineStatement, SpStmt,
    Statement,
};
use crate::routine::call::{parse_def, routine_program, trigger_program, wrong_args};
use crate::routine::each_stmt;
use crate::routine::run::{run, select_of, Frame, Locals, Runner};
use lockstep_accounts::Privs;
use lockstep_engine::{RoutineDef, RoutineKind};
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::{Error, Value};
use std::sync::atomic::Ordering;

#[path = "routines_infoschema.rs"]
mod infoschema;
#[path = "routines_show.rs"]
mod show;

pub(crate) use infoschema::add_tables as infoschema_tables;

/// How deep CALLs may nest (max_sp_recursion_depth bounds recursion of
/// one procedure; this bounds the stack whatever the procedures).
const MAX_CALL_DEPTH: usize = 64;

fn not_exist(kind: RoutineKind, db: &str, name: &str) -> Error {
    Error::new(
        Code::SpDoesNotExist,
        format!("{} {db}.{name} does not exist", kind.keyword()),
    )
}

fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Session {
    pub(super) async fn routine_statement(
        &mut self,
        r: &RoutineStatement,
        params: &[Value],
    ) -> R<Response> {
        match r {
            RoutineStatement::Create(cr) => self.create_routine(cr).await,
            RoutineStatement::CreateTrigger(ct) => self.create_trigger(ct).await,
            RoutineStatement::Drop {
                kind,
                name,
                if_exists,
            } => self.drop_routine(*kind, name, *if_exists).await,
            RoutineStatement::Call { name, args } => {
                let args = with_params(args, params)?;
                Box::pin(self.call(name, &args)).await
            }
            RoutineStatement::ShowCreate { kind, name } => self.show_create_routine(*kind, name),
            RoutineStatement::ShowStatus { kind, filter } => {
                let shown = self.show_routine_status(*kind, filter);
                self.with_where(shown, filter)
            }
            RoutineStatement::ShowTriggers { database, filter } => {
                let shown = self.show_triggers(database.as_deref(), filter);
                self.with_where(shown, filter)
            }
        }
    }

    fn routine_db(&self, name: &ObjectName) -> R<String> {
        let db = match &name.database {
            Some(d) => d.clone(),
            None => self.ctx.database.clone().ok_or_else(Error::no_db)?,
        };
        if !self.engine.catalog.database_exists(&db) {
            return Err(Error::new(Code::BadDb, format!("Unknown database '{db}'")));
        }
        Ok(db)
    }

    fn definer_of(&self, given: &Option<crate::parser::UserName>) -> R<(String, String)> {
        self.check_definer_clause(given)?;
        Ok(match given {
            Some(u) if !u.user.is_empty() || !u.host.is_empty() => (u.user.clone(), u.host.clone()),
            _ => (
                self.grants.account.user.clone(),
                self.grants.account.host.clone(),
            ),
        })
    }

    /// The stored functions a statement calls need EXECUTE (1370).
    /// A call names its database (`db.f()`) or is in the current one.
    pub(super) fn check_function_execute(&self, stmt: &Statement) -> R<()> {
        if self.grants.superuser() {
            return Ok(());
        }
        let mut denied = None;
        crate::parser::visit_statement(stmt, &mut |e| {
            let Expr::Function { name, database, .. } = e else {
                return;
            };
            let Some(db) = database.as_deref().or(self.ctx.database.as_deref()) else {
                return;
            };
            let kind = RoutineKind::Function;
            if denied.is_none()
                && !self.grants.account.has_on_database(Privs::EXECUTE, db)
                && self.engine.catalog.routine(db, kind, name).is_some()
            {
                denied = Some((db.to_string(), name.to_lowercase()));
            }
        });
        match denied {
            Some((db, name)) => Err(self.routine_denied("execute", &db, &name)),
            None => Ok(()),
        }
    }

    /// FOLLOWS / PRECEDES name a trigger of the table with the same event
    /// and timing (3011).
    fn check_trigger_order(&self, ct: &CreateTrigger, db: &str, table: &str) -> R<()> {
        let Some((_, other)) = &ct.order else {
            return Ok(());
        };
        let all = crate::routine::call::action_order(self.engine.catalog.triggers(db, table))?;
        let same = all
            .iter()
            .any(|(d, t)| d.name == *other && t.event == ct.event && t.before == ct.before);
        if same {
            return Ok(());
        }
        Err(Error::new(
            Code::ReferencedTrgDoesNotExist,
            format!("Referenced trigger '{other}' for the given action time and event type does not exist."),
        ))
    }

    /// 1370: `what` (execute, alter routine) is not granted.
    fn routine_denied(&self, what: &str, db: &str, name: &str) -> Error {
        Error::new(
            Code::ProcaccessDenied,
            format!(
                "{what} command denied to user {} for routine '{db}.{name}'",
                self.grants.who()
            ),
        )
    }

    fn need_on_db(&self, p: Privs, db: &str) -> R<()> {
        if super::is_system_db(db) || !self.grants.account.has_on_database(p, db) {
            return Err(self.grants.database_denied(db));
        }
        Ok(())
    }

    async fn create_routine(&mut self, cr: &CreateRoutine) -> R<Response> {
        let db = self.routine_db(&cr.name)?;
        self.need_on_db(Privs::CREATE_ROUTINE, &db)?;
        self.commit().await?;
        let function = cr.kind == RoutineKind::Function;
        let full = format!("{db}.{}", cr.name.name);
        check_body(&cr.body, function, &full, !function)?;
        // Undeclared variables, labels and cursors are found now.
        routine_program(cr)?;
        let name = &cr.name.name;
        if self.engine.catalog.routine(&db, cr.kind, name).is_some() {
            let msg = format!("{} {name} already exists", cr.kind.keyword());
            if cr.if_not_exists {
                self.ctx
                    .warnings
                    .push((Code::SpAlreadyExists.number(), msg).into());
                return Ok(ok(0));
            }
            return Err(Error::new(Code::SpAlreadyExists, msg));
        }
        let def = RoutineDef {
            database: db,
            name: name.clone(),
            kind: cr.kind,
            definer: self.definer_of(&cr.definer)?,
            definition: cr.definition.clone(),
            table: String::new(),
            created: now_micros(),
        };
        self.engine.put_routine(def).await?;
        Ok(ok(0))
    }

    async fn create_trigger(&mut self, ct: &CreateTrigger) -> R<Response> {
        let db = self.routine_db(&ct.table)?;
        if ct.name.database.as_ref().is_some_and(|d| *d != db) {
            return Err(Error::new(
                Code::TrgInWrongSchema,
                "Trigger in wrong schema",
            ));
        }
        if self.temporary_table(&ct.table).is_some()
            || self.engine.catalog.view(&db, &ct.table.name).is_some()
        {
            return Err(Error::new(
                Code::TrgOnViewOrTempTable,
                format!("'{db}.{}' is not BASE TABLE", ct.table.name),
            ));
        }
        let Some(table) = self.engine.catalog.table(&db, &ct.table.name) else {
            return Err(Error::no_such_table(&db, &ct.table.name));
        };
        if !self
            .grants
            .account
            .has_on_table(Privs::TRIGGER, &db, &ct.table.name)
        {
            return Err(self.grants.table_denied("TRIGGER", &ct.table.name));
        }
        self.commit().await?;
        let columns = crate::routine::call::trigger_columns(&table.def());
        check_body(&ct.body, false, &ct.name.name, false)?;
        check_trigger_rows(ct)?;
        self.check_trigger_order(ct, &db, &table.def().name)?;
        trigger_program(ct, &columns)?;
        let name = &ct.name.name;
        if self
            .engine
            .catalog
            .routine(&db, RoutineKind::Trigger, name)
            .is_some()
        {
            if ct.if_not_exists {
                let msg = "Trigger already exists".to_string();
                self.ctx
                    .warnings
                    .push((Code::TrgAlreadyExists.number(), msg).into());
                return Ok(ok(0));
            }
            return Err(Error::new(Code::TrgAlreadyExists, "Trigger already exists"));
        }
        let def = RoutineDef {
            database: db,
            name: name.clone(),
            kind: RoutineKind::Trigger,
            definer: self.definer_of(&ct.definer)?,
            definition: ct.definition.clone(),
            table: table.def().name.clone(),
            created: now_micros(),
        };
        self.engine.put_routine(def).await?;
        Ok(ok(0))
    }

    async fn drop_routine(
        &mut self,
        kind: RoutineKind,
        name: &ObjectName,
        if_exists: bool,
    ) -> R<Response> {
        let db = match &name.database {
            Some(d) => d.clone(),
            None => self.ctx.database.clone().ok_or_else(Error::no_db)?,
        };
        let found = self.engine.catalog.routine(&db, kind, &name.name);
        let account = &self.grants.account;
        match &found {
            Some(t)
                if kind == RoutineKind::Trigger
                    && !account.has_on_table(Privs::TRIGGER, &db, &t.table) =>
            {
                return Err(self.grants.table_denied("TRIGGER", &t.table));
            }
            Some(r)
                if kind != RoutineKind::Trigger
                    && !account.has_on_database(Privs::ALTER_ROUTINE, &db) =>
            {
                return Err(self.routine_denied("alter routine", &db, &r.name));
            }
            None if kind != RoutineKind::Trigger => self.need_on_db(Privs::ALTER_ROUTINE, &db)?,
            _ => {}
        }
        self.commit().await?;
        if found.is_none() || !self.engine.drop_routine(&db, kind, &name.name).await? {
            let (code, msg) = match kind {
                RoutineKind::Trigger => {
                    (Code::TrgDoesNotExist, "Trigger does not exist".to_string())
                }
                _ => (
                    Code::SpDoesNotExist,
                    format!("{} {db}.{} does not exist", kind.keyword(), name.name),
                ),
            };
            if !if_exists {
                return Err(Error::new(code, msg));
            }
            self.ctx
                .warnings
                .push(crate::exec::Condition::warning(code.number(), msg));
        }
        Ok(ok(0))
    }

    /// CALL: IN arguments evaluated, the program run, OUT and INOUT
    /// values stored in the user variables passed for them.
    async fn call(&mut self, name: &ObjectName, args: &[Expr]) -> R<Response> {
        let db = match &name.database {
            Some(d) => d.clone(),
            None => self.ctx.database.clone().ok_or_else(Error::no_db)?,
        };
        let kind = RoutineKind::Procedure;
        let def = self
            .engine
            .catalog
            .routine(&db, kind, &name.name)
            .ok_or_else(|| not_exist(kind, &db, &name.name))?;
        if !self.grants.account.has_on_database(Privs::EXECUTE, &db) {
            return Err(self.routine_denied("execute", &db, &def.name));
        }
        let RoutineStatement::Create(cr) = parse_def(&def)? else {
            return Err(Error::internal("stored procedure is not a routine"));
        };
        let program = routine_program(&cr)?;
        if args.len() != cr.params.len() {
            return Err(wrong_args(
                "PROCEDURE",
                &db,
                &def.name,
                cr.params.len(),
                args.len(),
            ));
        }
        let values = self.call_args(&cr, &db, args).await?;
        // The body runs with the definer's rights (SQL SECURITY DEFINER).
        let rights = match cr.security_definer && !self.grants.is_account(&def.definer) {
            true => Some(self.enter_definer(&def.definer)?),
            false => None,
        };
        let entered = self.enter_call(&db, &def.name);
        let saved_db = self.ctx.database.replace(db.clone());
        let mut frame = Frame::new(&program, values);
        let r = match &entered {
            Ok(()) => run(&program, &mut frame, &mut SessionRunner { s: self }).await,
            Err(_) => Ok(None),
        };
        self.ctx.database = saved_db;
        if let Some(saved) = rights {
            self.leave_definer(saved);
        }
        entered?;
        self.routine_stack.pop();
        r?;
        for (i, _) in program.out_params() {
            let value = frame.slots[i].clone();
            match &args[i] {
                Expr::UserVar(v) => {
                    self.ctx.user_vars.insert(v.to_ascii_lowercase(), value);
                }
                // A local of the calling program: it assigns it.
                Expr::Column { table: None, name } => {
                    self.call_outs.push((name.to_lowercase(), value));
                }
                _ => {}
            }
        }
        Ok(ok(0))
    }

    async fn call_args(&mut self, cr: &CreateRoutine, db: &str, args: &[Expr]) -> R<Vec<Value>> {
        let mut values = Vec::with_capacity(args.len());
        for (i, (p, a)) in cr.params.iter().zip(args).enumerate() {
            let local = |n: &str| {
                self.routine_locals
                    .iter()
                    .any(|(l, _)| l.eq_ignore_ascii_case(n))
            };
            let variable = match a {
                Expr::UserVar(_) => true,
                Expr::Column { table: None, name } => local(name),
                _ => false,
            };
            if p.mode != ParamMode::In && !variable {
                return Err(Error::new(
                    Code::SpNotVarArg,
                    format!("OUT or INOUT argument {} for routine {db}.{} is not a variable or NEW pseudo-variable in BEFORE trigger", i + 1, cr.name.name),
                ));
            }
            let v = match p.mode {
                ParamMode::Out => Value::Null,
                _ => {
                    let q = select_of(a.clone());
                    let locals = self.routine_locals.clone();
                    let rows = SessionRunner { s: self }.rows(&q, locals).await?;
                    rows.into_iter()
                        .next()
                        .and_then(|r| r.into_iter().next())
                        .unwrap_or(Value::Null)
                }
            };
            values.push(crate::expr::store_value(v, p.data_type, &p.name)?);
        }
        Ok(values)
    }

    /// Pushes a procedure on the call stack: 1456 past
    /// max_sp_recursion_depth calls of the same one.
    fn enter_call(&mut self, db: &str, name: &str) -> R<()> {
        let key = format!("{db}.{}", name.to_lowercase());
        let limit = super::system_var(&self.server, &self.ctx, false, "max_sp_recursion_depth")
            .ok()
            .and_then(|v| v.to_i64())
            .unwrap_or(0)
            .clamp(0, 255) as usize;
        let depth = self.routine_stack.iter().filter(|k| **k == key).count();
        if depth > limit || self.routine_stack.len() >= MAX_CALL_DEPTH {
            return Err(Error::new(
                Code::SpRecursionLimit,
                format!("Recursive limit {limit} (as set by the max_sp_recursion_depth variable) was exceeded for routine {name}"),
            ));
        }
        self.routine_stack.push(key);
        Ok(())
    }
}

/// CALL's arguments with the values of its placeholders (prepared CALL).
fn with_params(args: &[Expr], params: &[Value]) -> R<Vec<Expr>> {
    let mut out = args.to_vec();
    let mut missing = false;
    for a in &mut out {
        crate::parser::rewrite_exprs(a, &mut |e| {
            if let Expr::Param(i) = e {
                match params.get(*i) {
                    Some(v) => *e = Expr::Literal(v.clone()),
                    None => missing = true,
                }
                return false;
            }
            true
        });
    }
    if missing {
        return Err(Error::new(
            Code::WrongArguments,
            "Incorrect arguments to EXECUTE",
        ));
    }
    Ok(out)
}

/// What CREATE checks in a body before storing it: RETURN only in a
/// function (which needs one), no result set from a function or trigger,
/// SET only of system variables that exist.
fn check_body(body: &SpStmt, function: bool, name: &str, returns_rows_ok: bool) -> R<()> {
    let (mut has_return, mut select, mut unknown) = (false, false, None);
    each_stmt(body, &mut |s| match s {
        SpStmt::Return(_) => has_return = true,
        SpStmt::Sql(st) => {
            select |= matches!(**st, Statement::Select(_));
            if let Statement::Set(list) = &**st {
                unknown = unknown.take().or_else(|| unknown_var(list));
            }
        }
        SpStmt::Set { others, .. } => unknown = unknown.take().or_else(|| unknown_var(others)),
        _ => {}
    });
    if let Some(v) = unknown {
        return Err(Error::new(
            Code::UnknownSystemVariable,
            format!("Unknown system variable '{v}'"),
        ));
    }
    if has_return && !function {
        return Err(Error::new(
            Code::SpBadReturn,
            "RETURN is only allowed in a FUNCTION",
        ));
    }
    if function && !has_return {
        return Err(Error::new(
            Code::SpNoReturnFound,
            format!("No RETURN found in FUNCTION {name}"),
        ));
    }
    if select && !returns_rows_ok {
        let what = if function { "function" } else { "trigger" };
        return Err(Error::new(
            Code::SpNoRetset,
            format!("Not allowed to return a result set from a {what}"),
        ));
    }
    Ok(())
}

/// OLD in an INSERT trigger and NEW in a DELETE trigger do not exist
/// (1363); OLD, and NEW after the row is written, cannot be SET (1362).
fn check_trigger_rows(ct: &CreateTrigger) -> R<()> {
    use crate::parser::{SpTarget, TriggerEvent};
    let missing = match ct.event {
        TriggerEvent::Insert => Some("OLD"),
        TriggerEvent::Delete => Some("NEW"),
        TriggerEvent::Update => None,
    };
    let no_row = |which: &str| {
        Error::new(
            Code::TrgNoSuchRowInTrg,
            format!(
                "There is no {which} row in on {} trigger",
                ct.event.keyword()
            ),
        )
    };
    let mut found = false;
    crate::routine::each_expr(&ct.body, &mut |e| {
        if let (Expr::Column { table: Some(t), .. }, Some(m)) = (e, missing) {
            found |= t.eq_ignore_ascii_case(m);
        }
    });
    if let (true, Some(m)) = (found, missing) {
        return Err(no_row(m));
    }
    let mut set = Vec::new();
    each_stmt(&ct.body, &mut |s| {
        if let SpStmt::Set { locals, .. } = s {
            for (t, _) in locals {
                if let SpTarget::Local(n) = t {
                    set.push(n.clone());
                }
            }
        }
    });
    for n in set {
        let which = &n[..n.find('.').unwrap_or(0)];
        match which {
            "old" if missing == Some("OLD") => return Err(no_row("OLD")),
            "new" if missing == Some("NEW") => return Err(no_row("NEW")),
            "old" => {
                return Err(Error::new(
                    Code::TrgCantChangeRow,
                    "Updating of OLD row is not allowed in trigger",
                ))
            }
            "new" if !ct.before => {
                return Err(Error::new(
                    Code::TrgCantChangeRow,
                    "Updating of NEW row is not allowed in after trigger",
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

fn unknown_var(list: &[crate::parser::SetAssignment]) -> Option<String> {
    list.iter().find_map(|a| match &a.target {
        crate::parser::SetTarget::System { name, .. }
            if !crate::sysvars::defaults().iter().any(|(n, _, _)| n == name) =>
        {
            Some(name.clone())
        }
        _ => None,
    })
}

/// The session as a program's runner: statements run as the client's
/// would; result sets are kept for the CALL's reply.
struct SessionRunner<'s> {
    s: &'s mut Session,
}

impl SessionRunner<'_> {
    async fn with_locals(&mut self, stmt: &Statement, locals: Locals) -> R<Response> {
        let saved = std::mem::replace(&mut self.s.routine_locals, locals);
        let r = Box::pin(self.s.run(stmt, &[], None)).await;
        self.s.routine_locals = saved;
        r
    }
}

impl Runner for SessionRunner<'_> {
    async fn sql(&mut self, stmt: &Statement, locals: Locals) -> Result<Locals, Error> {
        let outer = std::mem::take(&mut self.s.call_outs);
        let r = self.with_locals(stmt, locals).await;
        let outs = std::mem::replace(&mut self.s.call_outs, outer);
        match r? {
            Response::Rows(rs) if !rs.columns.is_empty() => {
                lockstep_types::memory::check_statement()?;
                self.s.call_results.push(Response::Rows(rs));
            }
            _ => {}
        }
        Ok(outs)
    }

    async fn rows(&mut self, q: &Query, locals: Locals) -> Result<Vec<Vec<Value>>, Error> {
        let stmt = Statement::Select(Box::new(q.clone()));
        match self.with_locals(&stmt, locals).await? {
            Response::Rows(rs) => Ok(rs.rows),
            Response::Ok(_) => Ok(Vec::new()),
        }
    }

    fn set_user(&mut self, name: &str, v: Value) {
        self.s.ctx.user_vars.insert(name.to_string(), v);
    }

    fn warn(&mut self, e: Error) {
        self.s
            .ctx
            .warnings
            .push(crate::exec::Condition::warning(e.number(), e.message));
    }

    fn check(&self) -> Result<(), Error> {
        if self.s.process.kill_query.load(Ordering::Relaxed) {
            return Err(Error::new(
                Code::QueryInterrupted,
                "Query execution was interrupted",
            ));
        }
        Ok(())
    }

    fn memory_limit(&self) -> usize {
        self.s.ctx.memory.statement
    }

    fn store(&self, v: Value, ty: lockstep_types::DataType) -> Result<Value, Error> {
        crate::expr::store_value(v, ty, "")
    }
}
