//! The catalog: databases and tables by name and by id. Lookups take a
//! read latch for a hash probe; DDL (rare) takes the write side briefly.

use lockstep_binlog::{RoutineDef, RoutineKind, ViewDef};
use lockstep_tables::histogram::ColumnHistogram;
use lockstep_tables::{
    CheckConstraint, ForeignKey, GeneratedColumn, Table, TableComments, TableDef,
};
use parking_lot::RwLock;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The schemas the server provides itself. No user database may take one
/// of these names (compared case-insensitively), so a name found here is
/// always the server's own schema, never a user's database.
pub const SYSTEM_SCHEMAS: [&str; 4] = ["information_schema", "performance_schema", "mysql", "sys"];

/// Whether `name` is one of [`SYSTEM_SCHEMAS`].
pub fn is_system_schema(name: &str) -> bool {
    // Asked for every SELECT: compares without building a lower-case copy.
    SYSTEM_SCHEMAS.iter().any(|s| name.eq_ignore_ascii_case(s))
}

#[derive(Default)]
struct Inner {
    databases: BTreeMap<String, ()>,
    tables: HashMap<(String, String), Arc<Table>>,
    by_id: HashMap<u32, Arc<Table>>,
    next_table_id: u32,
    /// Foreign keys by child table id (tables without any are absent).
    foreign: HashMap<u32, Arc<[ForeignKey]>>,
    /// Views by (database, name): they share the tables' namespace.
    views: HashMap<(String, String), Arc<ViewDef>>,
    /// CHECK constraints by table id (tables without any are absent).
    checks: HashMap<u32, Arc<[CheckConstraint]>>,
    /// Generated columns by table id (tables without any are absent).
    generated: HashMap<u32, Arc<[GeneratedColumn]>>,
    /// COMMENT clauses by table id (tables without any are absent).
    comments: HashMap<u32, Arc<TableComments>>,
    /// Stored programs by (database, kind, key): see `routine_key`.
    routines: BTreeMap<(String, RoutineKind, String), Arc<RoutineDef>>,
}

#[derive(Default)]
pub struct Catalog {
    inner: RwLock<Inner>,
}

impl Catalog {
    pub fn new() -> Catalog {
        let c = Catalog::default();
        c.inner.write().next_table_id = 1;
        c
    }

    pub fn database_exists(&self, name: &str) -> bool {
        self.inner.read().databases.contains_key(name)
    }

    pub fn databases(&self) -> Vec<String> {
        self.inner.read().databases.keys().cloned().collect()
    }

    pub fn table(&self, db: &str, name: &str) -> Option<Arc<Table>> {
        self.inner
            .read()
            .tables
            .get(&(db.to_string(), name.to_string()))
            .cloned()
    }

    pub fn table_by_id(&self, id: u32) -> Option<Arc<Table>> {
        self.inner.read().by_id.get(&id).cloned()
    }

    pub fn tables(&self, db: &str) -> Vec<Arc<Table>> {
        let inner = self.inner.read();
        let mut v: Vec<_> = inner
            .tables
            .iter()
            .filter(|((d, _), _)| d == db)
            .map(|(_, t)| t.clone())
            .collect();
        v.sort_by_key(|t| t.def().name.clone());
        v
    }

    /// Every table's histograms (checkpoints).
    pub fn all_histograms(&self) -> Vec<(u32, Vec<ColumnHistogram>)> {
        let tables = self.all_tables();
        let with = tables
            .iter()
            .filter_map(|t| Some((t.id, t.histograms()?.to_vec())));
        with.collect()
    }

    pub fn all_tables(&self) -> Vec<Arc<Table>> {
        let mut v: Vec<_> = self.inner.read().by_id.values().cloned().collect();
        v.sort_by_key(|t| t.id);
        v
    }

    pub fn allocate_table_id(&self) -> u32 {
        let mut inner = self.inner.write();
        let id = inner.next_table_id;
        inner.next_table_id += 1;
        id
    }

    pub(crate) fn add_database(&self, name: &str) {
        self.inner.write().databases.insert(name.to_string(), ());
    }

    pub(crate) fn remove_database(&self, name: &str) -> Vec<u32> {
        let mut inner = self.inner.write();
        inner.databases.remove(name);
        inner.views.retain(|(d, _), _| d != name);
        inner.routines.retain(|(d, _, _), _| d != name);
        let ids: Vec<u32> = inner
            .tables
            .iter()
            .filter(|((d, _), _)| d == name)
            .map(|(_, t)| t.id)
            .collect();
        for id in &ids {
            remove_table_locked(&mut inner, *id);
        }
        ids
    }

