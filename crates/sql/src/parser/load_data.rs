//! LOAD DATA [LOCAL] INFILE: the statement's syntax tree and its parser.
//! `exec/load_data.rs` splits the file into rows by the format given here;
//! `session/load_data.rs` runs it.

use super::{Parser, Result, Tok};
use crate::parser::ast::{Expr, ObjectName, Statement};

/// How the file is split into rows and fields (FIELDS / LINES clauses).
#[derive(Clone, Debug, PartialEq)]
pub struct LoadFormat {
    pub field_term: Vec<u8>,
    /// One byte or none (ENCLOSED BY '').
    pub enclosed: Option<u8>,
    pub optionally: bool,
    pub escaped: Option<u8>,
    pub line_start: Vec<u8>,
    pub line_term: Vec<u8>,
}

impl Default for LoadFormat {
    /// MySQL's defaults: tab-separated fields, newline-terminated lines,
    /// backslash escapes, no enclosing quotes.
    fn default() -> Self {
        LoadFormat {
            field_term: b"\t".to_vec(),
            enclosed: None,
            optionally: false,
            escaped: Some(b'\\'),
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
        }
    }
}

/// Where one field of a row goes: a column, or a user variable.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadTarget {
    Column(String),
    Var(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct LoadData {
    pub local: bool,
    pub file: Vec<u8>,
    pub replace: bool,
    pub ignore: bool,
    pub table: ObjectName,
    pub charset: Option<String>,
    pub format: LoadFormat,
    /// IGNORE n LINES: rows skipped at the start.
    pub skip_lines: u64,
    /// Empty: the table's columns in order.
    pub targets: Vec<LoadTarget>,
    pub set: Vec<(String, Expr)>,
}

impl Parser<'_> {
    /// LOAD DATA ... (LOAD XML and LOAD INDEX stay unsupported).
    pub(super) fn parse_load(&mut self) -> Result<Statement> {
        self.advance();
        self.advance();
        let _ = self.eat_kw("LOW_PRIORITY") || self.eat_kw("CONCURRENT");
        let local = self.eat_kw("LOCAL");
        self.expect_kw("INFILE")?;
        let file = self.load_string()?;
        let replace = self.eat_kw("REPLACE");
        let ignore = !replace && self.eat_kw("IGNORE");
        self.expect_kw("INTO")?;
        self.expect_kw("TABLE")?;
        let table = self.object_name()?;
        if self.is_kw("PARTITION") {
            return Err(self.unsupported("LOAD DATA ... PARTITION"));
        }
        let mut load = LoadData {
            local,
            file,
            replace,
            ignore,
            table,
            charset: None,
            format: LoadFormat::default(),
            skip_lines: 0,
            targets: Vec::new(),
            set: Vec::new(),
        };
        self.load_clauses(&mut load)?;
        if !self.at_end() {
            return Err(self.error());
        }
        Ok(Statement::LoadData(Box::new(load)))
    }

    /// Everything after the table name, in MySQL's order.
    fn load_clauses(&mut self, load: &mut LoadData) -> Result<()> {
        if self.eat_kw("CHARACTER") {
            self.expect_kw("SET")?;
            load.charset = Some(self.name_or_string()?);
        } else if self.eat_kw("CHARSET") {
            load.charset = Some(self.name_or_string()?);
        }
        if self.eat_kw("FIELDS") || self.eat_kw("COLUMNS") {
            self.field_options(&mut load.format)?;
        }
        if self.eat_kw("LINES") {
            self.line_options(&mut load.format)?;
        }
        if self.eat_kw("IGNORE") {
            load.skip_lines = self.parse_u64()?;
            if !self.eat_kw("LINES") {
                self.expect_kw("ROWS")?;
            }
        }
        if self.eat(&Tok::LParen) {
            load.targets = self.load_targets()?;
        }
        if self.eat_kw("SET") {
            load.set = self.parse_assignments()?;
        }
        Ok(())
    }

    fn field_options(&mut self, f: &mut LoadFormat) -> Result<()> {
        let mut any = false;
        loop {
            if self.eat_kw("TERMINATED") {
                self.expect_kw("BY")?;
                f.field_term = self.load_string()?;
            } else if self.is_kw("OPTIONALLY") || self.is_kw("ENCLOSED") {
                f.optionally = self.eat_kw("OPTIONALLY");
                self.expect_kw("ENCLOSED")?;
                self.expect_kw("BY")?;
                f.enclosed = self.load_char()?;
            } else if self.eat_kw("ESCAPED") {
                self.expect_kw("BY")?;
                f.escaped = self.load_char()?;
            } else if any {
                return Ok(());
            } else {
                return Err(self.error());
            }
            any = true;
        }
    }

    fn line_options(&mut self, f: &mut LoadFormat) -> Result<()> {
        let mut any = false;
        loop {
            if self.eat_kw("STARTING") {
                self.expect_kw("BY")?;
                f.line_start = self.load_string()?;
            } else if self.eat_kw("TERMINATED") {
                self.expect_kw("BY")?;
                f.line_term = self.load_string()?;
            } else if any {
                return Ok(());
            } else {
                return Err(self.error());
            }
            any = true;
        }
    }

    /// `(col_or_@var, ...)`, the opening parenthesis eaten.
    fn load_targets(&mut self) -> Result<Vec<LoadTarget>> {
        let mut out = Vec::new();
        if self.eat(&Tok::RParen) {
            return Ok(out);
        }
        loop {
            if let Tok::UserVar(name) = self.peek() {
                out.push(LoadTarget::Var(name.clone()));
                self.advance();
            } else {
                out.push(LoadTarget::Column(self.column_name()?));
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        Ok(out)
    }

    fn load_string(&mut self) -> Result<Vec<u8>> {
        match self.take() {
            Tok::Str(s) => Ok(s),
            _ => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.error())
            }
        }
    }

    /// ENCLOSED BY / ESCAPED BY: one byte or the empty string (1083
    /// otherwise, as MySQL).
    fn load_char(&mut self) -> Result<Option<u8>> {
        match self.load_string()?.as_slice() {
            [] => Ok(None),
            [b] => Ok(Some(*b)),
            _ => Err(lockstep_types::Error::new(
                lockstep_types::error::Code::WrongFieldTerminators,
                "Field separator argument is not what is expected; check the manual",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parser::{parse, LoadData, LoadTarget, Statement};

    fn load(sql: &str) -> LoadData {
        match parse(sql).expect("parses").remove(0) {
            Statement::LoadData(l) => *l,
            other => panic!("not a load: {other:?}"),
        }
    }

    #[test]
    fn every_clause() {
        let l = load(
            "LOAD DATA LOW_PRIORITY LOCAL INFILE '/f.csv' REPLACE INTO TABLE db.t \
             CHARACTER SET utf8mb4 COLUMNS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' \
             ESCAPED BY '' LINES STARTING BY 'x' TERMINATED BY '\\r\\n' IGNORE 2 ROWS \
             (a, @b, c) SET d = @b + 1, e = NOW()",
        );
        assert!(l.local && l.replace && !l.ignore);
        assert_eq!(l.file, b"/f.csv");
        assert_eq!(l.table.database.as_deref(), Some("db"));
        assert_eq!(l.format.field_term, b",");
        assert_eq!(l.format.enclosed, Some(b'"'));
        assert!(l.format.optionally);
        assert_eq!(l.format.escaped, None);
        assert_eq!(l.format.line_start, b"x");
        assert_eq!(l.format.line_term, b"\r\n");
        assert_eq!(l.skip_lines, 2);
        assert_eq!(l.targets[1], LoadTarget::Var("b".into()));
        assert_eq!(l.set.len(), 2);
    }

    #[test]
    fn defaults_and_refusals() {
        let l = load("load data infile 'f' ignore into table t");
        assert!(!l.local && l.ignore);
        assert_eq!(l.format.field_term, b"\t");
        assert!(l.targets.is_empty());
        // Clauses out of MySQL's order, and LOAD XML / INDEX.
        assert!(parse("LOAD DATA LOCAL INFILE 'f' INTO TABLE t LINES TERMINATED BY 'x' FIELDS TERMINATED BY ','").is_err());
        assert_eq!(
            parse("LOAD XML LOCAL INFILE 'f' INTO TABLE t")
                .unwrap_err()
                .number(),
            1235
        );
        assert_eq!(
            parse("LOAD DATA LOCAL INFILE 'f' INTO TABLE t FIELDS ENCLOSED BY 'ab'")
                .unwrap_err()
                .number(),
            1083
        );
        assert!(parse("LOAD DATA LOCAL INFILE f INTO TABLE t").is_err());
    }
}
