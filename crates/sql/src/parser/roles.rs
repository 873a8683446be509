//! MySQL 8's role statements: CREATE/DROP ROLE, GRANT r TO u, REVOKE r
//! FROM u, SET ROLE, SET DEFAULT ROLE, ALTER USER u DEFAULT ROLE and
//! SHOW GRANTS ... USING. The shared parser calls in here at the points
//! where these statements part from their privilege counterparts.

use super::{Parser, Result, Tok};
use crate::parser::ast::{Statement, UserName};
use crate::parser::role_ast::{RoleSpec, RoleStmt};

impl Parser<'_> {
    /// CREATE ROLE, the keyword ROLE next.
    pub(super) fn parse_create_role(&mut self) -> Result<Statement> {
        self.advance();
        let if_not_exists = self.if_not_exists()?;
        let roles = self.role_names()?;
        self.role_end(Statement::Role(RoleStmt::Create {
            if_not_exists,
            roles,
        }))
    }

    /// DROP ROLE, the keyword ROLE next.
    pub(super) fn parse_drop_role(&mut self) -> Result<Statement> {
        self.advance();
        let if_exists = self.if_exists()?;
        let roles = self.role_names()?;
        self.role_end(Statement::Role(RoleStmt::Drop { if_exists, roles }))
    }

    /// Whether a GRANT (REVOKE) names roles: TO (FROM) comes before any
    /// ON. REVOKE ALL [PRIVILEGES], GRANT OPTION FROM u is no role revoke.
    pub(super) fn names_roles(&self, before: &str) -> bool {
        if self.is_kw("ALL") {
            return false;
        }
        let mut n = 0;
        while !matches!(self.tok_at(n), Tok::Eof | Tok::Semi) {
            if self.kw_at(n, "ON") {
                return false;
            }
            if self.kw_at(n, before) {
                return true;
            }
            n += 1;
        }
        false
    }

    /// GRANT r, ... TO u, ... [WITH ADMIN OPTION], after GRANT.
    pub(super) fn parse_grant_roles(&mut self) -> Result<Statement> {
        let roles = self.role_names()?;
        self.expect_kw("TO")?;
        let to = self.role_names()?;
        let admin = self.eat_kw("WITH");
        if admin {
            self.expect_kw("ADMIN")?;
            self.expect_kw("OPTION")?;
        }
        self.role_end(Statement::Role(RoleStmt::Grant { roles, to, admin }))
    }

    /// REVOKE r, ... FROM u, ..., after REVOKE.
    pub(super) fn parse_revoke_roles(&mut self) -> Result<Statement> {
        let roles = self.role_names()?;
        self.expect_kw("FROM")?;
        let from = self.role_names()?;
        self.role_end(Statement::Role(RoleStmt::Revoke { roles, from }))
    }

    /// SET ROLE ... or SET DEFAULT ROLE ... TO u, ..., after SET.
    pub(super) fn parse_set_role(&mut self) -> Result<Statement> {
        if self.eat_kw("DEFAULT") {
            self.expect_kw("ROLE")?;
            let spec = self.default_role_spec()?;
            self.expect_kw("TO")?;
            let users = self.role_names()?;
            return self.role_end(Statement::Role(RoleStmt::SetDefault { spec, users }));
        }
        self.expect_kw("ROLE")?;
        let spec = self.role_spec(true)?;
        self.role_end(Statement::Role(RoleStmt::Set(spec)))
    }

    /// ALTER USER [IF EXISTS] u DEFAULT ROLE ..., after USER: None (and
    /// nothing consumed) when the statement is another ALTER USER.
    pub(super) fn parse_alter_user_default_role(&mut self) -> Result<Option<Statement>> {
        let start = self.pos;
        self.if_exists()?;
        let user = match self.user_name() {
            Ok(Some(u)) => u,
            _ => {
                self.pos = start;
                return Ok(None);
            }
        };
        if !(self.is_kw("DEFAULT") && self.kw_at(1, "ROLE")) {
            self.pos = start;
            return Ok(None);
        }
        self.advance();
        self.advance();
        let spec = self.default_role_spec()?;
        self.role_end(Statement::Role(RoleStmt::SetDefault {
            spec,
            users: vec![user],
        }))
        .map(Some)
    }

    /// SHOW GRANTS FOR u USING r, ..., after USING.
    pub(super) fn parse_show_grants_using(&mut self, user: UserName) -> Result<Statement> {
        let using = self.role_names()?;
        self.role_end(Statement::Role(RoleStmt::ShowGrants { user, using }))
    }

    /// What SET DEFAULT ROLE takes: NONE | ALL | r, ... (no EXCEPT).
    fn default_role_spec(&mut self) -> Result<RoleSpec> {
        match self.role_spec(false)? {
            RoleSpec::All { except } if !except.is_empty() => Err(self.error()),
            spec => Ok(spec),
        }
    }

    /// DEFAULT (only where `default_ok`) | NONE | ALL [EXCEPT r, ...] | r, ...
    fn role_spec(&mut self, default_ok: bool) -> Result<RoleSpec> {
        // A role may be named NONE or ALL only quoted: the words are these.
        if self.is_kw("DEFAULT") {
            if !default_ok {
                return Err(self.error());
            }
            self.advance();
            return Ok(RoleSpec::Default);
        }
        if self.eat_kw("NONE") {
            return Ok(RoleSpec::None);
        }
        if self.eat_kw("ALL") {
            let except = if self.eat_kw("EXCEPT") {
                self.role_names()?
            } else {
                Vec::new()
            };
            return Ok(RoleSpec::All { except });
        }
        Ok(RoleSpec::List(self.role_names()?))
    }

    /// Accounts or roles, `CURRENT_USER` refused (it is no role name).
    fn role_names(&mut self) -> Result<Vec<UserName>> {
        self.user_names()
    }

    /// The statement ends here (or a `;` follows).
    fn role_end(&mut self, stmt: Statement) -> Result<Statement> {
        if self.at_end() {
            Ok(stmt)
        } else {
            Err(self.error())
        }
    }
}
