//! SHOW statements: each kind builds its rows from the catalog, the
//! accounts or the server; `show` applies a WHERE afterwards.

use super::*;
use crate::parser::{ObjectName, UserName};

impl Session {
    /// SHOW, with its WHERE (if any) applied to the rows it lists.
    pub(super) fn show(&mut self, show: &Show) -> R<Response> {
        let shown = self.show_rows(show)?;
        let Some(condition) = show_where(show) else {
            return Ok(shown);
        };
        match shown {
            Response::Rows(rs) => crate::session::infoschema::filter_rows(self, rs, condition),
            ok => Ok(ok),
        }
    }

    fn show_rows(&mut self, show: &Show) -> R<Response> {
        match show {
            Show::Databases { filter } => self.show_databases(filter),
            Show::Tables {
                database,
                full,
                filter,
            } => self.show_tables(database, *full, filter),
            Show::Columns {
                table,
                full,
                filter,
            } => self.show_columns(table, *full, filter),
            Show::Index { table } => self.show_index(table),
            Show::CreateView { view } => self.show_create_view(&*self.view_named(view)?),
            Show::CreateTable { table } => self.show_create_table(table),
            Show::CreateDatabase { name } => self.show_create_database(name),
            Show::Variables { scope, filter } => self.show_variables(*scope, filter),
            Show::Status { filter: f, scope } => {
                let stats = self.status_values(*scope == AstScope::Global);
                let r = stats
                    .into_iter()
                    .filter(|(n, _)| listed(n, f))
                    .map(|(n, v)| vec![Value::str(n), Value::str(&v)])
                    .collect();
                Ok(rows(&["Variable_name", "Value"], r))
            }
            Show::ProcessList { full } => self.show_processlist(*full),
            Show::Diagnostics {
                errors,
                count,
                limit,
            } => Ok(super::diagnostics::show_diagnostics(
                &self.ctx.warnings,
                self.ctx.error_at,
                *errors,
                *count,
                *limit,
            )),
            Show::Engines => Ok(engines()),
            Show::Plugins => Ok(plugins()),
            Show::Collation { filter } => Ok(sorted_listing(
                &collations::SHOW_COLLATION,
                collations::collation_rows(),
                filter,
            )),
            Show::CharacterSet { filter } => Ok(sorted_listing(
                &collations::SHOW_CHARSET,
                collations::show_charset_rows(),
                filter,
            )),
            Show::TableStatus { database, filter } => self.show_table_status(database, filter),
            Show::Grants { user } => self.show_grants(user),
            Show::EngineStatus => Ok(rows(&["Type", "Name", "Status"], vec![])),
            Show::MasterStatus => self.show_master_status(),
            Show::BinaryLogs => self.show_binary_logs(),
        }
    }

    /// SHOW DATABASES: the system schemas and those the user may see.
    fn show_databases(&self, f: &Option<ShowFilter>) -> R<Response> {
        let mut dbs = vec![
            "information_schema".to_string(),
            "mysql".into(),
            "performance_schema".into(),
            "sys".into(),
        ];
        dbs.extend(self.engine.catalog.databases());
        dbs.sort();
        let r = dbs
            .into_iter()
            .filter(|d| listed(d, f) && self.grants.sees_database(d))
            .map(|d| vec![Value::str(&d)])
            .collect();
        let header = match f {
            Some(ShowFilter::Like(p)) => format!("Database ({p})"),
            _ => "Database".to_string(),
        };
        Ok(rows(&[&header], r))
    }

