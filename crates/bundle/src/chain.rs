//! The signer's certificate chain, verified by `rustls-webpki`, the X.509 path validator of
//! rustls: each certificate signed by the next (RSA PKCS #1 v1.5 or PSS with SHA-256, -384 or
//! -512 and a key of 2048 bits or more, ECDSA P-256 or P-384, Ed25519: ring's algorithms),
//! each within its dates, every issuer a certificate authority by its basic constraints, each
//! authority's path length honoured, and the chain ending at a trust anchor of this computer
//! (the system store through `rustls-native-certs`).
//!
//! It replaced a path walk written here that checked only signatures and dates, so a website's
//! certificate could "issue" a code-signing certificate in any publisher's name and be shown
//! as a trusted chain. What webpki leaves out is added here, in the one callback webpki gives
//! a candidate path to ([`issuers_may_issue`]), or before it is asked:
//!
//! - **Key usage**, which webpki ignores (browsers do): an issuer whose key usage is listed
//!   must include keyCertSign; a signer whose key usage is listed must include digitalSignature.
//! - **Extended key usage**: the signer's, when present, must include code signing
//!   (1.3.6.1.5.5.7.3.3); when absent the certificate is not restricted. That is RFC 5280
//!   (section 4.2.1.12) and how Windows' chain engine reads it, which `mcpb verify` uses with
//!   the code-signing policy there; OpenSSL's `-purpose codesigning` (its Linux check)
//!   requires the extension, which would refuse certificates the other platforms accept. An
//!   authority's extended key usage, when present, must include code signing too (webpki
//!   checks every certificate of the path, as Windows does).
//!
//! **Trusted, or only valid.** The path is built first to this computer's anchors; when no
//! path reaches one, to the self-issued roots the bundle carries: such a chain is valid but
//! not trusted (a private authority). An anchor is held to an issuer's rules (basic
//! constraints saying CA, keyCertSign if key usage is listed), except that a root of the store
//! may have no basic constraints at all: the store vouches that it is an authority, and a
//! version 1 root has no extension that could say so.
//!
//! **Self-signed signers** are checked here: webpki has none (a certificate is never its own
//! anchor there), and `mcpb sign --self-signed` makes them with `openssl req -x509`, whose
//! certificate says CA:TRUE, which webpki would refuse as a signer. Such a certificate proves
//! only that the bundle is unchanged since its key signed it: its own signature, its dates and
//! its key usages are checked; it is trusted only when this computer's store holds that very
//! certificate.
//!
//! Not checked: revocation (a preview does not go to the network). Refused along with what
//! webpki refuses: certificates signed with SHA-1 or by RSA keys under 2048 bits, and version
//! 1 certificates other than a store's roots.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

use const_oid::db::rfc5912;
use const_oid::ObjectIdentifier;
use der::{Decode, Encode};
use rsa::pkcs8::DecodePublicKey;
use rsa::RsaPublicKey;
use rustls_pki_types::{CertificateDer, SignatureVerificationAlgorithm, TrustAnchor, UnixTime};
use serde::Serialize;
use sha2::{Digest, Sha256};
use signature::Verifier;
use webpki::{EndEntityCert, VerifiedPath};
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage};
use x509_cert::name::Name;
use x509_cert::Certificate;

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
    /// Each certificate of the chain is signed by the next and within its dates now, each issuer
    /// is an authority that may sign certificates, and the signer may sign code.
    pub chain_valid: bool,
    /// The chain ends at an authority this computer's trust store holds.
    pub trusted: bool,
    /// SHA-256 of the signing certificate, hex.
    pub fingerprint: String,
    /// Why the chain does not hold, when it does not.
    #[ts(optional)]
    pub problem: Option<String>,
}

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

/// id-kp-codeSigning (1.3.6.1.5.5.7.3.3), as the DER content webpki compares.
pub(crate) const CODE_SIGNING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03];

