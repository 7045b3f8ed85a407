//! A server's DPoP key (P-256, kept in the keychain as PKCS#8) and the proofs made with it
//! (RFC 9449 §4.2).

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use toolgate_secrets::SecretStore;

use crate::{store, KeychainError};

/// The keychain item holding a server's DPoP key (PKCS#8, base64url).
pub fn key_item(server: &str) -> String {
    format!("oauth-dpop:{server}")
}

/// Why a DPoP proof could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("no random bytes for a DPoP proof")]
    NoRandomBytes,
    #[error("the DPoP proof could not be signed")]
    NotSigned,
}

/// One server's DPoP key and the nonces its servers gave, by origin.
pub struct Dpop {
    key: EcdsaKeyPair,
    /// The public key as a JWK (`kty`, `crv`, `x`, `y`), for each proof's header.
    jwk: serde_json::Value,
    rng: SystemRandom,
    nonces: StdMutex<HashMap<String, String>>,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop").finish_non_exhaustive()
    }
}

impl Dpop {
    fn from_pkcs8(pkcs8: &[u8]) -> Result<Self, KeychainError> {
        let rng = SystemRandom::new();
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8, &rng)
            .map_err(|_| KeychainError::DamagedKey)?;
        // An uncompressed P-256 point: 0x04, then x and y, 32 bytes each.
        let point = key.public_key().as_ref();
        let jwk = serde_json::json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Ok(Dpop {
            key,
            jwk,
            rng,
            nonces: StdMutex::default(),
        })
    }

    /// The server's key from the keychain; `create`: made and saved when there is none.
    pub(crate) async fn load(
        secrets: &Arc<dyn SecretStore>,
        server: &str,
        create: bool,
    ) -> Result<Option<Arc<Self>>, KeychainError> {
        let item = key_item(server);
        let pkcs8 = store::blocking(secrets, move |s| {
            if let Some(text) = s.get(&item)? {
                return URL_SAFE_NO_PAD
                    .decode(text.trim())
                    .map(Some)
                    .map_err(|_| KeychainError::DamagedKey);
            }
            if !create {
                return Ok(None);
            }
            let made = EcdsaKeyPair::generate_pkcs8(
                &ECDSA_P256_SHA256_FIXED_SIGNING,
                &SystemRandom::new(),
            )
            .map_err(|_| KeychainError::KeyNotMade)?;
            s.set(&item, &URL_SAFE_NO_PAD.encode(made.as_ref()))?;
            Ok(Some(made.as_ref().to_vec()))
        })
        .await?;
        pkcs8
            .map(|bytes| Dpop::from_pkcs8(&bytes).map(Arc::new))
            .transpose()
    }

    /// A proof for one request (RFC 9449 §4.2): `method` at `uri` (its query and fragment left
    /// out), the token's hash when one goes with it, and the nonce its server last gave.
    pub fn proof(
        &self,
        method: &str,
        uri: &str,
        token: Option<&str>,
    ) -> Result<String, ProofError> {
        let htu = target(uri);
        let mut jti = [0u8; 16];
        self.rng
            .fill(&mut jti)
            .map_err(|_| ProofError::NoRandomBytes)?;
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut claims = serde_json::json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": htu,
            "iat": iat,
        });
        if let Some(token) = token {
            let hash = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
            claims["ath"] = URL_SAFE_NO_PAD.encode(hash.as_ref()).into();
        }
        if let Some(nonce) = self.nonce(uri) {
            claims["nonce"] = nonce.into();
        }
        let header = serde_json::json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .key
            .sign(&self.rng, signing_input.as_bytes())
            .map_err(|_| ProofError::NotSigned)?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }

    pub(crate) fn nonce(&self, uri: &str) -> Option<String> {
        self.nonces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&origin(uri))
            .cloned()
    }

    /// Keeps the nonce `uri`'s server gave, for its next proofs.
    pub(crate) fn remember_nonce(&self, uri: &str, nonce: &str) {
        self.nonces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(origin(uri), nonce.to_owned());
    }
}

/// `uri` without its query and fragment (a proof's `htu`).
fn target(uri: &str) -> String {
    match url::Url::parse(uri) {
        Ok(mut url) => {
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) => uri.split(['?', '#']).next().unwrap_or(uri).to_owned(),
    }
}

/// Nonces are kept per server: scheme, host and port.
fn origin(uri: &str) -> String {
    url::Url::parse(uri)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| uri.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(part: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn a_proof_is_an_es256_jwt_naming_the_request_and_the_token_and_verifies_with_its_jwk() {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .unwrap();
        let dpop = Dpop::from_pkcs8(pkcs8.as_ref()).unwrap();
        dpop.remember_nonce("http://127.0.0.1:9/other", "n-1");
        let proof = dpop
            .proof("POST", "http://127.0.0.1:9/mcp?x=1#f", Some("tok"))
            .unwrap();
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let (header, claims) = (decode(parts[0]), decode(parts[1]));
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "http://127.0.0.1:9/mcp");
        assert_eq!(claims["nonce"], "n-1", "the origin's nonce");
        let expected =
            URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, b"tok").as_ref());
        assert_eq!(claims["ath"], expected);
        // The signature verifies with the public key the header carries.
        let x = URL_SAFE_NO_PAD
            .decode(header["jwk"]["x"].as_str().unwrap())
            .unwrap();
        let y = URL_SAFE_NO_PAD
            .decode(header["jwk"]["y"].as_str().unwrap())
            .unwrap();
        let point = [&[4u8][..], &x, &y].concat();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            point,
        );
        let signed = format!("{}.{}", parts[0], parts[1]);
        public
            .verify(
                signed.as_bytes(),
                &URL_SAFE_NO_PAD.decode(parts[2]).unwrap(),
            )
            .expect("the proof verifies");
        // A fresh proof each time.
        let again = dpop.proof("POST", "http://127.0.0.1:9/mcp", None).unwrap();
        let again = decode(again.split('.').nth(1).unwrap());
        assert_ne!(again["jti"], claims["jti"]);
        assert!(again.get("ath").is_none());
    }
}
