//! The signer's certificate chain: each certificate signed by the next (RSA with SHA-1, -256,
//! -384 or -512, the algorithms of code-signing chains that node-forge can sign with), each
//! within its dates, and whether it ends at a trust anchor of this computer (the system store
//! through `rustls-native-certs`).
//!
//! Written here rather than taken from a crate: the RustCrypto crates give the pieces (DER,
//! X.509, RSA) but no path builder, and webpki's is for TLS server names. What is not checked:
//! revocation, name constraints, key usages and extended key usages (the official tool's Linux
//! check asks `openssl verify -purpose codesigning`; here a chain is only called valid, and
//! the window says who signed, not that the signer may sign code).

use std::time::SystemTime;

use const_oid::db::rfc5912;
use const_oid::ObjectIdentifier;
use der::{Decode, Encode};
use rsa::pkcs8::DecodePublicKey;
use rsa::RsaPublicKey;
use sha2::{Digest, Sha256};
use signature::Verifier;
use x509_cert::name::Name;
use x509_cert::Certificate;

use serde::Serialize;

/// Who signed, as the signing certificate says, and how far its chain holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Signer {
    /// The certificate's common name (else its whole subject).
    pub name: String,
    /// The subject, `CN=…,O=…`.
    pub subject: String,
    /// The issuer's common name (else its whole name).
    pub issuer: String,
    /// Signed by its own key: anyone can make such a certificate with any name.
    pub self_signed: bool,
    /// Each certificate of the chain is signed by the next and within its dates now.
    pub chain_valid: bool,
    /// The chain ends at an authority this computer's trust store holds.
    pub trusted: bool,
    /// SHA-256 of the signing certificate, hex.
    pub fingerprint: String,
    /// Why the chain does not hold, when it does not.
    #[ts(optional)]
    pub problem: Option<String>,
}

/// The longest chain followed.
const MAX_DEPTH: usize = 8;

/// Verifies `signature` over `message` with `certificate`'s RSA key, PKCS #1 v1.5 with the
/// digest `algorithm` names.
pub(crate) fn verify_rsa(
    certificate: &Certificate,
    algorithm: &ObjectIdentifier,
    message: &[u8],
    signature: &[u8],
) -> Result<(), String> {
    let spki = certificate
        .tbs_certificate
        .subject_public_key_info
        .to_der()
        .map_err(|e| e.to_string())?;
    let key =
        RsaPublicKey::from_public_key_der(&spki).map_err(|e| format!("not an RSA key ({e})"))?;
    let signature = rsa::pkcs1v15::Signature::try_from(signature).map_err(|e| e.to_string())?;
    let checked = match *algorithm {
        rfc5912::SHA_256_WITH_RSA_ENCRYPTION => {
            rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(key).verify(message, &signature)
        }
        rfc5912::SHA_384_WITH_RSA_ENCRYPTION => {
            rsa::pkcs1v15::VerifyingKey::<sha2::Sha384>::new(key).verify(message, &signature)
        }
        rfc5912::SHA_512_WITH_RSA_ENCRYPTION => {
            rsa::pkcs1v15::VerifyingKey::<sha2::Sha512>::new(key).verify(message, &signature)
        }
        rfc5912::SHA_1_WITH_RSA_ENCRYPTION => {
            rsa::pkcs1v15::VerifyingKey::<sha1::Sha1>::new(key).verify(message, &signature)
        }
        other => return Err(format!("the algorithm {other} is not supported")),
    };
    checked.map_err(|_| "the signature is wrong".to_owned())
}

/// `subject` signed `issued`, checked.
fn signed_by(issued: &Certificate, issuer: &Certificate) -> Result<(), String> {
    let tbs = issued.tbs_certificate.to_der().map_err(|e| e.to_string())?;
    verify_rsa(
        issuer,
        &issued.signature_algorithm.oid,
        &tbs,
        issued.signature.raw_bytes(),
    )
}

