//! The remote form: a document the organisation serves, signed with Ed25519, named by the local
//! managed file (`remote: { url, publicKey }`). Fetched at start and every 15 minutes; the last
//! one whose signature held is kept in Toolgate's data folder, so a start without the network
//! uses it. A document with a bad signature is never used: the last good one stays, and the
//! doctor says why.
//!
//! What is served is a JSON envelope: `{"payload": "<base64 of the policy's JSON bytes>",
//! "signature": "<base64 of the Ed25519 signature of those bytes>"}`, so the bytes signed are
//! exactly the bytes read, with no canonical form of JSON to agree on.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use serde::Deserialize;
use serde_json::Value;

use serde::Serialize;

use crate::RemoteFetchError;

/// How often the remote document is fetched again.
pub const REFRESH: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemotePolicy {
    /// Where the signed document is (https; `http` only on this computer's loopback).
    pub url: String,
    /// The Ed25519 public key it is signed with, base64 (32 bytes).
    pub public_key: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    payload: String,
    signature: String,
}

/// Text that should be base64 and is not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not base64: {0}")]
pub struct NotBase64(pub base64::DecodeError);

/// Why a fetched or kept document is not used: its envelope, its signature or its JSON.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("not a signed policy ({{\"payload\", \"signature\"}}): {0}")]
    NotSigned(serde_json::Error),
    #[error("payload: {0}")]
    Payload(NotBase64),
    #[error("signature: {0}")]
    Signature(NotBase64),
    /// The organisation's public key (checked when the local policy was read).
    #[error("{0}")]
    PublicKey(NotBase64),
    #[error("its signature does not match the organisation's public key")]
    Mismatch,
    #[error("payload is not JSON: {0}")]
    PayloadNotJson(serde_json::Error),
}

fn b64(text: &str) -> Result<Vec<u8>, NotBase64> {
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(NotBase64)
}

/// Checks the settings as they are read: an https address (http only on loopback) and a key.
pub(crate) fn check(remote: &RemotePolicy) -> Result<(), String> {
    let url = reqwest::Url::parse(&remote.url).map_err(|e| format!("url: {e}"))?;
    let loopback = matches!(
        url.host(),
        Some(url::Host::Ipv4(ip)) if ip.is_loopback()
    ) || matches!(url.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
        || url.host_str() == Some("localhost");
    if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
        return Err(format!(
            "url {} must be https (http only on this computer's loopback)",
            remote.url
        ));
    }
    let key = b64(&remote.public_key).map_err(|e| format!("publicKey: {e}"))?;
    if key.len() != 32 {
        return Err(format!(
            "publicKey is {} bytes; an Ed25519 public key is 32",
            key.len()
        ));
    }
    Ok(())
}

/// The policy inside `envelope` when its signature holds under the key, as JSON (the caller
/// reads it as a document); its own `remote` is ignored (a remote document cannot point
/// elsewhere).
pub fn verify(remote: &RemotePolicy, envelope: &[u8]) -> Result<Value, VerifyError> {
    let envelope: Envelope = serde_json::from_slice(envelope).map_err(VerifyError::NotSigned)?;
    let payload = b64(&envelope.payload).map_err(VerifyError::Payload)?;
    let signature = b64(&envelope.signature).map_err(VerifyError::Signature)?;
    let key = b64(&remote.public_key).map_err(VerifyError::PublicKey)?;
    ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, key)
        .verify(&payload, &signature)
        .map_err(|_| VerifyError::Mismatch)?;
    let mut value: Value = serde_json::from_slice(&payload).map_err(VerifyError::PayloadNotJson)?;
    if let Some(object) = value.as_object_mut() {
        object.remove("remote");
    }
    Ok(value)
}

/// Fetches the document as served.
pub(crate) async fn fetch(remote: &RemotePolicy) -> Result<Vec<u8>, RemoteFetchError> {
    let url = || remote.url.clone();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .map_err(RemoteFetchError::Client)?;
    let response = client
        .get(&remote.url)
        .send()
        .await
        .map_err(|error| RemoteFetchError::Fetch { url: url(), error })?;
    if !response.status().is_success() {
        return Err(RemoteFetchError::Status {
            url: url(),
            status: response.status(),
        });
    }
    let body = response
        .bytes()
        .await
        .map_err(|error| RemoteFetchError::Read { url: url(), error })?;
    Ok(body.to_vec())
}

/// Keeps a verified document as the last good copy (replaced whole or not at all).
pub(crate) fn keep(cache: &Path, body: &[u8]) -> Result<(), RemoteFetchError> {
    let temp = cache.with_extension("tmp");
    std::fs::write(&temp, body)
        .and_then(|()| std::fs::rename(&temp, cache))
        .map_err(|error| RemoteFetchError::Keep {
            path: cache.to_path_buf(),
            error,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::KeyPair;
    use serde_json::json;

    fn signed(key: &ring::signature::Ed25519KeyPair, payload: &[u8]) -> Vec<u8> {
        let e = base64::engine::general_purpose::STANDARD;
        serde_json::to_vec(&json!({
            "payload": e.encode(payload),
            "signature": e.encode(key.sign(payload).as_ref()),
        }))
        .unwrap()
    }

    fn key(seed: u8) -> ring::signature::Ed25519KeyPair {
        ring::signature::Ed25519KeyPair::from_seed_unchecked(&[seed; 32]).unwrap()
    }

    fn remote(key: &ring::signature::Ed25519KeyPair) -> RemotePolicy {
        RemotePolicy {
            url: "https://policy.example/toolgate".into(),
            public_key: base64::engine::general_purpose::STANDARD.encode(key.public_key().as_ref()),
        }
    }

    #[test]
    fn only_a_document_signed_by_the_key_is_used() {
        let org = key(1);
        let payload = br#"{"settings": {"sandbox": true}, "remote": {"url": "https://elsewhere", "publicKey": "x"}}"#;
        let value = verify(&remote(&org), &signed(&org, payload)).expect("good");
        assert_eq!(value["settings"]["sandbox"], json!(true));
        assert!(value.get("remote").is_none(), "cannot point elsewhere");

        let forged = verify(&remote(&org), &signed(&key(2), payload))
            .unwrap_err()
            .to_string();
        assert!(forged.contains("signature"), "{forged}");
        let unsigned = verify(&remote(&org), b"{}").unwrap_err().to_string();
        assert!(
            unsigned.starts_with(r#"not a signed policy ({"payload", "signature"}): "#),
            "{unsigned}"
        );

        let mut tampered: Value = serde_json::from_slice(&signed(&org, payload)).unwrap();
        tampered["payload"] = json!(base64::engine::general_purpose::STANDARD
            .encode(br#"{"settings": {"sandbox": false}}"#));
        assert!(verify(&remote(&org), &serde_json::to_vec(&tampered).unwrap()).is_err());
    }

    #[test]
    fn addresses_must_be_https_or_loopback() {
        let org = key(1);
        let mut r = remote(&org);
        assert!(check(&r).is_ok());
        r.url = "http://policy.example/".into();
        assert!(check(&r).is_err());
        r.url = "http://127.0.0.1:8080/p".into();
        assert!(check(&r).is_ok());
        r.public_key = "AAAA".into();
        assert!(check(&r).unwrap_err().contains("32"));
    }
}
