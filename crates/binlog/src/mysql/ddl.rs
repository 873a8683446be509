//! The SQL text of a logged DDL event, for a QUERY_EVENT: lockstep logs
//! the resulting definitions, so the statement is written from them.
//! Account changes carry no statement a CDC tool could use (None).

use lockstep_tables::TableDef;

use crate::{ColumnSource, Event};

fn q(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn qualified(def: &TableDef) -> String {
    format!("{}.{}", q(&def.database), q(&def.name))
}

fn column_sql(def: &TableDef, i: usize) -> String {
    let c = &def.columns[i];
    let mut s = format!("{} {}", q(&c.name), c.data_type);
    if !c.nullable {
        s.push_str(" NOT NULL");
    }
    if c.auto_increment {
        s.push_str(" AUTO_INCREMENT");
    }
    s
}

fn index_sql(def: &TableDef, k: usize) -> String {
    let ix = &def.indexes[k];
    let cols: Vec<String> = ix
        .columns
        .iter()
        .map(|&c| q(&def.columns[c].name))
        .collect();
    if primary_key(def, k) {
        format!("PRIMARY KEY ({})", cols.join(", "))
    } else if ix.unique {
        format!("UNIQUE KEY {} ({})", q(&ix.name), cols.join(", "))
    } else {
        format!("KEY {} ({})", q(&ix.name), cols.join(", "))
    }
}

pub fn create_table(def: &TableDef) -> String {
    let mut parts: Vec<String> = def
        .visible_columns()
        .map(|(i, _)| column_sql(def, i))
        .collect();
    let first_index = usize::from(def.hidden_row_id.is_some());
    parts.extend((first_index..def.indexes.len()).map(|k| index_sql(def, k)));
    format!("CREATE TABLE {} ({})", qualified(def), parts.join(", "))
}

/// Index `k` is the table's PRIMARY KEY.
fn primary_key(d: &TableDef, k: usize) -> bool {
    k == 0 && d.hidden_row_id.is_none()
}

/// Index `k` is the one on the hidden row id (not the user's).
fn hidden_key(d: &TableDef, k: usize) -> bool {
    k == 0 && d.hidden_row_id.is_some()
}

/// ALTER TABLE from the old and new definitions and where each new
/// column's values come from.
fn alter_table(old: &TableDef, new: &TableDef, sources: &[ColumnSource]) -> String {
    let mut changes = Vec::new();
    let kept: Vec<u32> = sources
        .iter()
        .filter_map(|s| match s {
            ColumnSource::Column(c) | ColumnSource::Shifted { column: c, .. } => Some(*c),
            _ => None,
        })
        .collect();
    for (i, c) in old.visible_columns() {
        if !kept.contains(&(i as u32)) {
            changes.push(format!("DROP COLUMN {}", q(&c.name)));
        }
    }
    for (i, _) in new.visible_columns() {
        match sources.get(i) {
            Some(ColumnSource::Column(c) | ColumnSource::Shifted { column: c, .. }) => {
                let o = &old.columns[*c as usize];
                let n = &new.columns[i];
                if o.name != n.name || o.data_type != n.data_type || o.nullable != n.nullable {
                    changes.push(format!(
                        "CHANGE COLUMN {} {}",
                        q(&o.name),
                        column_sql(new, i)
                    ));
                }
            }
            _ => changes.push(format!("ADD COLUMN {}", column_sql(new, i))),
        }
    }
    let names =
        |d: &TableDef| -> Vec<String> { d.indexes.iter().map(|x| x.name.clone()).collect() };
    let (old_ix, new_ix) = (names(old), names(new));
    for (k, ix) in old.indexes.iter().enumerate() {
        if !new_ix.contains(&ix.name) && !primary_key(old, k) {
            changes.push(format!("DROP INDEX {}", q(&ix.name)));
        }
    }
    for (k, ix) in new.indexes.iter().enumerate() {
        if !old_ix.contains(&ix.name) && !hidden_key(new, k) {
            changes.push(format!("ADD {}", index_sql(new, k)));
        }
    }
    if old.name != new.name || old.database != new.database {
        changes.push(format!("RENAME TO {}", qualified(new)));
    }
    if changes.is_empty() {
        changes.push("FORCE".into());
    }
    format!("ALTER TABLE {} {}", qualified(old), changes.join(", "))
}

/// (default database, statement) of a DDL event; `table` finds a table's
/// definition as it was before the event. Err: a table it names is
/// unknown. Ok(None): nothing to say (account changes).
pub fn statement(
    e: &Event,
    table: &dyn Fn(u32) -> Option<TableDef>,
) -> Result<Option<(String, String)>, String> {
    let t = |id: u32| table(id).ok_or_else(|| format!("table #{id} is not known to the stream"));
    Ok(Some(match e {
        Event::CreateDatabase { name } => (name.clone(), format!("CREATE DATABASE {}", q(name))),
        Event::DropDatabase { name } => (name.clone(), format!("DROP DATABASE {}", q(name))),
        Event::CreateTable { def } => (def.database.clone(), create_table(def)),
        Event::DropTable { table } => {
            let d = t(*table)?;
            (d.database.clone(), format!("DROP TABLE {}", qualified(&d)))
        }
        Event::Truncate { table } => {
            let d = t(*table)?;
            (
                d.database.clone(),
                format!("TRUNCATE TABLE {}", qualified(&d)),
            )
        }
        Event::CreateIndex { table, index } => {
            let mut d = t(*table)?;
            d.indexes.push(index.clone());
            let k = d.indexes.len() - 1;
            let sql = format!("ALTER TABLE {} ADD {}", qualified(&d), index_sql(&d, k));
            (d.database.clone(), sql)
        }
        Event::DropIndex { table, name } => {
            let d = t(*table)?;
            let sql = format!("DROP INDEX {} ON {}", q(name), qualified(&d));
            (d.database.clone(), sql)
        }
        Event::AlterTable {
            table,
            def,
            sources,
        } => {
            let d = t(*table)?;
            (d.database.clone(), alter_table(&d, def, sources))
        }
        Event::RenameTable {
            table,
            database,
            name,
        } => {
            let d = t(*table)?;
            let sql = format!(
                "RENAME TABLE {} TO {}.{}",
                qualified(&d),
                q(database),
                q(name)
            );
            (d.database.clone(), sql)
        }
        Event::PutView { view } => {
            let sql = format!(
                "CREATE OR REPLACE VIEW {}.{} AS {}",
                q(&view.database),
                q(&view.name),
                view.query
            );
            (view.database.clone(), sql)
        }
        Event::DropView { database, name } => (
            database.clone(),
            format!("DROP VIEW {}.{}", q(database), q(name)),
        ),
        Event::SetAutoIncrement { table, next } => {
            let d = t(*table)?;
            let sql = format!("ALTER TABLE {} AUTO_INCREMENT={next}", qualified(&d));
            (d.database.clone(), sql)
        }
        // Stored programs go out as MySQL logs them: the CREATE with its
        // DEFINER, and the DROP.
        Event::PutRoutine { routine } => (routine.database.clone(), routine.create_statement()),
        Event::DropRoutine {
            database,
            kind,
            name,
        } => (
            database.clone(),
            format!("DROP {} {}.{}", kind.keyword(), q(database), q(name)),
        ),
        // Foreign keys: logged with the CREATE/ALTER that made them. CHECK
        // constraints are enforced on this source only: its row events
        // already passed them.
        Event::SetForeignKeys { .. }
        | Event::SetChecks { .. }
        | Event::SetGenerated { .. }
        | Event::SetComments { .. }
        | Event::SetHistograms { .. }
        | Event::PutAccount { .. }
        | Event::DropAccount { .. }
        | Event::PutRoles { .. } => return Ok(None),
        _ => return Err("a row event is not DDL".into()),
    }))
}
