//! Stored programs: CREATE PROCEDURE / FUNCTION / TRIGGER with their
//! compound-statement bodies, CALL, DROP and SHOW about them. The body's
//! ordinary statements are parsed by the statement parser; this file
//! parses the control flow around them and tracks which names are local
//! variables (SET x = .. assigns a local when x is one).

use super::super::ast::*;
use super::super::routine_ast::*;
use super::{Parser, Result, Tok};

/// The parser with the names declared in each enclosing block.
struct Body<'p, 'a> {
    p: &'p mut Parser<'a>,
    scopes: Vec<Vec<String>>,
    trigger: bool,
}

impl Parser<'_> {
    /// After CREATE: `[DEFINER=..] PROCEDURE|FUNCTION|TRIGGER ...`, or
    /// None (position unchanged) when no such program follows.
    pub(super) fn parse_create_routine(&mut self) -> Result<Option<Statement>> {
        let start = self.pos;
        // Looked ahead, not tried: parsing moves names out of the tokens,
        // so a DEFINER clause parsed here could not be parsed again by the
        // view that follows it.
        let kinds = ["PROCEDURE", "FUNCTION", "TRIGGER"];
        if self.is_kw("DEFINER") && !(1..=7).any(|i| kinds.iter().any(|k| self.kw_at(i, k))) {
            return Ok(None);
        }
        let mut definer = None;
        if self.eat_kw("DEFINER") {
            self.eat_eq();
            definer = self.user_name()?;
            if definer.is_none() {
                definer = Some(UserName {
                    user: String::new(),
                    host: String::new(),
                });
            }
        }
        let Some(kind) = self.routine_kind() else {
            self.pos = start;
            return Ok(None);
        };
        let if_not_exists = self.if_not_exists()?;
        let name = self.object_name()?;
        let text_start = self.start_of(0);
        let stmt = match kind {
            RoutineKind::Trigger => self.trigger_rest(name, definer, if_not_exists, text_start)?,
            _ => self.routine_rest(kind, name, definer, if_not_exists, text_start)?,
        };
        Ok(Some(Statement::Routine(Box::new(stmt))))
    }

    /// PROCEDURE, FUNCTION or TRIGGER, taken if it is the next word.
    fn routine_kind(&mut self) -> Option<RoutineKind> {
        let kind = [
            ("PROCEDURE", RoutineKind::Procedure),
            ("FUNCTION", RoutineKind::Function),
            ("TRIGGER", RoutineKind::Trigger),
        ]
        .into_iter()
        .find(|(kw, _)| self.is_kw(kw))?;
        self.advance();
        Some(kind.1)
    }

    fn text_from(&self, start: usize) -> String {
        let end = self
            .toks
            .get(self.pos.wrapping_sub(1))
            .map_or(start, |t| t.end);
        self.src.get(start..end).unwrap_or("").to_string()
    }

    fn routine_rest(
        &mut self,
        kind: RoutineKind,
        name: ObjectName,
        definer: Option<UserName>,
        if_not_exists: bool,
        text_start: usize,
    ) -> Result<RoutineStatement> {
        let params = self.routine_params(kind)?;
        let returns = if kind == RoutineKind::Function {
            self.expect_kw("RETURNS")?;
            let t = self.parse_data_type("")?;
            self.skip_charset_attrs()?;
            Some(t)
        } else {
            None
        };
        let mut cr = CreateRoutine {
            kind,
            name,
            definer,
            if_not_exists,
            params,
            returns,
            deterministic: false,
            data_access: "CONTAINS SQL".into(),
            security_definer: true,
            comment: String::new(),
            body: SpStmt::Leave(String::new()),
            definition: String::new(),
            body_at: 0,
        };
        self.characteristics(&mut cr)?;
        cr.body_at = self.start_of(0) - text_start;
        let names: Vec<String> = cr.params.iter().map(|p| p.name.to_lowercase()).collect();
        let mut body = Body {
            p: self,
            scopes: vec![names],
            trigger: false,
        };
        cr.body = body.statement()?;
        cr.definition = self.text_from(text_start);
        Ok(RoutineStatement::Create(Box::new(cr)))
    }

    fn routine_params(&mut self, kind: RoutineKind) -> Result<Vec<RoutineParam>> {
        self.expect(&Tok::LParen)?;
        let mut params = Vec::new();
        if self.eat(&Tok::RParen) {
            return Ok(params);
        }
        loop {
            let mut mode = ParamMode::In;
            if kind == RoutineKind::Procedure {
                if self.eat_kw("INOUT") {
                    mode = ParamMode::InOut;
                } else if self.eat_kw("OUT") {
                    mode = ParamMode::Out;
                } else {
                    self.eat_kw("IN");
                }
            }
            let name = self.ident_any()?;
            let data_type = self.parse_data_type(&name)?;
            self.skip_charset_attrs()?;
            params.push(RoutineParam {
                mode,
                name,
                data_type,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        Ok(params)
    }

    fn characteristics(&mut self, cr: &mut CreateRoutine) -> Result<()> {
        loop {
            if self.eat_kw("COMMENT") {
                cr.comment = self.string_literal()?;
            } else if self.eat_kw("LANGUAGE") {
                self.expect_kw("SQL")?;
            } else if self.is_kw("NOT") && self.kw_at(1, "DETERMINISTIC") {
                self.pos += 2;
                cr.deterministic = false;
            } else if self.eat_kw("DETERMINISTIC") {
                cr.deterministic = true;
            } else if self.eat_kw("CONTAINS") {
                self.expect_kw("SQL")?;
                cr.data_access = "CONTAINS SQL".into();
            } else if self.is_kw("NO") && self.kw_at(1, "SQL") {
                self.pos += 2;
                cr.data_access = "NO SQL".into();
            } else if self.eat_kw("READS") {
                self.expect_kw("SQL")?;
                self.expect_kw("DATA")?;
                cr.data_access = "READS SQL DATA".into();
            } else if self.eat_kw("MODIFIES") {
                self.expect_kw("SQL")?;
                self.expect_kw("DATA")?;
                cr.data_access = "MODIFIES SQL DATA".into();
            } else if self.is_kw("SQL") && self.kw_at(1, "SECURITY") {
                self.pos += 2;
                cr.security_definer = if self.eat_kw("INVOKER") {
                    false
                } else {
                    self.expect_kw("DEFINER")?;
                    true
                };
            } else {
                return Ok(());
            }
        }
    }

    fn trigger_rest(
        &mut self,
        name: ObjectName,
        definer: Option<UserName>,
        if_not_exists: bool,
        text_start: usize,
    ) -> Result<RoutineStatement> {
        let before = if self.eat_kw("BEFORE") {
            true
        } else {
            self.expect_kw("AFTER")?;
            false
        };
        let event = if self.eat_kw("INSERT") {
            TriggerEvent::Insert
        } else if self.eat_kw("UPDATE") {
            TriggerEvent::Update
        } else {
            self.expect_kw("DELETE")?;
            TriggerEvent::Delete
        };
        self.expect_kw("ON")?;
        let table = self.object_name()?;
        self.expect_kw("FOR")?;
        self.expect_kw("EACH")?;
        self.expect_kw("ROW")?;
        let order = match self.is_any_kw(&["FOLLOWS", "PRECEDES"]) {
            true => {
                let follows = self.eat_kw("FOLLOWS");
                self.eat_kw("PRECEDES");
                Some((follows, self.ident_any()?))
            }
            false => None,
        };
        let body_at = self.start_of(0) - text_start;
        let mut body = Body {
            p: self,
            scopes: vec![Vec::new()],
            trigger: true,
        };
        let body = body.statement()?;
        Ok(RoutineStatement::CreateTrigger(Box::new(CreateTrigger {
            name,
            definer,
            if_not_exists,
            before,
            event,
            table,
            order,
            body,
            definition: self.text_from(text_start),
            body_at,
        })))
    }

    /// After DROP: `PROCEDURE|FUNCTION|TRIGGER [IF EXISTS] name`.
    pub(super) fn parse_drop_routine(&mut self) -> Result<Option<Statement>> {
        let Some(kind) = self.routine_kind() else {
            return Ok(None);
        };
        let if_exists = self.if_exists()?;
        let name = self.object_name()?;
        Ok(Some(Statement::Routine(Box::new(RoutineStatement::Drop {
            kind,
            name,
            if_exists,
        }))))
    }

    /// CALL p, CALL p(), CALL p(args).
    pub(super) fn parse_call(&mut self) -> Result<Statement> {
        self.advance();
        let name = self.object_name()?;
        let mut args = Vec::new();
        if self.eat(&Tok::LParen) && !self.eat(&Tok::RParen) {
            args = self.parse_expr_list()?;
            self.expect(&Tok::RParen)?;
        }
        Ok(Statement::Routine(Box::new(RoutineStatement::Call {
            name,
            args,
        })))
    }

    /// SHOW CREATE PROCEDURE|FUNCTION|TRIGGER, SHOW PROCEDURE|FUNCTION
    /// STATUS, SHOW TRIGGERS; None (position unchanged) for other SHOWs.
    pub(super) fn parse_show_routine(&mut self) -> Result<Option<Statement>> {
        let kind_at = |p: &Self, n: usize| {
            if p.kw_at(n, "PROCEDURE") {
                Some(RoutineKind::Procedure)
            } else if p.kw_at(n, "FUNCTION") {
                Some(RoutineKind::Function)
            } else if p.kw_at(n, "TRIGGER") {
                Some(RoutineKind::Trigger)
            } else {
                None
            }
        };
        let stmt = if self.is_kw("CREATE") && kind_at(self, 1).is_some() {
            let kind = kind_at(self, 1).expect("checked");
            self.pos += 2;
            RoutineStatement::ShowCreate {
                kind,
                name: self.object_name()?,
            }
        } else if kind_at(self, 0).is_some() && self.kw_at(1, "STATUS") {
            let kind = kind_at(self, 0).expect("checked");
            self.pos += 2;
            RoutineStatement::ShowStatus {
                kind,
                filter: self.parse_show_filter()?,
            }
        } else if self.is_kw("TRIGGERS") {
            self.advance();
            RoutineStatement::ShowTriggers {
                database: self.parse_show_db()?,
                filter: self.parse_show_filter()?,
            }
        } else {
            return Ok(None);
        };
        Ok(Some(Statement::Routine(Box::new(stmt))))
    }
}

impl Body<'_, '_> {
    fn is_local(&self, name: &str) -> bool {
        let low = name.to_lowercase();
        if self.trigger && (low.starts_with("new.") || low.starts_with("old.")) {
            return true;
        }
        self.scopes.iter().any(|s| s.contains(&low))
    }

    /// One statement of a body (without its `;`).
    fn statement(&mut self) -> Result<SpStmt> {
        self.p.enter()?;
        let r = self.statement_inner();
        self.p.leave();
        r
    }

    fn statement_inner(&mut self) -> Result<SpStmt> {
        let p = &mut *self.p;
        let label = match (p.peek(), p.tok_at(1)) {
            (Tok::Word | Tok::Ident(_), Tok::Colon) => {
                let l = p.ident_any()?;
                p.advance();
                Some(l)
            }
            _ => None,
        };
        let mut buf = [0u8; 32];
        let word = p.upper_word(0, &mut buf).to_vec();
        if label.is_some() && !matches!(word.as_slice(), b"BEGIN" | b"LOOP" | b"WHILE" | b"REPEAT")
        {
            return Err(p.error());
        }
        match word.as_slice() {
            b"BEGIN" => self.block(label),
            b"IF" => self.if_stmt(),
            b"CASE" => self.case_stmt(),
            b"WHILE" => self.while_stmt(label),
            b"REPEAT" => self.repeat_stmt(label),
            b"LOOP" => self.loop_stmt(label),
            b"LEAVE" | b"ITERATE" => {
                self.p.advance();
                let l = self.p.ident_any()?;
                Ok(if word == b"LEAVE" {
                    SpStmt::Leave(l)
                } else {
                    SpStmt::Iterate(l)
                })
            }
            b"RETURN" => {
                self.p.advance();
                Ok(SpStmt::Return(self.p.parse_expr()?))
            }
            b"SET" if !self.p.kw_at(1, "TRANSACTION") && !self.p.kw_at(2, "TRANSACTION") => {
                self.set_stmt()
            }
            b"OPEN" | b"CLOSE" => {
                self.p.advance();
                let c = self.p.ident_any()?;
                Ok(if word == b"OPEN" {
                    SpStmt::Open(c)
                } else {
                    SpStmt::Close(c)
                })
            }
            b"FETCH" => self.fetch_stmt(),
            b"SIGNAL" | b"RESIGNAL" => self.signal_stmt(word == b"RESIGNAL"),
            b"SELECT" => self.select_stmt(),
            b"DECLARE" => Err(self.p.error()),
            // Its file comes over the connection, after the statement.
            b"LOAD" if self.p.kw_at(1, "DATA") => Err(lockstep_types::Error::new(
                lockstep_types::error::Code::SpBadstatement,
                "LOAD DATA is not allowed in stored procedures",
            )),
            _ => Ok(SpStmt::Sql(Box::new(self.p.parse_statement()?))),
        }
    }

    /// Statements up to (not including) one of `ends`, each ended by `;`.
    fn list(&mut self, ends: &[&str]) -> Result<Vec<SpStmt>> {
        let mut out = Vec::new();
        while !self.p.is_any_kw(ends) {
            if self.p.is(&Tok::Eof) {
                return Err(self.p.error());
            }
            out.push(self.statement()?);
            self.p.expect(&Tok::Semi)?;
        }
        Ok(out)
    }

    fn end_label(&mut self, label: &Option<String>) -> Result<()> {
        if let (Some(l), Tok::Word | Tok::Ident(_)) = (label, self.p.peek().clone()) {
            let pos = self.p.pos;
            let end = self.p.ident_any()?;
            if !end.eq_ignore_ascii_case(l) {
                self.p.pos = pos;
                return Err(self.p.error());
            }
        }
        Ok(())
    }

    fn block(&mut self, label: Option<String>) -> Result<SpStmt> {
        self.p.advance();
        self.scopes.push(Vec::new());
        let mut decls = Vec::new();
        while self.p.is_kw("DECLARE") {
            decls.push(self.declare()?);
            self.p.expect(&Tok::Semi)?;
        }
        let body = self.list(&["END"])?;
        self.p.expect_kw("END")?;
        self.end_label(&label)?;
        self.scopes.pop();
        Ok(SpStmt::Block { label, decls, body })
    }

    fn declare(&mut self) -> Result<SpDecl> {
        self.p.advance();
        if self.p.is_any_kw(&["CONTINUE", "EXIT", "UNDO"]) {
            if self.p.is_kw("UNDO") {
                return Err(self.p.unsupported("UNDO handlers"));
            }
            let exit = self.p.eat_kw("EXIT");
            self.p.eat_kw("CONTINUE");
            self.p.expect_kw("HANDLER")?;
            self.p.expect_kw("FOR")?;
            let mut conditions = Vec::new();
            loop {
                conditions.push(self.condition()?);
                if !self.p.eat(&Tok::Comma) {
                    break;
                }
            }
            let body = Box::new(self.statement()?);
            return Ok(SpDecl::Handler {
                exit,
                conditions,
                body,
            });
        }
        let name = self.p.ident_any()?;
        if self.p.eat_kw("CONDITION") {
            self.p.expect_kw("FOR")?;
            let condition = self.condition()?;
            return Ok(SpDecl::Condition { name, condition });
        }
        if self.p.eat_kw("CURSOR") {
            self.p.expect_kw("FOR")?;
            let query = Box::new(self.p.parse_query()?);
            return Ok(SpDecl::Cursor { name, query });
        }
        let mut names = vec![name];
        while self.p.eat(&Tok::Comma) {
            names.push(self.p.ident_any()?);
        }
        let data_type = self.p.parse_data_type(&names[0])?;
        self.p.skip_charset_attrs()?;
        let default = if self.p.eat_kw("DEFAULT") {
            Some(self.p.parse_expr()?)
        } else {
            None
        };
        let scope = self.scopes.last_mut().expect("a block is open");
        scope.extend(names.iter().map(|n| n.to_lowercase()));
        Ok(SpDecl::Var {
            names,
            data_type,
            default,
        })
    }

    fn condition(&mut self) -> Result<HandlerCondition> {
        let p = &mut *self.p;
        if p.eat_kw("SQLEXCEPTION") {
            return Ok(HandlerCondition::SqlException);
        }
        if p.eat_kw("SQLWARNING") {
            return Ok(HandlerCondition::SqlWarning);
        }
        if p.eat_kw("NOT") {
            p.expect_kw("FOUND")?;
            return Ok(HandlerCondition::NotFound);
        }
        if p.eat_kw("SQLSTATE") {
            p.eat_kw("VALUE");
            let s = p.string_literal()?;
            let valid = s.len() == 5 && s.bytes().all(|b| b.is_ascii_alphanumeric());
            if !valid || s.starts_with("00") {
                return Err(lockstep_types::Error::new(
                    lockstep_types::error::Code::SpBadSqlstate,
                    format!("Bad SQLSTATE: '{s}'"),
                ));
            }
            return Ok(HandlerCondition::SqlState(s));
        }
        if let Tok::Int = p.peek() {
            let n = p.parse_u64()?;
            return Ok(HandlerCondition::Code(n.min(u16::MAX as u64) as u16));
        }
        Ok(HandlerCondition::Named(p.ident_any()?.to_lowercase()))
    }

    fn if_stmt(&mut self) -> Result<SpStmt> {
        self.p.advance();
        let mut branches = Vec::new();
        let mut otherwise = None;
        loop {
            let cond = self.p.parse_expr()?;
            self.p.expect_kw("THEN")?;
            branches.push((cond, self.list(&["ELSEIF", "ELSE", "END"])?));
            if self.p.eat_kw("ELSEIF") {
                continue;
            }
            if self.p.eat_kw("ELSE") {
                otherwise = Some(self.list(&["END"])?);
            }
            break;
        }
        self.p.expect_kw("END")?;
        self.p.expect_kw("IF")?;
        Ok(SpStmt::If {
            branches,
            otherwise,
        })
    }

    fn case_stmt(&mut self) -> Result<SpStmt> {
        self.p.advance();
        let operand = match self.p.is_kw("WHEN") {
            true => None,
            false => Some(self.p.parse_expr()?),
        };
        let mut branches = Vec::new();
        while self.p.eat_kw("WHEN") {
            let w = self.p.parse_expr()?;
            self.p.expect_kw("THEN")?;
            branches.push((w, self.list(&["WHEN", "ELSE", "END"])?));
        }
        if branches.is_empty() {
            return Err(self.p.error());
        }
        let otherwise = match self.p.eat_kw("ELSE") {
            true => Some(self.list(&["END"])?),
            false => None,
        };
        self.p.expect_kw("END")?;
        self.p.expect_kw("CASE")?;
        Ok(SpStmt::Case {
            operand,
            branches,
            otherwise,
        })
    }

    fn while_stmt(&mut self, label: Option<String>) -> Result<SpStmt> {
        self.p.advance();
        let cond = self.p.parse_expr()?;
        self.p.expect_kw("DO")?;
        let body = self.list(&["END"])?;
        self.close("WHILE", &label)?;
        Ok(SpStmt::While { label, cond, body })
    }

    fn repeat_stmt(&mut self, label: Option<String>) -> Result<SpStmt> {
        self.p.advance();
        let body = self.list(&["UNTIL"])?;
        self.p.expect_kw("UNTIL")?;
        let until = self.p.parse_expr()?;
        self.close("REPEAT", &label)?;
        Ok(SpStmt::Repeat { label, body, until })
    }

    fn loop_stmt(&mut self, label: Option<String>) -> Result<SpStmt> {
        self.p.advance();
        let body = self.list(&["END"])?;
        self.close("LOOP", &label)?;
        Ok(SpStmt::Loop { label, body })
    }

    /// `END kw [label]` closing a loop.
    fn close(&mut self, kw: &str, label: &Option<String>) -> Result<()> {
        self.p.expect_kw("END")?;
        self.p.expect_kw(kw)?;
        self.end_label(label)
    }

    /// SET with local targets split from the others (system and user
    /// variables), which run as an ordinary SET.
    fn set_stmt(&mut self) -> Result<SpStmt> {
        let start = self.p.pos;
        // parse_set_assignment moves token contents out: kept to parse again.
        let saved = self.p.toks.clone();
        self.p.advance();
        let mut locals = Vec::new();
        let mut others = Vec::new();
        let mut scope = Scope::Session;
        loop {
            let local = match (self.p.peek(), self.p.tok_at(1), self.p.tok_at(2)) {
                (Tok::Word | Tok::Ident(_), Tok::Eq | Tok::Assign, _) => {
                    let n = self.p.text_at(0);
                    let n = match self.p.peek() {
                        Tok::Ident(s) => s.clone(),
                        _ => n.to_string(),
                    };
                    self.is_local(&n).then_some((n, 1))
                }
                (Tok::Word, Tok::Dot, Tok::Word | Tok::Ident(_)) if self.trigger => {
                    let q = self.p.text_at(0).to_string();
                    let c = match self.p.tok_at(2) {
                        Tok::Ident(s) => s.clone(),
                        _ => self.p.text_at(2).to_string(),
                    };
                    let n = format!("{q}.{c}");
                    self.is_local(&n).then_some((n, 3))
                }
                _ => None,
            };
            match local {
                Some((name, len)) => {
                    self.p.pos += len;
                    if !self.p.eat(&Tok::Eq) {
                        self.p.expect(&Tok::Assign)?;
                    }
                    let e = self.p.parse_expr()?;
                    locals.push((SpTarget::Local(name.to_lowercase()), e));
                }
                None => others.push(self.p.parse_set_assignment(&mut scope)?),
            }
            if !self.p.eat(&Tok::Comma) {
                break;
            }
        }
        if locals.is_empty() {
            // An ordinary SET (NAMES, PASSWORD, ...): parsed as such.
            self.p.toks = saved;
            self.p.pos = start;
            return Ok(SpStmt::Sql(Box::new(self.p.parse_statement()?)));
        }
        Ok(SpStmt::Set { locals, others })
    }

    fn targets(&mut self) -> Result<Vec<SpTarget>> {
        let mut out = Vec::new();
        loop {
            match self.p.peek() {
                Tok::UserVar(_) => match self.p.take() {
                    Tok::UserVar(n) => out.push(SpTarget::User(n.to_lowercase())),
                    _ => return Err(self.p.error()),
                },
                _ => {
                    let n = self.p.ident_any()?;
                    if !self.is_local(&n) {
                        return Err(lockstep_types::Error::new(
                            lockstep_types::error::Code::SpUndeclaredVar,
                            format!("Undeclared variable: {n}"),
                        ));
                    }
                    out.push(SpTarget::Local(n.to_lowercase()));
                }
            }
            if !self.p.eat(&Tok::Comma) {
                return Ok(out);
            }
        }
    }

    fn fetch_stmt(&mut self) -> Result<SpStmt> {
        self.p.advance();
        if self.p.eat_kw("NEXT") {
            self.p.expect_kw("FROM")?;
        } else {
            self.p.eat_kw("FROM");
        }
        let cursor = self.p.ident_any()?;
        self.p.expect_kw("INTO")?;
        let targets = self.targets()?;
        Ok(SpStmt::Fetch { cursor, targets })
    }

    /// SELECT, with an INTO list (after the select list or at the end)
    /// taken out of the tokens before the query is parsed.
    fn select_stmt(&mut self) -> Result<SpStmt> {
        let start = self.p.pos;
        let mut depth = 0usize;
        let mut at = None;
        let mut i = start;
        while let Some(t) = self.p.toks.get(i) {
            match &t.tok {
                Tok::LParen => depth += 1,
                Tok::RParen => depth = depth.saturating_sub(1),
                Tok::Semi | Tok::Eof => break,
                Tok::Word if depth == 0 => {
                    let w = self.p.src.get(t.start..t.end).unwrap_or("");
                    if w.eq_ignore_ascii_case("INTO") {
                        at = Some(i);
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let Some(at) = at else {
            return Ok(SpStmt::Sql(Box::new(self.p.parse_statement()?)));
        };
        self.p.pos = at + 1;
        let targets = self.targets()?;
        let end = self.p.pos;
        self.p.toks.drain(at..end);
        self.p.pos = start;
        let query = Box::new(self.p.parse_query()?);
        Ok(SpStmt::SelectInto { query, targets })
    }

    fn signal_stmt(&mut self, resignal: bool) -> Result<SpStmt> {
        self.p.advance();
        let condition = if self.p.at_end() || self.p.is_kw("SET") {
            None
        } else {
            Some(self.condition()?)
        };
        if !resignal && condition.is_none() {
            return Err(self.p.error());
        }
        let mut items = Vec::new();
        if self.p.eat_kw("SET") {
            loop {
                let name = self.p.ident_any()?.to_ascii_uppercase();
                self.p.expect(&Tok::Eq)?;
                items.push((name, self.p.parse_expr()?));
                if !self.p.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        Ok(SpStmt::Signal {
            resignal,
            condition,
            items,
        })
    }
}