    /// SHOW [FULL] TABLES [FROM db]: base tables and views.
    fn show_tables(
        &self,
        database: &Option<String>,
        full: bool,
        f: &Option<ShowFilter>,
    ) -> R<Response> {
        let db = database
            .clone()
            .or(self.ctx.database.clone())
            .ok_or_else(Error::no_db)?;
        if !self.engine.catalog.database_exists(&db) && !is_system_db(&db) {
            return Err(Error::new(Code::BadDb, format!("Unknown database '{db}'")));
        }
        let name = format!("Tables_in_{db}");
        let catalog = &self.engine.catalog;
        let mut names: Vec<(String, &str)> = catalog
            .tables(&db)
            .iter()
            .map(|t| (t.def().name.clone(), "BASE TABLE"))
            .chain(catalog.views(&db).iter().map(|v| (v.name.clone(), "VIEW")))
            .collect();
        names.sort();
        let r: Vec<Vec<Value>> = names
            .into_iter()
            .filter(|(n, _)| listed(n, f) && self.grants.sees_table(&db, n))
            .map(|(n, kind)| {
                if full {
                    vec![Value::str(&n), Value::str(kind)]
                } else {
                    vec![Value::str(&n)]
                }
            })
            .collect();
        if full {
            Ok(rows(&[&name, "Table_type"], r))
        } else {
            Ok(rows(&[&name], r))
        }
    }

    /// SHOW [FULL] COLUMNS / DESCRIBE.
    fn show_columns(&self, table: &ObjectName, full: bool, f: &Option<ShowFilter>) -> R<Response> {
        if let Some(view) = self.binder().view(table) {
            return self.describe_view(&view, full, f);
        }
        let (t, system) = self.shown_table(table)?;
        let def = t.def();
        let (notes, gen_cols) = match system {
            true => (Default::default(), Arc::from([])),
            false => (self.comments_of(&t), self.engine.catalog.generated(t.id)),
        };
        let mut r = Vec::new();
        for (i, c) in def.visible_columns() {
            if !listed(&c.name, f) {
                continue;
            }
            let key = if def.has_declared_primary_key() && def.indexes[0].columns.contains(&i) {
                "PRI"
            } else if def
                .indexes
                .iter()
                .skip(1)
                .any(|x| x.unique && x.columns.first() == Some(&i))
            {
                "UNI"
            } else if def
                .indexes
                .iter()
                .skip(1)
                .any(|x| x.columns.first() == Some(&i))
            {
                "MUL"
            } else {
                ""
            };
            let default = if c.default_now {
                Value::str("CURRENT_TIMESTAMP")
            } else {
                super::time_zone::default_in_zone(c, self.ctx.tz_offset)
                    .map(|d| Value::str(&d.to_string()))
                    .unwrap_or(Value::Null)
            };
            let extra = if let Some(g) = generated::extra(&gen_cols, &c.name) {
                g
            } else if c.auto_increment {
                "auto_increment"
            } else if c.default_now {
                "DEFAULT_GENERATED"
            } else {
                ""
            };
            let col = (c.name.as_str(), c.data_type, c.nullable);
            let mut row = column_row(col, key, default, extra, full);
            if full && c.data_type.is_string() {
                row[2] = Value::str(super::charset::of_collation(c.collation).1);
            }
            if full {
                row.pop();
                row.push(Value::str(notes.of_column(&c.name)));
            }
            r.push(row);
        }
        Ok(columns_result(full, r))
    }

    /// SHOW INDEX: one row per key column.
    fn show_index(&self, table: &ObjectName) -> R<Response> {
        let (t, system) = self.shown_table(table)?;
        let def = t.def();
        let notes = match system {
            true => Default::default(),
            false => self.comments_of(&t),
        };
        let mut r = Vec::new();
        for (n, ix) in def.indexes.iter().enumerate() {
            if n == 0 && !def.has_declared_primary_key() {
                continue;
            }
            for (seq, &c) in ix.columns.iter().enumerate() {
                r.push(vec![
                    Value::str(&def.name),
                    Value::Int(if ix.unique { 0 } else { 1 }),
                    Value::str(&ix.name),
                    Value::Int(seq as i64 + 1),
                    Value::str(&def.columns[c].name),
                    Value::str("A"),
                    Value::Int(t.cardinality(n, seq + 1) as i64),
                    Value::Null,
                    Value::Null,
                    Value::str(if def.columns[c].nullable { "YES" } else { "" }),
                    Value::str("BTREE"),
                    Value::str(""),
                    Value::str(notes.of_index(&ix.name)),
                    Value::str("YES"),
                    Value::Null,
                ]);
            }
        }
        Ok(rows(
            &[
                "Table",
                "Non_unique",
                "Key_name",
                "Seq_in_index",
                "Column_name",
                "Collation",
                "Cardinality",
                "Sub_part",
                "Packed",
                "Null",
                "Index_type",
                "Comment",
                "Index_comment",
                "Visible",
                "Expression",
            ],
            r,
        ))
    }

