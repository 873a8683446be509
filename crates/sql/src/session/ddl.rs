//! Schema statements the session runs itself: CREATE/DROP DATABASE,
//! CREATE/DROP/TRUNCATE TABLE and CREATE/DROP INDEX (ALTER TABLE is in
//! alter.rs). Each commits the open transaction first, as MySQL's DDL does,
//! except on temporary tables.

use super::{is_system_db, ok, online_alter, Session, R};
use crate::parser::{self, DdlOptions, ObjectName};
use lockstep_types::error::Code;
use lockstep_types::result::Response;
use lockstep_types::Error;

impl Session {
    pub(super) async fn create_database(&mut self, name: &str, if_not_exists: bool) -> R<Response> {
        self.commit().await?;
        let created = self.engine.create_database(name, if_not_exists).await?;
        Ok(ok(created as u64))
    }

    pub(super) async fn drop_database(&mut self, name: &str, if_exists: bool) -> R<Response> {
        if is_system_db(name) {
            return Err(self.grants.database_denied(name));
        }
        self.commit().await?;
        let tables = self.engine.catalog.tables(name);
        let _ddl = self.lock_for_ddl(&tables).await?;
        self.check_drop_parents(&tables)?;
        let n = self.engine.drop_database(name, if_exists).await?;
        if self.ctx.database.as_deref() == Some(name) {
            self.ctx.database = None;
        }
        Ok(ok(n as u64))
    }

    /// CREATE [TEMPORARY] TABLE, plain, ... LIKE or ... SELECT.
    pub(super) async fn create_table(&mut self, ct: &parser::CreateTable) -> R<Response> {
        let db = match &ct.name.database {
            Some(d) => d.clone(),
            None => self.ctx.database.clone().ok_or_else(Error::no_db)?,
        };
        if is_system_db(&db) {
            return Err(self.grants.database_denied(&db));
        }
        self.check_engine(ct.engine.as_deref(), &ct.name.name)?;
        let expanded;
        let ct = match &ct.select {
            Some(q) => {
                expanded = self.columns_of_query(ct, q)?;
                &expanded
            }
            None => ct,
        };
        if ct.temporary {
            self.refuse_temporary_generated(ct)?;
            // No implicit commit, as in MySQL.
            self.create_temporary(ct, db)?;
            return self.fill_from_query(ct).await;
        }
        self.commit().await?;
        if !self.engine.catalog.database_exists(&db) {
            return Err(Error::new(Code::BadDb, format!("Unknown database '{db}'")));
        }
        if self.engine.catalog.table(&db, &ct.name.name).is_some() {
            let text = format!("Table '{}' already exists", ct.name.name);
            if ct.if_not_exists {
                self.ctx
                    .warnings
                    .push(crate::exec::Condition::warning(1050, text));
                return Ok(ok(0));
            }
            return Err(Error::new(Code::TableExists, text));
        }
        let def = match &ct.like {
            Some(other) => {
                let src = self.binder().table(other)?.def();
                let mut d = (*src).clone();
                d.name = ct.name.name.clone();
                d.database = db.clone();
                d
            }
            None => {
                let mut def = crate::plan::ddl::table_def(&db, ct)?;
                let tz = self.ctx.tz_offset;
                def.columns
                    .iter_mut()
                    .for_each(|c| super::time_zone::default_to_utc(c, tz));
                def
            }
        };
        self.create_with_foreign_keys(def, ct).await?;
        self.fill_from_query(ct).await
    }

