//! Replication administration statements: CHANGE REPLICATION SOURCE TO
//! (CHANGE MASTER TO), START/STOP/RESET REPLICA (SLAVE), SHOW REPLICA
//! (SLAVE) STATUS. Options are checked by name here and by value when the
//! session runs them (session/replication.rs).

use super::*;

/// Every option MySQL 8 knows in CHANGE REPLICATION SOURCE TO, by its
/// SOURCE_* name: the parser accepts these, the session decides which
/// ones lockstep supports (the others are refused with 1235).
const SOURCE_OPTIONS: &[&str] = &[
    "SOURCE_BIND",
    "SOURCE_HOST",
    "SOURCE_USER",
    "SOURCE_PASSWORD",
    "SOURCE_PORT",
    "PRIVILEGE_CHECKS_USER",
    "REQUIRE_ROW_FORMAT",
    "REQUIRE_TABLE_PRIMARY_KEY_CHECK",
    "ASSIGN_GTIDS_TO_ANONYMOUS_TRANSACTIONS",
    "SOURCE_LOG_FILE",
    "SOURCE_LOG_POS",
    "SOURCE_AUTO_POSITION",
    "RELAY_LOG_FILE",
    "RELAY_LOG_POS",
    "SOURCE_HEARTBEAT_PERIOD",
    "SOURCE_CONNECT_RETRY",
    "SOURCE_RETRY_COUNT",
    "SOURCE_CONNECTION_AUTO_FAILOVER",
    "SOURCE_DELAY",
    "SOURCE_COMPRESSION_ALGORITHMS",
    "SOURCE_ZSTD_COMPRESSION_LEVEL",
    "SOURCE_SSL",
    "SOURCE_SSL_CA",
    "SOURCE_SSL_CAPATH",
    "SOURCE_SSL_CERT",
    "SOURCE_SSL_CRL",
    "SOURCE_SSL_CRLPATH",
    "SOURCE_SSL_KEY",
    "SOURCE_SSL_CIPHER",
    "SOURCE_SSL_VERIFY_SERVER_CERT",
    "SOURCE_TLS_VERSION",
    "SOURCE_TLS_CIPHERSUITES",
    "SOURCE_PUBLIC_KEY_PATH",
    "GET_SOURCE_PUBLIC_KEY",
    "NETWORK_NAMESPACE",
    "GTID_ONLY",
    "IGNORE_SERVER_IDS",
];

/// The SOURCE_* name of an option given in either spelling.
fn source_name(word: &str) -> String {
    let up = word.to_ascii_uppercase();
    match up.strip_prefix("MASTER_") {
        Some(rest) => format!("SOURCE_{rest}"),
        None if up == "GET_MASTER_PUBLIC_KEY" => "GET_SOURCE_PUBLIC_KEY".into(),
        None => up,
    }
}

impl Parser<'_> {
    /// After START/STOP/RESET/SHOW: REPLICA or SLAVE (true: SLAVE).
    fn replica_word(&mut self) -> Result<bool> {
        if self.eat_kw("REPLICA") {
            Ok(false)
        } else {
            self.expect_kw("SLAVE")?;
            Ok(true)
        }
    }

    /// `[FOR CHANNEL name]`: only the default channel '' exists.
    fn replica_channel(&mut self) -> Result<()> {
        if self.eat_kw("FOR") {
            self.expect_kw("CHANNEL")?;
            if !self.name_or_string()?.is_empty() {
                return Err(self.unsupported("replication channels other than ''"));
            }
        }
        Ok(())
    }

    /// CHANGE REPLICATION SOURCE TO ... / CHANGE MASTER TO ...
    pub(super) fn parse_change_source(&mut self) -> Result<Statement> {
        self.advance();
        if self.eat_kw("REPLICATION") {
            if self.is_kw("FILTER") {
                return Err(self.unsupported("CHANGE REPLICATION FILTER"));
            }
            self.expect_kw("SOURCE")?;
        } else {
            self.expect_kw("MASTER")?;
        }
        self.expect_kw("TO")?;
        let mut options = Vec::new();
        loop {
            let name = source_name(self.word_at(0).ok_or_else(|| self.error())?);
            if !SOURCE_OPTIONS.contains(&name.as_str()) {
                return Err(self.error());
            }
            self.advance();
            if name == "IGNORE_SERVER_IDS" {
                return Err(self.unsupported("IGNORE_SERVER_IDS"));
            }
            self.expect(&Tok::Eq)?;
            let value = match self.parse_unary()? {
                Expr::Literal(v) => v,
                _ => return Err(self.error()),
            };
            options.push((name, value));
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.replica_channel()?;
        Ok(Statement::Replica(ReplicaStatement::ChangeSource(options)))
    }

    /// START REPLICA / STOP REPLICA (either spelling), both threads only.
    pub(super) fn parse_start_stop_replica(&mut self, start: bool) -> Result<Statement> {
        self.advance();
        self.replica_word()?;
        if self.is_any_kw(&["IO_THREAD", "SQL_THREAD", "UNTIL", "USER", "PASSWORD"]) {
            let what = self.text_at(0).to_ascii_uppercase();
            return Err(self.unsupported(&format!("START/STOP REPLICA {what}")));
        }
        self.replica_channel()?;
        Ok(Statement::Replica(if start {
            ReplicaStatement::Start
        } else {
            ReplicaStatement::Stop
        }))
    }

    /// RESET REPLICA [ALL] (either spelling).
    pub(super) fn parse_reset_replica(&mut self) -> Result<Statement> {
        self.advance();
        self.replica_word()?;
        let all = self.eat_kw("ALL");
        self.replica_channel()?;
        Ok(Statement::Replica(ReplicaStatement::Reset { all }))
    }

    /// SHOW REPLICA STATUS / SHOW SLAVE STATUS, after SHOW.
    pub(super) fn parse_show_replica_status(&mut self) -> Result<Statement> {
        let legacy = self.replica_word()?;
        if self.is_kw("HOSTS") {
            return Err(self.unsupported("SHOW REPLICAS"));
        }
        self.expect_kw("STATUS")?;
        self.replica_channel()?;
        Ok(Statement::Replica(ReplicaStatement::ShowStatus { legacy }))
    }
}

