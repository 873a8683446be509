//! ANALYZE TABLE ... UPDATE / DROP HISTOGRAM as MySQL 8 runs it: the
//! columns in name order (duplicates once), one result row each (status
//! or Error, as MySQL reports problems in rows rather than failing the
//! statement), and the table's new set of histograms logged as one change
//! (`Engine::set_histograms`). Also information_schema.COLUMN_STATISTICS.

use super::infoschema::table;
use super::{rows, Session, R};
use crate::parser::ObjectName;
use lockstep_engine::catalog::Catalog;
use lockstep_tables::histogram::{ColumnHistogram, Histogram};
use lockstep_tables::histogram_json::data_type;
use lockstep_tables::{Table, TableDef};
use lockstep_types::result::Response;
use lockstep_types::{DataType, DateTime, Value};
use std::sync::Arc;

const COLUMNS: [&str; 4] = ["Table", "Op", "Msg_type", "Msg_text"];

/// MySQL's default histogram_generation_max_mem_size.
const BUILD_MEMORY: usize = 20_000_000;

/// Why a column gets no histogram, in MySQL's words; None when it may.
fn refusal(def: &TableDef, name: &str) -> Option<String> {
    let Some(pos) = def
        .columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name))
    else {
        return Some(format!("The column '{name}' does not exist."));
    };
    if data_type(def.columns[pos].data_type).is_none() {
        return Some(format!("The column '{name}' has an unsupported data type."));
    }
    let unique = def.indexes.iter().any(|i| i.unique && i.columns == [pos]);
    unique.then(|| format!("The column '{name}' is covered by a single-part unique index."))
}

fn status(text: String) -> (&'static str, String) {
    ("status", text)
}

impl Session {
    pub(super) async fn histogram(
        &mut self,
        tables: &[ObjectName],
        columns: &[String],
        buckets: Option<u32>,
    ) -> R<Response> {
        // A table maintenance statement commits, as in MySQL.
        self.commit().await?;
        let [name] = tables else {
            let text = "Only one table can be specified while modifying histogram statistics.";
            return Ok(report("", vec![("Error", text.to_string())]));
        };
        let shown = self.qualified(name);
        if self.temporary_table(name).is_some() {
            let text = "Cannot create histogram statistics for a temporary table.";
            return Ok(report(&shown, vec![("Error", text.to_string())]));
        }
        let t = match self.binder().table(name) {
            Ok(t) => t,
            Err(_) => {
                let text = format!("Table '{shown}' doesn't exist.");
                return Ok(report(&shown, vec![("Error", text)]));
            }
        };
        let mut names = columns.to_vec();
        names.sort();
        names.dedup();
        let mut kept = t.histograms().map(|h| h.to_vec()).unwrap_or_default();
        let out = match buckets {
            Some(n) => self.build_histograms(&t, &names, n, &mut kept),
            None => drop_histograms(&names, &mut kept),
        };
        if out.iter().any(|(kind, _)| *kind == "status") {
            kept.sort_by(|a, b| a.column.cmp(&b.column));
            self.engine.set_histograms(&t, kept).await?;
        }
        Ok(report(&shown, out))
    }

    fn build_histograms(
        &self,
        t: &Arc<Table>,
        names: &[String],
        buckets: u32,
        kept: &mut Vec<ColumnHistogram>,
    ) -> Vec<(&'static str, String)> {
        let def = t.def();
        let budget = BUILD_MEMORY.min(self.ctx.memory.statement);
        let now = DateTime::now().format(6);
        let mut out = Vec::new();
        for name in names {
            if let Some(why) = refusal(&def, name) {
                out.push(("Error", why));
                continue;
            }
            let pos = def
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name));
            let pos = pos.expect("refusal found the column");
            let sample = t.sample_column(pos, budget);
            let column = def.columns[pos].name.clone();
            kept.retain(|h| !h.column.eq_ignore_ascii_case(&column));
            kept.push(ColumnHistogram {
                column,
                histogram: Histogram::build(sample, buckets, now.clone()),
            });
            out.push(status(format!(
                "Histogram statistics created for column '{name}'."
            )));
        }
        out
    }
}

fn drop_histograms(
    names: &[String],
    kept: &mut Vec<ColumnHistogram>,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for name in names {
        let before = kept.len();
        kept.retain(|h| !h.column.eq_ignore_ascii_case(name));
        out.push(match kept.len() < before {
            true => status(format!("Histogram statistics removed for column '{name}'.")),
            false => (
                "Error",
                format!("No histogram statistics found for column '{name}'."),
            ),
        });
    }
    out
}

fn report(table: &str, lines: Vec<(&'static str, String)>) -> Response {
    let row = |(kind, text): (&str, String)| {
        vec![
            Value::str(table),
            Value::str("histogram"),
            Value::str(kind),
            Value::Bytes(text.into_bytes()),
        ]
    };
    rows(&COLUMNS, lines.into_iter().map(row).collect())
}

/// information_schema.COLUMN_STATISTICS (SCHEMA_NAME, TABLE_NAME,
/// COLUMN_NAME, HISTOGRAM) of the tables the user may see.
pub(super) fn infoschema_table(cat: &Catalog, session: &Session) {
    let vc = DataType::VarChar { len: 64 };
    let json = DataType::Json;
    let tables = session.engine().catalog.all_tables();
    let grants = &session.grants;
    let seen = |t: &&Arc<Table>| {
        let def = t.def();
        grants.sees_table(&def.database, &def.name)
    };
    let visible: Vec<Arc<Table>> = tables.iter().filter(seen).cloned().collect();
    let columns = [
        ("SCHEMA_NAME", vc),
        ("TABLE_NAME", vc),
        ("COLUMN_NAME", vc),
        ("HISTOGRAM", json),
    ];
    let rows = column_statistics(&visible);
    table(cat, 80, "COLUMN_STATISTICS", &columns, rows);
}

fn column_statistics(tables: &[Arc<Table>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let Some(all) = t.histograms() else { continue };
        let def = t.def();
        for h in all.iter() {
            let Some(col) = def.columns.iter().find(|c| c.name == h.column) else {
                continue;
            };
            out.push(vec![
                Value::str(&def.database),
                Value::str(&def.name),
                Value::str(&h.column),
                Value::Bytes(h.histogram.to_json(col.data_type).into_bytes()),
            ]);
        }
    }
    out
}
