//! ALTER TABLE: from a table's definition and the statement's clauses to
//! the new definition and where each of its columns takes the existing
//! rows' values from. Clauses apply in order, each to the result of those
//! before it; the engine then makes the whole change at once.

use crate::expr::store_value;
use crate::parser::{AlterAction, ColumnPosition, ColumnSpec, ObjectName};
use crate::plan::ddl::{
    check_auto_key, column_def, literal_default, multiple_primary, primary_key, row_id_column,
    MAX_COLUMNS,
};
use lockstep_engine::ColumnSource;
use lockstep_tables::{ColumnDef, IndexDef, TableDef};
use lockstep_types::error::Code;
use lockstep_types::{DataType, Error, Value};

/// The table an ALTER makes.
pub struct Altered {
    pub def: TableDef,
    pub sources: Vec<ColumnSource>,
    /// Only the name changed: no rows need copying.
    pub rename_only: bool,
    /// The keys the clauses added, by name, with their COMMENT ('' for
    /// none).
    pub added_keys: Vec<(String, String)>,
}

struct Col {
    def: ColumnDef,
    source: ColumnSource,
}

struct Ix {
    name: String,
    columns: Vec<String>,
    unique: bool,
}

/// The statement's clock, for the rows of a column added with DEFAULT
/// CURRENT_TIMESTAMP: `utc` now, and the session zone's offset east.
#[derive(Clone, Copy)]
pub struct StatementNow {
    pub utc: lockstep_types::DateTime,
    pub offset: i64,
}

impl StatementNow {
    /// The value a column of type `t` holds for now, as an INSERT would
    /// store it: a DATETIME in the session zone, a TIMESTAMP in UTC (as
    /// rows hold it), cut to the column's digits.
    fn for_column(self, t: DataType) -> Value {
        let (at, fsp) = match t {
            DataType::Timestamp { fsp } => (self.utc, fsp),
            DataType::DateTime { fsp } => (self.utc.shifted(self.offset), fsp),
            _ => (self.utc.shifted(self.offset), 6),
        };
        Value::DateTime(at.truncate(fsp))
    }
}

/// The table as the clauses so far left it; keys name their columns.
struct Work<'a> {
    old: &'a TableDef,
    now: StatementNow,
    database: String,
    name: String,
    cols: Vec<Col>,
    primary: Option<Vec<String>>,
    indexes: Vec<Ix>,
    added_keys: Vec<(String, String)>,
    /// The table's default collation, which added columns take.
    collation: u16,
}

pub fn alter_def(
    old: &TableDef,
    actions: &[AlterAction],
    db: &str,
    now: StatementNow,
) -> Result<Altered, Error> {
    let mut w = Work::new(old, now);
    for a in actions {
        w.apply(a, db)?;
    }
    w.finish()
}

