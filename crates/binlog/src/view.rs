//! A stored view: its name, the SELECT text that defines it and the
//! options of CREATE VIEW. The catalog keeps it; the log carries it in
//! `Event::PutView` and checkpoints write it, so it is the same value in
//! all three places.

use serde::{Deserialize, Serialize};

/// WITH [CASCADED|LOCAL] CHECK OPTION.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub enum CheckOption {
    None,
    Cascaded,
    Local,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ViewDef {
    pub database: String,
    pub name: String,
    /// The column list given after the name (empty: the SELECT's names).
    pub columns: Vec<String>,
    /// The SELECT as written, parsed again whenever the view is used.
    pub query: String,
    /// UNDEFINED, MERGE or TEMPTABLE.
    pub algorithm: String,
    /// The definer account (user, host).
    pub definer: (String, String),
    /// SQL SECURITY DEFINER (true, the default) or INVOKER.
    pub security_definer: bool,
    pub check_option: CheckOption,
}

impl ViewDef {
    /// The statement SHOW CREATE VIEW prints, in MySQL 8's layout.
    pub fn create_statement(&self) -> String {
        let mut s = format!(
            "CREATE ALGORITHM={} DEFINER=`{}`@`{}` SQL SECURITY {} VIEW `{}`",
            self.algorithm,
            self.definer.0,
            self.definer.1,
            if self.security_definer {
                "DEFINER"
            } else {
                "INVOKER"
            },
            self.name
        );
        if !self.columns.is_empty() {
            let cols: Vec<String> = self.columns.iter().map(|c| format!("`{c}`")).collect();
            s.push_str(&format!(" ({})", cols.join(",")));
        }
        s.push_str(" AS ");
        s.push_str(&self.query);
        match self.check_option {
            CheckOption::None => {}
            CheckOption::Cascaded => s.push_str(" WITH CASCADED CHECK OPTION"),
            CheckOption::Local => s.push_str(" WITH LOCAL CHECK OPTION"),
        }
        s
    }
}