    /// SHOW CREATE TABLE, with what the catalog keeps beside the definition.
    fn show_create_table(&self, table: &ObjectName) -> R<Response> {
        if let Some(view) = self.binder().view(table) {
            return self.show_create_view(&view);
        }
        let (t, system) = self.shown_table(table)?;
        if system {
            return system_create_table(&t.def());
        }
        let def = t.def();
        // TIMESTAMP defaults (kept in UTC) in the session's zone.
        let mut shown = (*def).clone();
        for c in shown.columns.iter_mut() {
            c.default = super::time_zone::default_in_zone(c, self.ctx.tz_offset);
        }
        let auto_increment = t.auto_increment.load(Ordering::Relaxed);
        let mut text = crate::plan::ddl::show_create_table(&shown, auto_increment);
        text = comments::add_to_create(text, &def, &self.comments_of(&t));
        if t.temporary {
            text = text.replacen("CREATE TABLE", "CREATE TEMPORARY TABLE", 1);
        } else {
            let fks = self.engine.catalog.foreign_keys(t.id);
            text = crate::plan::foreign::add_to_create(text, &fks, &def.database);
            let checks = self.engine.catalog.checks(t.id);
            text = checks::add_to_create(text, &checks);
            let gen_cols = self.engine.catalog.generated(t.id);
            text = generated::add_to_create(text, &def, &gen_cols);
        }
        Ok(rows(
            &["Table", "Create Table"],
            vec![vec![Value::str(&def.name), Value::str(&text)]],
        ))
    }

    /// The table a SHOW about one table names, and whether it is a system
    /// schema's: built as a query reading it sees it, with no comments,
    /// generated columns or keys of its own.
    fn shown_table(&self, name: &ObjectName) -> R<(Arc<lockstep_tables::Table>, bool)> {
        match super::infoschema::system_table(self, name) {
            Some(t) => Ok((t?, true)),
            None => Ok((self.binder().table(name)?, false)),
        }
    }

    /// SHOW CREATE DATABASE.
    fn show_create_database(&self, name: &str) -> R<Response> {
        if !self.grants.sees_database(name) {
            return Err(self.grants.database_denied(name));
        }
        if !self.engine.catalog.database_exists(name) {
            return Err(Error::new(
                Code::BadDb,
                format!("Unknown database '{name}'"),
            ));
        }
        let quoted = crate::plan::ddl::quote_ident(name);
        let text = format!("CREATE DATABASE {quoted} /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */");
        Ok(rows(
            &["Database", "Create Database"],
            vec![vec![Value::str(name), Value::str(&text)]],
        ))
    }

    /// SHOW [GLOBAL | SESSION] VARIABLES.
    fn show_variables(&self, scope: AstScope, f: &Option<ShowFilter>) -> R<Response> {
        let mut r = Vec::new();
        for (name, global) in self.server.globals.all() {
            let session_only =
                self.server.globals.scope(&name) == Some(crate::session::vars::VarScope::Session);
            if scope == AstScope::Global && session_only {
                continue;
            }
            let v = if scope == AstScope::Global {
                system_var(&self.server, &self.ctx, true, &name).unwrap_or(global)
            } else {
                system_var(&self.server, &self.ctx, false, &name).unwrap_or(global)
            };
            let keep = match f {
                Some(ShowFilter::Like(p)) => like_ci(&name, p),
                Some(ShowFilter::Where(_)) => true, // applied by `show`
                None => true,
            };
            if keep {
                let text = variable_text(&name, &v);
                r.push(vec![Value::str(&name), Value::str(&text)]);
            }
        }
        Ok(rows(&["Variable_name", "Value"], r))
    }

