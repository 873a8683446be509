//! Generated columns as a session shows and defines them: the list CREATE
//! TABLE (and ... LIKE) gives a table, SHOW CREATE TABLE's clause, SHOW
//! COLUMNS' Extra and information_schema.COLUMNS (`plan::generated` has
//! the rules, `exec::generated` the computation).

use super::{Session, R};
use crate::parser::CreateTable;
use crate::plan::ddl::quote_ident;
use crate::plan::generated::{find, of_create};
use lockstep_binlog::ColumnSource;
use lockstep_tables::{GeneratedColumn, TableDef};
use lockstep_types::{Error, Value};

impl Session {
    /// The generated columns of a table CREATE TABLE makes as `def`: its
    /// own clauses, or (LIKE) the source's.
    pub(super) fn create_generated(
        &self,
        def: &TableDef,
        ct: &CreateTable,
    ) -> R<Vec<GeneratedColumn>> {
        if let Some(src) = &ct.like {
            let t = self.binder().table(src)?;
            return Ok(self.engine.catalog.generated(t.id).to_vec());
        }
        of_create(&self.engine.catalog, def, &ct.columns)
    }
}

impl Session {
    /// 1235 for generated columns where lockstep keeps no list for them
    /// (temporary tables, also made LIKE a table that has some).
    pub(super) fn refuse_temporary_generated(&self, ct: &CreateTable) -> R<()> {
        let like = match &ct.like {
            Some(src) => !self
                .engine
                .catalog
                .generated(self.binder().table(src)?.id)
                .is_empty(),
            None => false,
        };
        match like || ct.columns.iter().any(|c| c.generated.is_some()) {
            true => Err(Error::unsupported("generated columns in a TEMPORARY table")),
            false => Ok(()),
        }
    }
}

/// SHOW COLUMNS' (and COLUMNS.EXTRA's) word for column `name`.
pub(super) fn extra(list: &[GeneratedColumn], name: &str) -> Option<&'static str> {
    find(list, name).map(|g| match g.stored {
        true => "STORED GENERATED",
        false => "VIRTUAL GENERATED",
    })
}

/// An information_schema.COLUMNS row of column `name` (EXTRA at 10,
/// GENERATION_EXPRESSION last) with its generated column's values.
pub(super) fn fill_columns_row(row: &mut [Value], list: &[GeneratedColumn], name: &str) {
    let Some(g) = find(list, name) else {
        return;
    };
    if let Some(e) = row.get_mut(10) {
        *e = Value::str(extra(list, name).unwrap_or(""));
    }
    if let Some(last) = row.last_mut() {
        *last = Value::str(&crate::plan::check::printed(&g.expr).unwrap_or_else(|| g.expr.clone()));
    }
}

/// A generated column's expression as MySQL prints it (`(`a` + 1)`,
/// `concat(`s`,_utf8mb4'x')`), in parentheses where it is kept as written.
fn printed(text: &str) -> String {
    crate::plan::check::printed(text).unwrap_or_else(|| format!("({text})"))
}

/// SHOW CREATE TABLE's text with each generated column's clause after
/// its type, as MySQL prints it (`GENERATED ALWAYS AS ((expr)) VIRTUAL`;
/// no DEFAULT).
pub(crate) fn add_to_create(text: String, def: &TableDef, list: &[GeneratedColumn]) -> String {
    if list.is_empty() {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 64 * list.len());
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        out.push_str(&with_clause(line, def, list).unwrap_or_else(|| line.to_string()));
    }
    out
}

/// `line` with its column's clause, when it defines a generated column.
fn with_clause(line: &str, def: &TableDef, list: &[GeneratedColumn]) -> Option<String> {
    let g = list.iter().find(|g| {
        def.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(&g.column))
            .is_some_and(|c| {
                line.starts_with(&format!("  {} {}", quote_ident(&c.name), c.data_type))
            })
    })?;
    let c = def
        .columns
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(&g.column))?;
    let head = format!("  {} {}", quote_ident(&c.name), c.data_type);
    let rest = line[head.len()..].replacen(" DEFAULT NULL", "", 1);
    let kind = if g.stored { "STORED" } else { "VIRTUAL" };
    let expr = printed(&g.expr);
    Some(format!("{head} GENERATED ALWAYS AS ({expr}) {kind}{rest}"))
}

/// Why an ALTER that computes generated columns cannot run online: the
/// copy computes them, the catch-up of concurrent writes does not.
pub(super) const GENERATED_LOCK: &str = "Generated columns are computed under the table's lock";

/// Whether a rebuild copies every column of `new` from the same column
/// type of `old` (its generated values then stay right as copied).
fn copies_values(old: &TableDef, new: &TableDef, sources: &[ColumnSource]) -> bool {
    sources.iter().zip(&new.columns).all(|(s, c)| match s {
        ColumnSource::Column(i) => old
            .columns
            .get(*i as usize)
            .is_some_and(|o| o.data_type == c.data_type),
        _ => false,
    })
}

impl Session {
    /// The generated columns an ALTER of table `t` that makes `old` into
    /// `new` from `sources` logs, for the rebuild to compute (None: the
    /// rebuild copies them): when the list changes, or a column of a
    /// table that has some is added or retyped; and whether it must run
    /// under the lock (it logs a list: the online path logs none).
    pub(super) fn generated_after(
        &self,
        t: &lockstep_tables::Table,
        (old, new): (&TableDef, &TableDef),
        sources: &[ColumnSource],
        actions: &[crate::parser::AlterAction],
    ) -> R<(Option<Vec<GeneratedColumn>>, bool)> {
        let before = self.engine.catalog.generated(t.id);
        let catalog = &self.engine.catalog;
        let after = crate::plan::generated::after_alter(catalog, &before, old, new, actions)?;
        let recompute = !before.is_empty() && !copies_values(old, new, sources);
        let logged = after.or_else(|| recompute.then(|| before.to_vec()));
        let exclusive = logged.is_some();
        Ok((logged, exclusive))
    }
}
