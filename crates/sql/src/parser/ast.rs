//! The abstract syntax tree of the MySQL dialect lockstep speaks. The
//! parser produces it; the binder (`plan`) resolves names against the
//! catalog and turns it into executable plans.

use lockstep_types::{DataType, Value};

/// ALGORITHM= and LOCK= of ALTER TABLE / CREATE INDEX / DROP INDEX.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DdlOptions {
    pub algorithm: Option<AlterAlgorithm>,
    pub lock: Option<AlterLock>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AlterAlgorithm {
    Default,
    Inplace,
    Copy,
    Instant,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AlterLock {
    Default,
    None,
    Shared,
    Exclusive,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Select(Box<Query>),
    /// SELECT ... INTO @a, @b: the one row's values into user variables.
    SelectInto {
        query: Box<Query>,
        vars: Vec<String>,
    },
    /// DO expr, ...: evaluated as a SELECT of them whose rows are dropped.
    Do(Box<Query>),
    Insert(Box<Insert>),
    Update(Box<Update>),
    Delete(Box<Delete>),
    CreateDatabase {
        name: String,
        if_not_exists: bool,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    CreateTable(Box<CreateTable>),
    DropTable {
        tables: Vec<ObjectName>,
        if_exists: bool,
        /// DROP TEMPORARY TABLE: the session's temporary tables only.
        temporary: bool,
    },
    CreateIndex {
        name: String,
        table: ObjectName,
        columns: Vec<String>,
        unique: bool,
        online: DdlOptions,
        /// COMMENT 'text' among the index options.
        comment: Option<String>,
    },
    DropIndex {
        name: String,
        table: ObjectName,
        online: DdlOptions,
    },
    /// ALTER TABLE t ADD [UNIQUE] INDEX|KEY name (cols) / DROP INDEX name.
    AlterTable {
        table: ObjectName,
        actions: Vec<AlterAction>,
        online: DdlOptions,
    },
    /// RENAME TABLE a TO b [, c TO d ...]
    RenameTable {
        renames: Vec<(ObjectName, ObjectName)>,
    },
    Truncate {
        table: ObjectName,
    },
    /// ANALYZE | OPTIMIZE | REPAIR [NO_WRITE_TO_BINLOG | LOCAL] TABLE t
    /// [, u ...]: counts the tables' index statistics again (OPTIMIZE does
    /// only that; REPAIR has nothing to repair, as InnoDB says).
    TableMaintenance {
        op: Maintenance,
        tables: Vec<ObjectName>,
    },
    /// ANALYZE TABLE t UPDATE HISTOGRAM ON c [, ...] [WITH n BUCKETS] /
    /// DROP HISTOGRAM ON c [, ...] (session/histogram.rs). MySQL allows
    /// one table; more are kept to report that as it does.
    Histogram {
        tables: Vec<ObjectName>,
        columns: Vec<String>,
        /// Buckets to build with; None for DROP HISTOGRAM.
        buckets: Option<u32>,
    },
    Use {
        database: String,
    },
    /// BEGIN / START TRANSACTION [READ ONLY|READ WRITE|WITH CONSISTENT SNAPSHOT].
    Begin {
        /// READ ONLY / READ WRITE; None: the session's default.
        read_only: Option<bool>,
        consistent_snapshot: bool,
    },
    Commit,
    Rollback,
    /// SAVEPOINT name.
    Savepoint(String),
    /// ROLLBACK [WORK] TO [SAVEPOINT] name.
    RollbackToSavepoint(String),
    /// RELEASE SAVEPOINT name.
    ReleaseSavepoint(String),
    /// SET a=..., @@session.b=..., @u=..., NAMES x [COLLATE y], ...
    Set(Vec<SetAssignment>),
    /// SET [GLOBAL|SESSION] TRANSACTION ISOLATION LEVEL ... / READ ONLY.
    SetTransaction {
        scope: Scope,
        isolation: Option<String>,
        read_only: Option<bool>,
    },
    Show(Show),
    /// DESCRIBE / DESC / EXPLAIN <table> [column] (SHOW COLUMNS, the
    /// column a name or a LIKE pattern).
    Describe {
        table: ObjectName,
        column: Option<String>,
    },
    /// EXPLAIN <statement>: prints the plan.
    Explain(Box<Statement>, ExplainFormat),
    Kill {
        connection_id: Expr,
        query_only: bool,
    },
    /// CREATE USER [IF NOT EXISTS] u [IDENTIFIED ...], ...
    CreateUser {
        if_not_exists: bool,
        users: Vec<UserSpec>,
    },
    DropUser {
        if_exists: bool,
        users: Vec<UserName>,
    },
    /// ALTER USER [IF EXISTS] u IDENTIFIED ..., ...
    AlterUser {
        if_exists: bool,
        users: Vec<UserSpec>,
    },
    /// CREATE/DROP ROLE, GRANT/REVOKE of roles, SET [DEFAULT] ROLE.
    Role(super::role_ast::RoleStmt),
    /// SET PASSWORD [FOR u] = 'pw' (None: the current user).
    SetPassword {
        user: Option<UserName>,
        password: String,
    },
    /// GRANT privs ON level TO users [WITH GRANT OPTION].
    Grant {
        privileges: PrivList,
        level: GrantLevel,
        users: Vec<UserName>,
        grant_option: bool,
    },
    /// REVOKE privs ON level FROM users; REVOKE ALL, GRANT OPTION FROM
    /// users has `level` None (everything at every level).
    Revoke {
        privileges: PrivList,
        level: Option<GrantLevel>,
        users: Vec<UserName>,
    },
    /// CREATE [OR REPLACE] VIEW / ALTER VIEW.
    CreateView(Box<CreateView>),
    /// Stored procedures, functions and triggers (routine_ast.rs).
    Routine(Box<super::routine_ast::RoutineStatement>),
    /// DROP VIEW [IF EXISTS] a, b.
    DropView {
        views: Vec<ObjectName>,
        if_exists: bool,
    },
    /// Statements accepted and ignored for compatibility (FLUSH
    /// PRIVILEGES, ALTER TABLE ... DISABLE KEYS, ...): the text is kept.
    Ignored(String),
    /// LOCK TABLES t [AS a] READ [LOCAL] | [LOW_PRIORITY] WRITE, ...
    LockTables(Vec<LockTable>),
    UnlockTables,
    /// LOAD DATA [LOCAL] INFILE (parser/load_data.rs).
    LoadData(Box<super::LoadData>),
    /// FLUSH TABLES [t, ...] WITH READ LOCK, or FOR EXPORT (`export`).
    FlushTablesLock {
        tables: Vec<ObjectName>,
        export: bool,
    },
    /// Replication administration (session/replication.rs).
    Replica(ReplicaStatement),
}

/// CHANGE REPLICATION SOURCE TO, START/STOP/RESET REPLICA, SHOW REPLICA
/// STATUS (and their MASTER/SLAVE spellings).
#[derive(Clone, Debug, PartialEq)]
pub enum ReplicaStatement {
    /// Options by their SOURCE_* name, upper-cased, in the order given.
    ChangeSource(Vec<(String, Value)>),
    Start,
    Stop,
    Reset {
        all: bool,
    },
    /// SHOW REPLICA STATUS (`legacy`: SHOW SLAVE STATUS, old column names).
    ShowStatus {
        legacy: bool,
    },
}

/// CREATE [OR REPLACE] [ALGORITHM=..] [DEFINER=..] [SQL SECURITY ..] VIEW
/// name [(columns)] AS select [WITH [CASCADED|LOCAL] CHECK OPTION], and
/// ALTER VIEW (same clauses).
#[derive(Clone, Debug, PartialEq)]
pub struct CreateView {
    pub name: ObjectName,
    pub or_replace: bool,
    pub alter: bool,
    /// UNDEFINED / MERGE / TEMPTABLE (upper-case); None: not given.
    pub algorithm: Option<String>,
    /// None: not given, or CURRENT_USER.
    pub definer: Option<UserName>,
    /// SQL SECURITY DEFINER (true) / INVOKER; None: not given.
    pub security_definer: Option<bool>,
    pub columns: Vec<String>,
    pub query: Query,
    /// The SELECT's source text, as stored.
    pub query_text: String,
    pub check_option: ViewCheck,
}

/// WITH [CASCADED|LOCAL] CHECK OPTION of a view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewCheck {
    None,
    Cascaded,
    Local,
}

/// `'user'@'host'` (host '%' when not given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserName {
    pub user: String,
    pub host: String,
}

