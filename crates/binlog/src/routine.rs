//! A stored program: procedure, function or trigger. The catalog keeps
//! it, the log carries it in `Event::PutRoutine` and checkpoints write it;
//! the SQL layer parses `definition` again whenever it runs the program.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RoutineKind {
    Procedure,
    Function,
    Trigger,
}

impl RoutineKind {
    pub fn keyword(self) -> &'static str {
        match self {
            RoutineKind::Procedure => "PROCEDURE",
            RoutineKind::Function => "FUNCTION",
            RoutineKind::Trigger => "TRIGGER",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct RoutineDef {
    pub database: String,
    pub name: String,
    pub kind: RoutineKind,
    /// The definer account (user, host).
    pub definer: (String, String),
    /// The CREATE text after the name, as written: parameters,
    /// characteristics and body (a trigger's timing, event, table and body).
    pub definition: String,
    /// A trigger's table (empty for routines).
    pub table: String,
    /// Creation time, microseconds since the epoch (a trigger's action
    /// order among those of the same timing and event follows it).
    pub created: u64,
}

impl RoutineDef {
    /// The statement SHOW CREATE prints, in MySQL 8's layout.
    pub fn create_statement(&self) -> String {
        // A routine's parameter list follows its name directly.
        let gap = if self.kind == RoutineKind::Trigger {
            " "
        } else {
            ""
        };
        format!(
            "CREATE DEFINER=`{}`@`{}` {} `{}`{gap}{}",
            self.definer.0,
            self.definer.1,
            self.kind.keyword(),
            self.name,
            self.definition
        )
    }
}
