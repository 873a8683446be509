//! Recursive-descent parser for the MySQL dialect, with precedence
//! climbing for expressions. Keywords are matched case-insensitively
//! against the source text of `Word` tokens, so words never allocate
//! unless they end up in the AST.

use super::ast::*;
use super::keywords::is_reserved;
use super::lexer::{syntax_error, Tok, Token};
use lockstep_types::error::Code;
use lockstep_types::{DataType, DateTime, Decimal, Error, Time, Value};
use std::str::FromStr;

type Result<T> = std::result::Result<T, Error>;

#[path = "check.rs"]
mod check;
#[path = "ddl_options.rs"]
mod ddl_options;
#[path = "foreign.rs"]
mod foreign;
#[path = "generated.rs"]
mod generated;
#[path = "histogram.rs"]
mod histogram;
#[path = "json_bool.rs"]
mod json_bool;
#[path = "json_value.rs"]
mod json_value;
#[path = "lateral.rs"]
mod lateral;
#[path = "load_data.rs"]
pub mod load_data;
#[path = "lock_tables.rs"]
mod lock_tables;
#[path = "roles.rs"]
mod roles;
#[path = "routine.rs"]
mod routine;
#[path = "values.rs"]
mod values;
#[path = "view.rs"]
mod view;
#[path = "window.rs"]
mod window;

/// Nesting limit for expressions, subqueries and join groups: deep enough
/// for any real query, shallow enough that the recursion cannot overflow a
/// 2 MiB thread stack.
const MAX_DEPTH: usize = 200;

/// Left-deep chains (a + b + c ..., a OR b OR ..., UNION, JOIN) are parsed
/// iteratively, but every link adds a level to the tree that the binder,
/// `Drop` and friends walk recursively. This per-statement budget bounds
/// the height of any tree the parser returns to about MAX_DEPTH + MAX_LINKS.
const MAX_LINKS: usize = 4000;

// Binding strength of operators, loosest first (MySQL's order). Predicates
// (IN, LIKE, BETWEEN, REGEXP) bind tighter than comparisons: a = b IN (..)
// is a = (b IN (..)).
const P_OR: u8 = 1;
const P_XOR: u8 = 2;
const P_AND: u8 = 3;
const P_CMP: u8 = 5;
const P_PRED: u8 = 6;
const P_BITOR: u8 = 7;
const P_BITAND: u8 = 8;
const P_SHIFT: u8 = 9;
const P_ADD: u8 = 10;
const P_MUL: u8 = 11;
const P_BITXOR: u8 = 12;

pub(crate) struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    /// Next placeholder number within the current statement.
    params: usize,
    depth: usize,
    /// Chain links used so far in the current statement (see MAX_LINKS).
    links: usize,
    /// MAX_EXECUTION_TIME(ms) from the statement's first hint comment.
    max_execution_time: Option<u64>,
    /// SQL_CALC_FOUND_ROWS was met; the statement's query takes it.
    calc_found_rows: bool,
    /// NOWAIT / SKIP LOCKED was met; the statement's query takes it.
    lock_wait: LockWaitClause,
    /// CHECK constraints of the column definition just parsed.
    column_checks: Vec<CheckSpec>,
    /// CHARACTER SET / COLLATE of the column definition just parsed.
    column_charset: CharsetSpec,
    /// false under NO_BACKSLASH_ESCAPES: LIKE then has no escape character
    /// unless ESCAPE names one.
    pub(crate) backslash_escapes: bool,
}

/// `left op right` as one query.
fn set_op(left: Query, op: SetOp, all: bool, right: Query) -> Query {
    empty_query(QueryBody::Union {
        left: Box::new(left),
        right: Box::new(right),
        all,
        op,
    })
}

/// A binary-string literal (x'..', 0x.., _binary '..').
fn binary_literal(b: Vec<u8>) -> Expr {
    Expr::Cast {
        expr: Box::new(Expr::Literal(Value::Bytes(b))),
        to: CastType::Binary,
    }
}

/// DATE '...', TIMESTAMP '...', TIME '...': text that is no value of
/// the type is 1525, as in MySQL. A DATE or TIMESTAMP literal becomes
/// its value (CAST of text stays text): that marks it for the sql_mode's
/// zero-date check when it is evaluated (`zero_date::check_literal`).
fn typed_literal(to: CastType, lit: Expr) -> Result<Expr> {
    let Expr::Literal(Value::Bytes(b)) = &lit else {
        return Ok(Expr::Cast {
            expr: boxed(lit),
            to,
        });
    };
    let text = std::str::from_utf8(b).unwrap_or("").trim();
    let word = match to {
        CastType::Date => "DATE",
        CastType::DateTime { .. } => "DATETIME",
        _ => "TIME",
    };
    let bad = || {
        let shown = String::from_utf8_lossy(b);
        Error::new(
            Code::WrongValue,
            format!("Incorrect {word} value: '{shown}'"),
        )
    };
    let value = match to {
        CastType::Date if !text.contains([' ', 'T', ':']) => {
            Value::Date(DateTime::parse_with_zero_parts(text).ok_or_else(bad)?.date)
        }
        CastType::DateTime { .. } => {
            Value::DateTime(DateTime::parse_with_zero_parts(text).ok_or_else(bad)?)
        }
        CastType::Time { .. } if Time::parse(text).is_some() => {
            return Ok(Expr::Cast {
                expr: boxed(lit),
                to,
            })
        }
        _ => return Err(bad()),
    };
    Ok(Expr::Cast {
        expr: boxed(Expr::Literal(value)),
        to,
    })
}

/// In arithmetic a hex literal is the number its bytes spell (0x41+1 is
/// 66), as in MySQL; elsewhere it stays a binary string.
fn hex_operands(op: BinaryOp, left: Expr, right: Expr) -> (Expr, Expr) {
    use BinaryOp::*;
    if !matches!(op, Plus | Minus | Multiply | Divide | Modulo | IntDivide) {
        return (left, right);
    }
    let number = |e: Expr| match e {
        Expr::Cast {
            expr,
            to: CastType::Binary,
        } => match *expr {
            Expr::Literal(Value::Bytes(b)) if b.len() <= 8 => {
                let n = b.iter().fold(0u64, |n, &x| (n << 8) | x as u64);
                Expr::Literal(Value::UInt(n))
            }
            inner => Expr::Cast {
                expr: boxed(inner),
                to: CastType::Binary,
            },
        },
        e => e,
    };
    (number(left), number(right))
}

/// CONVERT(x USING cs): to utf8mb4 text (checked, 1300) or to binary;
/// other character sets are not modelled and leave x as it is.
fn convert_using(expr: Expr, charset: &str) -> Expr {
    let to = match charset.to_ascii_lowercase().as_str() {
        "utf8" | "utf8mb3" | "utf8mb4" => CastType::Char,
        "binary" => CastType::Binary,
        _ => return expr,
    };
    Expr::Cast {
        expr: boxed(expr),
        to,
    }
}

/// Longest generated column name, in characters (MySQL's MAX_ALIAS_NAME).
const MAX_ITEM_NAME: usize = 256;

/// The first MAX_ITEM_NAME characters of `s`.
fn cut_name(s: &str) -> &str {
    match s.char_indices().nth(MAX_ITEM_NAME) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Upper-cases a short word into `buf` for keyword matching; words longer
/// than any keyword come back empty (and so match nothing).
fn upper<'b>(w: &str, buf: &'b mut [u8; 32]) -> &'b [u8] {
    let b = w.as_bytes();
    if b.len() > buf.len() {
        return &[];
    }
    for (d, s) in buf.iter_mut().zip(b) {
        *d = s.to_ascii_uppercase();
    }
    &buf[..b.len()]
}

/// Reserved words that are nevertheless function names when a `(` follows.
fn reserved_function(up: &[u8]) -> bool {
    matches!(
        up,
        b"IF"
            | b"LEFT"
            | b"RIGHT"
            | b"REPLACE"
            | b"INSERT"
            | b"MOD"
            | b"CHAR"
            | b"DATABASE"
            | b"SCHEMA"
            | b"REPEAT"
            | b"VALUES"
            | b"DEFAULT"
            | b"CURRENT_DATE"
            | b"CURRENT_TIME"
            | b"CURRENT_TIMESTAMP"
            | b"CURRENT_USER"
            | b"LOCALTIME"
            | b"LOCALTIMESTAMP"
            | b"UTC_DATE"
            | b"UTC_TIME"
            | b"UTC_TIMESTAMP"
            | b"TRUNCATE"
            | b"GROUPING"
    )
}

/// Functions MySQL lets you call without parentheses.
fn niladic_function(up: &[u8]) -> bool {
    matches!(
        up,
        b"CURRENT_DATE"
            | b"CURRENT_TIME"
            | b"CURRENT_TIMESTAMP"
            | b"CURRENT_USER"
            | b"LOCALTIME"
            | b"LOCALTIMESTAMP"
            | b"UTC_DATE"
            | b"UTC_TIME"
            | b"UTC_TIMESTAMP"
    )
}

fn is_interval_unit(up: &[u8]) -> bool {
    matches!(
        up,
        b"MICROSECOND"
            | b"SECOND"
            | b"MINUTE"
            | b"HOUR"
            | b"DAY"
            | b"WEEK"
            | b"MONTH"
            | b"QUARTER"
            | b"YEAR"
            | b"SECOND_MICROSECOND"
            | b"MINUTE_MICROSECOND"
            | b"MINUTE_SECOND"
            | b"HOUR_MICROSECOND"
            | b"HOUR_SECOND"
            | b"HOUR_MINUTE"
            | b"DAY_MICROSECOND"
            | b"DAY_SECOND"
            | b"DAY_MINUTE"
            | b"DAY_HOUR"
            | b"YEAR_MONTH"
    )
}

pub(crate) fn empty_select() -> Select {
    Select {
        distinct: false,
        projection: Vec::new(),
        from: Vec::new(),
        selection: None,
        group_by: Vec::new(),
        having: None,
        straight_join: false,
        rollup: false,
        windows: Vec::new(),
    }
}