    /// SHOW [FULL] PROCESSLIST: without PROCESS, the user's own threads.
    fn show_processlist(&self, full: bool) -> R<Response> {
        // Without PROCESS a user sees only its own threads.
        let all = self.grants.has_global(lockstep_accounts::Privs::PROCESS);
        let procs: Vec<Arc<ProcessInfo>> = self
            .server
            .processes
            .lock()
            .values()
            .filter(|p| all || *p.user.lock() == self.grants.user)
            .cloned()
            .collect();
        let mut r: Vec<Vec<Value>> = procs
            .iter()
            .map(|p| {
                let info = p.info.lock().clone().map(|s| {
                    if full {
                        s
                    } else {
                        s.chars().take(100).collect()
                    }
                });
                vec![
                    Value::UInt(p.id),
                    Value::str(&p.user.lock()),
                    Value::str(&p.host),
                    p.database
                        .lock()
                        .clone()
                        .map(|d| Value::str(&d))
                        .unwrap_or(Value::Null),
                    Value::str(*p.command.lock()),
                    Value::Int(p.since.lock().elapsed().as_secs() as i64),
                    Value::str(""),
                    info.map(|s| Value::str(&s)).unwrap_or(Value::Null),
                ]
            })
            .collect();
        r.sort_by(|a, b| a[0].sort_cmp(&b[0]));
        Ok(rows(
            &[
                "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
            ],
            r,
        ))
    }

    /// SHOW TABLE STATUS [FROM db].
    fn show_table_status(&self, database: &Option<String>, f: &Option<ShowFilter>) -> R<Response> {
        let db = database
            .clone()
            .or(self.ctx.database.clone())
            .ok_or_else(Error::no_db)?;
        let r = self
            .engine
            .catalog
            .tables(&db)
            .iter()
            .filter(|t| listed(&t.def().name, f))
            .map(|t| comments::table_status_row(t, &self.comments_of(t)))
            .collect();
        Ok(rows(&comments::TABLE_STATUS, r))
    }

    /// SHOW GRANTS [FOR user].
    fn show_grants(&self, user: &Option<UserName>) -> R<Response> {
        let accounts = &self.engine.accounts;
        // The current user's grants show its active roles' privileges too.
        let mine = |u: &UserName| (u.user.clone(), u.host.clone()) == self.grants.account.key();
        let using = match user {
            Some(u) if !mine(u) => Vec::new(),
            _ => self.grants.roles.clone(),
        };
        let account = match user {
            None => {
                let (u, h) = self.grants.account.key();
                accounts
                    .get(&u, &h)
                    .unwrap_or_else(|| self.grants.account.clone())
            }
            Some(u) => accounts.get(&u.user, &u.host).ok_or_else(|| {
                Error::new(
                    Code::NonexistingGrant,
                    format!(
                        "There is no such grant defined for user '{}' on host '{}'",
                        u.user, u.host
                    ),
                )
            })?,
        };
        let lines = crate::session::roles::grant_lines(accounts, &account, &using);
        Ok(crate::session::roles::grants_response(&account, lines))
    }

    /// SHOW MASTER STATUS / SHOW BINARY LOG STATUS: one file, the stream.
    fn show_master_status(&self) -> R<Response> {
        Ok(rows(
            &[
                "File",
                "Position",
                "Binlog_Do_DB",
                "Binlog_Ignore_DB",
                "Executed_Gtid_Set",
            ],
            vec![vec![
                Value::str(binlog_status::FILE_NAME),
                Value::UInt(binlog_status::stream_end(&self.engine)?),
                Value::str(""),
                Value::str(""),
                Value::str(&self.engine.gtid_executed()),
            ]],
        ))
    }

    /// SHOW BINARY LOGS: the one stream as one file.
    fn show_binary_logs(&self) -> R<Response> {
        Ok(rows(
            &["Log_name", "File_size", "Encrypted"],
            vec![vec![
                Value::str(binlog_status::FILE_NAME),
                Value::UInt(binlog_status::stream_end(&self.engine)?),
                Value::str("No"),
            ]],
        ))
    }
}

