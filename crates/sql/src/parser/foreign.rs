//! FOREIGN KEY clauses of CREATE TABLE and ALTER TABLE ADD.

use super::{Parser, Result};
use crate::parser::ast::{FkRule, ForeignKeySpec};
use lockstep_tables::FkAction;

impl Parser<'_> {
    /// FOREIGN KEY [index_name] (cols) REFERENCES parent (cols) [ON DELETE
    /// rule] [ON UPDATE rule], in either order. `name` is the CONSTRAINT
    /// symbol, when one was given.
    pub(super) fn parse_foreign_key(&mut self, name: Option<String>) -> Result<ForeignKeySpec> {
        self.expect_kw("FOREIGN")?;
        self.expect_kw("KEY")?;
        let index_name = if self.is_ident_start() && !self.is(&super::Tok::LParen) {
            Some(self.ident()?)
        } else {
            None
        };
        let columns = self.parse_index_columns()?;
        self.expect_kw("REFERENCES")?;
        let parent = self.object_name()?;
        let parent_columns = self.parse_index_columns()?;
        let mut fk = ForeignKeySpec {
            name,
            index_name,
            columns,
            parent,
            parent_columns,
            on_delete: None,
            on_update: None,
        };
        loop {
            if self.is_kw("MATCH") {
                // InnoDB would ignore ON DELETE/UPDATE after a MATCH clause.
                return Err(self.unsupported("FOREIGN KEY ... MATCH"));
            }
            if !self.eat_kw("ON") {
                return Ok(fk);
            }
            let delete = self.eat_kw("DELETE");
            if !delete {
                self.expect_kw("UPDATE")?;
            }
            let slot = if delete {
                &mut fk.on_delete
            } else {
                &mut fk.on_update
            };
            if slot.is_some() {
                return Err(self.error());
            }
            *slot = Some(self.fk_rule()?);
        }
    }

    /// RESTRICT | CASCADE | SET NULL | SET DEFAULT | NO ACTION
    fn fk_rule(&mut self) -> Result<FkRule> {
        let action = if self.eat_kw("RESTRICT") {
            FkAction::Restrict
        } else if self.eat_kw("CASCADE") {
            FkAction::Cascade
        } else if self.eat_kw("SET") {
            if self.eat_kw("DEFAULT") {
                return Ok(FkRule::SetDefault);
            }
            self.expect_kw("NULL")?;
            FkAction::SetNull
        } else {
            self.expect_kw("NO")?;
            self.expect_kw("ACTION")?;
            FkAction::NoAction
        };
        Ok(FkRule::Action(action))
    }
}