fn boxed(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn str_lit(s: &str) -> Expr {
    Expr::Literal(Value::str(s))
}

/// MAX_EXECUTION_TIME(N) among the hints of a `/*+ ... */` comment (other
/// hints are not acted on yet and are ignored, as MySQL ignores unknown
/// ones).
fn max_execution_time_hint(text: &str) -> Option<u64> {
    let upper = text.to_ascii_uppercase();
    let at = upper.find("MAX_EXECUTION_TIME")?;
    let rest = upper[at + "MAX_EXECUTION_TIME".len()..].trim_start();
    let inner = rest.strip_prefix('(')?;
    let end = inner.find(')')?;
    inner[..end].trim().parse().ok()
}

pub(crate) fn empty_query(body: QueryBody) -> Query {
    Query {
        max_execution_time: None,
        calc_found_rows: false,
        lock_wait: LockWaitClause::Wait,
        with: Vec::new(),
        body,
        order_by: Vec::new(),
        limit: None,
        offset: None,
        lock: None,
    }
}

/// Unary minus applied to a literal folds into the literal (MySQL does the
/// same), so `DEFAULT -1` and `LIMIT`-style contexts see plain values.
fn negate(e: Expr) -> Expr {
    match e {
        Expr::Literal(Value::Int(i)) => match i.checked_neg() {
            Some(v) => Expr::Literal(Value::Int(v)),
            None => Expr::Literal(Value::Decimal(-Decimal::from(i))),
        },
        Expr::Literal(Value::UInt(u)) => {
            if u == 1u64 << 63 {
                Expr::Literal(Value::Int(i64::MIN))
            } else {
                Expr::Literal(Value::Decimal(-Decimal::from(u)))
            }
        }
        Expr::Literal(Value::Decimal(d)) => Expr::Literal(Value::Decimal(-d)),
        Expr::Literal(Value::Double(d)) => Expr::Literal(Value::Double(-d)),
        e => Expr::Unary {
            op: UnaryOp::Minus,
            expr: boxed(e),
        },
    }
}

#[path = "replication.rs"]
mod replication;

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str, toks: Vec<Token>) -> Self {
        Parser {
            src,
            toks,
            pos: 0,
            params: 0,
            depth: 0,
            links: 0,
            max_execution_time: None,
            calc_found_rows: false,
            lock_wait: LockWaitClause::Wait,
            column_checks: Vec::new(),
            column_charset: CharsetSpec::default(),
            backslash_escapes: true,
        }
    }

    // ---- token helpers ----

    fn tok_at(&self, n: usize) -> &Tok {
        self.toks.get(self.pos + n).map_or(&Tok::Eof, |t| &t.tok)
    }

    fn peek(&self) -> &Tok {
        self.tok_at(0)
    }

    fn advance(&mut self) {
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
    }

    /// Moves the current token's contents out and advances.
    fn take(&mut self) -> Tok {
        let t = match self.toks.get_mut(self.pos) {
            Some(t) => std::mem::replace(&mut t.tok, Tok::Taken),
            None => Tok::Eof,
        };
        self.advance();
        t
    }

    fn text_at(&self, n: usize) -> &'a str {
        match self.toks.get(self.pos + n) {
            Some(t) => self.src.get(t.start..t.end).unwrap_or(""),
            None => "",
        }
    }

    /// The unquoted word at offset `n`, if that token is one.
    fn word_at(&self, n: usize) -> Option<&'a str> {
        match self.tok_at(n) {
            Tok::Word => Some(self.text_at(n)),
            _ => None,
        }
    }

    fn kw_at(&self, n: usize, kw: &str) -> bool {
        self.word_at(n).is_some_and(|w| w.eq_ignore_ascii_case(kw))
    }

    fn is_kw(&self, kw: &str) -> bool {
        self.kw_at(0, kw)
    }

    fn is_any_kw(&self, kws: &[&str]) -> bool {
        kws.iter().any(|k| self.is_kw(k))
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect_kw(&mut self, kw: &str) -> Result<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn is(&self, t: &Tok) -> bool {
        self.peek() == t
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.is(t) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok) -> Result<()> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn at_end(&self) -> bool {
        matches!(self.peek(), Tok::Eof | Tok::Semi)
    }

    fn start_of(&self, n: usize) -> usize {
        self.toks
            .get(self.pos + n)
            .map_or(self.src.len(), |t| t.start)
    }

    /// 1064 pointing at the current token.
    pub(crate) fn error(&self) -> Error {
        syntax_error(self.src, self.start_of(0))
    }

    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error());
        }
        Ok(())
    }

    /// Accounts for one more link of a left-deep chain.
    fn link(&mut self) -> Result<()> {
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(self.error());
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Current word upper-cased into `buf` (empty when not a word).
    fn upper_word<'b>(&self, n: usize, buf: &'b mut [u8; 32]) -> &'b [u8] {
        match self.word_at(n) {
            Some(w) => upper(w, buf),
            None => &[],
        }
    }

    // ---- identifiers ----

    /// An identifier: a non-reserved word or a `quoted` one.
    fn ident(&mut self) -> Result<String> {
        match self.peek() {
            Tok::Word if !is_reserved(self.text_at(0)) => {
                let s = self.text_at(0).to_string();
                self.advance();
                Ok(s)
            }
            Tok::Ident(_) => match self.take() {
                Tok::Ident(s) => Ok(s),
                _ => Err(self.error()),
            },
            _ => Err(self.error()),
        }
    }

    /// Any word (reserved too) or quoted identifier: used after a `.` and
    /// where only a name can appear (charset names, option values).
    fn ident_any(&mut self) -> Result<String> {
        match self.peek() {
            Tok::Word => {
                let s = self.text_at(0).to_string();
                self.advance();
                Ok(s)
            }
            Tok::Ident(_) => match self.take() {
                Tok::Ident(s) => Ok(s),
                _ => Err(self.error()),
            },
            _ => Err(self.error()),
        }
    }

    /// A name that may also be given as a string ('utf8mb4').
    fn name_or_string(&mut self) -> Result<String> {
        if let Tok::Str(_) = self.peek() {
            if let Tok::Str(s) = self.take() {
                return Ok(String::from_utf8_lossy(&s).into_owned());
            }
        }
        self.ident_any()
    }

    fn is_ident_start(&self) -> bool {
        match self.peek() {
            Tok::Word => !is_reserved(self.text_at(0)),
            Tok::Ident(_) => true,
            _ => false,
        }
    }

    fn object_name(&mut self) -> Result<ObjectName> {
        let first = self.ident()?;
        if self.eat(&Tok::Dot) {
            let name = self.ident_any()?;
            Ok(ObjectName {
                database: Some(first),
                name,
            })
        } else {
            Ok(ObjectName {
                database: None,
                name: first,
            })
        }
    }

    /// `[t.]col` (or `db.t.col`) where only the column name matters.
    fn column_name(&mut self) -> Result<String> {
        let mut name = self.ident()?;
        let mut parts = 1;
        while parts < 3 && self.eat(&Tok::Dot) {
            name = self.ident_any()?;
            parts += 1;
        }
        Ok(name)
    }

    /// `col`, `t.col` or `db.t.col`, qualifiers kept (joined by dots).
    fn qualified_column(&mut self) -> Result<String> {
        let mut name = self.ident()?;
        let mut parts = 1;
        while parts < 3 && self.eat(&Tok::Dot) {
            name = format!("{name}.{}", self.ident_any()?);
            parts += 1;
        }
        Ok(name)
    }

    fn string_literal(&mut self) -> Result<String> {
        match self.take() {
            Tok::Str(s) => Ok(String::from_utf8_lossy(&s).into_owned()),
            _ => {
                self.pos = self.pos.saturating_sub(1);
                Err(self.error())
            }
        }
    }

    fn if_not_exists(&mut self) -> Result<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn if_exists(&mut self) -> Result<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Skips `[=]` before an option value.
    fn eat_eq(&mut self) {
        self.eat(&Tok::Eq);
    }

    fn unsupported(&self, what: &str) -> Error {
        Error::unsupported(what)
    }

    // ---- statements ----

    /// Parses all statements of the input.
    pub(crate) fn parse_all(&mut self) -> Result<Vec<Statement>> {
        let (out, err) = self.parse_until_error();
        if let Some(e) = err {
            return Err(e);
        }
        if out.is_empty() {
            return Err(Error::new(Code::EmptyQuery, "Query was empty"));
        }
        Ok(out)
    }

    /// The statements up to the first that fails to parse, and its error.
    pub(crate) fn parse_until_error(&mut self) -> (Vec<Statement>, Option<Error>) {
        let mut out = Vec::new();
        loop {
            while self.eat(&Tok::Semi) {}
            if self.is(&Tok::Eof) {
                return (out, None);
            }
            self.params = 0;
            self.depth = 0;
            self.links = 0;
            match self.parse_statement() {
                Ok(stmt) if self.at_end() => out.push(stmt),
                Ok(_) => return (out, Some(self.error())),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    /// The INTO list of a SELECT (after its select list or at its end),
    /// taken out of the tokens so that the query parses without it. Only
    /// user variables outside stored programs (routine.rs has the rest).
    fn take_into_list(&mut self) -> Result<Option<Vec<String>>> {
        let mut depth = 0usize;
        let mut at = None;
        for (i, t) in self.toks.iter().enumerate().skip(self.pos) {
            match &t.tok {
                Tok::LParen => depth += 1,
                Tok::RParen => depth = depth.saturating_sub(1),
                Tok::Semi | Tok::Eof => break,
                Tok::Word if depth == 0 => {
                    let w = self.src.get(t.start..t.end).unwrap_or("");
                    if w.eq_ignore_ascii_case("INTO") {
                        at = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(at) = at else { return Ok(None) };
        let start = self.pos;
        self.pos = at + 1;
        if self.is_kw("OUTFILE") || self.is_kw("DUMPFILE") {
            return Err(Error::secure_file_priv());
        }
        let mut vars = Vec::new();
        loop {
            match self.take() {
                Tok::UserVar(n) => vars.push(n.to_lowercase()),
                Tok::Word => {
                    let t = &self.toks[self.pos - 1];
                    let name = self.src.get(t.start..t.end).unwrap_or("").to_string();
                    return Err(Error::new(
                        Code::SpUndeclaredVar,
                        format!("Undeclared variable: {name}"),
                    ));
                }
                _ => return Err(self.error()),
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let end = self.pos;
        self.toks.drain(at..end);
        self.pos = start;
        Ok(Some(vars))
    }

    fn parse_statement(&mut self) -> Result<Statement> {
        // What a clause of the previous statement left for its query.
        self.calc_found_rows = false;
        self.lock_wait = LockWaitClause::Wait;
        if self.is(&Tok::LParen) {
            return Ok(Statement::Select(Box::new(self.parse_query()?)));
        }
        let mut buf = [0u8; 32];
        let first = self.upper_word(0, &mut buf);
        match first {
            b"SELECT" => {
                let vars = self.take_into_list()?;
                let mut q = self.parse_query()?;
                q.max_execution_time = self.max_execution_time.take();
                q.calc_found_rows = std::mem::take(&mut self.calc_found_rows);
                q.lock_wait = std::mem::take(&mut self.lock_wait);
                Ok(match vars {
                    Some(vars) => Statement::SelectInto {
                        query: Box::new(q),
                        vars,
                    },
                    None => Statement::Select(Box::new(q)),
                })
            }
            b"VALUES" => Ok(Statement::Select(Box::new(self.parse_query()?))),
            b"INSERT" => self.parse_insert(false),
            b"REPLACE" => self.parse_insert(true),
            b"UPDATE" => self.parse_update(),
            b"DELETE" => self.parse_delete(),
            b"CREATE" => self.parse_create(),
            b"DROP" => self.parse_drop(),
            b"ALTER" => self.parse_alter(),
            b"TRUNCATE" => {
                self.advance();
                self.eat_kw("TABLE");
                Ok(Statement::Truncate {
                    table: self.object_name()?,
                })
            }
            b"USE" => {
                self.advance();
                Ok(Statement::Use {
                    database: self.ident_any()?,
                })
            }
            b"BEGIN" => {
                self.advance();
                self.eat_kw("WORK");
                Ok(Statement::Begin {
                    read_only: None,
                    consistent_snapshot: false,
                })
            }
            b"START" | b"STOP" if self.kw_at(1, "REPLICA") || self.kw_at(1, "SLAVE") => {
                self.parse_start_stop_replica(first == b"START")
            }
            b"RESET" if self.kw_at(1, "REPLICA") || self.kw_at(1, "SLAVE") => {
                self.parse_reset_replica()
            }
            b"CHANGE" => self.parse_change_source(),
            b"START" => self.parse_start(),
            b"COMMIT" => {
                self.advance();
                self.eat_kw("WORK");
                self.parse_completion("COMMIT")?;
                Ok(Statement::Commit)
            }
            b"ROLLBACK" => {
                self.advance();
                self.eat_kw("WORK");
                if self.eat_kw("TO") {
                    self.eat_kw("SAVEPOINT");
                    return Ok(Statement::RollbackToSavepoint(self.ident_any()?));
                }
                self.parse_completion("ROLLBACK")?;
                Ok(Statement::Rollback)
            }
            b"SET" => self.parse_set(),
            b"SHOW" => self.parse_show(),
            b"DESCRIBE" | b"DESC" | b"EXPLAIN" => self.parse_explain(),
            b"KILL" => {
                self.advance();
                let query_only = if self.eat_kw("QUERY") {
                    true
                } else {
                    self.eat_kw("CONNECTION");
                    false
                };
                Ok(Statement::Kill {
                    connection_id: self.parse_expr()?,
                    query_only,
                })
            }
            b"TABLE" => {
                // TABLE t is SELECT * FROM t.
                self.advance();
                let name = self.object_name()?;
                let select = Select {
                    distinct: false,
                    projection: vec![SelectItem::Wildcard],
                    from: vec![TableRef::Table {
                        name,
                        alias: None,
                        hints: Vec::new(),
                    }],
                    selection: None,
                    group_by: Vec::new(),
                    having: None,
                    straight_join: false,
                    rollup: false,
                    windows: Vec::new(),
                };
                let mut q = empty_query(QueryBody::Select(Box::new(select)));
                self.parse_query_tail(&mut q)?;
                Ok(Statement::Select(Box::new(q)))
            }
            b"DO" => {
                self.advance();
                let projection = self
                    .parse_expr_list()?
                    .into_iter()
                    .map(|expr| SelectItem::Expr {
                        expr,
                        alias: None,
                        name: None,
                    })
                    .collect();
                let select = Select {
                    distinct: false,
                    projection,
                    from: Vec::new(),
                    selection: None,
                    group_by: Vec::new(),
                    having: None,
                    straight_join: false,
                    rollup: false,
                    windows: Vec::new(),
                };
                Ok(Statement::Do(Box::new(empty_query(QueryBody::Select(
                    Box::new(select),
                )))))
            }
            b"ANALYZE" => self.parse_maintenance(Maintenance::Analyze),
            b"OPTIMIZE" => self.parse_maintenance(Maintenance::Optimize),
            b"REPAIR" => self.parse_maintenance(Maintenance::Repair),
            b"CHECK" => self.parse_maintenance(Maintenance::Check),
            b"CHECKSUM" => self.parse_checksum(),
            b"LOCK" | b"UNLOCK" | b"FLUSH" => self.parse_lock_family(),
            b"GRANT" => self.parse_grant(),
            b"REVOKE" => self.parse_revoke(),
            b"SAVEPOINT" => {
                self.advance();
                Ok(Statement::Savepoint(self.ident_any()?))
            }
            b"WITH" => self.parse_with(),
            b"RELEASE" => {
                self.advance();
                self.expect_kw("SAVEPOINT")?;
                Ok(Statement::ReleaseSavepoint(self.ident_any()?))
            }
            b"RENAME" if self.kw_at(1, "TABLE") => self.parse_rename_table(),
            b"CALL" => self.parse_call(),
            b"LOAD" if self.kw_at(1, "DATA") => self.parse_load(),
            b"XA" | b"RENAME" | b"PREPARE" | b"EXECUTE" | b"DEALLOCATE" | b"LOAD" | b"HANDLER"
            | b"RESET" | b"PURGE" | b"INSTALL" | b"UNINSTALL" | b"IMPORT" | b"CACHE"
            | b"SIGNAL" | b"RESIGNAL" | b"GET" | b"CLONE" | b"HELP" | b"SHUTDOWN" | b"RESTART" => {
                let w = String::from_utf8_lossy(first).into_owned();
                Err(self.unsupported(&w))
            }
            _ => Err(self.error()),
        }
    }

    /// `[AND [NO] CHAIN] [[NO] RELEASE]` after COMMIT/ROLLBACK.
    fn parse_completion(&mut self, what: &str) -> Result<()> {
        if self.eat_kw("AND") {
            let no = self.eat_kw("NO");
            self.expect_kw("CHAIN")?;
            if !no {
                return Err(self.unsupported(&format!("{what} AND CHAIN")));
            }
        }
        let no = self.eat_kw("NO");
        if self.eat_kw("RELEASE") && !no {
            return Err(self.unsupported(&format!("{what} RELEASE")));
        }
        Ok(())
    }

    /// WITH name [(columns)] AS (query), ... SELECT ...: common table
    /// expressions, which the binder treats as derived tables by name.
    fn parse_with(&mut self) -> Result<Statement> {
        let mut q = self.parse_with_query()?;
        q.max_execution_time = self.max_execution_time.take();
        q.calc_found_rows = std::mem::take(&mut self.calc_found_rows);
        q.lock_wait = std::mem::take(&mut self.lock_wait);
        Ok(Statement::Select(Box::new(q)))
    }

    /// WITH [RECURSIVE] ctes query, as a query of its own.
    fn parse_with_query(&mut self) -> Result<Query> {
        self.advance();
        let recursive = self.eat_kw("RECURSIVE");
        let mut with = Vec::new();
        loop {
            let name = self.ident_any()?;
            let mut columns = Vec::new();
            if self.eat(&Tok::LParen) {
                loop {
                    columns.push(self.ident_any()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                self.expect(&Tok::RParen)?;
            }
            self.expect_kw("AS")?;
            self.expect(&Tok::LParen)?;
            let query = self.parse_query()?;
            self.expect(&Tok::RParen)?;
            with.push(Cte {
                name,
                columns,
                query,
                recursive,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        if !self.is_kw("SELECT") && !self.is(&Tok::LParen) {
            return Err(self.error());
        }
        let mut q = self.parse_query()?;
        if !q.with.is_empty() {
            return Err(self.unsupported("WITH on a query with its own WITH"));
        }
        q.with = with;
        Ok(q)
    }

    /// Keeps the statement text and skips to its end.
    /// CHECKSUM TABLE t [, u ...] [QUICK | EXTENDED]
    fn parse_checksum(&mut self) -> Result<Statement> {
        self.advance();
        self.expect_kw("TABLE")?;
        let mut tables = vec![self.object_name()?];
        while self.eat(&Tok::Comma) {
            tables.push(self.object_name()?);
        }
        let quick = self.eat_kw("QUICK");
        if !quick {
            self.eat_kw("EXTENDED");
        }
        let op = Maintenance::Checksum { quick };
        Ok(Statement::TableMaintenance { op, tables })
    }

    fn parse_maintenance(&mut self, op: Maintenance) -> Result<Statement> {
        self.advance();
        if !self.eat_kw("NO_WRITE_TO_BINLOG") {
            self.eat_kw("LOCAL");
        }
        self.expect_kw("TABLE")?;
        let mut tables = vec![self.object_name()?];
        while self.eat(&Tok::Comma) {
            tables.push(self.object_name()?);
        }
        if op == Maintenance::Analyze && (self.is_kw("UPDATE") || self.is_kw("DROP")) {
            return self.parse_histogram(tables);
        }
        if op == Maintenance::Check {
            // Each option runs the whole check: it reads only memory.
            let options = [
                "FOR", "UPGRADE", "QUICK", "FAST", "MEDIUM", "EXTENDED", "CHANGED",
            ];
            while self.is_any_kw(&options) {
                self.advance();
            }
        }
        if op == Maintenance::Repair && !self.at_end() {
            return Err(self.unsupported("REPAIR TABLE options"));
        }
        Ok(Statement::TableMaintenance { op, tables })
    }

    fn parse_ignored(&mut self) -> Statement {
        let start = self.start_of(0);
        let mut end = start;
        while !self.at_end() {
            end = self.toks.get(self.pos).map_or(end, |t| t.end);
            self.advance();
        }
        Statement::Ignored(self.src.get(start..end).unwrap_or("").to_string())
    }

    fn parse_start(&mut self) -> Result<Statement> {
        self.advance();
        self.expect_kw("TRANSACTION")?;
        let mut read_only = None;
        let mut consistent_snapshot = false;
        if !self.at_end() {
            loop {
                if self.eat_kw("READ") {
                    if self.eat_kw("ONLY") {
                        read_only = Some(true);
                    } else {
                        self.expect_kw("WRITE")?;
                        read_only = Some(false);
                    }
                } else if self.eat_kw("WITH") {
                    self.expect_kw("CONSISTENT")?;
                    self.expect_kw("SNAPSHOT")?;
                    consistent_snapshot = true;
                } else {
                    return Err(self.error());
                }
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        Ok(Statement::Begin {
            read_only,
            consistent_snapshot,
        })
    }

    // ---- SELECT ----

    pub(crate) fn parse_query(&mut self) -> Result<Query> {
        self.enter()?;
        // INTERSECT binds tighter than UNION and EXCEPT (MySQL 8.0.31).
        let mut q = self.parse_intersection()?;
        loop {
            let op = if self.eat_kw("UNION") {
                SetOp::Union
            } else if self.eat_kw("EXCEPT") {
                SetOp::Except
            } else {
                break;
            };
            let all = self.set_quantifier()?;
            let right = self.parse_intersection()?;
            q = set_op(q, op, all, right);
        }
        self.parse_query_tail(&mut q)?;
        self.leave();
        Ok(q)
    }

    /// Query terms joined by INTERSECT.
    fn parse_intersection(&mut self) -> Result<Query> {
        let mut q = self.parse_query_term()?;
        while self.eat_kw("INTERSECT") {
            let all = self.set_quantifier()?;
            let right = self.parse_query_term()?;
            q = set_op(q, SetOp::Intersect, all, right);
        }
        Ok(q)
    }

    /// `[ALL|DISTINCT]` after a set operator: true for ALL.
    fn set_quantifier(&mut self) -> Result<bool> {
        self.link()?;
        if self.eat_kw("ALL") {
            return Ok(true);
        }
        self.eat_kw("DISTINCT");
        Ok(false)
    }

    /// A SELECT core (no ORDER BY/LIMIT) or a parenthesized full query.
    fn parse_query_term(&mut self) -> Result<Query> {
        if self.eat(&Tok::LParen) {
            let q = self.parse_query()?;
            self.expect(&Tok::RParen)?;
            return Ok(q);
        }
        if self.is_kw("WITH") {
            return self.parse_with_query();
        }
        if self.is_kw("VALUES") {
            return self.parse_values_rows();
        }
        Ok(empty_query(QueryBody::Select(Box::new(
            self.parse_select()?,
        ))))
    }

    /// ORDER BY / LIMIT / locking clause applying to the whole query.
    fn parse_query_tail(&mut self, q: &mut Query) -> Result<()> {
        let order_by = self.parse_order_by()?;
        let (limit, offset) = self.parse_limit(true)?;
        let lock = self.parse_lock()?;
        if order_by.is_empty() && limit.is_none() && lock.is_none() {
            return Ok(());
        }
        let has_own =
            !q.order_by.is_empty() || q.limit.is_some() || q.offset.is_some() || q.lock.is_some();
        if has_own {
            // (SELECT .. LIMIT 5) ORDER BY x LIMIT 2: the inner query keeps
            // its clauses as a derived table.
            let inner =
                std::mem::replace(q, empty_query(QueryBody::Select(Box::new(empty_select()))));
            *q = empty_query(QueryBody::Select(Box::new(Select {
                distinct: false,
                projection: vec![SelectItem::Wildcard],
                from: vec![TableRef::Derived {
                    query: Box::new(inner),
                    alias: "derived".to_string(),
                }],
                selection: None,
                group_by: Vec::new(),
                having: None,
                straight_join: false,
                rollup: false,
                windows: Vec::new(),
            })));
        }
        q.order_by = order_by;
        q.limit = limit;
        q.offset = offset;
        q.lock = lock;
        Ok(())
    }

    fn parse_order_by(&mut self) -> Result<Vec<OrderItem>> {
        let mut items = Vec::new();
        if self.is_kw("ORDER") && self.kw_at(1, "BY") {
            self.pos += 2;
            loop {
                let expr = self.parse_expr()?;
                let desc = if self.eat_kw("DESC") {
                    true
                } else {
                    self.eat_kw("ASC");
                    false
                };
                items.push(OrderItem { expr, desc });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        Ok(items)
    }

    /// LIMIT n | LIMIT n OFFSET m | LIMIT m, n (offset only if allowed).
    fn parse_limit(&mut self, allow_offset: bool) -> Result<(Option<Expr>, Option<Expr>)> {
        if !self.eat_kw("LIMIT") {
            return Ok((None, None));
        }
        let first = self.parse_limit_value()?;
        if allow_offset {
            if self.eat(&Tok::Comma) {
                let count = self.parse_limit_value()?;
                return Ok((Some(count), Some(first)));
            }
            if self.eat_kw("OFFSET") {
                let off = self.parse_limit_value()?;
                return Ok((Some(first), Some(off)));
            }
        }
        Ok((Some(first), None))
    }

    /// MySQL only allows integer literals, placeholders and variables here.
    fn parse_limit_value(&mut self) -> Result<Expr> {
        match self.peek() {
            Tok::Int | Tok::Param | Tok::UserVar(_) => self.parse_primary(),
            Tok::Word if !is_reserved(self.text_at(0)) => self.parse_primary(),
            _ => Err(self.error()),
        }
    }

    fn parse_lock(&mut self) -> Result<Option<LockClause>> {
        let lock = if self.is_kw("FOR") && self.kw_at(1, "UPDATE") {
            self.pos += 2;
            LockClause::Update
        } else if self.is_kw("FOR") && self.kw_at(1, "SHARE") {
            self.pos += 2;
            LockClause::Share
        } else if self.is_kw("LOCK") {
            self.advance();
            self.expect_kw("IN")?;
            self.expect_kw("SHARE")?;
            self.expect_kw("MODE")?;
            return Ok(Some(LockClause::Share));
        } else {
            return Ok(None);
        };
        if self.eat_kw("OF") {
            loop {
                self.ident()?;
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        if self.eat_kw("NOWAIT") {
            self.lock_wait = LockWaitClause::NoWait;
        } else if self.eat_kw("SKIP") {
            self.expect_kw("LOCKED")?;
            self.lock_wait = LockWaitClause::SkipLocked;
        }
        Ok(Some(lock))
    }

    fn parse_select(&mut self) -> Result<Select> {
        self.expect_kw("SELECT")?;
        if let Tok::Hint(text) = self.peek() {
            let hinted = max_execution_time_hint(text);
            self.advance();
            self.max_execution_time = self.max_execution_time.or(hinted);
        }
        let mut distinct = false;
        let mut straight_join = false;
        loop {
            let mut buf = [0u8; 32];
            match self.upper_word(0, &mut buf) {
                b"DISTINCT" | b"DISTINCTROW" => distinct = true,
                b"STRAIGHT_JOIN" => straight_join = true,
                b"ALL" | b"HIGH_PRIORITY" | b"SQL_SMALL_RESULT" | b"SQL_BIG_RESULT"
                | b"SQL_BUFFER_RESULT" | b"SQL_NO_CACHE" | b"SQL_CACHE" => {}
                b"SQL_CALC_FOUND_ROWS" => self.calc_found_rows = true,
                _ => break,
            }
            self.advance();
        }
        let mut projection = Vec::new();
        loop {
            projection.push(self.parse_select_item()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        if self.is_kw("INTO") {
            return Err(self.unsupported("SELECT ... INTO"));
        }
        let mut from = Vec::new();
        if self.eat_kw("FROM") && !self.eat_kw("DUAL") {
            loop {
                from.push(self.parse_table_ref()?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        let selection = if self.eat_kw("WHERE") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let mut group_by = Vec::new();
        let mut rollup = false;
        if self.is_kw("GROUP") && self.kw_at(1, "BY") {
            self.pos += 2;
            loop {
                group_by.push(self.parse_expr()?);
                // ASC/DESC after GROUP BY items: old syntax, no effect.
                if !self.eat_kw("ASC") {
                    self.eat_kw("DESC");
                }
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            if self.is_kw("WITH") && self.kw_at(1, "ROLLUP") {
                self.pos += 2;
                rollup = true;
            }
        }
        let having = if self.eat_kw("HAVING") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let windows = self.window_clause()?;
        Ok(Select {
            distinct,
            projection,
            from,
            selection,
            group_by,
            having,
            straight_join,
            rollup,
            windows,
        })
    }

    /// `(n)` of CAST(.. AS DATETIME(n) / TIME(n)): 0..6.
    fn cast_fsp(&mut self) -> Result<u8> {
        let fsp = self.parse_opt_len()?.unwrap_or(0);
        if fsp > 6 {
            return Err(Error::new(
                Code::TooBigPrecision,
                format!("Too-big precision {fsp} specified for 'CAST'. Maximum is 6."),
            ));
        }
        Ok(fsp as u8)
    }

    /// Fractional digits of the string literal at offset `n` (a typed
    /// literal's precision), at most 6.
    fn literal_fsp(&self, n: usize) -> u8 {
        match self.tok_at(n) {
            Tok::Str(b) => match b.iter().position(|&c| c == b'.') {
                Some(dot) => b[dot + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count()
                    .min(6) as u8,
                None => 0,
            },
            _ => 0,
        }
    }

    fn parse_select_item(&mut self) -> Result<SelectItem> {
        if self.eat(&Tok::Star) {
            return Ok(SelectItem::Wildcard);
        }
        // t.* and db.t.*
        if matches!(self.peek(), Tok::Word | Tok::Ident(_)) && self.tok_at(1) == &Tok::Dot {
            if self.tok_at(2) == &Tok::Star {
                let t = self.ident_any()?;
                self.pos += 2;
                return Ok(SelectItem::QualifiedWildcard(t));
            }
            if matches!(self.tok_at(2), Tok::Word | Tok::Ident(_))
                && self.tok_at(3) == &Tok::Dot
                && self.tok_at(4) == &Tok::Star
            {
                self.pos += 2;
                let t = self.ident_any()?;
                self.pos += 2;
                return Ok(SelectItem::QualifiedWildcard(t));
            }
        }
        let first = self.pos;
        let hex = matches!(self.peek(), Tok::Hex(_)) || matches!(self.tok_at(1), Tok::Hex(_));
        let expr = self.parse_expr()?;
        let name = self.item_name(&expr, first, hex);
        let alias = self.parse_alias(true)?;
        Ok(SelectItem::Expr { expr, alias, name })
    }

    /// MySQL's name for an unaliased select expression: the text the client
    /// wrote from the item's first token to its last, except that a column
    /// keeps its name, a string literal is named by its value and NULL is
    /// `NULL`. Cut to 256 characters, MySQL's alias limit.
    fn item_name(&self, expr: &Expr, first: usize, hex: bool) -> Option<String> {
        match expr {
            Expr::Column { .. } => return None,
            Expr::Literal(Value::Null) => return Some("NULL".into()),
            Expr::Literal(Value::Bytes(b)) if !hex => {
                let head = &b[..b.len().min(MAX_ITEM_NAME * 4)];
                return Some(cut_name(&String::from_utf8_lossy(head)).to_string());
            }
            _ => {}
        }
        let last = self.toks.get(self.pos.checked_sub(1)?)?;
        let start = self.toks.get(first)?.start;
        let text = cut_name(self.src.get(start..last.end.max(start))?);
        // TRUE and FALSE are named in capitals however they were spelled.
        if matches!(expr, Expr::Literal(_)) && last.tok == Tok::Word {
            return Some(text.to_ascii_uppercase());
        }
        Some(text.to_string())
    }

    /// `[AS] alias`; string aliases allowed for select items.
    fn parse_alias(&mut self, allow_string: bool) -> Result<Option<String>> {
        let explicit = self.eat_kw("AS");
        match self.peek() {
            Tok::Str(_) if allow_string => Ok(Some(self.string_literal()?)),
            Tok::Ident(_) => Ok(Some(self.ident()?)),
            Tok::Word if !is_reserved(self.text_at(0)) => Ok(Some(self.ident()?)),
            _ if explicit => Err(self.error()),
            _ => Ok(None),
        }
    }

    fn parse_table_ref(&mut self) -> Result<TableRef> {
        let mut left = self.parse_table_factor()?;
        let mut natural = false;
        loop {
            let mut buf = [0u8; 32];
            let kind = match self.upper_word(0, &mut buf) {
                b"JOIN" | b"STRAIGHT_JOIN" => {
                    self.advance();
                    JoinKind::Inner
                }
                b"INNER" => {
                    self.advance();
                    self.expect_kw("JOIN")?;
                    JoinKind::Inner
                }
                b"CROSS" => {
                    self.advance();
                    self.expect_kw("JOIN")?;
                    JoinKind::Cross
                }
                b"LEFT" | b"RIGHT" => {
                    let k = if self.is_kw("LEFT") {
                        JoinKind::Left
                    } else {
                        JoinKind::Right
                    };
                    self.advance();
                    self.eat_kw("OUTER");
                    self.expect_kw("JOIN")?;
                    k
                }
                b"NATURAL" => {
                    self.advance();
                    let k = if self.eat_kw("LEFT") {
                        JoinKind::Left
                    } else if self.eat_kw("RIGHT") {
                        JoinKind::Right
                    } else {
                        self.eat_kw("INNER");
                        JoinKind::Inner
                    };
                    if k != JoinKind::Inner {
                        self.eat_kw("OUTER");
                    }
                    self.expect_kw("JOIN")?;
                    natural = true;
                    k
                }
                _ => break,
            };
            self.link()?;
            let right = self.parse_table_factor()?;
            let on = if std::mem::take(&mut natural) {
                JoinCondition::Natural
            } else if self.eat_kw("ON") {
                JoinCondition::On(self.parse_expr()?)
            } else if self.eat_kw("USING") {
                JoinCondition::Using(self.parse_paren_names()?)
            } else if matches!(kind, JoinKind::Left | JoinKind::Right) {
                return Err(self.error());
            } else {
                JoinCondition::None
            };
            // In MySQL CROSS JOIN with a condition is an inner join.
            let kind = if kind == JoinKind::Cross && on != JoinCondition::None {
                JoinKind::Inner
            } else {
                kind
            };
            left = TableRef::Join {
                left: Box::new(left),
                right: Box::new(right),
                kind,
                on,
            };
        }
        Ok(left)
    }

    /// Whether the `(` at offset 0 opens a query (possibly nested parens).
    fn paren_starts_query(&self) -> bool {
        let mut n = 0;
        while self.tok_at(n) == &Tok::LParen {
            n += 1;
        }
        n > 0 && (self.kw_at(n, "SELECT") || self.kw_at(n, "WITH") || self.kw_at(n, "VALUES"))
    }

    fn parse_table_factor(&mut self) -> Result<TableRef> {
        if self.is_kw("JSON_TABLE") && matches!(self.tok_at(1), Tok::LParen) {
            return self.json_table_factor();
        }
        if self.is_kw("LATERAL") && matches!(self.tok_at(1), Tok::LParen) {
            return self.lateral_factor();
        }
        if self.is(&Tok::LParen) {
            self.enter()?;
            let r = if self.paren_starts_query() {
                self.advance();
                let mut q = self.parse_query()?;
                self.expect(&Tok::RParen)?;
                let alias = match self.parse_alias(false)? {
                    Some(a) => a,
                    None => {
                        return Err(Error::new(
                            Code::DerivedMustHaveAlias,
                            "Every derived table must have its own alias",
                        ))
                    }
                };
                if self.is(&Tok::LParen) {
                    let names = self.parse_paren_names()?;
                    values::rename_columns(&mut q, names)?;
                }
                TableRef::Derived {
                    query: Box::new(q),
                    alias,
                }
            } else {
                self.advance();
                let mut t = self.parse_table_ref()?;
                while self.eat(&Tok::Comma) {
                    self.link()?;
                    let right = self.parse_table_ref()?;
                    t = TableRef::Join {
                        left: Box::new(t),
                        right: Box::new(right),
                        kind: JoinKind::Cross,
                        on: JoinCondition::None,
                    };
                }
                self.expect(&Tok::RParen)?;
                t
            };
            self.leave();
            return Ok(r);
        }
        let name = self.object_name()?;
        if self.is_kw("PARTITION") {
            return Err(self.unsupported("PARTITION"));
        }
        let alias = self.parse_alias(false)?;
        let hints = self.index_hints()?;
        Ok(TableRef::Table { name, alias, hints })
    }

    /// USE/FORCE/IGNORE {INDEX|KEY} [FOR {JOIN|ORDER BY|GROUP BY}] (names).
    fn index_hints(&mut self) -> Result<Vec<IndexHint>> {
        let mut hints = Vec::new();
        while self.is_any_kw(&["USE", "FORCE", "IGNORE"])
            && (self.kw_at(1, "INDEX") || self.kw_at(1, "KEY"))
        {
            let kind = match self.is_kw("USE") {
                true => IndexHintKind::Use,
                false if self.is_kw("FORCE") => IndexHintKind::Force,
                false => IndexHintKind::Ignore,
            };
            self.pos += 2;
            let mut scope = None;
            if self.eat_kw("FOR") {
                scope = Some(if self.eat_kw("JOIN") {
                    IndexHintScope::Join
                } else if self.eat_kw("ORDER") {
                    self.expect_kw("BY")?;
                    IndexHintScope::OrderBy
                } else if self.eat_kw("GROUP") {
                    self.expect_kw("BY")?;
                    IndexHintScope::GroupBy
                } else {
                    return Err(self.error());
                });
            }
            self.expect(&Tok::LParen)?;
            // Only USE may name no index (none usable); MySQL's syntax.
            if self.is(&Tok::RParen) && kind != IndexHintKind::Use {
                return Err(self.error());
            }
            let mut names = Vec::new();
            if !self.eat(&Tok::RParen) {
                loop {
                    names.push(self.ident_any()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                self.expect(&Tok::RParen)?;
            }
            hints.push(IndexHint { kind, scope, names });
        }
        Ok(hints)
    }

    /// ( name, name, ... )
    fn parse_paren_names(&mut self) -> Result<Vec<String>> {
        self.expect(&Tok::LParen)?;
        let mut names = Vec::new();
        loop {
            names.push(self.ident()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        Ok(names)
    }

    // ---- expressions ----

    pub(crate) fn parse_expr(&mut self) -> Result<Expr> {
        self.parse_binary(P_OR)
    }

    fn infix_op(&self) -> Option<(BinaryOp, u8)> {
        Some(match self.peek() {
            Tok::OrOr => (BinaryOp::Or, P_OR),
            Tok::AndAnd => (BinaryOp::And, P_AND),
            Tok::Eq => (BinaryOp::Eq, P_CMP),
            Tok::NullSafeEq => (BinaryOp::NullSafeEq, P_CMP),
            Tok::Ne => (BinaryOp::NotEq, P_CMP),
            Tok::Lt => (BinaryOp::Lt, P_CMP),
            Tok::Le => (BinaryOp::LtEq, P_CMP),
            Tok::Gt => (BinaryOp::Gt, P_CMP),
            Tok::Ge => (BinaryOp::GtEq, P_CMP),
            Tok::Pipe => (BinaryOp::BitOr, P_BITOR),
            Tok::Amp => (BinaryOp::BitAnd, P_BITAND),
            Tok::Shl => (BinaryOp::ShiftLeft, P_SHIFT),
            Tok::Shr => (BinaryOp::ShiftRight, P_SHIFT),
            Tok::Plus => (BinaryOp::Plus, P_ADD),
            Tok::Minus => (BinaryOp::Minus, P_ADD),
            Tok::Star => (BinaryOp::Multiply, P_MUL),
            Tok::Slash => (BinaryOp::Divide, P_MUL),
            Tok::Percent => (BinaryOp::Modulo, P_MUL),
            Tok::Caret => (BinaryOp::BitXor, P_BITXOR),
            Tok::Word => {
                let w = self.text_at(0);
                if w.eq_ignore_ascii_case("AND") {
                    (BinaryOp::And, P_AND)
                } else if w.eq_ignore_ascii_case("OR") {
                    (BinaryOp::Or, P_OR)
                } else if w.eq_ignore_ascii_case("XOR") {
                    (BinaryOp::Xor, P_XOR)
                } else if w.eq_ignore_ascii_case("DIV") {
                    (BinaryOp::IntDivide, P_MUL)
                } else if w.eq_ignore_ascii_case("MOD") {
                    (BinaryOp::Modulo, P_MUL)
                } else {
                    return None;
                }
            }
            _ => return None,
        })
    }

    /// Precedence climbing: parses an expression whose operators all bind
    /// at least as tightly as `min`.
    fn parse_binary(&mut self, min: u8) -> Result<Expr> {
        self.enter()?;
        let start = self.pos;
        let mut left = self.parse_unary()?;
        loop {
            if min <= P_CMP && self.is_kw("IS") {
                self.link()?;
                left = self.parse_is(left)?;
                continue;
            }
            if min <= P_PRED && matches!(self.peek(), Tok::Word) {
                let negated = self.is_kw("NOT");
                let k = usize::from(negated);
                let mut buf = [0u8; 32];
                let w = self.upper_word(k, &mut buf);
                match w {
                    b"IN" | b"LIKE" | b"BETWEEN" | b"REGEXP" | b"RLIKE" => {
                        let which = w[0];
                        self.link()?;
                        self.pos += k + 1;
                        left = match which {
                            b'I' => self.parse_in(left, negated)?,
                            b'L' => self.parse_like(left, negated)?,
                            b'B' => self.parse_between(left, negated)?,
                            _ => {
                                let pattern = self.parse_binary(P_BITOR)?;
                                let e = Expr::Function {
                                    name: "REGEXP_LIKE".to_string(),
                                    args: vec![left, pattern],
                                    distinct: false,
                                    star: false,
                                    database: None,
                                    spelled: None,
                                };
                                if negated {
                                    Expr::Unary {
                                        op: UnaryOp::Not,
                                        expr: boxed(e),
                                    }
                                } else {
                                    e
                                }
                            }
                        };
                        continue;
                    }
                    b"MEMBER" if !negated && self.kw_at(1, "OF") => {
                        self.link()?;
                        left = self.parse_member_of(left)?;
                        continue;
                    }
                    b"SOUNDS" | b"MEMBER" if !negated => {
                        return Err(self.unsupported(self.text_at(0)));
                    }
                    _ => {}
                }
            }
            if matches!(self.peek(), Tok::Arrow | Tok::Arrow2) {
                left = self.parse_json_arrow(left)?;
                continue;
            }
            let Some((op, prec)) = self.infix_op() else {
                break;
            };
            if prec < min {
                break;
            }
            self.link()?;
            let op_at = self.pos;
            self.advance();
            if prec == P_CMP && self.is_any_kw(&["ANY", "ALL", "SOME"]) {
                return Err(self.unsupported("ANY/ALL/SOME subquery comparison"));
            }
            let right_at = self.pos;
            let right = self.parse_binary(prec + 1)?;
            let (mut left_arg, mut right) = hex_operands(op, left, right);
            if prec == P_CMP {
                // A JSON side compares TRUE/FALSE as JSON booleans.
                left_arg = self.bool_keyword(start, op_at, left_arg);
                right = self.bool_keyword(right_at, self.pos, right);
            }
            left = Expr::Binary {
                op,
                left: boxed(left_arg),
                right: boxed(right),
            };
        }
        self.leave();
        Ok(left)
    }

    /// `x MEMBER OF (json)`.
    fn parse_member_of(&mut self, left: Expr) -> Result<Expr> {
        self.pos += 2;
        self.expect(&Tok::LParen)?;
        let doc = self.parse_expr()?;
        self.expect(&Tok::RParen)?;
        Ok(json_call("JSON_MEMBER_OF", vec![left, doc]))
    }

    /// `column->'path'` is JSON_EXTRACT(column, 'path'); `->>` unquotes.
    fn parse_json_arrow(&mut self, left: Expr) -> Result<Expr> {
        let unquote = self.take() == Tok::Arrow2;
        if !matches!(left, Expr::Column { .. }) {
            self.pos -= 1;
            return Err(self.error());
        }
        let path = self.string_literal()?;
        let e = json_call("JSON_EXTRACT", vec![left, Expr::Literal(Value::str(&path))]);
        Ok(if unquote {
            json_call("JSON_UNQUOTE", vec![e])
        } else {
            e
        })
    }

    fn parse_is(&mut self, left: Expr) -> Result<Expr> {
        self.advance(); // IS
        let negated = self.eat_kw("NOT");
        if self.eat_kw("NULL") || self.eat_kw("UNKNOWN") {
            Ok(Expr::IsNull {
                expr: boxed(left),
                negated,
            })
        } else if self.eat_kw("TRUE") {
            Ok(Expr::IsBool {
                expr: boxed(left),
                value: true,
                negated,
            })
        } else if self.eat_kw("FALSE") {
            Ok(Expr::IsBool {
                expr: boxed(left),
                value: false,
                negated,
            })
        } else {
            Err(self.error())
        }
    }

    fn parse_in(&mut self, left: Expr, negated: bool) -> Result<Expr> {
        if !self.is(&Tok::LParen) {
            return Err(self.error());
        }
        if self.paren_starts_query() {
            self.advance();
            let q = self.parse_query()?;
            self.expect(&Tok::RParen)?;
            return Ok(Expr::InSubquery {
                expr: boxed(left),
                query: Box::new(q),
                negated,
            });
        }
        self.advance();
        let list = self.parse_expr_list()?;
        self.expect(&Tok::RParen)?;
        Ok(Expr::InList {
            expr: boxed(left),
            list,
            negated,
        })
    }

    fn parse_like(&mut self, left: Expr, negated: bool) -> Result<Expr> {
        let pattern = self.parse_binary(P_BITOR)?;
        let escape = if self.eat_kw("ESCAPE") {
            Some(boxed(self.parse_binary(P_BITOR)?))
        } else if !self.backslash_escapes {
            Some(boxed(Expr::Literal(Value::Bytes(Vec::new()))))
        } else {
            None
        };
        Ok(Expr::Like {
            expr: boxed(left),
            pattern: boxed(pattern),
            escape,
            negated,
        })
    }

    fn parse_between(&mut self, left: Expr, negated: bool) -> Result<Expr> {
        let low = self.parse_binary(P_BITOR)?;
        self.expect_kw("AND")?;
        let high = self.parse_binary(P_BITOR)?;
        Ok(Expr::Between {
            expr: boxed(left),
            low: boxed(low),
            high: boxed(high),
            negated,
        })
    }

    fn parse_expr_list(&mut self) -> Result<Vec<Expr>> {
        let mut list = Vec::new();
        loop {
            list.push(self.parse_expr()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(list)
    }

    fn parse_unary(&mut self) -> Result<Expr> {
        self.enter()?;
        let e = match self.peek() {
            Tok::Minus => {
                self.advance();
                negate(self.parse_unary()?)
            }
            // MySQL's parser drops unary plus.
            Tok::Plus => {
                self.advance();
                self.parse_unary()?
            }
            Tok::Tilde => {
                self.advance();
                Expr::Unary {
                    op: UnaryOp::BitNot,
                    expr: boxed(self.parse_unary()?),
                }
            }
            Tok::Bang => {
                self.advance();
                Expr::Unary {
                    op: UnaryOp::Not,
                    expr: boxed(self.parse_unary()?),
                }
            }
            Tok::Word if self.is_kw("NOT") => {
                self.advance();
                // NOT binds looser than comparisons: NOT a = b is NOT (a = b).
                match self.parse_binary(P_CMP)? {
                    Expr::Exists { query, negated } => Expr::Exists {
                        query,
                        negated: !negated,
                    },
                    e => Expr::Unary {
                        op: UnaryOp::Not,
                        expr: boxed(e),
                    },
                }
            }
            Tok::Word if self.is_kw("BINARY") => {
                self.advance();
                Expr::Cast {
                    expr: boxed(self.parse_unary()?),
                    to: CastType::Binary,
                }
            }
            _ => self.parse_primary()?,
        };
        // x COLLATE name: collations are not modelled; the value is kept.
        while self.eat_kw("COLLATE") {
            self.name_or_string()?;
        }
        self.leave();
        Ok(e)
    }

    fn number(&self, tok: &Tok) -> Result<Value> {
        let text = self.text_at(0);
        match tok {
            Tok::Int => {
                if let Ok(v) = text.parse::<i64>() {
                    Ok(Value::Int(v))
                } else if let Ok(v) = text.parse::<u64>() {
                    Ok(Value::UInt(v))
                } else if let Some(d) = decimal_literal(text) {
                    Ok(Value::Decimal(d))
                } else {
                    text.parse::<f64>()
                        .map(Value::Double)
                        .map_err(|_| self.error())
                }
            }
            Tok::Dec => {
                match decimal_literal(text.strip_suffix('.').unwrap_or(text)) {
                    Some(d) => Ok(Value::Decimal(d)),
                    // Beyond DECIMAL's 65 digits a literal is a DOUBLE, as
                    // in MySQL.
                    None => text
                        .parse::<f64>()
                        .map(Value::Double)
                        .map_err(|_| self.error()),
                }
            }
            _ => match text.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Value::Double(f)),
                _ => Err(self.error()),
            },
        }
    }

    fn parse_primary(&mut self) -> Result<Expr> {
        match self.peek() {
            t @ (Tok::Int | Tok::Dec | Tok::Float) => {
                let v = self.number(&t.clone())?;
                self.advance();
                Ok(Expr::Literal(v))
            }
            Tok::Str(_) => {
                let Tok::Str(mut s) = self.take() else {
                    return Err(self.error());
                };
                // Adjacent literals concatenate: 'a' 'b' is 'ab'.
                while let Tok::Str(_) = self.peek() {
                    if let Tok::Str(more) = self.take() {
                        s.extend_from_slice(&more);
                    }
                }
                Ok(Expr::Literal(Value::Bytes(s)))
            }
            // A hex literal is a binary string (charset binary, compared
            // byte by byte).
            Tok::Hex(_) => match self.take() {
                Tok::Hex(b) => Ok(binary_literal(b)),
                _ => Err(self.error()),
            },
            Tok::Bits(v) => {
                let v = *v;
                self.advance();
                Ok(Expr::Literal(match i64::try_from(v) {
                    Ok(i) => Value::Int(i),
                    Err(_) => Value::UInt(v),
                }))
            }
            Tok::Param => {
                self.advance();
                let n = self.params;
                self.params += 1;
                Ok(Expr::Param(n))
            }
            Tok::UserVar(_) => match self.take() {
                Tok::UserVar(name) => {
                    if self.is(&Tok::Assign) {
                        return Err(self.unsupported(":= in expressions"));
                    }
                    Ok(Expr::UserVar(name.to_ascii_lowercase()))
                }
                _ => Err(self.error()),
            },
            Tok::AtAt => {
                self.advance();
                let (scope, name) = self.parse_sysvar_name()?;
                Ok(Expr::SystemVar { scope, name })
            }
            Tok::LParen => self.parse_paren_expr(),
            Tok::Word => self.parse_word_primary(),
            Tok::Ident(_) => self.parse_column_ref(),
            _ => Err(self.error()),
        }
    }

    /// After `@@`: `[global.|session.|local.]name`, name lower-cased.
    fn parse_sysvar_name(&mut self) -> Result<(VarScope, String)> {
        let mut scope = VarScope::Default;
        if self.tok_at(1) == &Tok::Dot {
            if self.is_kw("GLOBAL") {
                scope = VarScope::Global;
            } else if self.is_kw("SESSION") || self.is_kw("LOCAL") {
                scope = VarScope::Session;
            }
            if scope != VarScope::Default {
                self.pos += 2;
            }
        }
        let mut name = self.ident_any()?;
        // Structured variables (a.b) keep their dotted name.
        while self.eat(&Tok::Dot) {
            name.push('.');
            name.push_str(&self.ident_any()?);
        }
        name.make_ascii_lowercase();
        Ok((scope, name))
    }

    fn parse_paren_expr(&mut self) -> Result<Expr> {
        self.enter()?;
        let e = if self.kw_at(1, "SELECT") || self.kw_at(1, "WITH") {
            self.advance();
            let q = self.parse_query()?;
            self.expect(&Tok::RParen)?;
            Expr::Subquery(Box::new(q))
        } else {
            self.advance();
            let mut list = self.parse_expr_list()?;
            self.expect(&Tok::RParen)?;
            if list.len() == 1 {
                list.pop().unwrap_or(Expr::Literal(Value::Null))
            } else {
                Expr::Row(list)
            }
        };
        self.leave();
        Ok(e)
    }

    fn parse_column_ref(&mut self) -> Result<Expr> {
        let first = self.ident()?;
        if !self.is(&Tok::Dot) {
            return Ok(Expr::Column {
                table: None,
                name: first,
            });
        }
        self.advance();
        let second = self.ident_any()?;
        if self.is(&Tok::LParen) {
            return self.qualified_call(first, second);
        }
        if self.eat(&Tok::Dot) {
            // db.t.col: the database qualifier is dropped.
            let third = self.ident_any()?;
            return Ok(Expr::Column {
                table: Some(second),
                name: third,
            });
        }
        Ok(Expr::Column {
            table: Some(first),
            name: second,
        })
    }

    /// `db.f(args)`: a stored function of database `db` (never a built-in
    /// one, so its name keeps the case it is written in).
    fn qualified_call(&mut self, database: String, name: String) -> Result<Expr> {
        self.expect(&Tok::LParen)?;
        let args = match self.is(&Tok::RParen) {
            true => Vec::new(),
            false => self.parse_expr_list()?,
        };
        self.expect(&Tok::RParen)?;
        Ok(Expr::Function {
            name,
            args,
            distinct: false,
            star: false,
            database: Some(database),
            spelled: None,
        })
    }

    fn parse_word_primary(&mut self) -> Result<Expr> {
        let word = self.text_at(0);
        let mut buf = [0u8; 32];
        let up = upper(word, &mut buf);
        if self.tok_at(1) == &Tok::LParen {
            if is_reserved(word) && !reserved_function(up) {
                return match up {
                    b"CAST" | b"CONVERT" | b"EXISTS" | b"INTERVAL" | b"ROW" | b"MATCH"
                    | b"CASE" | b"CHAR" => self.parse_special_call(up.to_vec()),
                    b"CUME_DIST" | b"DENSE_RANK" | b"FIRST_VALUE" | b"LAG" | b"LAST_VALUE"
                    | b"LEAD" | b"NTH_VALUE" | b"NTILE" | b"PERCENT_RANK" | b"RANK"
                    | b"ROW_NUMBER" => self.parse_special_call(up.to_vec()),
                    _ => Err(self.error()),
                };
            }
            return self.parse_special_call(up.to_vec());
        }
        match up {
            b"NULL" => {
                self.advance();
                Ok(Expr::Literal(Value::Null))
            }
            b"TRUE" => {
                self.advance();
                Ok(Expr::Literal(Value::Int(1)))
            }
            b"FALSE" => {
                self.advance();
                Ok(Expr::Literal(Value::Int(0)))
            }
            b"DEFAULT" => {
                self.advance();
                Ok(Expr::Default)
            }
            b"CASE" => self.parse_case(),
            b"INTERVAL" => {
                self.advance();
                self.parse_interval_rest()
            }
            _ if niladic_function(up) => {
                let name = String::from_utf8_lossy(up).into_owned();
                self.advance();
                Ok(Expr::Function {
                    name,
                    args: Vec::new(),
                    distinct: false,
                    star: false,
                    database: None,
                    spelled: None,
                })
            }
            // Typed literals: DATE '2024-01-01', TIMESTAMP '...', TIME '...'.
            b"DATE" | b"TIMESTAMP" | b"TIME" if matches!(self.tok_at(1), Tok::Str(_)) => {
                let to = match up {
                    b"DATE" => Some(CastType::Date),
                    b"TIMESTAMP" => Some(CastType::DateTime {
                        fsp: self.literal_fsp(1),
                    }),
                    _ => Some(CastType::Time {
                        fsp: self.literal_fsp(1),
                    }),
                };
                self.advance();
                let lit = self.parse_primary()?;
                match to {
                    Some(to) => typed_literal(to, lit),
                    None => Ok(lit),
                }
            }
            // Charset introducer: _utf8mb4'text', _binary 0x00.
            [b'_', ..] if matches!(self.tok_at(1), Tok::Str(_) | Tok::Hex(_) | Tok::Bits(_)) => {
                let binary = word.eq_ignore_ascii_case("_binary");
                self.advance();
                Ok(match (self.parse_primary()?, binary) {
                    (Expr::Literal(Value::Bytes(b)), true) => binary_literal(b),
                    (Expr::Cast { expr, .. }, false) => *expr,
                    (e, _) => e,
                })
            }
            _ if is_reserved(word) => Err(self.error()),
            _ => self.parse_column_ref(),
        }
    }

    fn func(name: &str, args: Vec<Expr>) -> Expr {
        Expr::Function {
            name: name.to_string(),
            args,
            distinct: false,
            star: false,
            database: None,
            spelled: None,
        }
    }

    /// `name(` ... with the word at offset 0 and `(` at offset 1.
    fn parse_special_call(&mut self, up: Vec<u8>) -> Result<Expr> {
        self.enter()?;
        let written = self.text_at(0);
        self.pos += 2; // name (
        let e = match up.as_slice() {
            b"CAST" => {
                let expr = self.parse_expr()?;
                self.expect_kw("AS")?;
                let to = self.parse_cast_type()?;
                if self.is_kw("AT") || self.is_kw("ARRAY") {
                    return Err(self.unsupported("CAST ... AT TIME ZONE / ARRAY"));
                }
                self.expect(&Tok::RParen)?;
                Expr::Cast {
                    expr: boxed(expr),
                    to,
                }
            }
            b"CONVERT" => {
                let expr = self.parse_expr()?;
                let e = if self.eat_kw("USING") {
                    let cs = self.name_or_string()?;
                    convert_using(expr, &cs)
                } else {
                    self.expect(&Tok::Comma)?;
                    let to = self.parse_cast_type()?;
                    Expr::Cast {
                        expr: boxed(expr),
                        to,
                    }
                };
                self.expect(&Tok::RParen)?;
                e
            }
            b"EXISTS" => {
                self.pos -= 1;
                if !self.paren_starts_query() {
                    return Err(self.error());
                }
                self.advance();
                let q = self.parse_query()?;
                self.expect(&Tok::RParen)?;
                Expr::Exists {
                    query: Box::new(q),
                    negated: false,
                }
            }
            b"ROW" => {
                let list = self.parse_expr_list()?;
                self.expect(&Tok::RParen)?;
                Expr::Row(list)
            }
            b"INTERVAL" => {
                // INTERVAL(N, N1, ...) function, or INTERVAL (expr) unit.
                let mut list = self.parse_expr_list()?;
                self.expect(&Tok::RParen)?;
                if list.len() >= 2 {
                    Self::func("INTERVAL", list)
                } else {
                    let value = list.pop().unwrap_or(Expr::Literal(Value::Null));
                    let unit = self.parse_interval_unit()?;
                    Expr::Interval {
                        value: boxed(value),
                        unit,
                    }
                }
            }
            b"MATCH" => return Err(self.unsupported("MATCH ... AGAINST")),
            b"CASE" => {
                // CASE (x) WHEN ...: the parenthesis belongs to the operand.
                self.pos -= 1;
                self.pos -= 1;
                let e = self.parse_case()?;
                self.leave();
                return Ok(e);
            }
            b"TRIM" => self.parse_trim()?,
            b"SUBSTRING" | b"SUBSTR" | b"MID" => {
                let s = self.parse_expr()?;
                let mut args = vec![s];
                if self.eat_kw("FROM") {
                    args.push(self.parse_expr()?);
                    if self.eat_kw("FOR") {
                        args.push(self.parse_expr()?);
                    }
                } else {
                    while self.eat(&Tok::Comma) {
                        args.push(self.parse_expr()?);
                    }
                }
                self.expect(&Tok::RParen)?;
                Self::func("SUBSTRING", args)
            }
            b"EXTRACT" => {
                let unit = self.parse_interval_unit()?;
                self.expect_kw("FROM")?;
                let d = self.parse_expr()?;
                self.expect(&Tok::RParen)?;
                Self::func("EXTRACT", vec![str_lit(&unit), d])
            }
            b"GET_FORMAT" => {
                // GET_FORMAT(DATE|TIME|DATETIME|TIMESTAMP, 'EUR'): the kind is a word.
                let kind = self.name_or_string()?;
                self.expect(&Tok::Comma)?;
                let standard = self.parse_expr()?;
                self.expect(&Tok::RParen)?;
                Self::func(
                    "GET_FORMAT",
                    vec![str_lit(&kind.to_ascii_uppercase()), standard],
                )
            }
            b"POSITION" => {
                let needle = self.parse_binary(P_BITOR)?;
                self.expect_kw("IN")?;
                let hay = self.parse_expr()?;
                self.expect(&Tok::RParen)?;
                Self::func("POSITION", vec![needle, hay])
            }
            b"GROUP_CONCAT" => self.parse_group_concat()?,
            b"JSON_VALUE" => self.parse_json_value()?,
            b"CHAR" => {
                let args = self.parse_expr_list()?;
                if self.eat_kw("USING") {
                    self.name_or_string()?;
                }
                self.expect(&Tok::RParen)?;
                Self::func("CHAR", args)
            }
            _ => {
                let name = String::from_utf8_lossy(&up).into_owned();
                let spelled = (written != name).then(|| written.to_string());
                let mut distinct = false;
                let mut star = false;
                let mut args = Vec::new();
                if self.eat(&Tok::Star) {
                    star = true;
                } else if !self.is(&Tok::RParen) {
                    if self.eat_kw("DISTINCT") || self.eat_kw("DISTINCTROW") {
                        distinct = true;
                    } else {
                        self.eat_kw("ALL");
                    }
                    args = match name.starts_with("JSON_") {
                        true => self.parse_json_args()?,
                        false => self.parse_expr_list()?,
                    };
                }
                self.expect(&Tok::RParen)?;
                self.window_tail(Expr::Function {
                    name,
                    args,
                    distinct,
                    star,
                    database: None,
                    spelled,
                })?
            }
        };
        self.leave();
        Ok(e)
    }

    /// TRIM is encoded as `TRIM(str)` (spaces, both sides) or
    /// `TRIM('BOTH'|'LEADING'|'TRAILING', remstr, str)` — the mode first as
    /// a string literal, then the characters to remove, then the subject.
    fn parse_trim(&mut self) -> Result<Expr> {
        let mut buf = [0u8; 32];
        let mode = match self.upper_word(0, &mut buf) {
            b"BOTH" => Some("BOTH"),
            b"LEADING" => Some("LEADING"),
            b"TRAILING" => Some("TRAILING"),
            _ => None,
        };
        let args = match mode {
            Some(mode) => {
                self.advance();
                let remstr = if self.eat_kw("FROM") {
                    None
                } else {
                    let r = self.parse_expr()?;
                    self.expect_kw("FROM")?;
                    Some(r)
                };
                let s = self.parse_expr()?;
                vec![str_lit(mode), remstr.unwrap_or_else(|| str_lit(" ")), s]
            }
            None => {
                let first = self.parse_expr()?;
                if self.eat_kw("FROM") {
                    let s = self.parse_expr()?;
                    vec![str_lit("BOTH"), first, s]
                } else {
                    vec![first]
                }
            }
        };
        self.expect(&Tok::RParen)?;
        Ok(Self::func("TRIM", args))
    }

    /// GROUP_CONCAT(exprs) keeps its expressions as arguments (the values
    /// concatenated per row). A separator other than ',' yields
    /// `GROUP_CONCAT_SEPARATOR(sep, exprs..)` so that a binder unaware of
    /// separators fails loudly instead of silently using ','. An ORDER BY
    /// yields `GROUP_CONCAT_ORDERED(sep, dirs, exprs.., keys..)`, dirs a
    /// string of one 'A' or 'D' per key.
    fn parse_group_concat(&mut self) -> Result<Expr> {
        let distinct = self.eat_kw("DISTINCT");
        let exprs = self.parse_expr_list()?;
        let order = self.parse_order_by()?;
        let sep = if self.eat_kw("SEPARATOR") {
            Some(self.string_literal()?)
        } else {
            None
        };
        self.expect(&Tok::RParen)?;
        if !order.is_empty() {
            let dirs = order.iter().map(|o| if o.desc { 'D' } else { 'A' });
            let mut args = vec![
                str_lit(sep.as_deref().unwrap_or(",")),
                str_lit(&dirs.collect::<String>()),
            ];
            args.extend(exprs);
            args.extend(order.into_iter().map(|o| o.expr));
            return Ok(Expr::Function {
                name: "GROUP_CONCAT_ORDERED".to_string(),
                args,
                distinct,
                star: false,
                database: None,
                spelled: None,
            });
        }
        let (name, args) = match sep {
            Some(sep) if sep != "," => {
                let mut args = Vec::with_capacity(exprs.len() + 1);
                args.push(str_lit(&sep));
                args.extend(exprs);
                ("GROUP_CONCAT_SEPARATOR", args)
            }
            _ => ("GROUP_CONCAT", exprs),
        };
        Ok(Expr::Function {
            name: name.to_string(),
            args,
            distinct,
            star: false,
            database: None,
            spelled: None,
        })
    }

    fn parse_case(&mut self) -> Result<Expr> {
        self.enter()?;
        self.expect_kw("CASE")?;
        let operand = if self.is_kw("WHEN") {
            None
        } else {
            Some(boxed(self.parse_expr()?))
        };
        let mut branches = Vec::new();
        while self.eat_kw("WHEN") {
            let cond = self.parse_expr()?;
            self.expect_kw("THEN")?;
            let then = self.parse_expr()?;
            branches.push((cond, then));
        }
        if branches.is_empty() {
            return Err(self.error());
        }
        let else_result = if self.eat_kw("ELSE") {
            Some(boxed(self.parse_expr()?))
        } else {
            None
        };
        self.expect_kw("END")?;
        self.leave();
        Ok(Expr::Case {
            operand,
            branches,
            else_result,
        })
    }

    /// After INTERVAL: `expr unit`.
    fn parse_interval_rest(&mut self) -> Result<Expr> {
        let value = self.parse_expr()?;
        let unit = self.parse_interval_unit()?;
        Ok(Expr::Interval {
            value: boxed(value),
            unit,
        })
    }

    fn parse_interval_unit(&mut self) -> Result<String> {
        let mut buf = [0u8; 32];
        let up = self.upper_word(0, &mut buf);
        if !is_interval_unit(up) {
            return Err(self.error());
        }
        let unit = String::from_utf8_lossy(up).into_owned();
        self.advance();
        Ok(unit)
    }

    /// `(n)` after a type name, if present.
    fn parse_opt_len(&mut self) -> Result<Option<u64>> {
        if !self.eat(&Tok::LParen) {
            return Ok(None);
        }
        let n = self.parse_u64()?;
        self.expect(&Tok::RParen)?;
        Ok(Some(n))
    }

    fn parse_u64(&mut self) -> Result<u64> {
        if self.is(&Tok::Int) {
            if let Ok(v) = self.text_at(0).parse::<u64>() {
                self.advance();
                return Ok(v);
            }
        }
        Err(self.error())
    }

    /// `[(p[,s])]`
    fn parse_opt_prec_scale(&mut self) -> Result<(Option<u64>, Option<u64>)> {
        if !self.eat(&Tok::LParen) {
            return Ok((None, None));
        }
        let p = self.parse_u64()?;
        let s = if self.eat(&Tok::Comma) {
            Some(self.parse_u64()?)
        } else {
            None
        };
        self.expect(&Tok::RParen)?;
        Ok((Some(p), s))
    }

    fn decimal_spec(&self, p: Option<u64>, s: Option<u64>, name: &str) -> Result<(u8, u8)> {
        let p = p.unwrap_or(10);
        let s = s.unwrap_or(0);
        if p > 65 {
            return Err(Error::new(
                Code::TooBigPrecision,
                format!("Too-big precision {p} specified for '{name}'. Maximum is 65."),
            ));
        }
        if s > 30 {
            return Err(Error::new(
                Code::TooBigScale,
                format!("Too big scale {s} specified for column '{name}'. Maximum is 30."),
            ));
        }
        if s > p {
            return Err(Error::new(
                Code::MBiggerThanD,
                format!(
                    "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')."
                ),
            ));
        }
        // p == 0 means the default precision in MySQL.
        Ok((if p == 0 { 10 } else { p as u8 }, s as u8))
    }

    fn parse_cast_type(&mut self) -> Result<CastType> {
        let mut buf = [0u8; 32];
        let up = self.upper_word(0, &mut buf).to_vec();
        self.advance();
        let t = match up.as_slice() {
            b"SIGNED" | b"INT" | b"INTEGER" => {
                if !self.eat_kw("INTEGER") {
                    self.eat_kw("INT");
                }
                CastType::Signed
            }
            b"UNSIGNED" => {
                if !self.eat_kw("INTEGER") {
                    self.eat_kw("INT");
                }
                CastType::Unsigned
            }
            b"BINARY" => {
                self.parse_opt_len()?;
                CastType::Binary
            }
            b"CHAR" | b"NCHAR" | b"VARCHAR" | b"CHARACTER" => {
                self.parse_opt_len()?;
                self.skip_charset_attrs()?;
                CastType::Char
            }
            b"DECIMAL" | b"DEC" | b"NUMERIC" => {
                let (p, s) = self.parse_opt_prec_scale()?;
                let (precision, scale) = self.decimal_spec(p, s, "CAST")?;
                CastType::Decimal { precision, scale }
            }
            b"DOUBLE" => {
                self.eat_kw("PRECISION");
                CastType::Double
            }
            b"FLOAT" | b"REAL" => {
                self.parse_opt_len()?;
                CastType::Double
            }
            b"DATE" => CastType::Date,
            b"DATETIME" => CastType::DateTime {
                fsp: self.cast_fsp()?,
            },
            b"TIME" => CastType::Time {
                fsp: self.cast_fsp()?,
            },
            b"JSON" => CastType::Json,
            b"YEAR" => CastType::Unsigned,
            _ => {
                self.pos = self.pos.saturating_sub(1);
                return Err(self.error());
            }
        };
        Ok(t)
    }

    /// CHARACTER SET x / CHARSET x / COLLATE x / BINARY / ASCII / UNICODE
    /// after a string type, recorded in `column_charset` (BINARY, the
    /// type's binary collation, and BYTE are not: see below); true when
    /// they name the binary character set (CHARACTER SET binary, or BYTE),
    /// which makes CHAR/VARCHAR/TEXT the binary types.
    fn skip_charset_attrs(&mut self) -> Result<bool> {
        let mut binary = false;
        loop {
            if self.is_kw("CHARACTER") && self.kw_at(1, "SET") {
                self.pos += 2;
                binary = self.charset_name()?;
            } else if self.eat_kw("CHARSET") {
                binary = self.charset_name()?;
            } else if self.eat_kw("COLLATE") {
                self.eat_eq();
                self.column_charset.collation = Some(self.name_or_string()?);
            } else if self.eat_kw("BYTE") {
                binary = true;
            } else if self.eat_kw("ASCII") {
                self.column_charset.charset = Some("latin1".into());
            } else if self.eat_kw("UNICODE") {
                return Err(self.unsupported("the UNICODE attribute (ucs2)"));
            } else if self.eat_kw("BINARY") {
            } else {
                return Ok(binary);
            }
        }
    }

    /// `[=] name` of CHARACTER SET: recorded unless binary (true).
    fn charset_name(&mut self) -> Result<bool> {
        self.eat_eq();
        let name = self.name_or_string()?;
        if name.eq_ignore_ascii_case("binary") {
            return Ok(true);
        }
        self.column_charset.charset = Some(name);
        Ok(false)
    }

    /// A text type declared with the binary character set is its binary
    /// counterpart, as in MySQL (CHAR -> BINARY, VARCHAR -> VARBINARY,
    /// TEXT -> BLOB).
    fn text_charset(&mut self, t: DataType) -> Result<DataType> {
        if !self.skip_charset_attrs()? {
            return Ok(t);
        }
        Ok(match t {
            DataType::Char { len } => DataType::Binary { len },
            DataType::VarChar { len } => DataType::VarBinary { len },
            DataType::Text { max_len } => DataType::Blob { max_len },
            other => other,
        })
    }

    // ---- INSERT / UPDATE / DELETE ----

    fn parse_insert(&mut self, replace: bool) -> Result<Statement> {
        self.advance();
        let mut ignore = false;
        loop {
            if self.eat_kw("LOW_PRIORITY") || self.eat_kw("DELAYED") || self.eat_kw("HIGH_PRIORITY")
            {
            } else if !replace && self.eat_kw("IGNORE") {
                ignore = true;
            } else {
                break;
            }
        }
        self.eat_kw("INTO");
        let table = self.object_name()?;
        if self.is_kw("PARTITION") {
            return Err(self.unsupported("PARTITION"));
        }
        let mut columns = Vec::new();
        if self.is(&Tok::LParen) && !self.paren_starts_query() {
            self.advance();
            if !self.eat(&Tok::RParen) {
                loop {
                    columns.push(self.column_name()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                self.expect(&Tok::RParen)?;
            }
        }
        let source = if self.eat_kw("VALUES") || self.eat_kw("VALUE") {
            let mut rows = Vec::new();
            loop {
                self.eat_kw("ROW");
                self.expect(&Tok::LParen)?;
                let row = if self.is(&Tok::RParen) {
                    Vec::new()
                } else {
                    self.parse_expr_list()?
                };
                self.expect(&Tok::RParen)?;
                rows.push(row);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            InsertSource::Values(rows)
        } else if self.is_kw("SET") {
            if !columns.is_empty() {
                return Err(self.error());
            }
            self.advance();
            let mut row = Vec::new();
            for (col, e) in self.parse_assignments()? {
                columns.push(col);
                row.push(e);
            }
            InsertSource::Values(vec![row])
        } else if self.is_kw("SELECT") || self.is(&Tok::LParen) || self.is_kw("WITH") {
            InsertSource::Query(Box::new(self.parse_query()?))
        } else if self.is_kw("TABLE") {
            match self.parse_statement()? {
                Statement::Select(q) => InsertSource::Query(q),
                _ => return Err(self.error()),
            }
        } else {
            return Err(self.error());
        };
        let row_alias = self.insert_row_alias(&source)?;
        let mut on_duplicate = Vec::new();
        if self.eat_kw("ON") {
            self.expect_kw("DUPLICATE")?;
            self.expect_kw("KEY")?;
            self.expect_kw("UPDATE")?;
            on_duplicate = self.parse_assignments()?;
        }
        Ok(Statement::Insert(Box::new(Insert {
            table,
            columns,
            source,
            ignore,
            replace,
            on_duplicate,
            row_alias,
        })))
    }

    /// `AS alias [(col, ...)]` after an INSERT's VALUES or SET (MySQL
    /// 8.0.19): how ON DUPLICATE KEY UPDATE names the new row.
    fn insert_row_alias(&mut self, source: &InsertSource) -> Result<Option<(String, Vec<String>)>> {
        if !self.is_kw("AS") {
            return Ok(None);
        }
        if !matches!(source, InsertSource::Values(_)) {
            return Err(self.error());
        }
        self.advance();
        let alias = self.ident()?;
        let mut columns = Vec::new();
        if self.eat(&Tok::LParen) {
            loop {
                columns.push(self.ident()?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            self.expect(&Tok::RParen)?;
        }
        Ok(Some((alias, columns)))
    }

    /// col = expr, t.col = expr, ...
    fn parse_assignments(&mut self) -> Result<Vec<(String, Expr)>> {
        self.assignments(false)
    }

    /// `col = expr, ...`; `qualified`: a column keeps its qualifier
    /// (`t.col`, `db.t.col`), as UPDATE's SET needs.
    fn assignments(&mut self, qualified: bool) -> Result<Vec<(String, Expr)>> {
        let mut out = Vec::new();
        loop {
            let col = match qualified {
                true => self.qualified_column()?,
                false => self.column_name()?,
            };
            if !self.eat(&Tok::Eq) && !self.eat(&Tok::Assign) {
                return Err(self.error());
            }
            out.push((col, self.parse_expr()?));
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(out)
    }

    fn parse_update(&mut self) -> Result<Statement> {
        self.advance();
        let ignore = self.modifiers(&["LOW_PRIORITY"]);
        let mut from = vec![self.parse_table_ref()?];
        while self.eat(&Tok::Comma) {
            self.link()?;
            from.push(self.parse_table_ref()?);
        }
        self.expect_kw("SET")?;
        let assignments = self.assignments(true)?;
        let selection = if self.eat_kw("WHERE") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let order_by = self.parse_order_by()?;
        let (limit, _) = self.parse_limit(false)?;
        let (table, alias, multi) = match single_table(&from) {
            Some((name, alias)) => (name, alias, None),
            None => {
                // As MySQL: the multi-table form takes no ORDER BY or LIMIT.
                if !order_by.is_empty() || limit.is_some() {
                    let what = if order_by.is_empty() {
                        "LIMIT"
                    } else {
                        "ORDER BY"
                    };
                    return Err(Error::new(
                        Code::WrongUsage,
                        format!("Incorrect usage of UPDATE and {what}"),
                    ));
                }
                let first = first_table(&from).ok_or_else(|| {
                    Error::new(
                        Code::NonUpdatableTable,
                        "The target table of the UPDATE is not updatable",
                    )
                })?;
                let multi = MultiTable {
                    from,
                    targets: Vec::new(),
                };
                (first, None, Some(Box::new(multi)))
            }
        };
        Ok(Statement::Update(Box::new(Update {
            table,
            alias,
            assignments,
            selection,
            order_by,
            limit,
            multi,
            ignore,
        })))
    }

    /// The modifiers after UPDATE or DELETE, in any order: `others` are
    /// hints without effect here (LOW_PRIORITY waits for no table lock in
    /// InnoDB either); returns whether IGNORE was among them.
    fn modifiers(&mut self, others: &[&str]) -> bool {
        let mut ignore = false;
        loop {
            if self.eat_kw("IGNORE") {
                ignore = true;
            } else if !others.iter().any(|k| self.eat_kw(k)) {
                return ignore;
            }
        }
    }

    fn parse_delete(&mut self) -> Result<Statement> {
        self.advance();
        let ignore = self.modifiers(&["LOW_PRIORITY", "QUICK"]);
        if !self.eat_kw("FROM") {
            // DELETE t1[.*], t2 FROM table_references
            let targets = self.parse_delete_targets()?;
            self.expect_kw("FROM")?;
            return self.parse_multi_delete(targets, ignore);
        }
        // DELETE FROM t1[.*], t2 USING table_references: told by a USING
        // before the WHERE (names are taken out of their tokens as they are
        // parsed, so the parser cannot try one form and back up).
        if self.using_before_where() {
            let targets = self.parse_delete_targets()?;
            self.expect_kw("USING")?;
            return self.parse_multi_delete(targets, ignore);
        }
        let table = self.object_name()?;
        let alias = self.parse_alias(false)?;
        if self.is_kw("PARTITION") {
            return Err(self.unsupported("PARTITION"));
        }
        let selection = if self.eat_kw("WHERE") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let order_by = self.parse_order_by()?;
        let (limit, _) = self.parse_limit(false)?;
        Ok(Statement::Delete(Box::new(Delete {
            table,
            alias,
            selection,
            order_by,
            limit,
            multi: None,
            ignore,
        })))
    }

    /// Whether a USING keyword comes before the statement's WHERE, ORDER
    /// BY, LIMIT or end.
    fn using_before_where(&self) -> bool {
        for n in 0.. {
            if matches!(self.tok_at(n), Tok::Eof | Tok::Semi) {
                return false;
            }
            if ["WHERE", "ORDER", "LIMIT"].iter().any(|k| self.kw_at(n, k)) {
                return false;
            }
            if self.kw_at(n, "USING") {
                return true;
            }
        }
        false
    }

    /// `tbl[.*] [, tbl[.*]] ...`: the targets of a multi-table DELETE.
    fn parse_delete_targets(&mut self) -> Result<Vec<ObjectName>> {
        let mut targets = Vec::new();
        loop {
            let mut name = ObjectName {
                database: None,
                name: self.ident()?,
            };
            if self.is(&Tok::Dot) && self.tok_at(1) != &Tok::Star {
                self.advance();
                name.database = Some(std::mem::replace(&mut name.name, self.ident()?));
            }
            if self.is(&Tok::Dot) && self.tok_at(1) == &Tok::Star {
                self.pos += 2;
            }
            targets.push(name);
            if !self.eat(&Tok::Comma) {
                return Ok(targets);
            }
        }
    }

    /// The table references and WHERE of a multi-table DELETE (it takes
    /// no ORDER BY or LIMIT: MySQL's grammar has none there).
    fn parse_multi_delete(&mut self, targets: Vec<ObjectName>, ignore: bool) -> Result<Statement> {
        let mut from = vec![self.parse_table_ref()?];
        while self.eat(&Tok::Comma) {
            self.link()?;
            from.push(self.parse_table_ref()?);
        }
        let selection = if self.eat_kw("WHERE") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let table = targets[0].clone();
        Ok(Statement::Delete(Box::new(Delete {
            table,
            alias: None,
            selection,
            order_by: Vec::new(),
            limit: None,
            multi: Some(Box::new(MultiTable { from, targets })),
            ignore,
        })))
    }

    // ---- DDL ----

    fn parse_create(&mut self) -> Result<Statement> {
        self.advance();
        if let Some(routine) = self.parse_create_routine()? {
            return Ok(routine);
        }
        let mut buf = [0u8; 32];
        match self.upper_word(0, &mut buf) {
            b"DATABASE" | b"SCHEMA" => {
                self.advance();
                let if_not_exists = self.if_not_exists()?;
                let name = self.ident()?;
                let options = self.table_options()?;
                if options.comment.is_some() || options.auto_increment.is_some() {
                    return Err(self.error());
                }
                Ok(Statement::CreateDatabase {
                    name,
                    if_not_exists,
                })
            }
            b"TABLE" => {
                self.advance();
                self.parse_create_table()
            }
            b"UNIQUE" | b"INDEX" => {
                let unique = self.eat_kw("UNIQUE");
                self.expect_kw("INDEX")?;
                let name = self.ident()?;
                self.skip_index_type()?;
                self.expect_kw("ON")?;
                let table = self.object_name()?;
                let columns = self.parse_index_columns()?;
                let comment = self.index_options()?;
                let online = self.parse_ddl_options()?;
                Ok(Statement::CreateIndex {
                    name,
                    table,
                    columns,
                    unique,
                    online,
                    comment,
                })
            }
            b"ROLE" => self.parse_create_role(),
            b"USER" => {
                self.advance();
                let if_not_exists = self.if_not_exists()?;
                let users = self.user_specs()?;
                Ok(Statement::CreateUser {
                    if_not_exists,
                    users,
                })
            }
            b"TEMPORARY" => {
                self.advance();
                self.expect_kw("TABLE")?;
                match self.parse_create_table()? {
                    Statement::CreateTable(mut ct) => {
                        ct.temporary = true;
                        Ok(Statement::CreateTable(ct))
                    }
                    other => Ok(other),
                }
            }
            b"FULLTEXT" | b"SPATIAL" => Err(self.unsupported("FULLTEXT/SPATIAL indexes")),
            b"OR" | b"ALGORITHM" | b"DEFINER" | b"SQL" | b"VIEW" => match self.parse_view(false)? {
                Some(view) => Ok(view),
                None => Err(self.not_a_view()),
            },
            b"" => Err(self.error()),
            other => {
                let what = format!("CREATE {}", String::from_utf8_lossy(other));
                Err(self.unsupported(&what))
            }
        }
    }

    /// USING BTREE|HASH
    fn skip_index_type(&mut self) -> Result<()> {
        if self.eat_kw("USING") && !self.eat_kw("BTREE") && !self.eat_kw("HASH") {
            return Err(self.error());
        }
        Ok(())
    }

    /// Index options after the column list: the last COMMENT's text (the
    /// rest are dropped).
    fn index_options(&mut self) -> Result<Option<String>> {
        let mut comment = None;
        loop {
            if self.is_kw("USING") {
                self.skip_index_type()?;
            } else if self.eat_kw("COMMENT") {
                comment = Some(self.string_literal()?);
            } else if self.eat_kw("KEY_BLOCK_SIZE") {
                self.eat_eq();
                self.parse_u64()?;
            } else if self.eat_kw("VISIBLE") || self.eat_kw("INVISIBLE") {
            } else if self.is_kw("WITH") && self.kw_at(1, "PARSER") {
                self.pos += 2;
                self.ident_any()?;
            } else {
                return Ok(comment);
            }
        }
    }

    /// ( col[(len)] [ASC|DESC], ... ): prefix lengths and order dropped.
    fn parse_index_columns(&mut self) -> Result<Vec<String>> {
        self.expect(&Tok::LParen)?;
        let mut cols = Vec::new();
        loop {
            if self.is(&Tok::LParen) {
                return Err(self.unsupported("functional key parts"));
            }
            cols.push(self.ident()?);
            self.parse_opt_len()?;
            if !self.eat_kw("ASC") {
                self.eat_kw("DESC");
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        Ok(cols)
    }

    /// Table/database options: `[DEFAULT] name [=] value [,] ...`: the
    /// last COMMENT, AUTO_INCREMENT and ENGINE; the storage options of the
    /// others (ROW_FORMAT, KEY_BLOCK_SIZE, STATS_*, ...) have no meaning
    /// here and are dropped. Stops at the end of the statement.
    fn table_options(&mut self) -> Result<TableOptions> {
        let mut options = TableOptions::default();
        while !self.at_end() {
            self.eat(&Tok::Comma);
            self.eat_kw("DEFAULT");
            if self.is_kw("PARTITION") {
                return Err(self.unsupported("PARTITION BY"));
            }
            if self.is_kw("AS")
                || self.is_kw("SELECT")
                || self.is_kw("IGNORE")
                || self.is_kw("REPLACE")
            {
                return Err(self.unsupported("CREATE TABLE ... SELECT"));
            }
            if self.eat_kw("COMMENT") {
                self.eat_eq();
                options.comment = Some(self.string_literal()?);
                continue;
            }
            if self.eat_kw("AUTO_INCREMENT") {
                self.eat_eq();
                options.auto_increment = Some(self.parse_u64()?);
                continue;
            }
            if self.eat_kw("ENGINE") {
                self.eat_eq();
                options.engine = Some(self.ident_any()?);
                continue;
            }
            if self.is_kw("CHARACTER") && self.kw_at(1, "SET") {
                self.pos += 2;
                self.eat_eq();
                options.charset.charset = Some(self.name_or_string()?);
                continue;
            }
            if self.eat_kw("CHARSET") {
                self.eat_eq();
                options.charset.charset = Some(self.name_or_string()?);
                continue;
            }
            if self.eat_kw("COLLATE") {
                self.eat_eq();
                options.charset.collation = Some(self.name_or_string()?);
                continue;
            }
            // Two-word option names.
            if (self.is_kw("DATA") || self.is_kw("INDEX")) && self.kw_at(1, "DIRECTORY") {
                self.pos += 2;
            } else if matches!(self.peek(), Tok::Word) {
                self.advance();
            } else {
                return Err(self.error());
            }
            self.eat_eq();
            match self.peek() {
                Tok::Word | Tok::Ident(_) | Tok::Str(_) | Tok::Int => {
                    self.advance();
                }
                Tok::LParen => {
                    // UNION = (t1, t2)
                    self.advance();
                    while !self.eat(&Tok::RParen) {
                        if self.at_end() {
                            return Err(self.error());
                        }
                        self.advance();
                    }
                }
                _ => return Err(self.error()),
            }
        }
        Ok(options)
    }

    fn parse_create_table(&mut self) -> Result<Statement> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.object_name()?;
        let mut ct = CreateTable {
            name,
            temporary: false,
            if_not_exists,
            columns: Vec::new(),
            primary_key: None,
            indexes: Vec::new(),
            like: None,
            select: None,
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            comment: None,
            primary_comment: None,
            auto_increment: None,
            engine: None,
            charset: CharsetSpec::default(),
        };
        if self.eat_kw("LIKE") {
            ct.like = Some(self.object_name()?);
            return Ok(Statement::CreateTable(Box::new(ct)));
        }
        if self.is(&Tok::LParen) && self.kw_at(1, "LIKE") {
            self.pos += 2;
            ct.like = Some(self.object_name()?);
            self.expect(&Tok::RParen)?;
            return Ok(Statement::CreateTable(Box::new(ct)));
        }
        if !self.is(&Tok::LParen) || self.paren_starts_query() {
            if self.is_kw("SELECT") || self.is(&Tok::LParen) || self.is_kw("AS") {
                // CREATE TABLE t [AS] SELECT ...: the columns are the query's.
                self.eat_kw("AS");
                ct.select = Some(Box::new(self.parse_query()?));
                return Ok(Statement::CreateTable(Box::new(ct)));
            }
            return Err(self.error());
        }
        self.advance();
        loop {
            self.parse_table_element(&mut ct)?;
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        let options = self.table_options()?;
        ct.comment = options.comment;
        ct.auto_increment = options.auto_increment;
        ct.engine = options.engine;
        ct.charset = options.charset;
        let pk_count = ct.columns.iter().filter(|c| c.primary_key).count()
            + usize::from(ct.primary_key.is_some());
        if pk_count > 1 {
            return Err(Error::new(
                Code::MultiplePriKey,
                "Multiple primary key defined",
            ));
        }
        Ok(Statement::CreateTable(Box::new(ct)))
    }

    fn parse_table_element(&mut self, ct: &mut CreateTable) -> Result<()> {
        let mut buf = [0u8; 32];
        let up = self.upper_word(0, &mut buf).to_vec();
        let mut constraint_name = None;
        let (constraint, up) = if up == b"CONSTRAINT" {
            self.advance();
            if self.is_ident_start() && !self.is_any_kw(&["PRIMARY", "UNIQUE", "FOREIGN", "CHECK"])
            {
                constraint_name = Some(self.ident()?);
            }
            let mut b2 = [0u8; 32];
            (true, self.upper_word(0, &mut b2).to_vec())
        } else {
            (false, up)
        };
        match up.as_slice() {
            b"PRIMARY" => {
                self.advance();
                self.expect_kw("KEY")?;
                if self.is_ident_start() && !self.is_kw("USING") {
                    self.ident()?;
                }
                self.skip_index_type()?;
                let cols = self.parse_index_columns()?;
                ct.primary_comment = self.index_options()?;
                if ct.primary_key.is_some() {
                    return Err(Error::new(
                        Code::MultiplePriKey,
                        "Multiple primary key defined",
                    ));
                }
                ct.primary_key = Some(cols);
            }
            b"UNIQUE" | b"KEY" | b"INDEX" => {
                let unique = self.eat_kw("UNIQUE");
                if !self.eat_kw("KEY") && !self.eat_kw("INDEX") && !unique {
                    return Err(self.error());
                }
                // Without its own name, the key takes the constraint's.
                let name = if self.is_ident_start() && !self.is_kw("USING") {
                    Some(self.ident()?)
                } else {
                    constraint_name
                };
                self.skip_index_type()?;
                let columns = self.parse_index_columns()?;
                let comment = self.index_options()?;
                ct.indexes.push(IndexSpec {
                    name,
                    columns,
                    unique,
                    comment,
                });
            }
            // Full-text/spatial indexes are parsed and dropped: MATCH is
            // unsupported anyway, and dumps containing them should load.
            b"FULLTEXT" | b"SPATIAL" if !constraint => {
                self.advance();
                if !self.eat_kw("KEY") {
                    self.eat_kw("INDEX");
                }
                if self.is_ident_start() {
                    self.ident()?;
                }
                self.parse_index_columns()?;
                self.index_options()?;
            }
            b"FOREIGN" => {
                let fk = self.parse_foreign_key(constraint_name)?;
                ct.foreign_keys.push(fk);
            }
            b"CHECK" => {
                let check = self.parse_check(constraint_name, None)?;
                ct.checks.push(check);
            }
            _ if constraint => return Err(self.error()),
            _ => {
                let col = self.parse_column_def()?;
                ct.columns.push(col);
                ct.checks.append(&mut self.column_checks);
            }
        }
        Ok(())
    }

    /// REFERENCES t (cols) [MATCH ..] [ON DELETE|UPDATE action]: dropped
    /// (foreign keys are not enforced).
    fn skip_references(&mut self) -> Result<()> {
        self.expect_kw("REFERENCES")?;
        self.object_name()?;
        if self.is(&Tok::LParen) {
            self.parse_index_columns()?;
        }
        loop {
            if self.eat_kw("MATCH") {
                self.ident_any()?;
            } else if self.eat_kw("ON") {
                if !self.eat_kw("DELETE") {
                    self.expect_kw("UPDATE")?;
                }
                if self.eat_kw("SET") {
                    if !self.eat_kw("NULL") {
                        self.expect_kw("DEFAULT")?;
                    }
                } else if self.eat_kw("NO") {
                    self.expect_kw("ACTION")?;
                } else if !self.eat_kw("RESTRICT") && !self.eat_kw("CASCADE") {
                    return Err(self.error());
                }
            } else {
                return Ok(());
            }
        }
    }

    fn parse_column_def(&mut self) -> Result<ColumnSpec> {
        let name = self.ident()?;
        let mut col = ColumnSpec {
            name,
            data_type: DataType::Int { unsigned: false },
            not_null: false,
            default: None,
            auto_increment: false,
            primary_key: false,
            unique: false,
            on_update_now: false,
            comment: None,
            generated: None,
            charset: CharsetSpec::default(),
        };
        self.column_charset = CharsetSpec::default();
        if self.is_kw("SERIAL") {
            // SERIAL = BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE.
            self.advance();
            col.data_type = DataType::BigInt { unsigned: true };
            col.not_null = true;
            col.auto_increment = true;
            col.unique = true;
        } else {
            col.data_type = self.parse_data_type(&col.name)?;
        }
        loop {
            let mut buf = [0u8; 32];
            match self.upper_word(0, &mut buf) {
                b"NOT" => {
                    self.advance();
                    self.expect_kw("NULL")?;
                    col.not_null = true;
                }
                b"NULL" => {
                    self.advance();
                    col.not_null = false;
                }
                b"DEFAULT" => {
                    self.advance();
                    if self.is_kw("NOT") {
                        return Err(self.error());
                    }
                    col.default = Some(self.parse_unary()?);
                }
                b"AUTO_INCREMENT" => {
                    self.advance();
                    col.auto_increment = true;
                }
                b"PRIMARY" | b"KEY" => {
                    self.eat_kw("PRIMARY");
                    self.expect_kw("KEY")?;
                    col.primary_key = true;
                    col.not_null = true;
                }
                b"UNIQUE" => {
                    self.advance();
                    if !self.eat_kw("KEY") {
                        self.eat_kw("INDEX");
                    }
                    col.unique = true;
                }
                b"COMMENT" => {
                    self.advance();
                    col.comment = Some(self.string_literal()?);
                }
                b"ON" => {
                    self.advance();
                    self.expect_kw("UPDATE")?;
                    let mut b2 = [0u8; 32];
                    let f = self.upper_word(0, &mut b2);
                    if !(niladic_function(f) || f == b"NOW") {
                        return Err(self.error());
                    }
                    self.parse_primary()?;
                    col.on_update_now = true;
                }
                b"CHARACTER" | b"CHARSET" | b"COLLATE" | b"BINARY" | b"ASCII" | b"UNICODE" => {
                    self.skip_charset_attrs()?;
                }
                b"COLUMN_FORMAT" | b"STORAGE" | b"SRID" => {
                    self.advance();
                    self.ident_any()
                        .or_else(|_| self.parse_u64().map(|_| String::new()))?;
                }
                b"VISIBLE" | b"INVISIBLE" => self.advance(),
                b"CHECK" | b"CONSTRAINT" => {
                    let name = match self.eat_kw("CONSTRAINT") && !self.is_kw("CHECK") {
                        true => Some(self.ident()?),
                        false => None,
                    };
                    let check = self.parse_check(name, Some(&col.name))?;
                    self.column_checks.push(check);
                }
                b"REFERENCES" => self.skip_references()?,
                b"GENERATED" | b"AS" => {
                    self.check_generated_attrs(&col, true)?;
                    col.generated = Some(self.parse_generated()?);
                }
                _ => break,
            }
            self.check_generated_attrs(&col, false)?;
        }
        col.charset = std::mem::take(&mut self.column_charset);
        Ok(col)
    }

    fn int_attrs(&mut self) -> Result<bool> {
        self.parse_opt_len()?;
        let mut unsigned = false;
        loop {
            if self.eat_kw("UNSIGNED") || self.eat_kw("ZEROFILL") {
                unsigned = true;
            } else if !self.eat_kw("SIGNED") {
                return Ok(unsigned);
            }
        }
    }

    /// Skips SIGNED/UNSIGNED/ZEROFILL after non-integer numeric types.
    fn num_attrs(&mut self) {
        while self.eat_kw("UNSIGNED") || self.eat_kw("SIGNED") || self.eat_kw("ZEROFILL") {}
    }

    fn string_len(&self, n: u64, max: u64, col: &str) -> Result<u32> {
        if n > max {
            return Err(Error::new(
                Code::WrongArguments,
                format!(
                    "Column length too big for column '{col}' (max = {max}); use BLOB or TEXT instead"
                ),
            ));
        }
        Ok(n as u32)
    }

    /// Column types. ENUM/SET keep their members (see `enumset`).
    fn parse_data_type(&mut self, col: &str) -> Result<DataType> {
        let mut buf = [0u8; 32];
        let up = self.upper_word(0, &mut buf).to_vec();
        if up.is_empty() {
            return Err(self.error());
        }
        self.advance();
        let text_for = |n: u64| -> DataType {
            let max_len = match n {
                0..=255 => 255,
                256..=65535 => 65535,
                65536..=16777215 => 16777215,
                _ => u32::MAX,
            };
            DataType::Text { max_len }
        };
        let blob_for = |n: u64| -> DataType {
            match text_for(n) {
                DataType::Text { max_len } => DataType::Blob { max_len },
                t => t,
            }
        };
        let t = match up.as_slice() {
            b"TINYINT" | b"INT1" => DataType::TinyInt {
                unsigned: self.int_attrs()?,
            },
            b"BOOL" | b"BOOLEAN" => DataType::TinyInt { unsigned: false },
            b"SMALLINT" | b"INT2" => DataType::SmallInt {
                unsigned: self.int_attrs()?,
            },
            b"MEDIUMINT" | b"MIDDLEINT" | b"INT3" => DataType::MediumInt {
                unsigned: self.int_attrs()?,
            },
            b"INT" | b"INTEGER" | b"INT4" => DataType::Int {
                unsigned: self.int_attrs()?,
            },
            b"BIGINT" | b"INT8" => DataType::BigInt {
                unsigned: self.int_attrs()?,
            },
            b"DECIMAL" | b"DEC" | b"NUMERIC" | b"FIXED" => {
                let (p, s) = self.parse_opt_prec_scale()?;
                let (precision, scale) = self.decimal_spec(p, s, col)?;
                self.num_attrs();
                DataType::Decimal { precision, scale }
            }
            b"FLOAT" | b"FLOAT4" => {
                let (p, s) = self.parse_opt_prec_scale()?;
                if let (Some(p), Some(_)) = (p, s) {
                    self.decimal_spec(Some(p), s, col)?;
                }
                self.num_attrs();
                // FLOAT(p) with p > 24 is a DOUBLE in MySQL.
                match (p, s) {
                    (Some(p), None) if p > 53 => {
                        return Err(Error::new(
                            Code::WrongArguments,
                            format!("Too-big precision {p} specified for '{col}'. Maximum is 53."),
                        ))
                    }
                    (Some(p), None) if p > 24 => DataType::Double,
                    _ => DataType::Float,
                }
            }
            b"DOUBLE" | b"REAL" | b"FLOAT8" => {
                self.eat_kw("PRECISION");
                let (p, s) = self.parse_opt_prec_scale()?;
                if p.is_some() {
                    self.decimal_spec(p, s.or(Some(0)), col)?;
                }
                self.num_attrs();
                DataType::Double
            }
            b"CHAR" | b"CHARACTER" | b"NCHAR" | b"NATIONAL" | b"NVARCHAR" | b"VARCHAR"
            | b"VARCHARACTER" => {
                let mut varying =
                    matches!(up.as_slice(), b"VARCHAR" | b"VARCHARACTER" | b"NVARCHAR");
                if up.as_slice() == b"NATIONAL" {
                    if self.eat_kw("VARCHAR") {
                        varying = true;
                    } else if !self.eat_kw("CHAR") {
                        self.expect_kw("CHARACTER")?;
                    }
                }
                if self.eat_kw("VARYING") {
                    varying = true;
                }
                let len = self.parse_opt_len()?;
                let t = if varying {
                    let Some(n) = len else {
                        return Err(self.error());
                    };
                    DataType::VarChar {
                        len: self.string_len(n, 65535, col)?,
                    }
                } else {
                    DataType::Char {
                        len: self.string_len(len.unwrap_or(1), 255, col)?,
                    }
                };
                self.text_charset(t)?
            }
            b"BINARY" => {
                let n = self.parse_opt_len()?.unwrap_or(1);
                DataType::Binary {
                    len: self.string_len(n, 255, col)?,
                }
            }
            b"VARBINARY" => {
                let Some(n) = self.parse_opt_len()? else {
                    return Err(self.error());
                };
                DataType::VarBinary {
                    len: self.string_len(n, 65535, col)?,
                }
            }
            b"TINYTEXT" => self.text_charset(DataType::Text { max_len: 255 })?,
            b"TEXT" => {
                let n = self.parse_opt_len()?.unwrap_or(65535);
                self.text_charset(text_for(n))?
            }
            b"MEDIUMTEXT" => self.text_charset(DataType::Text { max_len: 16777215 })?,
            b"LONGTEXT" => self.text_charset(DataType::Text { max_len: u32::MAX })?,
            b"LONG" => {
                // LONG / LONG VARCHAR are MEDIUMTEXT, LONG VARBINARY MEDIUMBLOB;
                // LONG BYTE is MEDIUMTEXT in the binary character set.
                if self.eat_kw("VARBINARY") {
                    DataType::Blob { max_len: 16777215 }
                } else {
                    self.eat_kw("VARCHAR");
                    self.text_charset(DataType::Text { max_len: 16777215 })?
                }
            }
            b"TINYBLOB" => DataType::Blob { max_len: 255 },
            b"BLOB" => blob_for(self.parse_opt_len()?.unwrap_or(65535)),
            b"MEDIUMBLOB" => DataType::Blob { max_len: 16777215 },
            b"LONGBLOB" => DataType::Blob { max_len: u32::MAX },
            b"DATE" => DataType::Date,
            b"DATETIME" | b"TIMESTAMP" => {
                let fsp = self.parse_opt_len()?.unwrap_or(0);
                if fsp > 6 {
                    return Err(Error::new(
                        Code::TooBigPrecision,
                        format!("Too-big precision {fsp} specified for '{col}'. Maximum is 6."),
                    ));
                }
                if up.as_slice() == b"DATETIME" {
                    DataType::DateTime { fsp: fsp as u8 }
                } else {
                    DataType::Timestamp { fsp: fsp as u8 }
                }
            }
            b"TIME" => {
                let fsp = self.parse_opt_len()?.unwrap_or(0);
                if fsp > 6 {
                    return Err(Error::new(
                        Code::TooBigPrecision,
                        format!("Too-big precision {fsp} specified for '{col}'. Maximum is 6."),
                    ));
                }
                DataType::Time { fsp: fsp as u8 }
            }
            b"YEAR" => {
                self.parse_opt_len()?;
                DataType::Year
            }
            b"ENUM" | b"SET" => {
                self.expect(&Tok::LParen)?;
                let mut names = vec![self.string_literal()?];
                while self.eat(&Tok::Comma) {
                    names.push(self.string_literal()?);
                }
                self.expect(&Tok::RParen)?;
                self.skip_charset_attrs()?;
                lockstep_types::enumset::data_type(names, up.as_slice() == b"SET", col)?
            }
            b"JSON" => DataType::Json,
            b"BIT" => {
                let n = self.parse_opt_len()?.unwrap_or(1);
                if n == 0 || n > 64 {
                    return Err(Error::new(
                        Code::WrongArguments,
                        format!("Display width out of range for column '{col}' (max = 64)"),
                    ));
                }
                DataType::Bit { width: n as u8 }
            }
            b"GEOMETRY"
            | b"POINT"
            | b"LINESTRING"
            | b"POLYGON"
            | b"MULTIPOINT"
            | b"MULTILINESTRING"
            | b"MULTIPOLYGON"
            | b"GEOMETRYCOLLECTION" => return Err(self.unsupported("spatial types")),
            _ => {
                self.pos = self.pos.saturating_sub(1);
                return Err(self.error());
            }
        };
        Ok(t)
    }

    fn parse_drop(&mut self) -> Result<Statement> {
        self.advance();
        if let Some(routine) = self.parse_drop_routine()? {
            return Ok(routine);
        }
        let mut buf = [0u8; 32];
        match self.upper_word(0, &mut buf) {
            b"DATABASE" | b"SCHEMA" => {
                self.advance();
                let if_exists = self.if_exists()?;
                Ok(Statement::DropDatabase {
                    name: self.ident()?,
                    if_exists,
                })
            }
            b"TABLE" | b"TABLES" | b"TEMPORARY" => {
                let temporary = self.eat_kw("TEMPORARY");
                if temporary && !self.is_kw("TABLE") {
                    return Err(self.error());
                }
                self.advance();
                let if_exists = self.if_exists()?;
                let mut tables = Vec::new();
                loop {
                    tables.push(self.object_name()?);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                if !self.eat_kw("RESTRICT") {
                    self.eat_kw("CASCADE");
                }
                Ok(Statement::DropTable {
                    tables,
                    if_exists,
                    temporary,
                })
            }
            b"INDEX" => {
                self.advance();
                let name = self.ident_any()?;
                self.expect_kw("ON")?;
                let table = self.object_name()?;
                let online = self.parse_ddl_options()?;
                Ok(Statement::DropIndex {
                    name,
                    table,
                    online,
                })
            }
            b"ROLE" => self.parse_drop_role(),
            b"USER" => {
                self.advance();
                let if_exists = self.if_exists()?;
                let users = self.user_names()?;
                Ok(Statement::DropUser { if_exists, users })
            }
            b"VIEW" => {
                self.advance();
                self.parse_drop_view()
            }
            b"" => Err(self.error()),
            other => {
                let what = format!("DROP {}", String::from_utf8_lossy(other));
                Err(self.unsupported(&what))
            }
        }
    }

    fn parse_alter(&mut self) -> Result<Statement> {
        let start = self.pos;
        self.advance();
        if self.eat_kw("USER") {
            if let Some(s) = self.parse_alter_user_default_role()? {
                return Ok(s);
            }
            let if_exists = self.if_exists()?;
            let users = self.user_specs()?;
            return Ok(Statement::AlterUser { if_exists, users });
        }
        if self.is_any_kw(&["ALGORITHM", "DEFINER", "SQL", "VIEW"]) {
            return match self.parse_view(true)? {
                Some(view) => Ok(view),
                None => Err(self.not_a_view()),
            };
        }
        if !self.eat_kw("TABLE") {
            return match self.word_at(0) {
                Some(w) => Err(self.unsupported(&format!("ALTER {}", w.to_ascii_uppercase()))),
                None => Err(self.error()),
            };
        }
        let table = self.object_name()?;
        // mysqldump wraps data loads in DISABLE/ENABLE KEYS: no-ops here.
        if (self.is_kw("DISABLE") || self.is_kw("ENABLE"))
            && self.kw_at(1, "KEYS")
            && matches!(self.tok_at(2), Tok::Semi | Tok::Eof)
        {
            self.pos = start;
            return Ok(self.parse_ignored());
        }
        let mut actions = Vec::new();
        let mut online = DdlOptions::default();
        loop {
            if !self.parse_ddl_option(&mut online)? {
                self.parse_alter_clause(&mut actions)?;
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(Statement::AlterTable {
            table,
            actions,
            online,
        })
    }

    /// One clause of ALTER TABLE. Options that change nothing here
    /// (ENGINE=InnoDB, the utf8mb4 character set) push no action; any
    /// other option is refused (ALGORITHM and LOCK: `parse_ddl_option`).
    fn parse_alter_clause(&mut self, actions: &mut Vec<AlterAction>) -> Result<()> {
        let mut buf = [0u8; 32];
        let up = self.upper_word(0, &mut buf).to_vec();
        match up.as_slice() {
            b"ENGINE" => {
                self.advance();
                self.eat_eq();
                let engine = self.ident_any()?;
                if !engine.eq_ignore_ascii_case("InnoDB") {
                    return Err(self.unsupported(&format!("ENGINE={engine}")));
                }
            }
            b"AUTO_INCREMENT" => {
                self.advance();
                self.eat_eq();
                actions.push(AlterAction::AutoIncrement(self.parse_u64()?));
            }
            b"CONVERT" => {
                self.advance();
                self.expect_kw("TO")?;
                let spec = self.alter_charset()?;
                actions.push(AlterAction::Charset {
                    spec,
                    convert: true,
                });
            }
            b"DEFAULT" | b"CHARACTER" | b"CHARSET" | b"COLLATE" => {
                self.eat_kw("DEFAULT");
                let spec = self.alter_charset()?;
                actions.push(AlterAction::Charset {
                    spec,
                    convert: false,
                });
            }
            b"COMMENT" => {
                self.advance();
                self.eat_eq();
                let comment = self.string_literal()?;
                actions.push(AlterAction::TableComment { comment });
            }
            b"ADD" => self.parse_alter_add(actions)?,
            b"DROP" => self.parse_alter_drop(actions)?,
            b"MODIFY" | b"CHANGE" => {
                self.advance();
                self.eat_kw("COLUMN");
                let old = if up == b"CHANGE" {
                    Some(self.ident()?)
                } else {
                    None
                };
                let column = self.parse_column_def()?;
                let position = self.column_position()?;
                actions.push(AlterAction::ChangeColumn {
                    old: old.unwrap_or_else(|| column.name.clone()),
                    column,
                    position,
                });
                self.column_checks_to(actions);
            }
            b"RENAME" => {
                self.advance();
                if self.eat_kw("COLUMN") {
                    let from = self.ident()?;
                    self.expect_kw("TO")?;
                    let to = self.ident()?;
                    actions.push(AlterAction::RenameColumn { from, to });
                } else if self.eat_kw("INDEX") || self.eat_kw("KEY") {
                    let from = self.ident()?;
                    self.expect_kw("TO")?;
                    let to = self.ident()?;
                    actions.push(AlterAction::RenameIndex { from, to });
                } else {
                    if !self.eat_kw("TO") {
                        self.eat_kw("AS");
                    }
                    let to = self.object_name()?;
                    actions.push(AlterAction::RenameTable { to });
                }
            }
            b"ALTER" if self.kw_at(1, "CHECK") || self.kw_at(1, "CONSTRAINT") => {
                self.pos += 2;
                let name = self.ident()?;
                let enforced = self.parse_enforced()?.unwrap_or(true);
                actions.push(AlterAction::AlterCheck { name, enforced });
            }
            b"ALTER" if self.kw_at(1, "INDEX") || self.kw_at(1, "KEY") => {
                // Invisible indexes are not built: refused, not ignored.
                return Err(self.unsupported("ALTER TABLE ALTER INDEX"));
            }
            b"ALTER" => {
                self.advance();
                self.eat_kw("COLUMN");
                let column = self.ident()?;
                let default = if self.eat_kw("SET") {
                    self.expect_kw("DEFAULT")?;
                    Some(self.parse_unary()?)
                } else if self.eat_kw("DROP") {
                    self.expect_kw("DEFAULT")?;
                    None
                } else {
                    return Err(self.unsupported("ALTER TABLE ALTER COLUMN"));
                };
                actions.push(AlterAction::SetDefault { column, default });
            }
            _ => return Err(self.alter_unsupported()),
        }
        Ok(())
    }

    /// [CHARACTER SET|CHARSET] [=] utf8mb4 [COLLATE [=] x]: only what the
    /// tables already are is accepted.
    fn alter_charset(&mut self) -> Result<CharsetSpec> {
        let mut spec = CharsetSpec::default();
        loop {
            if self.eat_kw("CHARACTER") {
                self.expect_kw("SET")?;
            } else if !self.eat_kw("CHARSET") {
                if !self.eat_kw("COLLATE") {
                    return match spec.is_empty() {
                        true => Err(self.error()),
                        false => Ok(spec),
                    };
                }
                self.eat_eq();
                spec.collation = Some(self.name_or_string()?);
                continue;
            }
            self.eat_eq();
            spec.charset = Some(self.name_or_string()?);
        }
    }

    /// FIRST | AFTER c, after a column definition.
    fn column_position(&mut self) -> Result<Option<ColumnPosition>> {
        if self.eat_kw("FIRST") {
            Ok(Some(ColumnPosition::First))
        } else if self.eat_kw("AFTER") {
            Ok(Some(ColumnPosition::After(self.ident()?)))
        } else {
            Ok(None)
        }
    }

    /// ADD [COLUMN] def [FIRST|AFTER c], ADD [COLUMN] (def, ...), ADD
    /// [CONSTRAINT [n]] PRIMARY KEY | UNIQUE | INDEX | KEY. Foreign keys
    /// and checks are refused (1235): they would not be enforced.
    fn parse_alter_add(&mut self, actions: &mut Vec<AlterAction>) -> Result<()> {
        let start = self.pos;
        self.advance();
        const NOT_COLUMN: [&str; 9] = [
            "CONSTRAINT",
            "UNIQUE",
            "INDEX",
            "KEY",
            "PRIMARY",
            "FOREIGN",
            "CHECK",
            "FULLTEXT",
            "SPATIAL",
        ];
        if self.eat_kw("COLUMN") || !self.is_any_kw(&NOT_COLUMN) {
            if self.eat(&Tok::LParen) {
                loop {
                    let column = self.parse_column_def()?;
                    actions.push(AlterAction::AddColumn {
                        column,
                        position: None,
                    });
                    self.column_checks_to(actions);
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                return self.expect(&Tok::RParen);
            }
            let column = self.parse_column_def()?;
            let position = self.column_position()?;
            actions.push(AlterAction::AddColumn { column, position });
            self.column_checks_to(actions);
            return Ok(());
        }
        let mut constraint_name = None;
        if self.eat_kw("CONSTRAINT")
            && self.is_ident_start()
            && !self.is_any_kw(&["PRIMARY", "UNIQUE", "FOREIGN", "CHECK"])
        {
            constraint_name = Some(self.ident()?);
        }
        if self.is_kw("FOREIGN") {
            let fk = self.parse_foreign_key(constraint_name)?;
            actions.push(AlterAction::AddForeignKey(fk));
            return Ok(());
        }
        if self.is_kw("CHECK") {
            let check = self.parse_check(constraint_name, None)?;
            actions.push(AlterAction::AddCheck(check));
            return Ok(());
        }
        if self.eat_kw("PRIMARY") {
            self.expect_kw("KEY")?;
            self.skip_index_type()?;
            let columns = self.parse_index_columns()?;
            let comment = self.index_options()?;
            actions.push(AlterAction::AddPrimaryKey { columns, comment });
            return Ok(());
        }
        let unique = self.eat_kw("UNIQUE");
        let is_index = self.eat_kw("INDEX") || self.eat_kw("KEY");
        if !unique && !is_index {
            self.pos = start;
            return Err(self.alter_unsupported());
        }
        // Without its own name, the key takes the constraint's.
        let name = if self.is_ident_start() && !self.is_kw("USING") {
            Some(self.ident()?)
        } else {
            constraint_name
        };
        self.skip_index_type()?;
        let columns = self.parse_index_columns()?;
        let comment = self.index_options()?;
        actions.push(AlterAction::AddIndex {
            name,
            columns,
            unique,
            comment,
        });
        Ok(())
    }

    /// DROP INDEX|KEY n, DROP PRIMARY KEY, DROP [COLUMN] c.
    fn parse_alter_drop(&mut self, actions: &mut Vec<AlterAction>) -> Result<()> {
        let start = self.pos;
        self.advance();
        if self.eat_kw("INDEX") || self.eat_kw("KEY") {
            let name = self.ident_any()?;
            actions.push(AlterAction::DropIndex { name });
        } else if self.eat_kw("PRIMARY") {
            self.expect_kw("KEY")?;
            actions.push(AlterAction::DropPrimaryKey);
        } else if self.is_kw("FOREIGN") && self.kw_at(1, "KEY") {
            self.pos += 2;
            let name = self.ident()?;
            actions.push(AlterAction::DropForeignKey { name });
        } else if self.eat_kw("CHECK") {
            let name = self.ident()?;
            actions.push(AlterAction::DropCheck { name });
        } else if self.eat_kw("CONSTRAINT") {
            let name = self.ident()?;
            actions.push(AlterAction::DropConstraint { name });
        } else if self.is_any_kw(&["FOREIGN", "PARTITION"]) {
            self.pos = start;
            return Err(self.alter_unsupported());
        } else {
            self.eat_kw("COLUMN");
            let name = self.ident()?;
            actions.push(AlterAction::DropColumn { name });
        }
        Ok(())
    }

    /// RENAME TABLE a TO b [, c TO d ...]
    fn parse_rename_table(&mut self) -> Result<Statement> {
        self.pos += 2;
        let mut renames = Vec::new();
        loop {
            let from = self.object_name()?;
            self.expect_kw("TO")?;
            let to = self.object_name()?;
            renames.push((from, to));
            if !self.eat(&Tok::Comma) {
                return Ok(Statement::RenameTable { renames });
            }
        }
    }

    fn alter_unsupported(&self) -> Error {
        if self.at_end() {
            return self.error();
        }
        let mut what = String::from("ALTER TABLE");
        for n in 0..2 {
            match self.word_at(n) {
                Some(w) => {
                    what.push(' ');
                    what.push_str(&w.to_ascii_uppercase());
                }
                None => break,
            }
        }
        self.unsupported(&what)
    }

    // ---- SET ----

    fn parse_set(&mut self) -> Result<Statement> {
        self.advance();
        // SET [GLOBAL|SESSION|LOCAL] TRANSACTION ...
        let scope_kw = if self.kw_at(1, "TRANSACTION") {
            let mut buf = [0u8; 32];
            match self.upper_word(0, &mut buf) {
                b"GLOBAL" => Some(Scope::Global),
                b"SESSION" | b"LOCAL" => Some(Scope::Session),
                _ => None,
            }
        } else {
            None
        };
        if scope_kw.is_some() || self.is_kw("TRANSACTION") {
            if scope_kw.is_some() {
                self.advance();
            }
            self.advance();
            return self.parse_set_transaction(scope_kw.unwrap_or(Scope::Next));
        }
        if self.is_kw("PASSWORD") {
            self.advance();
            let user = if self.eat_kw("FOR") {
                self.user_name()?
            } else {
                None
            };
            self.expect(&Tok::Eq)?;
            let password = self.string_literal()?;
            return Ok(Statement::SetPassword { user, password });
        }
        if self.is_kw("ROLE") || (self.is_kw("DEFAULT") && self.kw_at(1, "ROLE")) {
            return self.parse_set_role();
        }
        if self.is_kw("RESOURCE") {
            return Err(self.unsupported(&format!("SET {}", self.text_at(0).to_ascii_uppercase())));
        }
        let mut list = Vec::new();
        // MySQL: the latest GLOBAL/SESSION modifier applies to the following
        // assignments that have none.
        let mut scope = Scope::Session;
        loop {
            list.push(self.parse_set_assignment(&mut scope)?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(Statement::Set(list))
    }

    fn parse_set_transaction(&mut self, scope: Scope) -> Result<Statement> {
        let mut isolation = None;
        let mut read_only = None;
        loop {
            if self.eat_kw("ISOLATION") {
                self.expect_kw("LEVEL")?;
                let mut buf = [0u8; 32];
                let level = match self.upper_word(0, &mut buf) {
                    b"READ" => {
                        self.advance();
                        if self.eat_kw("UNCOMMITTED") {
                            "READ-UNCOMMITTED"
                        } else {
                            self.expect_kw("COMMITTED")?;
                            "READ-COMMITTED"
                        }
                    }
                    b"REPEATABLE" => {
                        self.advance();
                        self.expect_kw("READ")?;
                        "REPEATABLE-READ"
                    }
                    b"SERIALIZABLE" => {
                        self.advance();
                        "SERIALIZABLE"
                    }
                    _ => return Err(self.error()),
                };
                isolation = Some(level.to_string());
            } else if self.eat_kw("READ") {
                if self.eat_kw("ONLY") {
                    read_only = Some(true);
                } else {
                    self.expect_kw("WRITE")?;
                    read_only = Some(false);
                }
            } else {
                return Err(self.error());
            }
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        Ok(Statement::SetTransaction {
            scope,
            isolation,
            read_only,
        })
    }

    fn parse_set_assignment(&mut self, current: &mut Scope) -> Result<SetAssignment> {
        if self.eat_kw("NAMES") {
            let charset = if self.eat_kw("DEFAULT") {
                // The server default character set.
                "utf8mb4".to_string()
            } else {
                self.name_or_string()?.to_ascii_lowercase()
            };
            let collation = if self.eat_kw("COLLATE") {
                Some(self.name_or_string()?.to_ascii_lowercase())
            } else {
                None
            };
            return Ok(SetAssignment {
                target: SetTarget::Names { charset, collation },
                value: None,
            });
        }
        if self.eat_kw("CHARSET") || (self.is_kw("CHARACTER") && self.kw_at(1, "SET")) {
            if self.is_kw("CHARACTER") {
                self.pos += 2;
            }
            let cs = if self.eat_kw("DEFAULT") {
                "utf8mb4".to_string()
            } else {
                self.name_or_string()?.to_ascii_lowercase()
            };
            return Ok(SetAssignment {
                target: SetTarget::CharacterSet(cs),
                value: None,
            });
        }
        let target = match self.peek() {
            Tok::UserVar(_) => match self.take() {
                Tok::UserVar(name) => SetTarget::User(name.to_ascii_lowercase()),
                _ => return Err(self.error()),
            },
            Tok::AtAt => {
                self.advance();
                let (scope, name) = self.parse_sysvar_name()?;
                let scope = match scope {
                    VarScope::Global => Scope::Global,
                    _ => Scope::Session,
                };
                SetTarget::System { scope, name }
            }
            Tok::Word | Tok::Ident(_) => {
                let mut buf = [0u8; 32];
                let scope = match self.upper_word(0, &mut buf) {
                    b"GLOBAL" | b"PERSIST" | b"PERSIST_ONLY" => Some(Scope::Global),
                    b"SESSION" | b"LOCAL" => Some(Scope::Session),
                    _ => None,
                };
                // `SET session = 1` would name a variable called session.
                let scope = match scope {
                    Some(s) if !matches!(self.tok_at(1), Tok::Eq | Tok::Assign) => {
                        self.advance();
                        *current = s;
                        s
                    }
                    _ => *current,
                };
                let mut name = self.ident_any()?;
                while self.eat(&Tok::Dot) {
                    name.push('.');
                    name.push_str(&self.ident_any()?);
                }
                name.make_ascii_lowercase();
                SetTarget::System { scope, name }
            }
            _ => return Err(self.error()),
        };
        if !self.eat(&Tok::Eq) && !self.eat(&Tok::Assign) {
            return Err(self.error());
        }
        let value = self.parse_set_value()?;
        Ok(SetAssignment {
            target,
            value: Some(value),
        })
    }

    /// A SET value; a lone bare word (ON, OFF, TRADITIONAL, binary, ...)
    /// means that word as a string.
    fn parse_set_value(&mut self) -> Result<Expr> {
        if matches!(self.peek(), Tok::Word)
            && matches!(self.tok_at(1), Tok::Comma | Tok::Semi | Tok::Eof)
        {
            let mut buf = [0u8; 32];
            match self.upper_word(0, &mut buf) {
                b"TRUE" | b"FALSE" | b"NULL" => {}
                b"DEFAULT" => {
                    self.advance();
                    return Ok(Expr::Default);
                }
                _ => {
                    let w = self.text_at(0);
                    self.advance();
                    return Ok(str_lit(w));
                }
            }
        }
        self.parse_expr()
    }

    // ---- SHOW / DESCRIBE / EXPLAIN ----

    fn parse_show_filter(&mut self) -> Result<Option<ShowFilter>> {
        if self.eat_kw("LIKE") {
            Ok(Some(ShowFilter::Like(self.string_literal()?)))
        } else if self.eat_kw("WHERE") {
            Ok(Some(ShowFilter::Where(self.parse_expr()?)))
        } else {
            Ok(None)
        }
    }

    /// `FROM|IN db`, if present.
    fn parse_show_db(&mut self) -> Result<Option<String>> {
        if self.eat_kw("FROM") || self.eat_kw("IN") {
            Ok(Some(self.ident()?))
        } else {
            Ok(None)
        }
    }

    /// `FROM|IN t [FROM|IN db]`
    fn parse_show_table(&mut self) -> Result<ObjectName> {
        if !self.eat_kw("FROM") && !self.eat_kw("IN") {
            return Err(self.error());
        }
        let mut table = self.object_name()?;
        if let Some(db) = self.parse_show_db()? {
            table.database = Some(db);
        }
        Ok(table)
    }

    /// SHOW WARNINGS' `LIMIT [offset,] n` (integer literals): (offset, n).
    fn parse_diagnostics_limit(&mut self) -> Result<Option<(u64, u64)>> {
        if !self.eat_kw("LIMIT") {
            return Ok(None);
        }
        let first = self.parse_u64()?;
        if self.eat(&Tok::Comma) {
            return Ok(Some((first, self.parse_u64()?)));
        }
        if self.eat_kw("OFFSET") {
            return Ok(Some((self.parse_u64()?, first)));
        }
        Ok(Some((0, first)))
    }

    fn parse_show(&mut self) -> Result<Statement> {
        self.advance();
        let full = self.eat_kw("FULL");
        let mut scope = Scope::Session;
        if self.eat_kw("GLOBAL") {
            scope = Scope::Global;
        } else if self.eat_kw("SESSION") || self.eat_kw("LOCAL") {
            scope = Scope::Session;
        }
        let mut buf = [0u8; 32];
        let up = self.upper_word(0, &mut buf).to_vec();
        if up.is_empty() {
            return Err(self.error());
        }
        if matches!(up.as_slice(), b"REPLICA" | b"SLAVE") {
            return self.parse_show_replica_status();
        }
        if let Some(routine) = self.parse_show_routine()? {
            return Ok(routine);
        }
        self.advance();
        let show = match up.as_slice() {
            b"DATABASES" | b"SCHEMAS" => Show::Databases {
                filter: self.parse_show_filter()?,
            },
            b"TABLES" => Show::Tables {
                database: self.parse_show_db()?,
                full,
                filter: self.parse_show_filter()?,
            },
            b"COLUMNS" | b"FIELDS" => Show::Columns {
                table: self.parse_show_table()?,
                full,
                filter: self.parse_show_filter()?,
            },
            b"INDEX" | b"INDEXES" | b"KEYS" => {
                let table = self.parse_show_table()?;
                if self.eat_kw("WHERE") {
                    self.parse_expr()?;
                }
                Show::Index { table }
            }
            b"CREATE" => {
                if self.eat_kw("TABLE") {
                    Show::CreateTable {
                        table: self.object_name()?,
                    }
                } else if self.eat_kw("DATABASE") || self.eat_kw("SCHEMA") {
                    self.if_not_exists()?;
                    Show::CreateDatabase {
                        name: self.ident()?,
                    }
                } else if self.eat_kw("VIEW") {
                    Show::CreateView {
                        view: self.object_name()?,
                    }
                } else {
                    return Err(self.unsupported("SHOW CREATE"));
                }
            }
            b"VARIABLES" => Show::Variables {
                scope,
                filter: self.parse_show_filter()?,
            },
            b"STATUS" => Show::Status {
                scope,
                filter: self.parse_show_filter()?,
            },
            b"PROCESSLIST" => Show::ProcessList { full },
            b"WARNINGS" | b"ERRORS" => Show::Diagnostics {
                errors: up.as_slice() == b"ERRORS",
                count: false,
                limit: self.parse_diagnostics_limit()?,
            },
            b"COUNT" => {
                // SHOW COUNT(*) WARNINGS | ERRORS
                self.expect(&Tok::LParen)?;
                self.expect(&Tok::Star)?;
                self.expect(&Tok::RParen)?;
                let errors = self.eat_kw("ERRORS");
                if !errors {
                    self.expect_kw("WARNINGS")?;
                }
                Show::Diagnostics {
                    errors,
                    count: true,
                    limit: None,
                }
            }
            b"STORAGE" => {
                self.expect_kw("ENGINES")?;
                Show::Engines
            }
            b"ENGINES" => Show::Engines,
            b"PLUGINS" => Show::Plugins,
            b"COLLATION" => Show::Collation {
                filter: self.parse_show_filter()?,
            },
            b"CHARSET" => Show::CharacterSet {
                filter: self.parse_show_filter()?,
            },
            b"CHARACTER" => {
                self.expect_kw("SET")?;
                Show::CharacterSet {
                    filter: self.parse_show_filter()?,
                }
            }
            b"TABLE" => {
                self.expect_kw("STATUS")?;
                Show::TableStatus {
                    database: self.parse_show_db()?,
                    filter: self.parse_show_filter()?,
                }
            }
            b"GRANTS" => {
                let user = if self.eat_kw("FOR") {
                    self.user_name()?
                } else {
                    None
                };
                if self.eat_kw("USING") {
                    let Some(user) = user else {
                        return Err(self.unsupported("SHOW GRANTS FOR CURRENT_USER USING"));
                    };
                    return self.parse_show_grants_using(user);
                }
                Show::Grants { user }
            }
            b"ENGINE" => {
                self.ident_any()?;
                if !self.eat_kw("STATUS") {
                    self.expect_kw("MUTEX")?;
                }
                Show::EngineStatus
            }
            b"MASTER" => {
                if self.eat_kw("LOGS") {
                    Show::BinaryLogs
                } else {
                    self.expect_kw("STATUS")?;
                    Show::MasterStatus
                }
            }
            b"BINARY" => {
                if self.eat_kw("LOGS") {
                    Show::BinaryLogs
                } else {
                    self.expect_kw("LOG")?;
                    self.expect_kw("STATUS")?;
                    Show::MasterStatus
                }
            }
            _ => {
                self.pos = self.pos.saturating_sub(1);
                let what = format!("SHOW {}", self.text_at(0).to_ascii_uppercase());
                return Err(self.unsupported(&what));
            }
        };
        Ok(Statement::Show(show))
    }

    fn parse_explain(&mut self) -> Result<Statement> {
        self.advance();
        let mut explain_opts = false;
        let mut analyze = false;
        let mut format = ExplainFormat::Traditional;
        loop {
            if self.is_kw("FORMAT") && self.tok_at(1) == &Tok::Eq {
                self.pos += 2;
                let name = self.ident_any()?;
                format = match name.to_ascii_uppercase().as_str() {
                    "TRADITIONAL" => ExplainFormat::Traditional,
                    "TREE" => ExplainFormat::Tree,
                    "JSON" => ExplainFormat::Json,
                    _ => {
                        return Err(Error::new(
                            Code::UnknownExplainFormat,
                            format!("Unknown EXPLAIN format name: '{name}'"),
                        ))
                    }
                };
                explain_opts = true;
            } else if self.eat_kw("EXTENDED") || self.eat_kw("PARTITIONS") {
                explain_opts = true;
            } else if self.eat_kw("ANALYZE") {
                analyze = true;
                explain_opts = true;
            } else {
                break;
            }
        }
        // EXPLAIN ANALYZE [FORMAT=TREE]: only the tree has times.
        if analyze {
            format = match format {
                ExplainFormat::Traditional | ExplainFormat::Tree => ExplainFormat::Analyze,
                _ => return Err(self.unsupported("EXPLAIN ANALYZE with this format")),
            };
        }
        if self.is_kw("FOR") && self.kw_at(1, "CONNECTION") {
            return Err(self.unsupported("EXPLAIN FOR CONNECTION"));
        }
        let stmt_start = self.is(&Tok::LParen)
            || self.is_any_kw(&[
                "SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE", "TABLE", "WITH",
            ]);
        if stmt_start {
            let inner = self.parse_statement()?;
            return Ok(Statement::Explain(Box::new(inner), format));
        }
        if explain_opts {
            return Err(self.error());
        }
        let table = self.object_name()?;
        // An optional column name or LIKE pattern.
        let column = match self.peek() {
            Tok::Str(_) | Tok::Ident(_) | Tok::Word => Some(self.name_or_string()?),
            _ => None,
        };
        Ok(Statement::Describe { table, column })
    }
}

// ---- users and privileges ----

/// Options after the users of CREATE/ALTER USER that lockstep accepts and
/// does not model (TLS requirements, resource limits, password policy).
const ACCOUNT_OPTIONS: &[&str] = &[
    "REQUIRE",
    "WITH",
    "PASSWORD",
    "ACCOUNT",
    "COMMENT",
    "ATTRIBUTE",
    "DEFAULT",
    "FAILED_LOGIN_ATTEMPTS",
    "PASSWORD_LOCK_TIME",
];

/// An account name part longer than MySQL stores (1470), counted in
/// characters as MySQL does.
fn check_length(text: &str, what: &str, max: usize) -> Result<()> {
    if text.chars().count() <= max {
        return Ok(());
    }
    Err(Error::new(
        Code::WrongStringLength,
        format!("String '{text}' is too long for {what} (should be no longer than {max})"),
    ))
}

impl Parser<'_> {
    /// `'u'@'host'`, `u@host`, `u` (host '%'), or CURRENT_USER[()] (None).
    fn user_name(&mut self) -> Result<Option<UserName>> {
        if self.eat_kw("CURRENT_USER") {
            if self.eat(&Tok::LParen) {
                self.expect(&Tok::RParen)?;
            }
            return Ok(None);
        }
        let user = match self.peek() {
            Tok::Str(_) => self.string_literal()?,
            _ => self.ident_any()?,
        };
        let host = match self.peek() {
            Tok::UserVar(_) => match self.take() {
                Tok::UserVar(h) => h,
                _ => return Err(self.error()),
            },
            _ => "%".to_string(),
        };
        check_length(&user, "user name", 32)?;
        check_length(&host, "host name", 255)?;
        Ok(Some(UserName { user, host }))
    }

    fn user_names(&mut self) -> Result<Vec<UserName>> {
        let mut users = Vec::new();
        loop {
            users.push(self.user_name()?.ok_or_else(|| self.error())?);
            if !self.eat(&Tok::Comma) {
                return Ok(users);
            }
        }
    }

    /// `user [IDENTIFIED BY 'pw' | IDENTIFIED WITH plugin [BY 'pw']], ...`
    /// then account options, which are skipped.
    fn user_specs(&mut self) -> Result<Vec<UserSpec>> {
        let mut users = Vec::new();
        loop {
            let name = self.user_name()?;
            let (mut password, mut plugin) = (None, None);
            if self.eat_kw("IDENTIFIED") {
                if self.eat_kw("WITH") {
                    plugin = Some(self.name_or_string()?);
                    if self.eat_kw("AS") {
                        return Err(self.unsupported("IDENTIFIED WITH ... AS 'hash'"));
                    }
                    if self.eat_kw("BY") {
                        password = Some(self.string_literal()?);
                    }
                } else {
                    self.expect_kw("BY")?;
                    if self.eat_kw("PASSWORD") {
                        return Err(self.unsupported("IDENTIFIED BY PASSWORD 'hash'"));
                    }
                    password = Some(self.string_literal()?);
                    // `IDENTIFIED BY 'pw' WITH plugin` is accepted too.
                    if self.is_kw("WITH")
                        && self.word_at(1).is_some_and(|w| w.ends_with("_password"))
                    {
                        self.advance();
                        plugin = Some(self.ident_any()?);
                    }
                }
            }
            users.push(UserSpec {
                name,
                password,
                plugin,
                require_ssl: None,
            });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        if self.eat_kw("REQUIRE") {
            let ssl = if self.eat_kw("NONE") {
                false
            } else if self.eat_kw("SSL") {
                true
            } else {
                return Err(self.unsupported("REQUIRE X509/ISSUER/SUBJECT/CIPHER"));
            };
            users.iter_mut().for_each(|u| u.require_ssl = Some(ssl));
        }
        if self.is_any_kw(ACCOUNT_OPTIONS) {
            // Skipped, but a DEFAULT ROLE here would set something.
            if (0..64).any(|n| self.kw_at(n, "DEFAULT") && self.kw_at(n + 1, "ROLE")) {
                return Err(self.unsupported("DEFAULT ROLE with other account options"));
            }
            while !self.at_end() {
                self.advance();
            }
        }
        Ok(users)
    }

    /// `ALL [PRIVILEGES]` or `priv [, priv ...]` up to ON (or FROM).
    fn priv_list(&mut self) -> Result<PrivList> {
        let mut list = PrivList {
            privs: lockstep_accounts::Privs::NONE,
            all: false,
        };
        loop {
            if self.eat_kw("ALL") {
                self.eat_kw("PRIVILEGES");
                list.all = true;
            } else {
                let mut words = Vec::new();
                while let Some(w) = self.word_at(0) {
                    if w.eq_ignore_ascii_case("ON") || w.eq_ignore_ascii_case("FROM") {
                        break;
                    }
                    words.push(w.to_ascii_uppercase());
                    self.advance();
                }
                if self.is(&Tok::LParen) {
                    return Err(self.unsupported("column privileges"));
                }
                let name = words.join(" ");
                if name == "USAGE" {
                    // No privilege at all.
                } else if name == "PROXY" || name.contains('_') {
                    return Err(self.unsupported(&format!("the {name} privilege")));
                } else {
                    let p =
                        lockstep_accounts::Privs::from_name(&name).ok_or_else(|| self.error())?;
                    list.privs = list.privs | p;
                }
            }
            if !self.eat(&Tok::Comma) {
                return Ok(list);
            }
        }
    }

    /// `*.*`, `*`, `db.*`, `db.t`, `t` after ON [TABLE].
    fn grant_level(&mut self) -> Result<GrantLevel> {
        self.eat_kw("TABLE");
        if self.eat(&Tok::Star) {
            if self.eat(&Tok::Dot) {
                self.expect(&Tok::Star)?;
                return Ok(GrantLevel::Global);
            }
            return Ok(GrantLevel::Database(None));
        }
        let first = self.ident_any()?;
        if !self.eat(&Tok::Dot) {
            return Ok(GrantLevel::Table(ObjectName {
                database: None,
                name: first,
            }));
        }
        if self.eat(&Tok::Star) {
            return Ok(GrantLevel::Database(Some(first)));
        }
        Ok(GrantLevel::Table(ObjectName {
            database: Some(first),
            name: self.ident_any()?,
        }))
    }

    fn parse_grant(&mut self) -> Result<Statement> {
        self.advance();
        if self.names_roles("TO") {
            return self.parse_grant_roles();
        }
        let privileges = self.priv_list()?;
        if !self.eat_kw("ON") {
            return Err(self.error());
        }
        let level = self.grant_level()?;
        self.expect_kw("TO")?;
        let users = self.user_names()?;
        let mut grant_option = false;
        if self.eat_kw("WITH") {
            self.expect_kw("GRANT")?;
            self.expect_kw("OPTION")?;
            grant_option = true;
        }
        Ok(Statement::Grant {
            privileges,
            level,
            users,
            grant_option,
        })
    }

    fn parse_revoke(&mut self) -> Result<Statement> {
        self.advance();
        if self.names_roles("FROM") {
            return self.parse_revoke_roles();
        }
        let privileges = self.priv_list()?;
        let level = if self.eat_kw("ON") {
            Some(self.grant_level()?)
        } else if privileges.all && privileges.privs == lockstep_accounts::Privs::GRANT_OPTION {
            None
        } else {
            return Err(self.unsupported("REVOKE of roles"));
        };
        self.expect_kw("FROM")?;
        let users = self.user_names()?;
        Ok(Statement::Revoke {
            privileges,
            level,
            users,
        })
    }
}

/// An exact literal (`123`, `1.50`, `.5`) as DECIMAL, if it has at most 65
/// significant digits (MySQL's DECIMAL limit); longer ones are DOUBLE.
fn decimal_literal(text: &str) -> Option<Decimal> {
    let d = Decimal::from_str(text).ok()?;
    (d.integer_digits() + d.scale() <= lockstep_types::decimal::MAX_PRECISION).then_some(d)
}

fn json_call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function {
        name: name.to_string(),
        args,
        distinct: false,
        star: false,
        database: None,
        spelled: None,
    }
}

/// The one table of a single-table UPDATE's table references.
fn single_table(from: &[TableRef]) -> Option<(ObjectName, Option<String>)> {
    match from {
        [TableRef::Table { name, alias, hints }] if hints.is_empty() => {
            Some((name.clone(), alias.clone()))
        }
        _ => None,
    }
}

/// The first base table named in table references.
fn first_table(from: &[TableRef]) -> Option<ObjectName> {
    from.iter().find_map(|t| match t {
        TableRef::Table { name, .. } => Some(name.clone()),
        TableRef::Derived { .. } | TableRef::Lateral(_) => None,
        TableRef::Join { left, right, .. } => first_table(std::slice::from_ref(left))
            .or_else(|| first_table(std::slice::from_ref(right))),
    })
}

/// The table options `table_options` keeps.
#[derive(Default)]
struct TableOptions {
    comment: Option<String>,
    auto_increment: Option<u64>,
    engine: Option<String>,
    charset: CharsetSpec,
}
