//! The server's replica as the SQL layer sees it (`ReplicaControl`): the
//! settings of CHANGE REPLICATION SOURCE TO in <datadir>/replica.conf, and
//! the `Replica` runtime, built on first use (a server that never
//! replicates starts no replica threads).

use lockstep_engine::Engine;
use lockstep_replication::replica::{seconds_behind, Replica};
use lockstep_replication::settings::{self, Settings};
use lockstep_sql::session::replication::{BoxFuture, ReplicaControl, ReplicaStatus, SourceChange};
use lockstep_sql::Server;
use lockstep_types::error::Code;
use lockstep_types::Error;
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

pub struct ServerReplica {
    engine: Arc<Engine>,
    datadir: PathBuf,
    /// For @@server_id at each START (the server holds this object).
    server: Weak<Server>,
    /// None: no source configured (or RESET REPLICA ALL).
    settings: Mutex<Option<Settings>>,
    replica: OnceLock<Arc<Replica>>,
}

fn io_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(Code::ReplicaFatal, format!("{what}: {e}"))
}

impl ServerReplica {
    /// Installs the replica in `server`; starts it when it was running
    /// when the server last stopped (or was killed).
    pub fn install(server: &Arc<Server>, datadir: PathBuf) -> Arc<ServerReplica> {
        let this = Arc::new(ServerReplica {
            engine: server.engine.clone(),
            settings: Mutex::new(Settings::load(&datadir)),
            datadir,
            server: Arc::downgrade(server),
            replica: OnceLock::new(),
        });
        let _ = server.replica.set(this.clone());
        this
    }

    fn replica(&self) -> Result<&Arc<Replica>, Error> {
        if let Some(r) = self.replica.get() {
            return Ok(r);
        }
        let r = Replica::new(self.engine.clone(), self.datadir.clone())
            .map_err(|e| io_error("starting the replica runtime", e))?;
        Ok(self.replica.get_or_init(|| Arc::new(r)))
    }

    fn server_id(&self) -> u32 {
        self.server
            .upgrade()
            .and_then(|s| s.globals.get("server_id"))
            .and_then(|v| v.to_i64())
            .map_or(1, |v| v.clamp(0, u32::MAX as i64) as u32)
    }

    /// Saves the settings with the running flag, as START/STOP leave it.
    fn save_running(&self, running: bool) -> Result<Option<Settings>, Error> {
        let mut guard = self.settings.lock();
        let Some(s) = guard.as_mut() else {
            return Ok(None);
        };
        if s.running != running {
            s.running = running;
            s.save(&self.datadir)
                .map_err(|e| io_error("writing replica.conf", e))?;
        }
        Ok(Some(s.clone()))
    }

    /// At server start: START REPLICA again if it was running.
    pub async fn resume(&self) -> Result<(), Error> {
        let was_running = self.settings.lock().as_ref().is_some_and(|s| s.running);
        if was_running {
            self.start_replica().await?;
        }
        Ok(())
    }

    async fn start_replica(&self) -> Result<bool, Error> {
        let Some(s) = self.save_running(true)? else {
            return Err(Error::new(
                Code::BadReplica,
                "The server is not configured as replica; fix in config file or with CHANGE REPLICATION SOURCE TO",
            ));
        };
        let replica = self.replica()?;
        replica
            .start(s, self.server_id())
            .await
            .map_err(|e| io_error("START REPLICA", e))
    }

    /// At server shutdown (outside any async context).
    pub fn shutdown(&self) {
        if let Some(r) = self.replica.get() {
            r.stop_blocking();
        }
    }

    fn is_running(&self) -> bool {
        self.replica.get().is_some_and(|r| r.any_running())
    }
}

/// CHANGE REPLICATION SOURCE TO: the options given replace, the others stay.
fn apply_change(mut s: Settings, c: SourceChange) -> Settings {
    fn set<T>(slot: &mut T, v: Option<T>) {
        if let Some(v) = v {
            *slot = v;
        }
    }
    set(&mut s.host, c.host);
    set(&mut s.port, c.port);
    set(&mut s.user, c.user);
    set(&mut s.password, c.password);
    set(&mut s.auto_position, c.auto_position);
    set(&mut s.get_public_key, c.get_public_key);
    s
}

