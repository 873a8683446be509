//! Server settings: every one is a command-line flag and a key of the
//! config file (`key = value` lines, '#' comments; keys as the flags
//! without the leading dashes, '-' or '_' alike).

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Clone, Debug)]
pub struct Config {
    /// Config file with `key = value` lines; flags given on the command line win.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    #[arg(long, default_value_t = 3306)]
    pub port: u16,
    /// Address of the administrative listener (MySQL's admin_address):
    /// only accounts with SUPER log in there, and its connections do not
    /// count against max_connections. Not given: no such listener.
    #[arg(long)]
    pub admin_address: Option<String>,
    /// Port of the administrative listener.
    #[arg(long, default_value_t = 33062)]
    pub admin_port: u16,
    /// Data directory (created if missing).
    #[arg(long, default_value = "./lockstep-data")]
    pub datadir: PathBuf,
    /// Password of user root (empty: no password, loopback only).
    #[arg(long, default_value = "")]
    pub root_password: String,
    #[arg(long, default_value_t = 1040)]
    pub max_connections: usize,
    /// Listen backlog: connections the kernel queues before they are
    /// accepted (0: max_connections, as MySQL 8 sizes back_log). Too small
    /// a queue drops the SYNs of a connection burst, and those clients wait
    /// out TCP's retransmission backoff (1 s, 3 s, 7 s, ...).
    #[arg(long, default_value_t = 0)]
    pub back_log: u32,
    /// Largest packet accepted, in bytes.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_allowed_packet: usize,
    /// 1: fsync before each commit is acknowledged; 2: write before ack, fsync each second; 0: fsync each second.
    #[arg(long, default_value_t = 1)]
    pub innodb_flush_log_at_trx_commit: u8,
    #[arg(long, default_value_t = 50)]
    pub innodb_lock_wait_timeout: u64,
    /// Default isolation level of new sessions.
    #[arg(long, default_value = "REPEATABLE-READ")]
    pub transaction_isolation: String,
    /// Row-lock table shards (7.1.2).
    #[arg(long, default_value_t = 512)]
    pub lock_shards: usize,
    /// Lock grant order: FIFO or CATS (7.2).
    #[arg(long, default_value = "FIFO")]
    pub lock_grant_policy: String,
    /// Max transactions admitted into the transaction system at once; 0 = no limit (8.3.2).
    /// Default: 16 per core. Applied while connections share the pool; while each has a
    /// thread of its own (`--dedicated-threads`) the gate stands open. Measured on 2 cores
    /// with 1024 sysbench clients: oltp_read_write keeps ~85% of its peak with 16-32 and
    /// ~50% with 128; 4-8 starve group commit.
    #[arg(long, default_value_t = default_throttle_limit())]
    pub throttle_limit: usize,
    /// Row images in the log: FULL (whole rows) or MINIMAL (primary key and changed columns).
    #[arg(long, default_value = "FULL")]
    pub binlog_row_image: String,
    /// Log buffer size in bytes.
    #[arg(long, default_value_t = 16 << 20)]
    pub log_buffer_size: usize,
    /// Bytes per log segment file; the next one is preallocated before it is
    /// needed (at least 4096).
    #[arg(long, default_value_t = 64 << 20)]
    pub log_segment_size: u64,
    #[arg(long, default_value_t = 10)]
    pub connect_timeout: u64,
    #[arg(long, default_value_t = 28800)]
    pub wait_timeout: u64,
    /// Bytes a sort holds in memory before it spills sorted runs to
    /// `<datadir>/tmp` (default for sessions; MySQL's default).
    #[arg(long, default_value_t = 256 << 10)]
    pub sort_buffer_size: usize,
    /// With max_heap_table_size (the smaller wins): bytes of one in-memory
    /// temporary table (GROUP BY, DISTINCT, UNION, derived tables,
    /// materialized subqueries); past it 1114.
    #[arg(long, default_value_t = 256 << 20)]
    pub tmp_table_size: usize,
    #[arg(long, default_value_t = 256 << 20)]
    pub max_heap_table_size: usize,
    /// Bytes one statement may buffer in all (rows read, joined, returned); past it 1041.
    #[arg(long, default_value_t = 1 << 30)]
    pub query_memory_limit: usize,
    /// Bytes the whole server may use (data, old versions, statements,
    /// results, prepared statements); 0: three quarters of the machine's
    /// memory. Past 90% of it writes that add data get 1114, past all of it
    /// statements get 3170.
    #[arg(long, default_value_t = 0)]
    pub memory_budget: usize,
    /// Prepared statements the server keeps at once, all sessions together
    /// (MySQL's max_prepared_stmt_count); past it 1461.
    #[arg(long, default_value_t = 16382)]
    pub max_prepared_stmt_count: usize,
    /// Worker threads of the shared connection pool (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub worker_threads: usize,
    /// Pin each worker of the shared pool to a CPU of its own (`affinity.rs`).
    #[arg(long, num_args = 0..=1, default_value_t = true, default_missing_value = "ON",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub pin_pool_workers: bool,
    /// While there are at most this many connections, each has a thread of
    /// its own; beyond it all share the pool (default: 16 per core; 0:
    /// always the pool).
    #[arg(long)]
    pub dedicated_threads: Option<usize>,
    /// TLS certificate chain (PEM), with --ssl-key. Neither given: a
    /// self-signed pair is generated into the data directory on first start.
    #[arg(long)]
    pub ssl_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long)]
    pub ssl_key: Option<PathBuf>,
    /// Refuse connections that do not use TLS (error 3159).
    #[arg(long, num_args = 0..=1, default_value_t = false, default_missing_value = "ON",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub require_secure_transport: bool,
    /// @@server_id: names this server to its replication sources.
    #[arg(long, default_value_t = 1)]
    pub server_id: u32,
    /// @@server_uuid for a new data directory (GTIDs of its commits carry
    /// it); an existing data directory keeps the one it has, and a
    /// different value here refuses to start.
    #[arg(long)]
    pub server_uuid: Option<String>,
    /// read_only at start (replication applies anyway; SUPER writes).
    #[arg(long, num_args = 0..=1, default_value_t = false, default_missing_value = "ON",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub read_only: bool,
    /// super_read_only at start (SUPER cannot write either).
    #[arg(long, num_args = 0..=1, default_value_t = false, default_missing_value = "ON",
          value_parser = clap::builder::BoolishValueParser::new())]
    pub super_read_only: bool,
}

