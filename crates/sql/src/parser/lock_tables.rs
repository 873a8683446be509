//! LOCK TABLES, UNLOCK TABLES and FLUSH TABLES ... WITH READ LOCK / FOR
//! EXPORT (session/table_locks.rs runs them). Other FLUSH forms stay
//! accepted and ignored.

use super::{Parser, Result, Tok};
use crate::parser::ast::{LockTable, Statement};

impl Parser<'_> {
    /// A statement starting with LOCK, UNLOCK or FLUSH.
    pub(super) fn parse_lock_family(&mut self) -> Result<Statement> {
        if self.is_kw("LOCK") && (self.kw_at(1, "TABLES") || self.kw_at(1, "TABLE")) {
            self.advance();
            self.advance();
            return self.parse_lock_tables();
        }
        if self.is_kw("UNLOCK") && (self.kw_at(1, "TABLES") || self.kw_at(1, "TABLE")) {
            self.advance();
            self.advance();
            return self.finish(Statement::UnlockTables);
        }
        if self.is_kw("LOCK") || self.is_kw("UNLOCK") {
            return Err(self.unsupported("LOCK INSTANCE"));
        }
        if self.kw_at(1, "TABLES") || self.kw_at(1, "TABLE") {
            if let Some(s) = self.parse_flush_lock()? {
                return Ok(s);
            }
        }
        Ok(self.parse_ignored())
    }

    fn parse_lock_tables(&mut self) -> Result<Statement> {
        let mut items = Vec::new();
        loop {
            let table = self.object_name()?;
            let alias = match self.eat_kw("AS") {
                true => Some(self.ident()?),
                false
                    if !self.is_kw("READ")
                        && !self.is_kw("WRITE")
                        && !self.is_kw("LOW_PRIORITY") =>
                {
                    Some(self.ident()?)
                }
                false => None,
            };
            let write = if self.eat_kw("READ") {
                self.eat_kw("LOCAL");
                false
            } else {
                self.eat_kw("LOW_PRIORITY");
                self.expect_kw("WRITE")?;
                true
            };
            items.push(LockTable {
                table,
                alias,
                write,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.finish(Statement::LockTables(items))
    }

    /// FLUSH [LOCAL|NO_WRITE_TO_BINLOG] TABLES [t, ...] WITH READ LOCK |
    /// FOR EXPORT; None (nothing consumed) for any other FLUSH TABLES.
    fn parse_flush_lock(&mut self) -> Result<Option<Statement>> {
        let save = self.pos;
        self.advance();
        self.advance();
        let mut tables = Vec::new();
        while !self.at_end() && !self.is_kw("WITH") && !self.is_kw("FOR") {
            tables.push(self.object_name()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let export = if self.eat_kw("WITH") {
            self.expect_kw("READ")?;
            self.expect_kw("LOCK")?;
            false
        } else if self.eat_kw("FOR") {
            self.expect_kw("EXPORT")?;
            true
        } else {
            self.pos = save;
            return Ok(None);
        };
        if export && tables.is_empty() {
            return Err(self.error());
        }
        self.finish(Statement::FlushTablesLock { tables, export })
            .map(Some)
    }

    fn finish(&mut self, s: Statement) -> Result<Statement> {
        if !self.at_end() {
            return Err(self.error());
        }
        Ok(s)
    }
}