/// A user and how it authenticates, in CREATE/ALTER USER. `name` None is
/// CURRENT_USER.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserSpec {
    pub name: Option<UserName>,
    pub password: Option<String>,
    pub plugin: Option<String>,
    /// REQUIRE SSL (true) / REQUIRE NONE (false); None: not given.
    pub require_ssl: Option<bool>,
}

/// The privileges of a GRANT/REVOKE: named ones, or ALL [PRIVILEGES]
/// (whose meaning depends on the level).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrivList {
    pub privs: lockstep_accounts::Privs,
    pub all: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrantLevel {
    /// *.*
    Global,
    /// db.* (None: `*`, the current database)
    Database(Option<String>),
    /// db.t or t
    Table(ObjectName),
}

#[derive(Clone, Debug, PartialEq)]
pub enum AlterAction {
    AddIndex {
        name: Option<String>,
        columns: Vec<String>,
        unique: bool,
        comment: Option<String>,
    },
    DropIndex {
        name: String,
    },
    AddColumn {
        column: ColumnSpec,
        position: Option<ColumnPosition>,
    },
    DropColumn {
        name: String,
    },
    /// MODIFY (old = the column's own name) and CHANGE old new def.
    ChangeColumn {
        old: String,
        column: ColumnSpec,
        position: Option<ColumnPosition>,
    },
    RenameColumn {
        from: String,
        to: String,
    },
    /// RENAME {INDEX | KEY} from TO to.
    RenameIndex {
        from: String,
        to: String,
    },
    /// ALTER COLUMN c SET DEFAULT v (Some) / DROP DEFAULT (None).
    SetDefault {
        column: String,
        default: Option<Expr>,
    },
    RenameTable {
        to: ObjectName,
    },
    AddPrimaryKey {
        columns: Vec<String>,
        comment: Option<String>,
    },
    /// The table option COMMENT [=] 'text': only the comment changes.
    /// AUTO_INCREMENT [=] n: the table's next generated value.
    AutoIncrement(u64),
    TableComment {
        comment: String,
    },
    DropPrimaryKey,
    /// [DEFAULT] CHARACTER SET / COLLATE (the table's default, for columns
    /// added later), or CONVERT TO CHARACTER SET (every text column too).
    Charset {
        spec: CharsetSpec,
        convert: bool,
    },
    AddForeignKey(ForeignKeySpec),
    DropForeignKey {
        name: String,
    },
    AddCheck(CheckSpec),
    /// DROP CHECK name.
    DropCheck {
        name: String,
    },
    /// ALTER CHECK name [NOT] ENFORCED.
    AlterCheck {
        name: String,
        enforced: bool,
    },
    /// DROP CONSTRAINT name: a CHECK, foreign key, or unique key's name.
    DropConstraint {
        name: String,
    },
}

