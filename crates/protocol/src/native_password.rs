//! mysql_native_password: the server stores SHA1(SHA1(password)) ("stage 2")
//! and the client proves knowledge of SHA1(password) by sending
//! SHA1(password) XOR SHA1(scramble + stage2). The password itself never
//! crosses the wire and the server never stores it.

use sha1::{Digest, Sha1};

pub const PLUGIN_NAME: &str = "mysql_native_password";

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// The value a user account stores: SHA1(SHA1(password)).
pub fn stage2_hash(password: &str) -> [u8; 20] {
    sha1(&[&sha1(&[password.as_bytes()])])
}

/// The client's answer to `scramble` (empty for an empty password, as
/// MySQL clients send it).
pub fn client_response(password: &str, scramble: &[u8; 20]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = sha1(&[password.as_bytes()]);
    let stage2 = sha1(&[&stage1]);
    let mask = sha1(&[scramble, &stage2]);
    stage1.iter().zip(mask).map(|(a, b)| a ^ b).collect()
}

/// Checks a client's response against the stored stage-2 hash. An empty
/// response is what clients send for an empty password, so it matches only
/// an account whose hash is `stage2_hash("")`.
pub fn verify(scramble: &[u8; 20], response: &[u8], stage2: &[u8; 20]) -> bool {
    if response.is_empty() {
        return ct_eq(stage2, &stage2_hash(""));
    }
    if response.len() != 20 {
        return false;
    }
    let mask = sha1(&[scramble, stage2]);
    let mut stage1 = [0u8; 20];
    for i in 0..20 {
        stage1[i] = response[i] ^ mask[i];
    }
    ct_eq(&sha1(&[&stage1]), stage2)
}

/// Comparison whose time does not depend on where the first difference is.
fn ct_eq(a: &[u8; 20], b: &[u8; 20]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn known_vector() {
        // MySQL's PASSWORD('password') is '*' + upper hex of the stage-2 hash.
        assert_eq!(
            hex(&stage2_hash("password")),
            "2470c0c06dee42fd1618bb99005adca2ec9d1e19"
        );
        let scramble: [u8; 20] = *b"abcdefghij0123456789";
        let response = client_response("password", &scramble);
        // Recomputed from the formula SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))).
        let stage1 = sha1(&[b"password"]);
        let mask = sha1(&[&scramble, &sha1(&[&stage1])]);
        let expected: Vec<u8> = stage1.iter().zip(mask).map(|(a, b)| a ^ b).collect();
        assert_eq!(response, expected);
        assert!(verify(&scramble, &response, &stage2_hash("password")));
    }

    #[test]
    fn rejects_wrong_answers() {
        let scramble = [7u8; 20];
        let stored = stage2_hash("secret");
        assert!(!verify(
            &scramble,
            &client_response("Secret", &scramble),
            &stored
        ));
        assert!(!verify(
            &[8u8; 20],
            &client_response("secret", &scramble),
            &stored
        ));
        assert!(!verify(&scramble, b"short", &stored));
        assert!(!verify(&scramble, b"", &stored));
        assert!(verify(&scramble, b"", &stage2_hash("")));
        assert!(!verify(
            &scramble,
            &client_response("x", &scramble),
            &stage2_hash("")
        ));
    }
}