fn same(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn unknown_column(name: &str, table: &str) -> Error {
    Error::new(
        Code::BadField,
        format!("Unknown column '{name}' in '{table}'"),
    )
}

fn cant_drop(name: &str) -> Error {
    Error::new(
        Code::CantDropFieldOrKey,
        format!("Can't DROP '{name}'; check that column/key exists"),
    )
}

fn duplicate_column(name: &str) -> Error {
    Error::new(
        Code::DupFieldName,
        format!("Duplicate column name '{name}'"),
    )
}

impl<'a> Work<'a> {
    fn new(old: &'a TableDef, now: StatementNow) -> Work<'a> {
        let names = |cols: &[usize]| -> Vec<String> {
            cols.iter().map(|&c| old.columns[c].name.clone()).collect()
        };
        Work {
            old,
            now,
            database: old.database.clone(),
            name: old.name.clone(),
            cols: old
                .visible_columns()
                .map(|(i, c)| Col {
                    def: c.clone(),
                    source: ColumnSource::Column(i as u32),
                })
                .collect(),
            primary: old
                .has_declared_primary_key()
                .then(|| names(&old.indexes[0].columns)),
            indexes: old.indexes[1..]
                .iter()
                .map(|i| Ix {
                    name: i.name.clone(),
                    columns: names(&i.columns),
                    unique: i.unique,
                })
                .collect(),
            added_keys: Vec::new(),
            collation: old.collation,
        }
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.cols.iter().position(|c| same(&c.def.name, name))
    }

    fn find_or_unknown(&self, name: &str) -> Result<usize, Error> {
        self.find(name)
            .ok_or_else(|| unknown_column(name, &self.old.name))
    }

    fn apply(&mut self, action: &AlterAction, db: &str) -> Result<(), Error> {
        match action {
            AlterAction::AddColumn { column, position } => self.add_column(column, position),
            AlterAction::DropColumn { name } => self.drop_column(name),
            AlterAction::ChangeColumn {
                old,
                column,
                position,
            } => self.change_column(old, column, position),
            AlterAction::RenameColumn { from, to } => {
                let at = self.find_or_unknown(from)?;
                if self.find(to).is_some_and(|c| c != at) {
                    return Err(duplicate_column(to));
                }
                self.rename_refs(from, to);
                self.cols[at].def.name = to.clone();
                Ok(())
            }
            AlterAction::RenameIndex { from, to } => self.rename_index(from, to),
            AlterAction::Charset { spec, convert } => self.charset(spec, *convert),
            AlterAction::SetDefault { column, default } => self.set_default(column, default),
            AlterAction::RenameTable { to } => {
                self.rename_table(to, db);
                Ok(())
            }
            AlterAction::AddIndex {
                name,
                columns,
                unique,
                comment,
            } => {
                self.add_index(name.clone(), columns, *unique)?;
                let added = self.indexes.last().expect("just added").name.clone();
                self.key_added(&added, comment);
                Ok(())
            }
            AlterAction::DropIndex { name } if same(name, "PRIMARY") => self.drop_primary(),
            AlterAction::DropIndex { name } => {
                let at = self.indexes.iter().position(|i| same(&i.name, name));
                self.indexes.remove(at.ok_or_else(|| cant_drop(name))?);
                Ok(())
            }
            AlterAction::AddPrimaryKey { columns, comment } => {
                if self.primary.is_some() {
                    return Err(multiple_primary());
                }
                self.check_key_columns(columns)?;
                self.primary = Some(columns.clone());
                self.key_added("PRIMARY", comment);
                Ok(())
            }
            // Comments are the session's (`session::comments`).
            AlterAction::TableComment { .. } => Ok(()),
            // Alone it needs no rebuild (`session::auto_increment`).
            AlterAction::AutoIncrement(_) => Err(Error::unsupported(
                "ALTER TABLE AUTO_INCREMENT with other changes",
            )),
            AlterAction::DropPrimaryKey => self.drop_primary(),
            // Run on their own by session::foreign_keys (no rebuild).
            AlterAction::AddForeignKey(_) | AlterAction::DropForeignKey { .. } => Err(
                Error::unsupported("ALTER TABLE with FOREIGN KEY and other changes"),
            ),
            // Taken out by session::checks before the rebuild is planned.
            AlterAction::AddCheck(_)
            | AlterAction::DropCheck { .. }
            | AlterAction::AlterCheck { .. }
            | AlterAction::DropConstraint { .. } => {
                Err(Error::internal("CHECK clause in a rebuild plan"))
            }
        }
    }

    /// Records a key the clauses added (a later one of the same name, the
    /// first dropped, replaces it).
    fn key_added(&mut self, name: &str, comment: &Option<String>) {
        self.added_keys.retain(|(n, _)| !same(n, name));
        let comment = comment.clone().unwrap_or_default();
        self.added_keys.push((name.to_string(), comment));
    }

    fn rename_table(&mut self, to: &ObjectName, db: &str) {
        self.database = to.database.clone().unwrap_or_else(|| db.to_string());
        self.name = to.name.clone();
    }

    /// RENAME INDEX: the primary key keeps its name (1280), the names of
    /// the other keys stay distinct (1061).
    fn rename_index(&mut self, from: &str, to: &str) -> Result<(), Error> {
        if let Some(p) = [from, to].into_iter().find(|n| same(n, "PRIMARY")) {
            return Err(Error::new(
                Code::WrongNameForIndex,
                format!("Incorrect index name '{p}'"),
            ));
        }
        let at = self.indexes.iter().position(|i| same(&i.name, from));
        let at = at.ok_or_else(|| {
            Error::new(
                Code::KeyDoesNotExist,
                format!("Key '{from}' doesn't exist in table '{}'", self.old.name),
            )
        })?;
        let taken = self.indexes.iter().enumerate();
        if taken
            .into_iter()
            .any(|(i, ix)| i != at && same(&ix.name, to))
        {
            return Err(Error::new(
                Code::DupKeyName,
                format!("Duplicate key name '{to}'"),
            ));
        }
        self.indexes[at].name = to.to_string();
        Ok(())
    }

    fn drop_primary(&mut self) -> Result<(), Error> {
        self.primary
            .take()
            .map(|_| ())
            .ok_or_else(|| cant_drop("PRIMARY"))
    }

    /// Where FIRST / AFTER c puts a column (`len`: the end).
    fn position(&self, position: &Option<ColumnPosition>, len: usize) -> Result<usize, Error> {
        match position {
            None => Ok(len),
            Some(ColumnPosition::First) => Ok(0),
            Some(ColumnPosition::After(c)) => Ok(self.find_or_unknown(c)? + 1),
        }
    }

    /// PRIMARY KEY / UNIQUE written in a column definition.
    fn inline_keys(&mut self, spec: &ColumnSpec) -> Result<(), Error> {
        if spec.primary_key {
            if self.primary.is_some() {
                return Err(multiple_primary());
            }
            self.primary = Some(vec![spec.name.clone()]);
            self.key_added("PRIMARY", &None);
        }
        if spec.unique {
            self.add_index(None, std::slice::from_ref(&spec.name), true)?;
            let added = self.indexes.last().expect("just added").name.clone();
            self.key_added(&added, &None);
        }
        Ok(())
    }

    fn add_column(
        &mut self,
        spec: &ColumnSpec,
        position: &Option<ColumnPosition>,
    ) -> Result<(), Error> {
        if self.find(&spec.name).is_some() {
            return Err(duplicate_column(&spec.name));
        }
        let def = column_def(spec, self.collation)?;
        let source = if def.auto_increment {
            ColumnSource::Counter
        } else if def.default_now {
            ColumnSource::Value(self.now.for_column(def.data_type))
        } else if let Some(d) = &def.default {
            ColumnSource::Value(d.clone())
        } else if def.nullable {
            ColumnSource::Value(Value::Null)
        } else {
            ColumnSource::Value(implicit_default(def.data_type, &def.name))
        };
        let at = self.position(position, self.cols.len())?;
        self.cols.insert(at, Col { def, source });
        self.inline_keys(spec)
    }

    /// [DEFAULT] CHARACTER SET / COLLATE: the table's default; CONVERT TO
    /// moves every text column to it too (its rows are checked against the
    /// new repertoire as they are copied: 1366 for one that does not fit).
    fn charset(&mut self, spec: &crate::parser::CharsetSpec, convert: bool) -> Result<(), Error> {
        let (set, collation) = (spec.charset.as_deref(), spec.collation.as_deref());
        let id = crate::charset::declared_collation(set, collation, self.collation)?;
        self.collation = id;
        if convert {
            for c in self.cols.iter_mut().filter(|c| c.def.data_type.is_string()) {
                c.def.collation = id;
            }
        }
        Ok(())
    }

    fn drop_column(&mut self, name: &str) -> Result<(), Error> {
        let at = self.find(name).ok_or_else(|| cant_drop(name))?;
        self.cols.remove(at);
        // A key loses the column; a key left with none goes.
        for ix in &mut self.indexes {
            ix.columns.retain(|c| !same(c, name));
        }
        self.indexes.retain(|ix| !ix.columns.is_empty());
        if let Some(p) = &mut self.primary {
            p.retain(|c| !same(c, name));
            if p.is_empty() {
                self.primary = None;
            }
        }
        Ok(())
    }

    fn change_column(
        &mut self,
        old: &str,
        spec: &ColumnSpec,
        position: &Option<ColumnPosition>,
    ) -> Result<(), Error> {
        let at = self.find_or_unknown(old)?;
        if self.find(&spec.name).is_some_and(|c| c != at) {
            return Err(duplicate_column(&spec.name));
        }
        let def = column_def(spec, self.collation)?;
        let mut col = self.cols.remove(at);
        // A value added by an earlier clause is converted now; a column's
        // stored values are converted by the engine, row by row.
        if let ColumnSource::Value(v) = &col.source {
            let v = store_value(v.clone(), def.data_type, &def.name)?;
            col.source = ColumnSource::Value(v);
        }
        col.def = def;
        self.rename_refs(old, &spec.name);
        let at = match position {
            None => at,
            p => self.position(p, self.cols.len())?,
        };
        self.cols.insert(at, col);
        self.inline_keys(spec)
    }

    fn rename_refs(&mut self, from: &str, to: &str) {
        let keys = self.indexes.iter_mut().map(|i| &mut i.columns);
        for cols in keys.chain(self.primary.iter_mut()) {
            for c in cols.iter_mut().filter(|c| same(c, from)) {
                *c = to.to_string();
            }
        }
    }

    fn set_default(
        &mut self,
        column: &str,
        default: &Option<crate::parser::Expr>,
    ) -> Result<(), Error> {
        let at = self.find_or_unknown(column)?;
        let def = &mut self.cols[at].def;
        let spec = ColumnSpec {
            name: def.name.clone(),
            data_type: def.data_type,
            not_null: !def.nullable,
            default: default.clone(),
            auto_increment: def.auto_increment,
            primary_key: false,
            unique: false,
            on_update_now: def.on_update_now,
            comment: None,
            generated: None,
            charset: Default::default(),
        };
        let (value, now) = literal_default(&spec)?;
        def.default = value;
        def.default_now = now;
        Ok(())
    }

    fn check_key_columns(&self, columns: &[String]) -> Result<(), Error> {
        for c in columns {
            let Some(i) = self.find(c) else {
                return Err(Error::new(
                    Code::KeyColumnDoesNotExist,
                    format!("Key column '{c}' doesn't exist in table"),
                ));
            };
            let def = &self.cols[i].def;
            crate::expr::json::check_key_column(&def.name, def.data_type)?;
        }
        Ok(())
    }

    fn add_index(
        &mut self,
        name: Option<String>,
        columns: &[String],
        unique: bool,
    ) -> Result<(), Error> {
        self.check_key_columns(columns)?;
        let taken = |n: &str| same(n, "PRIMARY") || self.indexes.iter().any(|i| same(&i.name, n));
        let name = match name {
            Some(n) if taken(&n) => {
                return Err(Error::new(
                    Code::DupKeyName,
                    format!("Duplicate key name '{n}'"),
                ))
            }
            Some(n) => n,
            None => {
                // MySQL's rule: the first column's name, then _2, _3...
                let base = columns.first().cloned().unwrap_or_default();
                let mut n = base.clone();
                let mut k = 2;
                while taken(&n) {
                    n = format!("{base}_{k}");
                    k += 1;
                }
                n
            }
        };
        self.indexes.push(Ix {
            name,
            columns: columns.to_vec(),
            unique,
        });
        Ok(())
    }

    fn finish(self) -> Result<Altered, Error> {
        if self.cols.is_empty() {
            return Err(Error::new(
                Code::CantRemoveAllFields,
                "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
            ));
        }
        if self.cols.len() > MAX_COLUMNS {
            return Err(Error::new(Code::TooManyFields, "Too many columns"));
        }
        let pos = |name: &String| self.find(name).expect("key columns are checked");
        let (mut columns, mut sources): (Vec<ColumnDef>, Vec<ColumnSource>) = self
            .cols
            .iter()
            .map(|c| (c.def.clone(), c.source.clone()))
            .unzip();
        let mut indexes = Vec::new();
        let mut hidden_row_id = None;
        match &self.primary {
            Some(cols) => {
                let cols: Vec<usize> = cols.iter().map(pos).collect();
                for &c in &cols {
                    columns[c].nullable = false;
                }
                indexes.push(primary_key(cols));
            }
            None => {
                columns.push(row_id_column());
                sources.push(match self.old.hidden_row_id {
                    Some(h) => ColumnSource::Column(h as u32),
                    None => ColumnSource::Counter,
                });
                hidden_row_id = Some(columns.len() - 1);
                indexes.push(primary_key(vec![columns.len() - 1]));
            }
        }
        for ix in &self.indexes {
            indexes.push(IndexDef {
                name: ix.name.clone(),
                columns: ix.columns.iter().map(pos).collect(),
                unique: ix.unique,
            });
        }
        check_auto_key(&columns, &indexes)?;
        let def = TableDef {
            id: self.old.id,
            database: self.database,
            name: self.name,
            columns,
            indexes,
            hidden_row_id,
            collation: self.collation,
        };
        let identity = sources
            .iter()
            .enumerate()
            .all(|(i, s)| *s == ColumnSource::Column(i as u32));
        let rename_only = identity
            && def.columns == self.old.columns
            && def.indexes == self.old.indexes
            && def.hidden_row_id == self.old.hidden_row_id
            && def.collation == self.old.collation;
        Ok(Altered {
            def,
            sources,
            rename_only,
            added_keys: self.added_keys,
        })
    }
}

/// What existing rows get in an added NOT NULL column without a default,
/// as MySQL gives them: 0, '', or the zero date where the type takes it.
fn implicit_default(ty: DataType, name: &str) -> Value {
    if let Some(first) = crate::expr::enumset::implicit_default(ty) {
        return first; // an ENUM's first member
    }
    let zero = if ty.is_string() || ty.is_binary() {
        Value::Bytes(Vec::new())
    } else {
        Value::Int(0)
    };
    store_value(zero, ty, name)
        .or_else(|_| store_value(Value::Bytes(b"0000-00-00".to_vec()), ty, name))
        // No zero value: a table with rows refuses the column (1138).
        .unwrap_or(Value::Null)
}
