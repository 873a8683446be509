//! CHANGE REPLICATION SOURCE TO's settings, kept in the data directory
//! (`replica.conf`, one `key=value` a line) so START REPLICA works after a
//! restart, with whether the replica was started (the server starts it
//! again at boot then). The password is kept in clear, as MySQL keeps it
//! in mysql.slave_master_info: the file is readable by its owner only.

use std::path::Path;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub auto_position: bool,
    /// GET_SOURCE_PUBLIC_KEY: caching_sha2_password may fetch the
    /// source's RSA key (the connection has no TLS).
    pub get_public_key: bool,
    /// START REPLICA was the last word (not STOP REPLICA).
    pub running: bool,
}

const FILE: &str = "replica.conf";

impl Settings {
    pub fn load(datadir: &Path) -> Option<Settings> {
        let text = std::fs::read_to_string(datadir.join(FILE)).ok()?;
        let mut s = Settings {
            port: 3306,
            ..Settings::default()
        };
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            match k {
                "host" => s.host = unescape(v),
                "port" => s.port = v.parse().ok()?,
                "user" => s.user = unescape(v),
                "password" => s.password = unescape(v),
                "auto_position" => s.auto_position = v == "1",
                "running" => s.running = v == "1",
                "get_public_key" => s.get_public_key = v == "1",
                _ => {}
            }
        }
        Some(s)
    }

    /// Written to a temp file, fsynced and renamed: never half a file.
    pub fn save(&self, datadir: &Path) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let text = format!(
            "host={}\nport={}\nuser={}\npassword={}\nauto_position={}\nget_public_key={}\nrunning={}\n",
            escape(&self.host),
            self.port,
            escape(&self.user),
            escape(&self.password),
            self.auto_position as u8,
            self.get_public_key as u8,
            self.running as u8
        );
        let tmp = datadir.join("replica.conf.tmp");
        // A leftover temp file would keep its old mode: start afresh.
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, datadir.join(FILE))?;
        std::fs::File::open(datadir)?.sync_all()
    }
}

/// One line per value: backslash, CR and LF are escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => break,
        }
    }
    out
}

/// RESET REPLICA ALL: the settings are forgotten.
pub fn remove(datadir: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(datadir.join(FILE)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn round_trip_owner_only() {
        let dir = std::env::temp_dir().join(format!("replica-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = Settings {
            host: "127.0.0.1".into(),
            port: 3451,
            user: "repl".into(),
            password: "pw=x\n\\n;\r".into(),
            auto_position: true,
            get_public_key: true,
            running: true,
        };
        s.save(&dir).unwrap();
        assert_eq!(Settings::load(&dir), Some(s));
        let mode = std::fs::metadata(dir.join(FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        remove(&dir).unwrap();
        assert_eq!(Settings::load(&dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