    pub fn view(&self, db: &str, name: &str) -> Option<Arc<ViewDef>> {
        self.inner
            .read()
            .views
            .get(&(db.to_string(), name.to_string()))
            .cloned()
    }

    /// The views of database `db`, by name.
    pub fn views(&self, db: &str) -> Vec<Arc<ViewDef>> {
        let mut v: Vec<_> = self
            .inner
            .read()
            .views
            .iter()
            .filter(|((d, _), _)| d == db)
            .map(|(_, v)| v.clone())
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    pub fn all_views(&self) -> Vec<ViewDef> {
        let mut v: Vec<ViewDef> = self
            .inner
            .read()
            .views
            .values()
            .map(|v| (**v).clone())
            .collect();
        v.sort_by(|a, b| (&a.database, &a.name).cmp(&(&b.database, &b.name)));
        v
    }

    pub(crate) fn put_view(&self, view: ViewDef) {
        let key = (view.database.clone(), view.name.clone());
        self.inner.write().views.insert(key, Arc::new(view));
    }

    pub(crate) fn remove_view(&self, db: &str, name: &str) -> bool {
        self.inner
            .write()
            .views
            .remove(&(db.to_string(), name.to_string()))
            .is_some()
    }

    pub(crate) fn add_table(&self, def: TableDef) -> Arc<Table> {
        let mut inner = self.inner.write();
        inner.next_table_id = inner.next_table_id.max(def.id + 1);
        let key = (def.database.clone(), def.name.clone());
        let table = Arc::new(Table::new(def));
        inner.tables.insert(key, table.clone());
        inner.by_id.insert(table.id, table.clone());
        table
    }

    /// Adds a table outside the logged DDL path (scratch catalogs such as
    /// information_schema).
    pub fn add_table_public(&self, def: TableDef) -> Arc<Table> {
        self.add_table(def)
    }

    pub fn add_database_public(&self, name: &str) {
        self.add_database(name)
    }

    /// Puts `new` (ALTER's rebuilt table, a new id) where table `old` was.
    pub(crate) fn replace_table(&self, old: u32, new: Arc<Table>) {
        let mut inner = self.inner.write();
        // The rebuilt table is the same child: its constraints move along;
        // as a parent renamed by the ALTER, its children follow the name.
        let fks = inner.foreign.remove(&old);
        let checks = inner.checks.remove(&old);
        let generated = inner.generated.remove(&old);
        let comments = inner.comments.remove(&old);
        let was = inner.by_id.get(&old).map(|t| {
            let d = t.def();
            (d.database.clone(), d.name.clone())
        });
        if let Some(t) = inner.by_id.get(&old) {
            new.set_histograms(kept_histograms(t, &new));
        }
        remove_table_locked(&mut inner, old);
        if let Some(fks) = fks {
            inner.foreign.insert(new.id, fks);
        }
        if let Some(checks) = checks {
            inner.checks.insert(new.id, checks);
        }
        if let Some(generated) = generated {
            inner.generated.insert(new.id, generated);
        }
        if let Some(comments) = comments {
            inner.comments.insert(new.id, comments);
        }
        inner.next_table_id = inner.next_table_id.max(new.id + 1);
        let def = new.def();
        if let Some(was) = was.filter(|w| (&w.0, &w.1) != (&def.database, &def.name)) {
            rename_parent(&mut inner, &was, (&def.database, &def.name));
        }
        inner
            .tables
            .insert((def.database.clone(), def.name.clone()), new.clone());
        inner.by_id.insert(new.id, new);
    }

    /// Gives table `id` a new name (and database). The definition changes
    /// before the catalog's latch is taken: nothing holds that latch while
    /// it waits for a table's schema.
    pub(crate) fn rename_table(&self, id: u32, database: &str, name: &str) {
        let Some(table) = self.table_by_id(id) else {
            return;
        };
        let old = {
            let mut schema = table.schema_mut();
            let mut def = (*schema.def).clone();
            let old = (def.database.clone(), def.name.clone());
            def.database = database.to_string();
            def.name = name.to_string();
            schema.def = Arc::new(def);
            old
        };
        let mut inner = self.inner.write();
        if inner.tables.get(&old).is_some_and(|t| t.id == id) {
            inner.tables.remove(&old);
        }
        rename_parent(&mut inner, &old, (database, name));
        inner
            .tables
            .insert((database.to_string(), name.to_string()), table);
    }

    /// DROP TABLE: its triggers go with it, as in MySQL (ALTER TABLE's
    /// `replace_table` keeps them).
    pub(crate) fn remove_table(&self, id: u32) {
        let mut inner = self.inner.write();
        if let Some(def) = inner.by_id.get(&id).map(|t| t.def()) {
            inner.routines.retain(|(d, k, _), r| {
                !(*k == RoutineKind::Trigger && *d == def.database && r.table == def.name)
            });
        }
        remove_table_locked(&mut inner, id);
    }

    /// The catalog key of a stored program: procedure and function names
    /// are case-insensitive, trigger names are not.
    pub fn routine_key(db: &str, kind: RoutineKind, name: &str) -> (String, RoutineKind, String) {
        let name = match kind {
            RoutineKind::Trigger => name.to_string(),
            _ => name.to_lowercase(),
        };
        (db.to_string(), kind, name)
    }

    pub fn routine(&self, db: &str, kind: RoutineKind, name: &str) -> Option<Arc<RoutineDef>> {
        let key = Self::routine_key(db, kind, name);
        self.inner.read().routines.get(&key).cloned()
    }

    /// Every stored program (of `db` when given), by database, kind, name.
    pub fn routines(&self, db: Option<&str>) -> Vec<Arc<RoutineDef>> {
        let inner = self.inner.read();
        inner
            .routines
            .iter()
            .filter(|((d, _, _), _)| db.is_none_or(|x| x == d))
            .map(|(_, r)| r.clone())
            .collect()
    }

    /// The triggers of a table, in action order (creation order).
    pub fn triggers(&self, db: &str, table: &str) -> Vec<Arc<RoutineDef>> {
        let inner = self.inner.read();
        if inner.routines.is_empty() {
            return Vec::new();
        }
        let mut v: Vec<_> = inner
            .routines
            .iter()
            .filter(|((d, k, _), r)| *k == RoutineKind::Trigger && d == db && r.table == table)
            .map(|(_, r)| r.clone())
            .collect();
        v.sort_by_key(|r| r.created);
        v
    }

    pub fn all_routines(&self) -> Vec<RoutineDef> {
        let inner = self.inner.read();
        inner.routines.values().map(|r| (**r).clone()).collect()
    }

    pub(crate) fn put_routine(&self, routine: RoutineDef) {
        let key = Self::routine_key(&routine.database, routine.kind, &routine.name);
        self.inner.write().routines.insert(key, Arc::new(routine));
    }

    pub(crate) fn remove_routine(&self, db: &str, kind: RoutineKind, name: &str) -> bool {
        let key = Self::routine_key(db, kind, name);
        self.inner.write().routines.remove(&key).is_some()
    }

    /// Whether a write can reach other tables through a trigger or a
    /// foreign key (when not, statements lock only their own tables).
    pub fn has_triggers_or_foreign_keys(&self) -> bool {
        let inner = self.inner.read();
        !inner.foreign.is_empty()
            || inner
                .routines
                .keys()
                .any(|(_, k, _)| *k == RoutineKind::Trigger)
    }

    /// Whether any table has a foreign key: when none has, DML skips the
    /// checks without looking further.
    pub fn has_foreign_keys(&self) -> bool {
        !self.inner.read().foreign.is_empty()
    }

    /// Table `id`'s foreign keys (it is their child).
    pub fn foreign_keys(&self, id: u32) -> Arc<[ForeignKey]> {
        let inner = self.inner.read();
        inner
            .foreign
            .get(&id)
            .cloned()
            .unwrap_or_else(|| Arc::new([]))
    }

    /// The foreign keys that reference table `db`.`name`, each with the id
    /// of its child table, in child id and constraint order.
    pub fn referencing(&self, db: &str, name: &str) -> Vec<(u32, ForeignKey)> {
        let inner = self.inner.read();
        let mut out: Vec<(u32, ForeignKey)> = inner
            .foreign
            .iter()
            .flat_map(|(id, fks)| fks.iter().map(move |f| (*id, f)))
            .filter(|(_, f)| f.references(db, name))
            .map(|(id, f)| (id, f.clone()))
            .collect();
        out.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
        out
    }

    /// Every table's foreign keys (information_schema).
    pub fn all_foreign_keys(&self) -> Vec<(u32, Arc<[ForeignKey]>)> {
        let mut v: Vec<_> = self
            .inner
            .read()
            .foreign
            .iter()
            .map(|(id, f)| (*id, f.clone()))
            .collect();
        v.sort_by_key(|(id, _)| *id);
        v
    }

    /// Whether any table has a CHECK constraint: when none has, writes
    /// skip looking for them.
    pub fn has_checks(&self) -> bool {
        !self.inner.read().checks.is_empty()
    }

    /// Table `id`'s CHECK constraints.
    pub fn checks(&self, id: u32) -> Arc<[CheckConstraint]> {
        self.inner
            .read()
            .checks
            .get(&id)
            .cloned()
            .unwrap_or_else(|| Arc::from(Vec::new()))
    }

    /// Every table's CHECK constraints (information_schema).
    pub fn all_checks(&self) -> Vec<(u32, Arc<[CheckConstraint]>)> {
        let inner = self.inner.read();
        inner
            .checks
            .iter()
            .map(|(id, c)| (*id, c.clone()))
            .collect()
    }

    /// Replaces table `id`'s CHECK constraints (logged DDL, recovery,
    /// loading a checkpoint).
    pub(crate) fn set_checks(&self, id: u32, checks: Vec<CheckConstraint>) {
        let mut inner = self.inner.write();
        if checks.is_empty() {
            inner.checks.remove(&id);
        } else {
            inner.checks.insert(id, checks.into());
        }
    }

    /// Table `id`'s generated columns (empty for most tables).
    pub fn generated(&self, id: u32) -> Arc<[GeneratedColumn]> {
        let inner = self.inner.read();
        inner
            .generated
            .get(&id)
            .cloned()
            .unwrap_or_else(|| Arc::from(Vec::new()))
    }

    /// Table `id`'s comments (empty for most tables).
    pub fn comments(&self, id: u32) -> Arc<TableComments> {
        let inner = self.inner.read();
        inner.comments.get(&id).cloned().unwrap_or_default()
    }

    /// Every table's comments (checkpoints).
    pub fn all_comments(&self) -> Vec<(u32, TableComments)> {
        let inner = self.inner.read();
        let all = inner.comments.iter();
        all.map(|(id, c)| (*id, (**c).clone())).collect()
    }

    /// Replaces table `id`'s comments (logged DDL, recovery, loading a
    /// checkpoint).
    pub(crate) fn set_comments(&self, id: u32, comments: TableComments) {
        let mut inner = self.inner.write();
        if comments.is_empty() {
            inner.comments.remove(&id);
        } else {
            inner.comments.insert(id, Arc::new(comments));
        }
    }

    /// Every table's generated columns (checkpoints).
    pub fn all_generated(&self) -> Vec<(u32, Vec<GeneratedColumn>)> {
        let inner = self.inner.read();
        let all = inner.generated.iter();
        all.map(|(id, g)| (*id, g.to_vec())).collect()
    }

    /// Replaces table `id`'s generated columns (logged DDL, recovery,
    /// loading a checkpoint).
    pub(crate) fn set_generated(&self, id: u32, columns: Vec<GeneratedColumn>) {
        let mut inner = self.inner.write();
        if columns.is_empty() {
            inner.generated.remove(&id);
        } else {
            inner.generated.insert(id, columns.into());
        }
    }

    /// Replaces table `id`'s foreign keys (logged DDL, recovery, loading
    /// a checkpoint).
    pub(crate) fn set_foreign_keys(&self, id: u32, fks: Vec<ForeignKey>) {
        let mut inner = self.inner.write();
        if fks.is_empty() || !inner.by_id.contains_key(&id) {
            inner.foreign.remove(&id);
        } else {
            inner.foreign.insert(id, fks.into());
        }
    }
}

/// A renamed parent keeps its children: their constraints follow the new
/// name (as MySQL 8's RENAME TABLE does).
fn rename_parent(inner: &mut Inner, from: &(String, String), to: (&str, &str)) {
    for fks in inner.foreign.values_mut() {
        if fks.iter().any(|f| f.references(&from.0, &from.1)) {
            let mut v = fks.to_vec();
            for f in v.iter_mut().filter(|f| f.references(&from.0, &from.1)) {
                f.parent_db = to.0.to_string();
                f.parent_table = to.1.to_string();
            }
            *fks = v.into();
        }
    }
}

/// The histograms of `old` that still describe a column of its rebuilt
/// `new` (same name and type); a dropped or retyped column loses its.
fn kept_histograms(old: &Table, new: &Table) -> Vec<ColumnHistogram> {
    let (before, after) = (old.def(), new.def());
    let type_of = |def: &TableDef, name: &str| {
        let found = def
            .columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name));
        found.map(|c| c.data_type)
    };
    let all = old.histograms().map(|h| h.to_vec()).unwrap_or_default();
    let same = |h: &ColumnHistogram| {
        let was = type_of(&before, &h.column);
        was.is_some() && was == type_of(&after, &h.column)
    };
    all.into_iter().filter(same).collect()
}

fn remove_table_locked(inner: &mut Inner, id: u32) {
    inner.foreign.remove(&id);
    inner.checks.remove(&id);
    inner.generated.remove(&id);
    inner.comments.remove(&id);
    if let Some(t) = inner.by_id.remove(&id) {
        let def = t.def();
        inner
            .tables
            .remove(&(def.database.clone(), def.name.clone()));
    }
}
