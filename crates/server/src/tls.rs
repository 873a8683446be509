//! TLS settings: the server's certificate and key (from --ssl-cert and
//! --ssl-key, or a self-signed pair generated into the data directory on
//! first start and reused later), as a rustls configuration with the
//! ring crypto provider.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// MySQL's names for the auto-generated files.
pub const CERT_FILE: &str = "server-cert.pem";
pub const KEY_FILE: &str = "server-key.pem";

/// The rustls configuration for `cert`/`key`, or for the data directory's
/// self-signed pair when neither is given.
pub fn server_config(
    cert: Option<&Path>,
    key: Option<&Path>,
    datadir: &Path,
) -> Result<Arc<rustls::ServerConfig>, String> {
    let (cert, key) = match (cert, key) {
        (Some(c), Some(k)) => (c.to_path_buf(), k.to_path_buf()),
        (None, None) => self_signed(datadir)?,
        _ => return Err("--ssl-cert and --ssl-key must be given together".into()),
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .map_err(|e| format!("reading {}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("reading {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate found", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(&key)
        .map_err(|e| format!("reading {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("TLS certificate: {e}"))?;
    Ok(Arc::new(config))
}

/// The data directory's certificate and key, generated if missing.
fn self_signed(datadir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let (cert, key) = (datadir.join(CERT_FILE), datadir.join(KEY_FILE));
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
        .map_err(|e| format!("generating a TLS certificate: {e}"))?;
    write_file(&key, generated.key_pair.serialize_pem().as_bytes(), 0o600)?;
    write_file(&cert, generated.cert.pem().as_bytes(), 0o644)?;
    eprintln!(
        "lockstep: generated a self-signed TLS certificate in {}",
        cert.display()
    );
    Ok((cert, key))
}

fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_once_and_reuses() {
        let dir = std::env::temp_dir().join(format!("lockstep-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        server_config(None, None, &dir).expect("generated config");
        let first = std::fs::read(dir.join(CERT_FILE)).expect("cert written");
        server_config(None, None, &dir).expect("reused config");
        assert_eq!(std::fs::read(dir.join(CERT_FILE)).expect("cert"), first);
        assert!(server_config(Some(&dir.join(CERT_FILE)), None, &dir).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