/// An ON/OFF setting of the configuration file.
fn boolean(v: &str) -> Result<bool, String> {
    match v.to_ascii_uppercase().as_str() {
        "ON" | "1" | "TRUE" | "YES" => Ok(true),
        "OFF" | "0" | "FALSE" | "NO" => Ok(false),
        _ => Err(format!("expected ON or OFF, not {v}")),
    }
}

/// 16 admitted transactions per core (see `throttle_limit`).
fn default_throttle_limit() -> usize {
    16 * std::thread::available_parallelism().map_or(2, |n| n.get())
}

impl Config {
    /// The listen backlog: --back-log, or max_connections when it is 0.
    pub fn effective_back_log(&self) -> u32 {
        match self.back_log {
            0 => u32::try_from(self.max_connections).unwrap_or(u32::MAX),
            n => n,
        }
    }

    /// Applies a config file under the flags given explicitly.
    pub fn merge_file(mut self, explicit: &[String]) -> Result<Config, String> {
        let Some(path) = self.config.clone() else {
            return Ok(self);
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        for (n, line) in text.lines().enumerate() {
            let at = format!("{}:{}", path.display(), n + 1);
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() || line.starts_with('[') {
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                return Err(format!("{at}: expected key = value"));
            };
            let key = k.trim().replace('-', "_");
            let v = v.trim().trim_matches('"').to_string();
            // The command line wins over the file.
            if given(explicit, &key) {
                continue;
            }
            match self.set_option(&key, v) {
                Ok(true) => {}
                Ok(false) => return Err(format!("{at}: unknown setting '{key}'")),
                Err(e) => return Err(format!("{at}: {key}: {e}")),
            }
        }
        Ok(self)
    }

    /// Sets option `key` (underscores) from a file's value: false when
    /// there is no such option.
    fn set_option(&mut self, key: &str, v: String) -> Result<bool, String> {
        fn num<T: std::str::FromStr>(v: &str) -> Result<T, String>
        where
            T::Err: std::fmt::Display,
        {
            v.parse().map_err(|e: T::Err| e.to_string())
        }
        match key {
            "bind" => self.bind = v,
            "port" => self.port = num(&v)?,
            "admin_address" => self.admin_address = Some(v),
            "admin_port" => self.admin_port = num(&v)?,
            "datadir" => self.datadir = v.into(),
            "root_password" => self.root_password = v,
            "max_connections" => self.max_connections = num(&v)?,
            "back_log" => self.back_log = num(&v)?,
            "max_allowed_packet" => self.max_allowed_packet = num(&v)?,
            "innodb_flush_log_at_trx_commit" => self.innodb_flush_log_at_trx_commit = num(&v)?,
            "innodb_lock_wait_timeout" => self.innodb_lock_wait_timeout = num(&v)?,
            "transaction_isolation" => self.transaction_isolation = v,
            "lock_shards" => self.lock_shards = num(&v)?,
            "lock_grant_policy" => self.lock_grant_policy = v,
            "binlog_row_image" => self.binlog_row_image = v,
            "throttle_limit" => self.throttle_limit = num(&v)?,
            "log_buffer_size" => self.log_buffer_size = num(&v)?,
            "log_segment_size" => self.log_segment_size = num(&v)?,
            "connect_timeout" => self.connect_timeout = num(&v)?,
            "wait_timeout" => self.wait_timeout = num(&v)?,
            "worker_threads" => self.worker_threads = num(&v)?,
            "dedicated_threads" => self.dedicated_threads = Some(num(&v)?),
            "sort_buffer_size" => self.sort_buffer_size = num(&v)?,
            "tmp_table_size" => self.tmp_table_size = num(&v)?,
            "max_heap_table_size" => self.max_heap_table_size = num(&v)?,
            "query_memory_limit" => self.query_memory_limit = num(&v)?,
            "memory_budget" => self.memory_budget = num(&v)?,
            "max_prepared_stmt_count" => self.max_prepared_stmt_count = num(&v)?,
            "ssl_cert" => self.ssl_cert = Some(v.into()),
            "ssl_key" => self.ssl_key = Some(v.into()),
            "require_secure_transport" => self.require_secure_transport = boolean(&v)?,
            "pin_pool_workers" => self.pin_pool_workers = boolean(&v)?,
            "server_id" => self.server_id = num(&v)?,
            "server_uuid" => self.server_uuid = Some(v),
            "read_only" => self.read_only = boolean(&v)?,
            "super_read_only" => self.super_read_only = boolean(&v)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Whether option `key` (underscores) was given on the command line.
fn given(explicit: &[String], key: &str) -> bool {
    explicit.iter().any(|f| {
        let name = f.trim_start_matches('-').split('=').next().unwrap_or("");
        name.replace('-', "_") == key
    })
}

#[cfg(test)]
mod tests {
    use super::Config;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        config: Config,
    }

    /// Parses `flags`, then merges a config file holding `text` under them.
    fn merged(text: &str, flags: &[&str]) -> Result<Config, String> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("lockstep-cnf-{}-{n}", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, text).expect("temp file");
        let mut args = vec![
            "lockstep".to_string(),
            format!("--config={}", path.display()),
        ];
        args.extend(flags.iter().map(|f| f.to_string()));
        let cli = Cli::try_parse_from(&args).expect("flags parse");
        let explicit: Vec<String> = args[1..].to_vec();
        let merged = cli.config.merge_file(&explicit);
        let _ = std::fs::remove_file(&path);
        merged
    }

    #[test]
    fn file_settings_apply_under_the_command_line() {
        let text = "[mysqld]\n# comment\nport = 4000\nmax-connections=77 # trailing\nbind = \"0.0.0.0\"\nread_only = ON\n";
        let c = merged(text, &["--port", "4001"]).expect("merges");
        assert_eq!(c.port, 4001, "the flag wins");
        assert_eq!(c.max_connections, 77);
        assert_eq!(c.bind, "0.0.0.0");
        assert!(c.read_only);
    }

    #[test]
    fn bad_file_lines_name_their_place() {
        let e = merged("port = 1\nnonsense\n", &[]).unwrap_err();
        assert!(e.ends_with(":2: expected key = value"), "{e}");
        let e = merged("colour = blue\n", &[]).unwrap_err();
        assert!(e.ends_with(":1: unknown setting 'colour'"), "{e}");
        let e = merged("port = many\n", &[]).unwrap_err();
        assert!(e.contains(":1: port: invalid digit"), "{e}");
    }
}
