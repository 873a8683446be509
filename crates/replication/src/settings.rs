//! CHANGE REPLICATION SOURCE TO's settings, kept in the data directory
//! (`replica.conf`, one `key=value` a line) so START REPLICA works after a
//! restart.

use std::path::Path;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub auto_position: bool,
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
                "host" => s.host = v.into(),
                "port" => s.port = v.parse().ok()?,
                "user" => s.user = v.into(),
                "password" => s.password = v.into(),
                "auto_position" => s.auto_position = v == "1",
                _ => {}
            }
        }
        Some(s)
    }

    /// Written to a temp file, fsynced and renamed: never half a file.
    pub fn save(&self, datadir: &Path) -> std::io::Result<()> {
        use std::io::Write;
        let text = format!(
            "host={}\nport={}\nuser={}\npassword={}\nauto_position={}\n",
            self.host, self.port, self.user, self.password, self.auto_position as u8
        );
        let tmp = datadir.join("replica.conf.tmp");
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, datadir.join(FILE))?;
        std::fs::File::open(datadir)?.sync_all()
    }
}