/// The signature algorithms a certificate of the chain may be signed with: ring's, named
/// rather than `webpki::ALL_VERIFICATION_ALGS`, which grows with the aws-lc-rs feature other
/// crates of the app turn on.
static ALGORITHMS: &[&dyn SignatureVerificationAlgorithm] = &[
    webpki::ring::RSA_PKCS1_2048_8192_SHA256,
    webpki::ring::RSA_PKCS1_2048_8192_SHA384,
    webpki::ring::RSA_PKCS1_2048_8192_SHA512,
    webpki::ring::RSA_PKCS1_2048_8192_SHA256_ABSENT_PARAMS,
    webpki::ring::RSA_PKCS1_2048_8192_SHA384_ABSENT_PARAMS,
    webpki::ring::RSA_PKCS1_2048_8192_SHA512_ABSENT_PARAMS,
    webpki::ring::RSA_PKCS1_3072_8192_SHA384,
    webpki::ring::RSA_PSS_2048_8192_SHA256_LEGACY_KEY,
    webpki::ring::RSA_PSS_2048_8192_SHA384_LEGACY_KEY,
    webpki::ring::RSA_PSS_2048_8192_SHA512_LEGACY_KEY,
    webpki::ring::ECDSA_P256_SHA256,
    webpki::ring::ECDSA_P256_SHA384,
    webpki::ring::ECDSA_P384_SHA256,
    webpki::ring::ECDSA_P384_SHA384,
    webpki::ring::ED25519,
];

/// Who signed and how far the chain from `signer` through `pool` holds.
pub(crate) fn describe(signer: &Certificate, pool: &[Certificate]) -> Signer {
    describe_with(signer, pool, &trust_anchors(), SystemTime::now())
}