#[cfg(test)]
mod tests {
    use crate::parser::{parse, ReplicaStatement, Statement};
    use lockstep_types::error::Code;
    use lockstep_types::Value;

    fn one(sql: &str) -> ReplicaStatement {
        match parse(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}")).pop() {
            Some(Statement::Replica(r)) => r,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn both_spellings_one_statement() {
        let want = ReplicaStatement::ChangeSource(vec![
            ("SOURCE_HOST".into(), Value::str("h")),
            ("SOURCE_PORT".into(), Value::Int(3307)),
            ("GET_SOURCE_PUBLIC_KEY".into(), Value::Int(1)),
        ]);
        for sql in [
            "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h', SOURCE_PORT=3307, GET_SOURCE_PUBLIC_KEY=1",
            "change master to master_host = \"h\" , Master_Port=3307, get_master_public_key=1 FOR CHANNEL ''",
        ] {
            assert_eq!(one(sql), want, "{sql}");
        }
        assert_eq!(one("START SLAVE"), ReplicaStatement::Start);
        assert_eq!(one("stop replica for channel ''"), ReplicaStatement::Stop);
        assert_eq!(one("RESET SLAVE"), ReplicaStatement::Reset { all: false });
        assert_eq!(
            one("RESET REPLICA ALL"),
            ReplicaStatement::Reset { all: true }
        );
        assert_eq!(
            one("SHOW SLAVE STATUS"),
            ReplicaStatement::ShowStatus { legacy: true }
        );
    }

    #[test]
    fn refused_or_wrong() {
        let code = |sql: &str| parse(sql).unwrap_err().code;
        assert_eq!(code("CHANGE REPLICATION SOURCE TO"), Code::Parse);
        assert_eq!(
            code("CHANGE REPLICATION SOURCE TO SOURCE_HOST"),
            Code::Parse
        );
        assert_eq!(
            code("CHANGE REPLICATION SOURCE TO SOURCE_HOST=?"),
            Code::Parse
        );
        assert_eq!(code("CHANGE REPLICATION SOURCE TO HOST='h'"), Code::Parse);
        assert_eq!(
            code("CHANGE REPLICATION FILTER REPLICATE_DO_DB=(d)"),
            Code::NotSupportedYet
        );
        assert_eq!(
            code("START REPLICA UNTIL SQL_AFTER_GTIDS='x'"),
            Code::NotSupportedYet
        );
        assert_eq!(code("RESET REPLICA FOR CHANNEL 'c'"), Code::NotSupportedYet);
        assert_eq!(code("RESET MASTER"), Code::NotSupportedYet);
        assert_eq!(code("SHOW SLAVE HOSTS"), Code::NotSupportedYet);
        // START TRANSACTION is untouched.
        assert!(matches!(
            parse("START TRANSACTION").unwrap()[0],
            Statement::Begin { .. }
        ));
    }
}
