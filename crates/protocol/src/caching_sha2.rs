//! caching_sha2_password, MySQL 8's default authentication plugin.
//!
//! Fast path: the client answers the 20-byte nonce with
//! `SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce)`. A server that has
//! `SHA256(SHA256(pw))` cached (from an earlier full authentication) checks
//! it and replies `fast_auth_success`. Otherwise it asks for full
//! authentication: the client then sends the password itself, in clear
//! over TLS, or over a plain connection RSA-OAEP encrypted (after XOR with
//! the nonce) with the server's public key, which it may request first.
//!
//! The server stores a salted, iterated SHA256 of the password
//! ([`stored_hash`]); the cache lives in memory only, so after a restart
//! each account needs one full authentication again (as in MySQL).

use rsa::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding,
};
use rsa::{Oaep, RsaPrivateKey, RsaPublicKey};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub const PLUGIN_NAME: &str = "caching_sha2_password";

/// First byte of an AuthMoreData packet.
pub const AUTH_MORE_DATA: u8 = 0x01;
/// Client → server: "send me your RSA public key".
pub const REQUEST_PUBLIC_KEY: u8 = 0x02;
/// Server → client (after 0x01): the scramble matched the cache.
pub const FAST_AUTH_SUCCESS: u8 = 0x03;
/// Server → client (after 0x01): send the password itself.
pub const PERFORM_FULL_AUTHENTICATION: u8 = 0x04;

const SALT_LEN: usize = 20;
const ROUNDS: usize = 5000;

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// What the server caches after a successful full authentication:
/// SHA256(SHA256(password)).
pub fn cache_digest(password: &[u8]) -> [u8; 32] {
    sha256(&[&sha256(&[password])])
}

/// The client's fast-path answer to `nonce` (empty for an empty password).
pub fn client_response(password: &[u8], nonce: &[u8; 20]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha256(&[password]);
    let mask = sha256(&[&sha256(&[&stage1]), nonce]);
    stage1.iter().zip(mask).map(|(a, b)| a ^ b).collect()
}

/// Checks a fast-path answer against a cached SHA256(SHA256(password)).
pub fn verify_scramble(nonce: &[u8; 20], response: &[u8], digest: &[u8; 32]) -> bool {
    if response.len() != 32 {
        return false;
    }
    let mask = sha256(&[digest, nonce]);
    let mut stage1 = [0u8; 32];
    for i in 0..32 {
        stage1[i] = response[i] ^ mask[i];
    }
    ct_eq(&sha256(&[&stage1]), digest)
}

/// The stored form of a password: salt ++ SHA256 iterated over salt and
/// password. Empty for an empty password.
pub fn stored_hash(password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    use rand::RngCore;
    let mut salt = [0u8; SALT_LEN];
    rand::thread_rng().fill_bytes(&mut salt);
    salted(&salt, password)
}

fn salted(salt: &[u8], password: &[u8]) -> Vec<u8> {
    let mut h = sha256(&[salt, password]);
    for _ in 1..ROUNDS {
        h = sha256(&[&h, password]);
    }
    let mut out = salt.to_vec();
    out.extend_from_slice(&h);
    out
}

/// Checks a cleartext password against [`stored_hash`]'s output.
pub fn verify_password(password: &[u8], stored: &[u8]) -> bool {
    if stored.is_empty() || password.is_empty() {
        return stored.is_empty() && password.is_empty();
    }
    if stored.len() != SALT_LEN + 32 {
        return false;
    }
    let again = salted(&stored[..SALT_LEN], password);
    again.len() == stored.len() && again.iter().zip(stored).fold(0u8, |a, (x, y)| a | (x ^ y)) == 0
}

fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What to do with a client packet during full authentication.
#[derive(Debug, PartialEq, Eq)]
pub enum FullAuth {
    /// Send the PEM public key (as AuthMoreData) and read the next packet.
    SendPublicKey(String),
    /// The client revealed its password: check it.
    Password(Vec<u8>),
    /// No password can be had from this packet: deny access.
    Refuse(&'static str),
}

/// One step of full authentication. `secure`: the connection is TLS, so
/// the password comes in clear; otherwise it is RSA-encrypted, and a lone
/// 0x02 asks for the key first.
pub fn full_auth_step(
    packet: &[u8],
    secure: bool,
    nonce: &[u8; 20],
    keys: Option<&RsaKeys>,
) -> FullAuth {
    if secure {
        return FullAuth::Password(strip_nul(packet.to_vec()));
    }
    let Some(keys) = keys else {
        return FullAuth::Refuse("full authentication over a plain connection needs TLS");
    };
    if packet == [REQUEST_PUBLIC_KEY] {
        return FullAuth::SendPublicKey(keys.public_pem.clone());
    }
    match keys.decrypt(packet) {
        Some(mut bytes) => {
            xor_nonce(&mut bytes, nonce);
            FullAuth::Password(strip_nul(bytes))
        }
        None => FullAuth::Refuse("the encrypted password could not be decrypted"),
    }
}

/// A client's full-authentication answer over a plain connection: the
/// NUL-terminated password XORed with the nonce, RSA-OAEP (SHA-1)
/// encrypted with the server's public key (PEM, as the server sent it).
pub fn encrypt_password(
    public_pem: &[u8],
    password: &[u8],
    nonce: &[u8; 20],
) -> Result<Vec<u8>, String> {
    let pem = std::str::from_utf8(public_pem).map_err(|e| e.to_string())?;
    let key = RsaPublicKey::from_public_key_pem(pem.trim()).map_err(|e| e.to_string())?;
    let mut plain = password.to_vec();
    plain.push(0);
    xor_nonce(&mut plain, nonce);
    key.encrypt(&mut rand::thread_rng(), Oaep::new::<sha1::Sha1>(), &plain)
        .map_err(|e| e.to_string())
}

/// The client XORs the NUL-terminated password with the nonce, repeated.
pub fn xor_nonce(bytes: &mut [u8], nonce: &[u8; 20]) {
    for (i, b) in bytes.iter_mut().enumerate() {
        *b ^= nonce[i % nonce.len()];
    }
}

fn strip_nul(mut v: Vec<u8>) -> Vec<u8> {
    if v.last() == Some(&0) {
        v.pop();
    }
    v
}

/// The RSA key pair for password exchange over plain connections.
pub struct RsaKeys {
    private: RsaPrivateKey,
    /// SubjectPublicKeyInfo PEM, as MySQL sends it.
    pub public_pem: String,
}

impl std::fmt::Debug for RsaKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RsaKeys { .. }")
    }
}

impl RsaKeys {
    pub fn from_private(private: RsaPrivateKey) -> Result<RsaKeys, String> {
        let public_pem = private
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| e.to_string())?;
        Ok(RsaKeys {
            private,
            public_pem,
        })
    }

    /// Loads `private_key.pem` from `dir`, or generates a 2048-bit key and
    /// writes it there (with `public_key.pem`, MySQL's file names).
    pub fn load_or_create(dir: &Path) -> Result<RsaKeys, String> {
        let path = dir.join("private_key.pem");
        if let Ok(pem) = std::fs::read_to_string(&path) {
            let key = RsaPrivateKey::from_pkcs8_pem(&pem)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            return RsaKeys::from_private(key);
        }
        let key = RsaPrivateKey::new(&mut rand::thread_rng(), 2048).map_err(|e| e.to_string())?;
        let keys = RsaKeys::from_private(key)?;
        let pem = keys
            .private
            .to_pkcs8_pem(LineEnding::LF)
            .map_err(|e| e.to_string())?;
        write_private(&path, pem.as_bytes())
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        std::fs::write(dir.join("public_key.pem"), &keys.public_pem)
            .map_err(|e| format!("writing public_key.pem: {e}"))?;
        Ok(keys)
    }

    /// RSA-OAEP (SHA-1, as MySQL clients use) decryption, blinded.
    pub fn decrypt(&self, ciphertext: &[u8]) -> Option<Vec<u8>> {
        self.private
            .decrypt_blinded(
                &mut rand::thread_rng(),
                Oaep::new::<sha1::Sha1>(),
                ciphertext,
            )
            .ok()
    }
}