    /// DROP [TEMPORARY] TABLE [IF EXISTS]: all or nothing, as MySQL 8:
    /// every table is found (and locked) before the first is dropped.
    pub(super) async fn drop_tables(
        &mut self,
        tables: &[ObjectName],
        if_exists: bool,
        temporary: bool,
    ) -> R<Response> {
        if !temporary {
            self.commit().await?;
        }
        let (mut missing, mut temps, mut found) = (Vec::new(), Vec::new(), Vec::new());
        for t in tables {
            if self.temporary_table(t).is_some() {
                temps.push(t);
                continue;
            }
            if temporary {
                missing.push(self.qualified(t));
                continue;
            }
            match self.table_for_ddl(t).await {
                Ok(held) => found.push(held),
                Err(e) if e.code == Code::NoSuchTable => missing.push(format!(
                    "{}.{}",
                    t.database
                        .clone()
                        .or(self.ctx.database.clone())
                        .unwrap_or_default(),
                    t.name
                )),
                Err(e) => return Err(e),
            }
        }
        if !missing.is_empty() && !if_exists {
            return Err(Error::new(
                Code::BadTable,
                format!("Unknown table '{}'", missing.join(",")),
            ));
        }
        let dropped: Vec<_> = found.iter().map(|(t, _)| t.clone()).collect();
        self.check_drop_parents(&dropped)?;
        for t in temps {
            self.drop_temporary(t);
        }
        for (table, _ddl) in found {
            self.engine.drop_table(&table).await?;
        }
        // IF EXISTS: a note per missing table, as in MySQL.
        for name in missing {
            let note = (Code::BadTable.number(), format!("Unknown table '{name}'"));
            self.ctx.warnings.push(note.into());
        }
        Ok(ok(0))
    }

    pub(super) async fn truncate(&mut self, table: &ObjectName) -> R<Response> {
        self.commit().await?;
        if let Some(t) = self.temporary_table(table) {
            t.clear();
            return Ok(ok(0));
        }
        if super::infoschema_meta::is_host_cache(table, self.ctx.database.as_deref()) {
            return Ok(ok(0));
        }
        let (t, _ddl) = self.table_for_ddl(table).await?;
        self.check_truncate(&t)?;
        self.engine.truncate_table(&t).await?;
        Ok(ok(0))
    }

    /// CREATE [UNIQUE] INDEX: in place when the options allow it, else
    /// as the ALTER TABLE ... ADD INDEX it is.
    pub(super) async fn create_index_statement(
        &mut self,
        name: &str,
        table: &ObjectName,
        columns: &[String],
        unique: bool,
        online: &DdlOptions,
        comment: &Option<String>,
    ) -> R<Response> {
        self.commit().await?;
        let note = comment.as_deref().unwrap_or_default();
        let held = match self.temporary_table(table) {
            Some(t) => (t, None),
            None if !online_alter::index_in_place(online)? => {
                let add = parser::AlterAction::AddIndex {
                    name: Some(name.to_string()),
                    columns: columns.to_vec(),
                    unique,
                    comment: comment.clone(),
                };
                self.alter_table(table, &[add], online).await?;
                return Ok(ok(0));
            }
            None => {
                let (t, ddl) = self.table_for_ddl(table).await?;
                (t, Some(ddl))
            }
        };
        let (t, _ddl) = held;
        self.check_index_comment(name, note)?;
        self.create_index(&t, Some(name.to_string()), columns, unique)
            .await?;
        self.set_index_comment(&t, name, note).await?;
        Ok(ok(0))
    }

    pub(super) async fn drop_index_statement(
        &mut self,
        name: &str,
        table: &ObjectName,
        online: &DdlOptions,
    ) -> R<Response> {
        self.commit().await?;
        if let Some(t) = self.temporary_table(table) {
            self.engine.drop_index(&t, name).await?;
            self.set_index_comment(&t, name, "").await?;
            return Ok(ok(0));
        }
        online_alter::choose(online, online_alter::Change::Metadata)?;
        let (t, _ddl) = self.table_for_ddl(table).await?;
        let old = t.def();
        let mut new = (*old).clone();
        new.indexes.retain(|i| !i.name.eq_ignore_ascii_case(name));
        let own = self.engine.catalog.foreign_keys(t.id);
        let refs = self.referencing_others(&old, t.id);
        self.check_alter(&old, &new, &own, &refs, &[])?;
        self.engine.drop_index(&t, name).await?;
        self.set_index_comment(&t, name, "").await?;
        Ok(ok(0))
    }
}
