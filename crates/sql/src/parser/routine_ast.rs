//! Syntax of stored programs: CREATE PROCEDURE / FUNCTION / TRIGGER, their
//! compound-statement bodies, CALL, DROP and the SHOW statements about them.

use super::ast::{Expr, ObjectName, Query, SetAssignment, ShowFilter, Statement, UserName};
use lockstep_types::DataType;

pub use lockstep_engine::RoutineKind;

#[derive(Clone, Debug, PartialEq)]
pub enum RoutineStatement {
    Create(Box<CreateRoutine>),
    CreateTrigger(Box<CreateTrigger>),
    Drop {
        kind: RoutineKind,
        name: ObjectName,
        if_exists: bool,
    },
    Call {
        name: ObjectName,
        args: Vec<Expr>,
    },
    ShowCreate {
        kind: RoutineKind,
        name: ObjectName,
    },
    /// SHOW PROCEDURE|FUNCTION STATUS [LIKE|WHERE].
    ShowStatus {
        kind: RoutineKind,
        filter: Option<ShowFilter>,
    },
    ShowTriggers {
        database: Option<String>,
        filter: Option<ShowFilter>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamMode {
    In,
    Out,
    InOut,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RoutineParam {
    pub mode: ParamMode,
    pub name: String,
    pub data_type: DataType,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateRoutine {
    pub kind: RoutineKind,
    pub name: ObjectName,
    pub definer: Option<UserName>,
    pub if_not_exists: bool,
    pub params: Vec<RoutineParam>,
    /// A function's RETURNS type.
    pub returns: Option<DataType>,
    pub deterministic: bool,
    /// CONTAINS SQL, NO SQL, READS SQL DATA or MODIFIES SQL DATA.
    pub data_access: String,
    pub security_definer: bool,
    pub comment: String,
    pub body: SpStmt,
    /// The text after the name, stored and parsed again when it runs.
    pub definition: String,
    /// Where the body starts in `definition` (a byte offset).
    pub body_at: usize,
}

impl CreateRoutine {
    /// The body as written (ROUTINE_DEFINITION).
    pub fn body_text(&self) -> &str {
        self.definition.get(self.body_at..).unwrap_or_default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerEvent {
    Insert,
    Update,
    Delete,
}

impl TriggerEvent {
    pub fn keyword(self) -> &'static str {
        match self {
            TriggerEvent::Insert => "INSERT",
            TriggerEvent::Update => "UPDATE",
            TriggerEvent::Delete => "DELETE",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateTrigger {
    pub name: ObjectName,
    pub definer: Option<UserName>,
    pub if_not_exists: bool,
    pub before: bool,
    pub event: TriggerEvent,
    pub table: ObjectName,
    /// FOLLOWS (true) or PRECEDES (false) another trigger of the table.
    pub order: Option<(bool, String)>,
    pub body: SpStmt,
    pub definition: String,
    /// Where the body starts in `definition` (a byte offset).
    pub body_at: usize,
}

impl CreateTrigger {
    /// The body as written (ACTION_STATEMENT).
    pub fn body_text(&self) -> &str {
        self.definition.get(self.body_at..).unwrap_or_default()
    }
}

/// Where SET, SELECT ... INTO and FETCH put a value.
#[derive(Clone, Debug, PartialEq)]
pub enum SpTarget {
    /// A local variable or parameter (or a trigger's NEW.col, `new.col`).
    Local(String),
    User(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum HandlerCondition {
    SqlException,
    SqlWarning,
    NotFound,
    SqlState(String),
    Code(u16),
    /// A name DECLAREd as a CONDITION.
    Named(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum SpDecl {
    Var {
        names: Vec<String>,
        data_type: DataType,
        default: Option<Expr>,
    },
    Condition {
        name: String,
        condition: HandlerCondition,
    },
    Cursor {
        name: String,
        query: Box<Query>,
    },
    Handler {
        exit: bool,
        conditions: Vec<HandlerCondition>,
        body: Box<SpStmt>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum SpStmt {
    Block {
        label: Option<String>,
        decls: Vec<SpDecl>,
        body: Vec<SpStmt>,
    },
    Sql(Box<Statement>),
    Set {
        locals: Vec<(SpTarget, Expr)>,
        /// Assignments to system or user variables, run as SET.
        others: Vec<SetAssignment>,
    },
    If {
        branches: Vec<(Expr, Vec<SpStmt>)>,
        otherwise: Option<Vec<SpStmt>>,
    },
    /// CASE [operand] WHEN .. THEN .. [ELSE ..] END CASE (no ELSE and no
    /// match: error 1339).
    Case {
        operand: Option<Expr>,
        branches: Vec<(Expr, Vec<SpStmt>)>,
        otherwise: Option<Vec<SpStmt>>,
    },
    While {
        label: Option<String>,
        cond: Expr,
        body: Vec<SpStmt>,
    },
    Repeat {
        label: Option<String>,
        body: Vec<SpStmt>,
        until: Expr,
    },
    Loop {
        label: Option<String>,
        body: Vec<SpStmt>,
    },
    Leave(String),
    Iterate(String),
    Return(Expr),
    SelectInto {
        query: Box<Query>,
        targets: Vec<SpTarget>,
    },
    Open(String),
    Fetch {
        cursor: String,
        targets: Vec<SpTarget>,
    },
    Close(String),
    Signal {
        resignal: bool,
        condition: Option<HandlerCondition>,
        items: Vec<(String, Expr)>,
    },
}