/// SHOW ... LIKE 'pattern': whether `name` is listed.
fn listed(name: &str, f: &Option<ShowFilter>) -> bool {
    match f {
        Some(ShowFilter::Like(p)) => like_ci(name, p),
        _ => true,
    }
}

/// A fixed listing by its first column, as MySQL 8 orders it, filtered
/// by LIKE on that column.
fn sorted_listing(columns: &[&str], mut all: Vec<Vec<Value>>, f: &Option<ShowFilter>) -> Response {
    all.sort_by(|a, b| a[0].sort_cmp(&b[0]));
    all.retain(|r| listed(&r[0].to_string(), f));
    rows(columns, all)
}

/// SHOW ENGINES: one engine, as InnoDB.
/// SHOW ENGINES as MySQL 8 lists them: InnoDB the default, the
/// performance_schema's own engine, and MySQL's other engines as present
/// but unavailable (Support NO, NULL capabilities), which is what they are
/// here: a CREATE TABLE naming one gets InnoDB with warning 1266, as
/// MySQL substitutes a disabled engine.
fn engines() -> Response {
    let engine = |name: &str, support: &str, comment: &str, caps: Option<&str>| {
        let cap = |c: &str| caps.map_or(Value::Null, |_| Value::str(c));
        let (t, x, s) = match caps {
            Some("YES") => (cap("YES"), cap("YES"), cap("YES")),
            _ => (cap("NO"), cap("NO"), cap("NO")),
        };
        vec![
            Value::str(name),
            Value::str(support),
            Value::str(comment),
            t,
            x,
            s,
        ]
    };
    let mut list = vec![
        engine(
            "InnoDB",
            "DEFAULT",
            "Supports transactions, row-level locking, and foreign keys",
            Some("YES"),
        ),
        engine(
            "PERFORMANCE_SCHEMA",
            "YES",
            "Performance Schema",
            Some("NO"),
        ),
    ];
    for (name, comment) in super::auto_increment::MYSQL_ENGINES {
        list.push(engine(name, "NO", comment, None));
    }
    rows(
        &[
            "Engine",
            "Support",
            "Comment",
            "Transactions",
            "XA",
            "Savepoints",
        ],
        list,
    )
}

/// SHOW CREATE TABLE of a system table: mysql's tables are InnoDB tables
/// and performance_schema's of its own engine, named in lower case as in
/// MySQL 8. information_schema's are shown as MySQL shows a table it
/// builds per query: a TEMPORARY MEMORY table in utf8mb3, named in upper
/// case. sys's are views over the data dictionary there, whose text
/// lockstep does not have.
fn system_create_table(def: &lockstep_tables::TableDef) -> R<Response> {
    let engine = match def.database.as_str() {
        "mysql" => "InnoDB",
        "performance_schema" => "PERFORMANCE_SCHEMA",
        "information_schema" => return Ok(information_schema_create_table(def)),
        _ => {
            let what = format!("SHOW CREATE TABLE of {}.{}", def.database, def.name);
            return Err(Error::unsupported(what));
        }
    };
    let name = def.name.to_ascii_lowercase();
    let text = crate::plan::ddl::show_create_table(def, 0)
        .replacen(
            &crate::plan::ddl::quote_ident(&def.name),
            &crate::plan::ddl::quote_ident(&name),
            1,
        )
        .replacen("ENGINE=InnoDB", &format!("ENGINE={engine}"), 1);
    Ok(rows(
        &["Table", "Create Table"],
        vec![vec![Value::str(&name), Value::str(&text)]],
    ))
}

/// SHOW CREATE TABLE of an information_schema table.
fn information_schema_create_table(def: &lockstep_tables::TableDef) -> Response {
    let text = crate::plan::ddl::show_create_table(def, 0)
        .replacen("CREATE TABLE", "CREATE TEMPORARY TABLE", 1)
        .replacen(
            "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci",
            "ENGINE=MEMORY DEFAULT CHARSET=utf8mb3",
            1,
        );
    debug_assert!(text.ends_with("utf8mb3"), "the table options were replaced");
    rows(
        &["Table", "Create Table"],
        vec![vec![Value::str(&def.name), Value::str(&text)]],
    )
}
