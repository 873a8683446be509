//! information_schema.ROUTINES, PARAMETERS and TRIGGERS, built from the
//! stored definitions the user may see.

use super::super::infoschema::table;
use crate::parser::{ParamMode, RoutineStatement, TriggerEvent};
use crate::routine::call::{action_order, parse_def};
use crate::session::Session;
use lockstep_accounts::Privs;
use lockstep_engine::catalog::Catalog;
use lockstep_engine::{RoutineDef, RoutineKind};
use lockstep_types::{DataType, Value};

pub(super) const SQL_MODE: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

fn s(x: &str) -> Value {
    Value::str(x)
}

pub(super) fn created(def: &RoutineDef) -> Value {
    let secs = (def.created / 1_000_000) as i64;
    Value::DateTime(lockstep_types::DateTime::from_unix_micros(secs * 1_000_000))
}

/// Whether the user sees a stored program: its definer, or one with a
/// privilege on its database (a trigger: on its table); a routine also
/// with global SELECT, as in MySQL.
pub(super) fn visible(session: &Session, def: &RoutineDef) -> bool {
    let a = &session.grants.account;
    if a.user == def.definer.0 && a.host == def.definer.1 {
        return true;
    }
    if def.kind != RoutineKind::Trigger && a.global.contains(Privs::SELECT) {
        return true;
    }
    match def.kind {
        RoutineKind::Trigger => a.has_on_table(Privs::TRIGGER, &def.database, &def.table),
        _ => [Privs::EXECUTE, Privs::CREATE_ROUTINE, Privs::ALTER_ROUTINE]
            .iter()
            .any(|p| a.has_on_database(*p, &def.database)),
    }
}

/// Whether a user who sees a stored program also sees its text: as in
/// MySQL, its definer or one with global SELECT (SHOW_ROUTINE is not a
/// privilege here); EXECUTE, CREATE ROUTINE or ALTER ROUTINE alone show
/// NULL. A trigger's text goes with seeing it.
pub(super) fn sees_text(session: &Session, def: &RoutineDef) -> bool {
    let a = &session.grants.account;
    def.kind == RoutineKind::Trigger
        || (a.user == def.definer.0 && a.host == def.definer.1)
        || a.global.contains(Privs::SELECT)
}

pub(crate) fn add_tables(cat: &Catalog, session: &Session) {
    let (mut routines, mut params) = (Vec::new(), Vec::new());
    for def in session.engine().catalog.routines(None) {
        if !visible(session, &def) {
            continue;
        }
        if def.kind == RoutineKind::Trigger {
            continue;
        }
        let Ok(RoutineStatement::Create(cr)) = parse_def(&def) else {
            continue;
        };
        let returns = cr.returns.map(|t| t.to_string());
        routines.push(vec![
            s(&def.name),
            s("def"),
            s(&def.database),
            s(&def.name),
            s(def.kind.keyword()),
            returns.as_deref().map_or(Value::Null, s),
            s("SQL"),
            match sees_text(session, &def) {
                true => s(cr.body_text()),
                false => Value::Null,
            },
            s(if cr.deterministic { "YES" } else { "NO" }),
            s(&cr.data_access),
            s(if cr.security_definer {
                "DEFINER"
            } else {
                "INVOKER"
            }),
            created(&def),
            created(&def),
            s(SQL_MODE),
            s(&cr.comment),
            s(&format!("{}@{}", def.definer.0, def.definer.1)),
            s(returns
                .as_deref()
                .map_or("", |r| r.split('(').next().unwrap_or(r))),
        ]);
        let row = routines.last_mut().expect("just pushed");
        row.extend(super::super::infoschema_meta::type_values(cr.returns));
        if let Some(r) = cr.returns {
            params.push(param_row(&def, 0, None, "", r));
        }
        for (i, p) in cr.params.iter().enumerate() {
            let mode = match p.mode {
                ParamMode::In => "IN",
                ParamMode::Out => "OUT",
                ParamMode::InOut => "INOUT",
            };
            params.push(param_row(&def, i + 1, Some(mode), &p.name, p.data_type));
        }
    }
    add(cat, routines, params, trigger_rows(session));
}