impl ReplicaControl for ServerReplica {
    fn change_source(&self, change: SourceChange) -> Result<(), Error> {
        // Every option lockstep takes is the I/O thread's (MySQL lets
        // CHANGE through once that one is stopped).
        if self.replica.get().is_some_and(|r| r.io_running()) {
            return Err(Error::new(
                Code::ReplicaChannelIoThreadMustStop,
                "This operation cannot be performed with a running replica io thread; run STOP REPLICA IO_THREAD FOR CHANNEL '' first.",
            ));
        }
        let mut guard = self.settings.lock();
        let base = guard.clone().unwrap_or(Settings {
            port: 3306,
            // Auto-positioning is the only way lockstep replicates.
            auto_position: true,
            ..Settings::default()
        });
        let s = apply_change(base, change);
        s.save(&self.datadir)
            .map_err(|e| io_error("writing replica.conf", e))?;
        *guard = Some(s);
        Ok(())
    }

    fn start(&self) -> BoxFuture<'_, Result<bool, Error>> {
        Box::pin(self.start_replica())
    }

    fn stop(&self) -> BoxFuture<'_, Result<bool, Error>> {
        Box::pin(async move {
            self.save_running(false)?;
            match self.replica.get() {
                Some(r) => Ok(r.stop().await),
                None => Ok(false),
            }
        })
    }

    fn reset(&self, all: bool) -> Result<(), Error> {
        if self.is_running() {
            return Err(Error::new(
                Code::ReplicaChannelMustStop,
                "This operation cannot be performed with running replication threads; run STOP REPLICA FOR CHANNEL '' first",
            ));
        }
        if let Some(r) = self.replica.get() {
            r.reset()
                .map_err(|e| io_error("removing the relay log", e))?;
        }
        if all {
            settings::remove(&self.datadir).map_err(|e| io_error("removing replica.conf", e))?;
            *self.settings.lock() = None;
        }
        Ok(())
    }

    fn status(&self) -> Option<ReplicaStatus> {
        let s = self.settings.lock().clone()?;
        let st = self
            .replica
            .get()
            .map(|r| r.status.lock().clone())
            .unwrap_or_default();
        let io_running = match (st.io_running, st.connected) {
            (true, true) => "Yes",
            (true, false) => "Connecting",
            _ => "No",
        };
        let io_state = match io_running {
            "Yes" => "Waiting for source to send event",
            "Connecting" => "Connecting to source",
            _ => "",
        };
        let sql_state = if st.sql_running {
            "Replica has read all relay log; waiting for more updates"
        } else {
            ""
        };
        Some(ReplicaStatus {
            io_state: io_state.into(),
            host: s.host,
            user: s.user,
            port: s.port,
            io_running,
            sql_running: st.sql_running,
            sql_state: sql_state.into(),
            seconds_behind: seconds_behind(&self.engine, &st),
            connection: st.connection,
            coordinator: st.coordinator,
            workers: st.workers,
            source: (st.source_server_id, st.source_uuid),
            retrieved: st.retrieved,
            executed: self.engine.gtid_executed(),
            auto_position: s.auto_position,
            get_public_key: s.get_public_key,
            semisync: st.semisync,
        })
    }
}

/// --server-uuid: written into a data directory that has none yet (the
/// engine reads it from there); one that differs refuses the start.
pub fn seed_server_uuid(datadir: &std::path::Path, text: &str) -> Result<(), String> {
    let uuid = lockstep_binlog::gtid::parse_uuid(text)
        .ok_or_else(|| format!("--server-uuid {text}: not a UUID"))?;
    let path = datadir.join("server_uuid");
    match std::fs::read(&path) {
        Ok(have) if have == uuid => Ok(()),
        Ok(_) => Err(format!(
            "--server-uuid {text} differs from the data directory's own ({}): the GTIDs of its commits name that one",
            path.display()
        )),
        Err(_) => {
            std::fs::create_dir_all(datadir)
                .and_then(|_| std::fs::write(&path, uuid))
                .map_err(|e| format!("writing {}: {e}", path.display()))
        }
    }
}