/// [`describe`] with the trust store and the time given.
pub(crate) fn describe_with(
    signer: &Certificate,
    pool: &[Certificate],
    anchors: &[CertificateDer<'_>],
    now: SystemTime,
) -> Signer {
    let tbs = &signer.tbs_certificate;
    let self_signed = tbs.subject == tbs.issuer && signed_by(signer, signer).is_ok();
    let verdict = if self_signed {
        check_self_signed(signer, anchors, now)
    } else {
        check_chain(signer, pool, anchors, now)
    };
    let (chain_valid, trusted, problem) = match verdict {
        Ok(Anchored::Trusted) => (true, true, None),
        Ok(Anchored::Untrusted(root)) => (
            true,
            false,
            Some(format!(
                "Its chain ends at {root}, a certificate this computer does not trust."
            )),
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

/// Where a chain that holds ends.
enum Anchored {
    /// At an authority of this computer's store.
    Trusted,
    /// At a root the bundle carries (or at the self-signed signer), named.
    Untrusted(String),
}

/// Why a path was refused: webpki's rule, or one of this module's (already in words).
enum Refusal {
    Webpki(webpki::Error),
    Issuer(String),
}

/// `why`, and what it means for the user.
fn refuse(why: &str, signer: &str) -> String {
    format!(
        "{why} The chain is refused: nothing vouches that {signer} signed this bundle; \
         install it only if you trust where the file came from."
    )
}

fn check_self_signed(
    signer: &Certificate,
    anchors: &[CertificateDer<'_>],
    now: SystemTime,
) -> Result<Anchored, String> {
    let who = common_name(&signer.tbs_certificate.subject);
    if !in_dates(signer, now) {
        return Err(refuse(&out_of_dates(signer, &[], now, None), &who));
    }
    may_sign(signer)
        .and_then(|()| for_code_signing(signer))
        .map_err(|why| refuse(&why, &who))?;
    let der = signer.to_der().map_err(|e| e.to_string())?;
    Ok(if anchors.iter().any(|a| a.as_ref() == der.as_slice()) {
        Anchored::Trusted
    } else {
        Anchored::Untrusted(who)
    })
}

fn check_chain(
    signer: &Certificate,
    pool: &[Certificate],
    anchors: &[CertificateDer<'_>],
    now: SystemTime,
) -> Result<Anchored, String> {
    let who = common_name(&signer.tbs_certificate.subject);
    may_sign(signer).map_err(|why| refuse(&why, &who))?;
    let explained = |refusal| refuse(&explain(refusal, signer, pool, now), &who);
    let der = CertificateDer::from(signer.to_der().map_err(|e| e.to_string())?);
    let end_entity = EndEntityCert::try_from(&der).map_err(|e| explained(Refusal::Webpki(e)))?;
    let others = pool.iter().filter(|c| *c != signer);
    let carried: Vec<CertificateDer<'static>> = others
        .clone()
        .filter_map(|c| c.to_der().ok().map(CertificateDer::from))
        .collect();
    let roots: Vec<CertificateDer<'static>> = others
        .filter(|c| c.tbs_certificate.subject == c.tbs_certificate.issuer)
        .filter_map(|c| c.to_der().ok().map(CertificateDer::from))
        .collect();
    let time = UnixTime::since_unix_epoch(now.duration_since(UNIX_EPOCH).unwrap_or_default());

    let store = Anchors::new(anchors, true);
    let first = match build(&end_entity, &store, &carried, time) {
        Ok(_) => return Ok(Anchored::Trusted),
        Err(refusal) => refusal,
    };
    match build(&end_entity, &Anchors::new(&roots, false), &carried, time) {
        Ok(root) => Ok(Anchored::Untrusted(root)),
        // "No issuer" from the store says only that the chain is not the store's: the
        // carried roots' answer is the one to give then.
        Err(second) => Err(explained(match first {
            Refusal::Webpki(webpki::Error::UnknownIssuer) => second,
            first => first,
        })),
    }
}

/// Trust anchors with the certificates they were made from, to hold each to an issuer's rules.
struct Anchors<'a> {
    anchors: Vec<TrustAnchor<'a>>,
    certificates: Vec<Certificate>,
    /// From this computer's store, which vouches that they are authorities.
    from_store: bool,
}

impl<'a> Anchors<'a> {
    fn new(ders: &'a [CertificateDer<'a>], from_store: bool) -> Self {
        let (anchors, certificates) = ders
            .iter()
            .filter_map(|der| {
                let anchor = webpki::anchor_from_trusted_cert(der).ok()?;
                Some((anchor, Certificate::from_der(der).ok()?))
            })
            .unzip();
        Self {
            anchors,
            certificates,
            from_store,
        }
    }

    fn certificate_of(&self, anchor: &TrustAnchor<'_>) -> Option<&Certificate> {
        self.anchors
            .iter()
            .position(|a| {
                a.subject.as_ref() == anchor.subject.as_ref()
                    && a.subject_public_key_info.as_ref() == anchor.subject_public_key_info.as_ref()
            })
            .map(|at| &self.certificates[at])
    }
}

/// webpki's path from `end_entity` through `carried` to one of `anchors`, for code signing,
/// each issuer held to [`may_issue`]: the anchor's name when one is found.
fn build(
    end_entity: &EndEntityCert<'_>,
    anchors: &Anchors<'_>,
    carried: &[CertificateDer<'_>],
    time: UnixTime,
) -> Result<String, Refusal> {
    // The callback can answer only with one of webpki's errors: `IssuerNotCrlSigner` (which
    // only revocation checking, not asked for here, raises) stands for "see `refused`".
    let refused: RefCell<Option<String>> = RefCell::new(None);
    let check = |path: &VerifiedPath<'_>| {
        issuers_may_issue(path, anchors).map_err(|why| {
            refused.borrow_mut().get_or_insert(why);
            webpki::Error::IssuerNotCrlSigner
        })
    };
    let built = end_entity.verify_for_usage(
        ALGORITHMS,
        &anchors.anchors,
        carried,
        time,
        webpki::KeyUsage::required_if_present(CODE_SIGNING),
        None,
        Some(&check),
    );
    match built {
        Ok(path) => Ok(anchors
            .certificate_of(path.anchor())
            .map(|c| common_name(&c.tbs_certificate.subject))
            .unwrap_or_default()),
        Err(webpki::Error::IssuerNotCrlSigner) => {
            Err(Refusal::Issuer(refused.take().unwrap_or_else(|| {
                "An authority of its chain may not issue certificates.".into()
            })))
        }
        Err(e) => Err(Refusal::Webpki(e)),
    }
}

/// The rules webpki does not apply to a path it built: every intermediate's key usage, and the
/// anchor's basic constraints and key usage.
fn issuers_may_issue(path: &VerifiedPath<'_>, anchors: &Anchors<'_>) -> Result<(), String> {
    for intermediate in path.intermediate_certificates() {
        let certificate = Certificate::from_der(intermediate.der().as_ref())
            .map_err(|e| format!("A certificate of its chain cannot be read ({e})."))?;
        may_issue(&certificate, false)?;
    }
    match anchors.certificate_of(path.anchor()) {
        Some(anchor) => may_issue(anchor, anchors.from_store),
        None => Ok(()),
    }
}

/// Whether `certificate` may issue others: a certificate authority by its basic constraints
/// (or, when `vouched`, without any), and keyCertSign among its key usages when it lists them.
fn may_issue(certificate: &Certificate, vouched: bool) -> Result<(), String> {
    let tbs = &certificate.tbs_certificate;
    let who = common_name(&tbs.subject);
    let unreadable = |what: &str| format!("The {what} of the certificate of {who} cannot be read.");
    match tbs
        .get::<BasicConstraints>()
        .map_err(|_| unreadable("basic constraints"))?
    {
        Some((_, constraints)) if constraints.ca => {}
        None if vouched => {}
        _ => {
            return Err(format!(
                "The certificate of {who} is not a certificate authority (its basic constraints \
                 do not let it issue certificates), so it cannot vouch for the certificates \
                 below it."
            ))
        }
    }
    match tbs.get::<KeyUsage>().map_err(|_| unreadable("key usage"))? {
        Some((_, usage)) if !usage.key_cert_sign() => Err(format!(
            "The certificate of {who} is a certificate authority's, but its key usage does not \
             include signing certificates (keyCertSign), so it cannot vouch for the \
             certificates below it."
        )),
        _ => Ok(()),
    }
}

/// Whether the signer's key may make signatures, when its key usage is listed.
fn may_sign(signer: &Certificate) -> Result<(), String> {
    let tbs = &signer.tbs_certificate;
    let who = common_name(&tbs.subject);
    match tbs.get::<KeyUsage>() {
        Err(_) => Err(format!(
            "The key usage of the certificate of {who} cannot be read."
        )),
        Ok(Some((_, usage))) if !usage.digital_signature() => Err(format!(
            "The certificate of {who} may not make signatures: its key usage does not include \
             digital signatures."
        )),
        Ok(_) => Ok(()),
    }
}

/// Whether `certificate`'s extended key usage, when it has one, allows code signing: the rule
/// webpki applies to a chain, here for a self-signed signer and to word webpki's refusal.
fn for_code_signing(certificate: &Certificate) -> Result<(), String> {
    let tbs = &certificate.tbs_certificate;
    let who = common_name(&tbs.subject);
    match tbs.get::<ExtendedKeyUsage>() {
        Err(_) => Err(format!(
            "The extended key usage of the certificate of {who} cannot be read."
        )),
        Ok(Some((_, usages))) if !usages.0.contains(&rfc5912::ID_KP_CODE_SIGNING) => {
            let purposes: Vec<String> = usages.0.iter().map(purpose).collect();
            Err(format!(
                "The certificate of {who} is not for code signing: its extended key usage \
                 allows only {}.",
                if purposes.is_empty() {
                    "nothing".to_owned()
                } else {
                    purposes.join(", ")
                }
            ))
        }
        Ok(_) => Ok(()),
    }
}

/// An extended key usage in words.
fn purpose(oid: &ObjectIdentifier) -> String {
    match *oid {
        rfc5912::ID_KP_SERVER_AUTH => "server authentication (TLS)".into(),
        rfc5912::ID_KP_CLIENT_AUTH => "client authentication".into(),
        rfc5912::ID_KP_EMAIL_PROTECTION => "e-mail protection".into(),
        rfc5912::ID_KP_TIME_STAMPING => "time stamping".into(),
        rfc5912::ID_KP_OCSP_SIGNING => "OCSP signing".into(),
        rfc5912::ANY_EXTENDED_KEY_USAGE => "any purpose (not accepted for code signing)".into(),
        other => other.to_string(),
    }
}

/// webpki's refusal in words, naming the certificate at fault where the chain shows it (webpki
/// says which rule failed, not where).
fn explain(
    refusal: Refusal,
    signer: &Certificate,
    pool: &[Certificate],
    now: SystemTime,
) -> String {
    use webpki::Error as E;
    let who = common_name(&signer.tbs_certificate.subject);
    let error = match refusal {
        Refusal::Issuer(why) => return why,
        Refusal::Webpki(error) => error,
    };
    match error {
        E::EndEntityUsedAsCa => not_an_authority(signer, pool),
        E::CaUsedAsEndEntity => format!(
            "The certificate of {who} is a certificate authority's (its basic constraints say \
             CA): it may issue certificates, not sign bundles."
        ),
        E::PathLenConstraintViolated => "A certificate authority of its chain has more \
            authorities below it than its path length constraint allows."
            .into(),
        E::RequiredEkuNotFoundContext(_) | E::EmptyEkuExtension => {
            for_code_signing(signer).err().unwrap_or_else(|| {
                "A certificate authority of its chain is limited by its extended key usage to \
                 purposes other than code signing."
                    .into()
            })
        }
        E::CertExpired { not_after, .. } => out_of_dates(signer, pool, now, Some(not_after)),
        E::CertNotValidYet { .. } | E::InvalidCertValidity => out_of_dates(signer, pool, now, None),
        E::InvalidSignatureForPublicKey => "A certificate of its chain was not signed by the key \
            of the certificate it names as its issuer: it is forged or damaged."
            .into(),
        E::UnsupportedSignatureAlgorithmContext(_)
        | E::UnsupportedSignatureAlgorithmForPublicKeyContext(_) => "A certificate of its chain \
            is signed with an algorithm Toolgate does not accept (such as SHA-1, or an RSA key \
            under 2048 bits)."
            .into(),
        E::UnsupportedCertVersion => "A certificate of its chain is not an X.509 version 3 \
            certificate, so it cannot say what it may be used for."
            .into(),
        E::UnsupportedCriticalExtension => "A certificate of its chain has a critical extension \
            Toolgate does not understand, so it cannot be relied on."
            .into(),
        E::UnknownIssuer => missing_issuer(signer, pool),
        E::MaximumPathDepthExceeded
        | E::MaximumSignatureChecksExceeded
        | E::MaximumPathBuildCallsExceeded => "Its certificate chain is too long to follow.".into(),
        other => format!("Its certificate chain does not verify ({other})."),
    }
}

/// The carried certificate given as the issuer of one of the chain without being an authority.
fn not_an_authority(signer: &Certificate, pool: &[Certificate]) -> String {
    let is_authority = |c: &Certificate| matches!(c.tbs_certificate.get::<BasicConstraints>(), Ok(Some((_, b))) if b.ca);
    for issued in std::iter::once(signer).chain(pool) {
        let issuer = pool.iter().find(|c| {
            *c != issued
                && c.tbs_certificate.subject == issued.tbs_certificate.issuer
                && !is_authority(c)
        });
        if let Some(issuer) = issuer {
            return format!(
                "The certificate of {} is not a certificate authority (its basic constraints do \
                 not let it issue certificates), yet it is given as the issuer of the \
                 certificate of {}.",
                common_name(&issuer.tbs_certificate.subject),
                common_name(&issued.tbs_certificate.subject)
            );
        }
    }
    "A certificate of its chain that is not a certificate authority is given as the issuer of \
     another."
        .into()
}

/// The signer's issuer when the bundle does not carry it, else a missing link further up.
fn missing_issuer(signer: &Certificate, pool: &[Certificate]) -> String {
    let issuer = &signer.tbs_certificate.issuer;
    if pool
        .iter()
        .any(|c| c != signer && c.tbs_certificate.subject == *issuer)
    {
        "A certificate its chain needs is not in the bundle, and no authority this computer \
         trusts issued it."
            .into()
    } else {
        format!(
            "The certificate of {}'s issuer ({}) is not in the bundle, and no authority this \
             computer trusts issued it.",
            common_name(&signer.tbs_certificate.subject),
            common_name(issuer)
        )
    }
}

/// The certificate of the chain out of its dates (the one that expired at `not_after`, when
/// webpki says), in words.
fn out_of_dates(
    signer: &Certificate,
    pool: &[Certificate],
    now: SystemTime,
    not_after: Option<UnixTime>,
) -> String {
    let mut chain = std::iter::once(signer).chain(pool);
    let found = chain.find(|c| {
        let validity = &c.tbs_certificate.validity;
        match not_after {
            Some(at) => validity.not_after.to_unix_duration().as_secs() == at.as_secs(),
            None => !in_dates(c, now),
        }
    });
    let Some(certificate) = found else {
        return "A certificate of its chain is expired or not yet valid.".into();
    };
    let who = common_name(&certificate.tbs_certificate.subject);
    let validity = &certificate.tbs_certificate.validity;
    if now > validity.not_after.to_system_time() {
        format!(
            "The certificate of {who} expired on {}.",
            day(&validity.not_after)
        )
    } else {
        format!(
            "The certificate of {who} is not valid until {}.",
            day(&validity.not_before)
        )
    }
}

fn day(time: &x509_cert::time::Time) -> String {
    let t = time.to_date_time();
    format!("{:04}-{:02}-{:02}", t.year(), t.month(), t.day())
}

/// This computer's trusted authorities; none when the store cannot be read.
fn trust_anchors() -> Vec<CertificateDer<'static>> {
    rustls_native_certs::load_native_certs().certs
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