/// information_schema.TRIGGERS rows the user may see: by schema and
/// table, each table's in action order, ACTION_ORDER counting 1, 2, ...
/// among those of one event and timing.
pub(super) fn trigger_rows(session: &Session) -> Vec<Vec<Value>> {
    let catalog = &session.engine().catalog;
    let mut tables: Vec<(String, String)> = catalog
        .routines(None)
        .iter()
        .filter(|d| d.kind == RoutineKind::Trigger)
        .map(|d| (d.database.clone(), d.table.clone()))
        .collect();
    tables.dedup();
    tables.sort();
    tables.dedup();
    let mut rows = Vec::new();
    for (db, table) in tables {
        let ordered = action_order(catalog.triggers(&db, &table)).unwrap_or_default();
        let mut counts: Vec<(TriggerEvent, bool)> = Vec::new();
        for (def, ct) in ordered {
            counts.push((ct.event, ct.before));
            if !visible(session, &def) {
                continue;
            }
            let n = counts
                .iter()
                .filter(|k| **k == (ct.event, ct.before))
                .count();
            rows.push(vec![
                s("def"),
                s(&def.database),
                s(&def.name),
                s(ct.event.keyword()),
                s("def"),
                s(&def.database),
                s(&def.table),
                Value::Int(n as i64),
                s(ct.body_text()),
                s("ROW"),
                s(if ct.before { "BEFORE" } else { "AFTER" }),
                s("OLD"),
                s("NEW"),
                created(&def),
                s(SQL_MODE),
                s(&format!("{}@{}", def.definer.0, def.definer.1)),
            ]);
        }
    }
    rows
}

fn param_row(
    def: &RoutineDef,
    pos: usize,
    mode: Option<&str>,
    name: &str,
    t: DataType,
) -> Vec<Value> {
    let ty = t.to_string();
    let mut row = vec![
        s("def"),
        s(&def.database),
        s(&def.name),
        Value::Int(pos as i64),
        mode.map_or(Value::Null, s),
        if pos == 0 { Value::Null } else { s(name) },
        s(ty.split('(').next().unwrap_or(&ty).to_lowercase().as_str()),
        s(&ty.to_lowercase()),
        s(def.kind.keyword()),
    ];
    row.extend(super::super::infoschema_meta::type_values(Some(t)));
    row
}

fn add(
    cat: &Catalog,
    routines: Vec<Vec<Value>>,
    params: Vec<Vec<Value>>,
    triggers: Vec<Vec<Value>>,
) {
    let vc = DataType::VarChar { len: 64 };
    let text = DataType::Text { max_len: 65535 };
    let dt = DataType::DateTime { fsp: 0 };
    let int = DataType::BigInt { unsigned: false };
    table(
        cat,
        40,
        "ROUTINES",
        &[
            ("SPECIFIC_NAME", vc),
            ("ROUTINE_CATALOG", vc),
            ("ROUTINE_SCHEMA", vc),
            ("ROUTINE_NAME", vc),
            ("ROUTINE_TYPE", vc),
            ("DTD_IDENTIFIER", text),
            ("ROUTINE_BODY", vc),
            ("ROUTINE_DEFINITION", text),
            ("IS_DETERMINISTIC", vc),
            ("SQL_DATA_ACCESS", vc),
            ("SECURITY_TYPE", vc),
            ("CREATED", dt),
            ("LAST_ALTERED", dt),
            ("SQL_MODE", text),
            ("ROUTINE_COMMENT", text),
            ("DEFINER", vc),
            ("DATA_TYPE", vc),
        ]
        .into_iter()
        .chain(super::super::infoschema_meta::TYPE_COLUMNS)
        .collect::<Vec<_>>(),
        routines,
    );
    table(
        cat,
        41,
        "PARAMETERS",
        &[
            ("SPECIFIC_CATALOG", vc),
            ("SPECIFIC_SCHEMA", vc),
            ("SPECIFIC_NAME", vc),
            ("ORDINAL_POSITION", int),
            ("PARAMETER_MODE", vc),
            ("PARAMETER_NAME", vc),
            ("DATA_TYPE", vc),
            ("DTD_IDENTIFIER", text),
            ("ROUTINE_TYPE", vc),
        ]
        .into_iter()
        .chain(super::super::infoschema_meta::TYPE_COLUMNS)
        .collect::<Vec<_>>(),
        params,
    );
    table(
        cat,
        42,
        "TRIGGERS",
        &[
            ("TRIGGER_CATALOG", vc),
            ("TRIGGER_SCHEMA", vc),
            ("TRIGGER_NAME", vc),
            ("EVENT_MANIPULATION", vc),
            ("EVENT_OBJECT_CATALOG", vc),
            ("EVENT_OBJECT_SCHEMA", vc),
            ("EVENT_OBJECT_TABLE", vc),
            ("ACTION_ORDER", int),
            ("ACTION_STATEMENT", text),
            ("ACTION_ORIENTATION", vc),
            ("ACTION_TIMING", vc),
            ("ACTION_REFERENCE_OLD_ROW", vc),
            ("ACTION_REFERENCE_NEW_ROW", vc),
            ("CREATED", dt),
            ("SQL_MODE", text),
            ("DEFINER", vc),
        ],
        triggers,
    );
}