/// Key files are secrets: created readable by the owner only.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// The key pair of a data directory, loaded or generated on first use
/// (generation takes a moment; most servers never need it).
#[derive(Debug)]
pub struct LazyRsaKeys {
    dir: PathBuf,
    keys: OnceLock<Option<RsaKeys>>,
}

impl LazyRsaKeys {
    pub fn new(dir: impl Into<PathBuf>) -> LazyRsaKeys {
        LazyRsaKeys {
            dir: dir.into(),
            keys: OnceLock::new(),
        }
    }

    pub fn get(&self) -> Option<&RsaKeys> {
        self.keys
            .get_or_init(|| match RsaKeys::load_or_create(&self.dir) {
                Ok(k) => Some(k),
                Err(e) => {
                    eprintln!("lockstep: RSA key for caching_sha2_password: {e}");
                    None
                }
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn known_digests() {
        // SHA256("password") and SHA256 of that, as printed by sha256sum.
        assert_eq!(
            hex(&sha256(&[b"password"])),
            "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"
        );
        assert_eq!(
            hex(&cache_digest(b"password")),
            hex(&sha256(&[&sha256(&[b"password"])]))
        );
    }

    #[test]
    fn scramble_math_matches_the_formula() {
        let nonce: [u8; 20] = *b"abcdefghij0123456789";
        let response = client_response(b"secret", &nonce);
        // Recomputed independently: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce).
        let s1 = Sha256::digest(b"secret");
        let s2 = Sha256::digest(s1);
        let mut h = Sha256::new();
        h.update(s2);
        h.update(nonce);
        let mask = h.finalize();
        let expected: Vec<u8> = s1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect();
        assert_eq!(response, expected);
        assert!(verify_scramble(&nonce, &response, &cache_digest(b"secret")));
        assert!(!verify_scramble(
            &nonce,
            &response,
            &cache_digest(b"Secret")
        ));
        assert!(!verify_scramble(
            &[0; 20],
            &response,
            &cache_digest(b"secret")
        ));
        assert!(!verify_scramble(
            &nonce,
            &response[..31],
            &cache_digest(b"secret")
        ));
        assert!(client_response(b"", &nonce).is_empty());
    }

    #[test]
    fn stored_hash_is_salted_and_verifies() {
        let a = stored_hash(b"pw");
        let b = stored_hash(b"pw");
        assert_ne!(a, b, "salts differ");
        assert!(verify_password(b"pw", &a));
        assert!(verify_password(b"pw", &b));
        assert!(!verify_password(b"pW", &a));
        assert!(!verify_password(b"", &a));
        assert!(verify_password(b"", &stored_hash(b"")));
        assert!(!verify_password(b"x", &stored_hash(b"")));
        assert!(!verify_password(b"pw", &a[..10]));
    }

    #[test]
    fn full_auth_steps() {
        let nonce = [7u8; 20];
        assert_eq!(
            full_auth_step(b"pw\0", true, &nonce, None),
            FullAuth::Password(b"pw".to_vec())
        );
        assert!(matches!(
            full_auth_step(&[REQUEST_PUBLIC_KEY], false, &nonce, None),
            FullAuth::Refuse(_)
        ));
        // A small key keeps the test quick; the server uses 2048 bits.
        let key = RsaPrivateKey::new(&mut rand::thread_rng(), 1024).expect("keygen");
        let keys = RsaKeys::from_private(key).expect("pem");
        match full_auth_step(&[REQUEST_PUBLIC_KEY], false, &nonce, Some(&keys)) {
            FullAuth::SendPublicKey(pem) => assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----")),
            other => panic!("expected the key, got {other:?}"),
        }
        // As a client seals it (encrypt_password).
        let sealed =
            encrypt_password(keys.public_pem.as_bytes(), b"hunter2", &nonce).expect("fits");
        assert_eq!(
            full_auth_step(&sealed, false, &nonce, Some(&keys)),
            FullAuth::Password(b"hunter2".to_vec())
        );
        assert!(matches!(
            full_auth_step(b"garbage", false, &nonce, Some(&keys)),
            FullAuth::Refuse(_)
        ));
    }
}
