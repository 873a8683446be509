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