/// FIRST or AFTER c in ADD/MODIFY/CHANGE COLUMN.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnPosition {
    First,
    After(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Maintenance {
    Analyze,
    /// CHECK TABLE: verifies the table's indexes against its rows.
    Check,
    /// CHECKSUM TABLE [QUICK | EXTENDED]: QUICK asks for a live checksum,
    /// which InnoDB (and lockstep) does not keep: NULL.
    Checksum {
        quick: bool,
    },
    Optimize,
    Repair,
}

/// One table of LOCK TABLES.
#[derive(Clone, Debug, PartialEq)]
pub struct LockTable {
    pub table: ObjectName,
    pub alias: Option<String>,
    pub write: bool,
}

/// [database.]name
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ObjectName {
    pub database: Option<String>,
    pub name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Session,
    Global,
    /// Only the next transaction (SET TRANSACTION without a scope).
    Next,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SetTarget {
    /// A system variable, with the scope given (SET x / SET SESSION x /
    /// SET @@x / SET @@global.x).
    System { scope: Scope, name: String },
    /// A user variable @name.
    User(String),
    /// SET NAMES charset [COLLATE collation]
    Names {
        charset: String,
        collation: Option<String>,
    },
    /// SET CHARACTER SET x
    CharacterSet(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct SetAssignment {
    pub target: SetTarget,
    /// None for NAMES/CHARACTER SET; `Expr::Default` for `= DEFAULT`.
    pub value: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Show {
    Databases {
        filter: Option<ShowFilter>,
    },
    Tables {
        database: Option<String>,
        full: bool,
        filter: Option<ShowFilter>,
    },
    Columns {
        table: ObjectName,
        full: bool,
        filter: Option<ShowFilter>,
    },
    Index {
        table: ObjectName,
    },
    CreateTable {
        table: ObjectName,
    },
    CreateDatabase {
        name: String,
    },
    CreateView {
        view: ObjectName,
    },
    Variables {
        scope: Scope,
        filter: Option<ShowFilter>,
    },
    Status {
        scope: Scope,
        filter: Option<ShowFilter>,
    },
    ProcessList {
        full: bool,
    },
    /// SHOW WARNINGS | ERRORS [LIMIT [offset,] n], or with `count`
    /// SHOW COUNT(*) WARNINGS | ERRORS.
    Diagnostics {
        errors: bool,
        count: bool,
        limit: Option<(u64, u64)>,
    },
    Engines,
    Plugins,
    Collation {
        filter: Option<ShowFilter>,
    },
    CharacterSet {
        filter: Option<ShowFilter>,
    },
    TableStatus {
        database: Option<String>,
        filter: Option<ShowFilter>,
    },
    /// SHOW GRANTS [FOR u] (None: the current user).
    Grants {
        user: Option<UserName>,
    },
    /// SHOW ENGINE INNODB STATUS and similar: empty result.
    EngineStatus,
    MasterStatus,
    BinaryLogs,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ShowFilter {
    Like(String),
    Where(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub body: QueryBody,
    /// The MAX_EXECUTION_TIME(ms) optimizer hint of a top-level SELECT.
    pub max_execution_time: Option<u64>,
    /// SELECT SQL_CALC_FOUND_ROWS: FOUND_ROWS() counts the rows LIMIT cut.
    pub calc_found_rows: bool,
    /// NOWAIT / SKIP LOCKED of the statement's locking clause.
    pub lock_wait: LockWaitClause,
    /// WITH ...: common table expressions the query may name.
    pub with: Vec<Cte>,
    pub order_by: Vec<OrderItem>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub lock: Option<LockClause>,
}

/// A common table expression: `name [(columns)] AS (query)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cte {
    pub name: String,
    pub columns: Vec<String>,
    pub query: Query,
    /// Defined in WITH RECURSIVE: its query may name itself.
    pub recursive: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum QueryBody {
    Select(Box<Select>),
    /// UNION / INTERSECT / EXCEPT [ALL] of two queries.
    Union {
        left: Box<Query>,
        right: Box<Query>,
        all: bool,
        op: SetOp,
    },
}

/// How a set operation combines its two sides' rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    Union,
    Intersect,
    Except,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockClause {
    /// FOR UPDATE
    Update,
    /// LOCK IN SHARE MODE / FOR SHARE
    Share,
}

/// What a locking read does about rows other transactions hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LockWaitClause {
    #[default]
    Wait,
    /// NOWAIT: 3572 at once.
    NoWait,
    /// SKIP LOCKED: such rows are passed over.
    SkipLocked,
}

impl Query {
    /// `SELECT projection FROM from [WHERE selection]`, nothing more.
    pub fn plain(
        projection: Vec<SelectItem>,
        from: Vec<TableRef>,
        selection: Option<Expr>,
    ) -> Query {
        Query {
            body: QueryBody::Select(Box::new(Select {
                distinct: false,
                projection,
                from,
                selection,
                group_by: Vec::new(),
                having: None,
                straight_join: false,
                rollup: false,
                windows: Vec::new(),
            })),
            max_execution_time: None,
            calc_found_rows: false,
            lock_wait: LockWaitClause::Wait,
            with: Vec::new(),
            order_by: Vec::new(),
            limit: None,
            offset: None,
            lock: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    pub distinct: bool,
    pub projection: Vec<SelectItem>,
    /// FROM items, comma-separated; each may carry joins.
    pub from: Vec<TableRef>,
    pub selection: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    /// SELECT STRAIGHT_JOIN: tables join in the order written.
    pub straight_join: bool,
    /// GROUP BY ... WITH ROLLUP.
    pub rollup: bool,
    /// WINDOW name AS (spec), ...
    pub windows: Vec<(String, WindowSpec)>,
}

/// `f(args) OVER window`: a window function call. The binder sets `slot`
/// to the row position its value is computed into; a call the binder left
/// unplaced stands where no window function may (3593).
#[derive(Clone, Debug, PartialEq)]
pub struct WindowCall {
    /// The function, an `Expr::Function`.
    pub func: Expr,
    pub window: WindowSpec,
    pub slot: Option<usize>,
}

/// Aggregates MySQL also computes over a window (GROUP_CONCAT is not one).
pub fn window_aggregate(name: &str) -> bool {
    matches!(
        name,
        "COUNT"
            | "SUM"
            | "AVG"
            | "MIN"
            | "MAX"
            | "BIT_AND"
            | "BIT_OR"
            | "BIT_XOR"
            | "STD"
            | "STDDEV"
            | "STDDEV_POP"
            | "STDDEV_SAMP"
            | "VARIANCE"
            | "VAR_POP"
            | "VAR_SAMP"
    )
}

/// `[name] [PARTITION BY ..] [ORDER BY ..] [frame]`, or a bare window name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowSpec {
    /// The named window this one refines.
    pub base: Option<String>,
    pub partition_by: Vec<Expr>,
    pub order_by: Vec<OrderItem>,
    pub frame: Option<WindowFrame>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct WindowFrame {
    /// ROWS (true) or RANGE.
    pub rows: bool,
    pub start: FrameBound,
    pub end: FrameBound,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Expr),
    CurrentRow,
    Following(Expr),
    UnboundedFollowing,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SelectItem {
    /// *
    Wildcard,
    /// t.*
    QualifiedWildcard(String),
    Expr {
        expr: Expr,
        alias: Option<String>,
        /// The column name MySQL gives an unaliased expression: its source
        /// text (a string literal's value), at most 256 characters. None
        /// for column references, which keep the column's own name.
        name: Option<String>,
    },
}

/// EXPLAIN's FORMAT= option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExplainFormat {
    /// MySQL's table: id, select_type, table, type, key, rows, Extra...
    Traditional,
    /// One line per table: its access path in words (lockstep's own).
    Tree,
    Json,
    /// EXPLAIN ANALYZE: the tree, with what running the query measured.
    Analyze,
}

/// `{USE|FORCE|IGNORE} {INDEX|KEY} [FOR {JOIN|ORDER BY|GROUP BY}] (names)`.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexHint {
    pub kind: IndexHintKind,
    /// None: every use (finding rows, ORDER BY, GROUP BY).
    pub scope: Option<IndexHintScope>,
    pub names: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexHintKind {
    Use,
    Force,
    Ignore,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexHintScope {
    Join,
    OrderBy,
    GroupBy,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TableRef {
    Table {
        name: ObjectName,
        alias: Option<String>,
        /// USE / FORCE / IGNORE INDEX hints, in written order.
        hints: Vec<IndexHint>,
    },
    Derived {
        query: Box<Query>,
        alias: String,
    },
    /// LATERAL (subquery) or JSON_TABLE: may read the items to its left.
    Lateral(Box<super::lateral_ast::LateralRef>),
    Join {
        left: Box<TableRef>,
        right: Box<TableRef>,
        kind: JoinKind,
        on: JoinCondition,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
    Cross,
}

#[derive(Clone, Debug, PartialEq)]
pub enum JoinCondition {
    On(Expr),
    Using(Vec<String>),
    /// NATURAL: USING every column name both sides have.
    Natural,
    None,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OrderItem {
    pub expr: Expr,
    pub desc: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    pub table: ObjectName,
    pub columns: Vec<String>,
    pub source: InsertSource,
    pub ignore: bool,
    pub replace: bool,
    /// ON DUPLICATE KEY UPDATE col = expr, ...
    pub on_duplicate: Vec<(String, Expr)>,
    /// `VALUES (...) AS new [(a, b, ...)]`: the name ON DUPLICATE KEY
    /// UPDATE gives the row being inserted, and its columns' names.
    pub row_alias: Option<(String, Vec<String>)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum InsertSource {
    /// VALUES (...), (...) — also INSERT ... SET a=1, b=2 (one row).
    Values(Vec<Vec<Expr>>),
    Query(Box<Query>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    pub table: ObjectName,
    pub alias: Option<String>,
    pub assignments: Vec<(String, Expr)>,
    pub selection: Option<Expr>,
    pub order_by: Vec<OrderItem>,
    pub limit: Option<Expr>,
    /// Multi-table form; `table` is then its first base table.
    pub multi: Option<Box<MultiTable>>,
    /// UPDATE IGNORE: a row's duplicate key or foreign key error is a
    /// warning and the row stays; values are adjusted as outside strict
    /// mode.
    pub ignore: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    pub table: ObjectName,
    pub alias: Option<String>,
    pub selection: Option<Expr>,
    pub order_by: Vec<OrderItem>,
    pub limit: Option<Expr>,
    /// Multi-table form; `table` is then its first target.
    pub multi: Option<Box<MultiTable>>,
    /// DELETE IGNORE: a row whose deletion a foreign key refuses stays,
    /// with a warning.
    pub ignore: bool,
}

/// The tables of a multi-table UPDATE or DELETE.
#[derive(Clone, Debug, PartialEq)]
pub struct MultiTable {
    /// The table references, joined as in a SELECT's FROM.
    pub from: Vec<TableRef>,
    /// DELETE: the tables rows are deleted from (names or aliases of
    /// `from`). UPDATE: empty (its SET names the columns it changes).
    pub targets: Vec<ObjectName>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateTable {
    pub name: ObjectName,
    /// CREATE TEMPORARY TABLE: the session's own, never logged.
    pub temporary: bool,
    pub if_not_exists: bool,
    pub columns: Vec<ColumnSpec>,
    /// PRIMARY KEY (...) given as a table constraint.
    pub primary_key: Option<Vec<String>>,
    /// Secondary indexes: UNIQUE [KEY|INDEX] name (...), KEY|INDEX name (...).
    pub indexes: Vec<IndexSpec>,
    /// CREATE TABLE ... LIKE other
    pub like: Option<ObjectName>,
    /// CREATE TABLE ... [AS] SELECT: the columns and rows of the query.
    pub select: Option<Box<Query>>,
    /// Table-level FOREIGN KEY clauses, in order.
    pub foreign_keys: Vec<ForeignKeySpec>,
    /// CHECK constraints, table and column ones, in order.
    pub checks: Vec<CheckSpec>,
    /// The table option COMMENT [=] 'text'.
    pub comment: Option<String>,
    /// COMMENT 'text' of the PRIMARY KEY (...) clause.
    pub primary_comment: Option<String>,
    /// The table option AUTO_INCREMENT [=] n: the first value generated.
    pub auto_increment: Option<u64>,
    /// The table option ENGINE [=] name, as written.
    pub engine: Option<String>,
    /// [DEFAULT] CHARSET / COLLATE: the table's default character set.
    pub charset: CharsetSpec,
}

/// `[CONSTRAINT [name]] CHECK (expr) [[NOT] ENFORCED]`.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckSpec {
    pub name: Option<String>,
    pub expr: Expr,
    /// The expression's text as written.
    pub text: String,
    pub enforced: bool,
    /// A column's own CHECK: the column (it may name no other).
    pub column: Option<String>,
}

/// [CONSTRAINT [name]] FOREIGN KEY [index_name] (cols) REFERENCES parent
/// (cols) [ON DELETE rule] [ON UPDATE rule].
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignKeySpec {
    pub name: Option<String>,
    pub index_name: Option<String>,
    pub columns: Vec<String>,
    pub parent: ObjectName,
    pub parent_columns: Vec<String>,
    /// None: no rule given (NO ACTION).
    pub on_delete: Option<FkRule>,
    pub on_update: Option<FkRule>,
}

/// A referential action as written (SET DEFAULT parses, InnoDB refuses it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FkRule {
    Action(lockstep_tables::FkAction),
    SetDefault,
}

#[derive(Clone, Debug, PartialEq)]
pub struct IndexSpec {
    pub name: Option<String>,
    pub columns: Vec<String>,
    pub unique: bool,
    pub comment: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSpec {
    pub name: String,
    pub data_type: DataType,
    /// NOT NULL given (PRIMARY KEY implies it too).
    pub not_null: bool,
    pub default: Option<Expr>,
    pub auto_increment: bool,
    pub primary_key: bool,
    pub unique: bool,
    /// ON UPDATE CURRENT_TIMESTAMP
    pub on_update_now: bool,
    /// COMMENT 'text'.
    pub comment: Option<String>,
    /// `[GENERATED ALWAYS] AS (expr) [VIRTUAL | STORED]`
    pub generated: Option<GeneratedSpec>,
    /// CHARACTER SET / COLLATE of a text column.
    pub charset: CharsetSpec,
}

/// `CHARACTER SET cs` and `COLLATE c` as written (either may be absent):
/// of a column, or a table's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CharsetSpec {
    pub charset: Option<String>,
    pub collation: Option<String>,
}

impl CharsetSpec {
    pub fn is_empty(&self) -> bool {
        self.charset.is_none() && self.collation.is_none()
    }
}

/// A generated column's expression as written (`plan::generated`).
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedSpec {
    pub expr: Expr,
    /// The expression's source text, kept by storage.
    pub text: String,
    pub stored: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Xor,
    Eq,
    /// <=> (NULL-safe equality)
    NullSafeEq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Plus,
    Minus,
    Multiply,
    Divide,
    /// DIV (integer division)
    IntDivide,
    Modulo,
    BitAnd,
    BitOr,
    BitXor,
    ShiftLeft,
    ShiftRight,
}

impl BinaryOp {
    /// The operator as SQL writes it (AND, DIV, <=>, ...).
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Or => "OR",
            And => "AND",
            Xor => "XOR",
            Eq => "=",
            NullSafeEq => "<=>",
            NotEq => "<>",
            Lt => "<",
            LtEq => "<=",
            Gt => ">",
            GtEq => ">=",
            Plus => "+",
            Minus => "-",
            Multiply => "*",
            Divide => "/",
            IntDivide => "DIV",
            Modulo => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            ShiftLeft => "<<",
            ShiftRight => ">>",
        }
    }

    /// = <=> <> < <= > >=
    pub fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(self, Eq | NullSafeEq | NotEq | Lt | LtEq | Gt | GtEq)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Minus,
    Plus,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarScope {
    Session,
    Global,
    /// @@name without a scope: session value.
    Default,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Literal(Value),
    /// Column reference: [table.]column
    Column {
        table: Option<String>,
        name: String,
    },
    /// `?` placeholder, numbered from 0 in order of appearance.
    Param(usize),
    /// @name
    UserVar(String),
    /// @@[session.|global.]name
    SystemVar {
        scope: VarScope,
        name: String,
    },
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// IS [NOT] TRUE / FALSE
    IsBool {
        expr: Box<Expr>,
        value: bool,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    InSubquery {
        expr: Box<Expr>,
        query: Box<Query>,
        negated: bool,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
    },
    Exists {
        query: Box<Query>,
        negated: bool,
    },
    /// (SELECT ...) as a value.
    Subquery(Box<Query>),
    /// Function call; aggregates too (COUNT, SUM, ...). `distinct` for
    /// COUNT(DISTINCT x) and friends. COUNT(*) has `star`.
    Function {
        name: String,
        args: Vec<Expr>,
        distinct: bool,
        star: bool,
        /// `db.f(...)`: a stored function of that database (never a
        /// built-in one); None for an unqualified call.
        database: Option<String>,
        /// An unqualified call's name as written when that is not `name`
        /// (which is upper-cased): a stored function's 1305 quotes it.
        spelled: Option<String>,
    },
    Case {
        operand: Option<Box<Expr>>,
        branches: Vec<(Expr, Expr)>,
        else_result: Option<Box<Expr>>,
    },
    Cast {
        expr: Box<Expr>,
        to: CastType,
    },
    /// INTERVAL n unit, only inside date arithmetic (DATE_ADD, + INTERVAL).
    Interval {
        value: Box<Expr>,
        unit: String,
    },
    /// DEFAULT (in INSERT VALUES / UPDATE SET) or VALUES(col) in ON DUPLICATE KEY UPDATE.
    Default,
    /// Row constructor (a, b) — used by IN ((1,2),(3,4)) and row comparisons.
    Row(Vec<Expr>),
    /// A window function call: `f(..) OVER (..)`.
    Window(Box<WindowCall>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastType {
    Signed,
    Unsigned,
    Char,
    Binary,
    Decimal {
        precision: u8,
        scale: u8,
    },
    Double,
    Date,
    /// DATETIME(fsp).
    DateTime {
        fsp: u8,
    },
    /// TIME(fsp): the text 'hh:mm:ss[.f]'.
    Time {
        fsp: u8,
    },
    Json,
}