fn in_dates(certificate: &Certificate, now: SystemTime) -> bool {
    let validity = &certificate.tbs_certificate.validity;
    validity.not_before.to_system_time() <= now && now <= validity.not_after.to_system_time()
}

/// The common name of `name`, else the whole name.
pub(crate) fn common_name(name: &Name) -> String {
    for rdn in name.0.iter() {
        for atv in rdn.0.iter() {
            if atv.oid == const_oid::db::rfc4519::CN {
                let value = &atv.value;
                let text = der::asn1::Utf8StringRef::try_from(value)
                    .map(|s| s.as_str().to_owned())
                    .or_else(|_| {
                        der::asn1::PrintableStringRef::try_from(value)
                            .map(|s| s.as_str().to_owned())
                    })
                    .or_else(|_| {
                        der::asn1::Ia5StringRef::try_from(value).map(|s| s.as_str().to_owned())
                    });
                if let Ok(text) = text {
                    return text;
                }
            }
        }
    }
    name.to_string()
}

/// Who signed and how far the chain from `signer` through `pool` holds.
pub(crate) fn describe(signer: &Certificate, pool: &[Certificate]) -> Signer {
    let anchors = trust_anchors();
    describe_with(signer, pool, &anchors, SystemTime::now())
}

pub(crate) fn describe_with(
    signer: &Certificate,
    pool: &[Certificate],
    anchors: &[Certificate],
    now: SystemTime,
) -> Signer {
    let tbs = &signer.tbs_certificate;
    let self_signed = tbs.subject == tbs.issuer && signed_by(signer, signer).is_ok();
    let (chain_valid, trusted, problem) = match walk(signer, pool, anchors, now) {
        Ok(trusted) => (
            true,
            trusted,
            (!trusted)
                .then(|| "its chain ends at a certificate this computer does not trust".to_owned()),
        ),
        Err(problem) => (false, false, Some(problem)),
    };
    Signer {
        name: common_name(&tbs.subject),
        subject: tbs.subject.to_string(),
        issuer: common_name(&tbs.issuer),
        self_signed,
        chain_valid,
        trusted,
        fingerprint: signer
            .to_der()
            .map(|d| hex(&Sha256::digest(d)))
            .unwrap_or_default(),
        problem,
    }
}

/// Follows the chain: `Ok(trusted)` when every link holds.
fn walk(
    signer: &Certificate,
    pool: &[Certificate],
    anchors: &[Certificate],
    now: SystemTime,
) -> Result<bool, String> {
    let mut current = signer;
    for _ in 0..MAX_DEPTH {
        let tbs = &current.tbs_certificate;
        let who = common_name(&tbs.subject);
        if !in_dates(current, now) {
            return Err(format!(
                "the certificate of {who} is expired or not yet valid"
            ));
        }
        if anchors.iter().any(|a| a == current) {
            return Ok(true);
        }
        // An anchor that issued it, then a certificate the bundle carries.
        if let Some(anchor) = anchors
            .iter()
            .find(|a| a.tbs_certificate.subject == tbs.issuer && signed_by(current, a).is_ok())
        {
            return Ok(in_dates(anchor, now));
        }
        if tbs.subject == tbs.issuer {
            return signed_by(current, current)
                .map(|()| false)
                .map_err(|e| format!("the certificate of {who} does not verify: {e}"));
        }
        let issuer = pool
            .iter()
            .find(|c| c.tbs_certificate.subject == tbs.issuer)
            .ok_or_else(|| {
                format!(
                    "the certificate of {}'s issuer ({}) is not in the bundle",
                    who,
                    common_name(&tbs.issuer)
                )
            })?;
        signed_by(current, issuer)
            .map_err(|e| format!("the certificate of {who} does not verify: {e}"))?;
        current = issuer;
    }
    Err("its certificate chain is too long".into())
}

/// This computer's trusted authorities; none when the store cannot be read.
fn trust_anchors() -> Vec<Certificate> {
    rustls_native_certs::load_native_certs()
        .certs
        .iter()
        .filter_map(|c| Certificate::from_der(c.as_ref()).ok())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
