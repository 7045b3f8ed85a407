//! Signer chains built with the `openssl` command, each certificate with exactly the extensions
//! a case needs, checked as a trust anchor of this computer would vouch for them (the anchors
//! passed in) and as a bundle carries them (no anchor: valid at best, never trusted).

use std::path::Path;
use std::time::SystemTime;

use x509_cert::Certificate;

use super::{openssl, signed, weather};
use crate::chain::{self, Signer};
use crate::{Bundle, Signature};

/// A throwaway PKI: certificates by name, in a temporary folder.
struct Pki {
    dir: tempfile::TempDir,
    serial: std::cell::Cell<u32>,
}

/// A file name for a certificate's common name.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

impl Pki {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            serial: std::cell::Cell::new(100),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A self-signed certificate whose only extensions are `extensions` (and a key identifier,
    /// which makes it version 3).
    fn root(&self, name: &str, extensions: &str) {
        let s = slug(name);
        let config = format!(
            "[req]\ndistinguished_name = dn\nx509_extensions = ext\nprompt = no\n\
             [dn]\nCN = {name}\n[ext]\nsubjectKeyIdentifier = hash\n{extensions}\n"
        );
        std::fs::write(self.path().join(format!("{s}.cnf")), config).unwrap();
        openssl(
            self.path(),
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-sha256",
                "-keyout",
                &format!("{s}.key"),
                "-out",
                &format!("{s}.pem"),
                "-config",
                &format!("{s}.cnf"),
            ],
        );
    }

    /// A certificate for `name` issued by `issuer`, with exactly `extensions` (and key
    /// identifiers).
    fn issue(&self, name: &str, issuer: &str, extensions: &str) {
        self.issue_for(name, issuer, extensions, 2);
    }

    fn issue_for(&self, name: &str, issuer: &str, extensions: &str, days: u32) {
        let (s, i) = (slug(name), slug(issuer));
        std::fs::write(
            self.path().join(format!("{s}.ext")),
            format!("subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n{extensions}\n"),
        )
        .unwrap();
        openssl(
            self.path(),
            &[
                "req",
                "-new",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{s}.key"),
                "-out",
                &format!("{s}.csr"),
                "-subj",
                &format!("/CN={name}"),
            ],
        );
        self.serial.set(self.serial.get() + 1);
        openssl(
            self.path(),
            &[
                "x509",
                "-req",
                "-in",
                &format!("{s}.csr"),
                "-CA",
                &format!("{i}.pem"),
                "-CAkey",
                &format!("{i}.key"),
                "-set_serial",
                &self.serial.get().to_string(),
                "-days",
                &days.to_string(),
                "-sha256",
                "-extfile",
                &format!("{s}.ext"),
                "-out",
                &format!("{s}.pem"),
            ],
        );
    }

    /// A version 1 certificate (no extensions at all), as `x509 -req` writes without any.
    fn issue_version_1(&self, name: &str, issuer: &str) {
        let (s, i) = (slug(name), slug(issuer));
        openssl(
            self.path(),
            &[
                "req",
                "-new",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &format!("{s}.key"),
                "-out",
                &format!("{s}.csr"),
                "-subj",
                &format!("/CN={name}"),
            ],
        );
        openssl(
            self.path(),
            &[
                "x509",
                "-req",
                "-in",
                &format!("{s}.csr"),
                "-CA",
                &format!("{i}.pem"),
                "-CAkey",
                &format!("{i}.key"),
                "-set_serial",
                "7",
                "-days",
                "2",
                "-sha256",
                "-out",
                &format!("{s}.pem"),
            ],
        );
    }

    fn cert(&self, name: &str) -> Certificate {
        let s = slug(name);
        openssl(
            self.path(),
            &[
                "x509",
                "-in",
                &format!("{s}.pem"),
                "-outform",
                "DER",
                "-out",
                &format!("{s}.der"),
            ],
        );
        <Certificate as der::Decode>::from_der(
            &std::fs::read(self.path().join(format!("{s}.der"))).unwrap(),
        )
        .unwrap()
    }

    /// The bundle signed by `signer`, carrying `chain` (names) as its other certificates.
    fn bundle_signed_by(&self, signer: &str, chain: &[&str]) -> Signer {
        let s = slug(signer);
        let carried: String = chain
            .iter()
            .map(|n| std::fs::read_to_string(self.path().join(format!("{}.pem", slug(n)))).unwrap())
            .collect();
        std::fs::write(self.path().join("carried.pem"), carried).unwrap();
        let extra = (!chain.is_empty()).then_some("carried.pem");
        let bytes = signed(
            self.path(),
            &weather(),
            &format!("{s}.pem"),
            &format!("{s}.key"),
            extra,
        );
        match Bundle::from_bytes(bytes).unwrap().signature() {
            Signature::Signed(signer) => signer.clone(),
            other => panic!("{other:?}"),
        }
    }

    /// `signer` with `pool` carried, against `anchors` as this computer's trust store.
    fn check(&self, signer: &str, pool: &[&str], anchors: &[&str]) -> Signer {
        let pool: Vec<Certificate> = pool.iter().map(|n| self.cert(n)).collect();
        let anchors: Vec<Certificate> = anchors.iter().map(|n| self.cert(n)).collect();
        describe(&self.cert(signer), &pool, &anchors, SystemTime::now())
    }
}

fn describe(
    signer: &Certificate,
    pool: &[Certificate],
    anchors: &[Certificate],
    now: SystemTime,
) -> Signer {
    let anchors: Vec<_> = anchors
        .iter()
        .map(|a| rustls_pki_types::CertificateDer::from(der::Encode::to_der(a).unwrap()))
        .collect();
    chain::describe_with(signer, pool, &anchors, now)
}

const ROOT: &str =
    "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, cRLSign";
const CODE_SIGNING: &str =
    "basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = codeSigning";

fn refused(signer: &Signer, words: &[&str]) {
    assert!(!signer.chain_valid && !signer.trusted, "{signer:?}");
    let problem = signer.problem.as_deref().unwrap_or_default();
    for word in words {
        assert!(problem.contains(word), "{word:?} not in {problem:?}");
    }
}

#[test]
fn a_leaf_certificate_used_as_an_issuer_is_refused() {
    // The review's attack: a website's certificate (its authority trusted by this computer)
    // "issues" a code-signing certificate in another publisher's name.
    let pki = Pki::new();
    pki.root("Trusted Root", ROOT);
    let spellings = [
        // A TLS leaf that says it is no authority.
        (
            "attacker.example",
            "basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature, keyEncipherment\n\
             extendedKeyUsage = serverAuth\nsubjectAltName = DNS:attacker.example",
        ),
        // One that says nothing about it either way (basic constraints absent).
        ("bare.example", "keyUsage = critical, digitalSignature, keyCertSign"),
        // A code-signing leaf (CA:FALSE, not marked critical) of another publisher.
        ("odd.example", "basicConstraints = CA:FALSE\nextendedKeyUsage = codeSigning"),
    ];
    for (leaf, extensions) in spellings {
        pki.issue(leaf, "Trusted Root", extensions);
        let victim = format!("Anthropic, PBC via {leaf}");
        pki.issue(&victim, leaf, CODE_SIGNING);

        let signer = pki.check(&victim, &[leaf], &["Trusted Root"]);
        assert_eq!(signer.issuer, leaf);
        refused(
            &signer,
            &[leaf, "is not a certificate authority", "Anthropic, PBC"],
        );

        // Carried in the bundle with its root: still no chain, trusted or not.
        let signer = pki.bundle_signed_by(&victim, &[leaf, "Trusted Root"]);
        refused(&signer, &[leaf, "is not a certificate authority"]);
    }

    // The same signer issued by a real authority under the same root is fine.
    pki.issue("Signing CA", "Trusted Root", ROOT);
    pki.issue("Anthropic, PBC", "Signing CA", CODE_SIGNING);
    let signer = pki.check("Anthropic, PBC", &["Signing CA"], &["Trusted Root"]);
    assert!(
        signer.chain_valid && signer.trusted && signer.problem.is_none(),
        "{signer:?}"
    );
}

#[test]
fn an_authority_without_key_cert_sign_cannot_issue() {
    let pki = Pki::new();
    pki.root("Trusted Root", ROOT);
    // An intermediate that is a CA by its basic constraints but whose key may only sign
    // documents and revocation lists.
    pki.issue(
        "No-Sign CA",
        "Trusted Root",
        "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, digitalSignature, cRLSign",
    );
    pki.issue("Publisher", "No-Sign CA", CODE_SIGNING);
    let signer = pki.check("Publisher", &["No-Sign CA"], &["Trusted Root"]);
    refused(&signer, &["No-Sign CA", "keyCertSign"]);
    refused(
        &pki.bundle_signed_by("Publisher", &["No-Sign CA", "Trusted Root"]),
        &["No-Sign CA", "keyCertSign"],
    );

    // The root itself, trusted by this computer, with the same flaw.
    pki.root(
        "No-Sign Root",
        "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, digitalSignature",
    );
    pki.issue("Publisher Two", "No-Sign Root", CODE_SIGNING);
    refused(
        &pki.check("Publisher Two", &[], &["No-Sign Root"]),
        &["No-Sign Root", "keyCertSign"],
    );
    // Or carried in the bundle: not even a valid untrusted chain.
    refused(
        &pki.bundle_signed_by("Publisher Two", &["No-Sign Root"]),
        &["No-Sign Root", "keyCertSign"],
    );
    // A root carried in the bundle that does not say it is an authority.
    pki.root(
        "Plain Root",
        "keyUsage = critical, digitalSignature, keyCertSign",
    );
    pki.issue("Publisher Three", "Plain Root", CODE_SIGNING);
    refused(
        &pki.bundle_signed_by("Publisher Three", &["Plain Root"]),
        &["Plain Root", "is not a certificate authority"],
    );
}

#[test]
fn a_signer_not_for_code_signing_is_refused() {
    let pki = Pki::new();
    pki.root("Trusted Root", ROOT);
    let cases = [
        ("Web Server", "extendedKeyUsage = serverAuth", false),
        (
            "Web Both",
            "extendedKeyUsage = serverAuth, clientAuth",
            false,
        ),
        (
            "Mail",
            "keyUsage = digitalSignature\nextendedKeyUsage = emailProtection",
            false,
        ),
        // Only encryption: the key may not make signatures at all.
        (
            "Encrypt Only",
            "keyUsage = keyEncipherment\nextendedKeyUsage = codeSigning",
            false,
        ),
        // Code signing among others, or no extended key usage at all (RFC 5280: any use).
        ("Mixed", "extendedKeyUsage = serverAuth, codeSigning", true),
        ("Unrestricted", "keyUsage = digitalSignature", true),
    ];
    for (name, extensions, allowed) in cases {
        pki.issue(name, "Trusted Root", extensions);
        let signer = pki.check(name, &[], &["Trusted Root"]);
        if allowed {
            assert!(signer.chain_valid && signer.trusted, "{name}: {signer:?}");
        } else {
            refused(&signer, &[name]);
            let problem = signer.problem.unwrap();
            assert!(
                problem.contains("code signing") || problem.contains("digital signatures"),
                "{name}: {problem}"
            );
        }
    }
    // A certificate authority's own certificate as the signer.
    pki.issue(
        "Authority Signer",
        "Trusted Root",
        "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, digitalSignature",
    );
    refused(
        &pki.check("Authority Signer", &[], &["Trusted Root"]),
        &[
            "Authority Signer",
            "certificate authority's",
            "not sign bundles",
        ],
    );
    // A version 1 signer says nothing of what it may do.
    pki.issue_version_1("Old Signer", "Trusted Root");
    refused(
        &pki.check("Old Signer", &[], &["Trusted Root"]),
        &["version 3"],
    );
    let tls = pki.check("Web Server", &[], &["Trusted Root"]);
    refused(&tls, &["not for code signing", "server authentication"]);

    // An authority limited to TLS cannot vouch for a code signer below it.
    pki.issue(
        "TLS CA",
        "Trusted Root",
        "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign\nextendedKeyUsage = serverAuth",
    );
    pki.issue("Under TLS CA", "TLS CA", CODE_SIGNING);
    refused(
        &pki.check("Under TLS CA", &["TLS CA"], &["Trusted Root"]),
        &["code signing"],
    );

    // A self-signed signer is held to the same uses.
    pki.root("Self TLS", "extendedKeyUsage = serverAuth");
    let signer = pki.bundle_signed_by("Self TLS", &[]);
    assert!(signer.self_signed, "{signer:?}");
    refused(&signer, &["not for code signing"]);
}

#[test]
fn a_valid_chain_verifies_and_path_length_is_honoured() {
    let pki = Pki::new();
    pki.root("Trusted Root", ROOT);
    pki.issue(
        "Issuing CA",
        "Trusted Root",
        "basicConstraints = critical, CA:TRUE, pathlen:0\nkeyUsage = critical, keyCertSign",
    );
    pki.issue("Good Publisher", "Issuing CA", CODE_SIGNING);
    let signer = pki.check("Good Publisher", &["Issuing CA"], &["Trusted Root"]);
    assert!(
        signer.chain_valid && signer.trusted && !signer.self_signed && signer.problem.is_none(),
        "{signer:?}"
    );
    assert_eq!(
        (signer.name.as_str(), signer.issuer.as_str()),
        ("Good Publisher", "Issuing CA")
    );

    // The same chain carried whole, its root not trusted here: valid, not trusted.
    let signer = pki.bundle_signed_by("Good Publisher", &["Issuing CA", "Trusted Root"]);
    assert!(signer.chain_valid && !signer.trusted, "{signer:?}");
    assert!(signer.problem.unwrap().contains("does not trust"));

    // A CA below one with path length 0: refused.
    pki.issue(
        "Sub CA",
        "Issuing CA",
        "basicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign",
    );
    pki.issue("Deep Publisher", "Sub CA", CODE_SIGNING);
    refused(
        &pki.check(
            "Deep Publisher",
            &["Sub CA", "Issuing CA"],
            &["Trusted Root"],
        ),
        &["path length"],
    );

    // A missing intermediate is named.
    refused(
        &pki.check("Good Publisher", &[], &[]),
        &["Issuing CA", "not in the bundle"],
    );
}

#[test]
fn a_forged_issuer_and_a_trusted_self_signed_signer() {
    // A root of the same name as the trusted one, another key: what it issues is not the
    // trusted root's.
    let (pki, forger) = (Pki::new(), Pki::new());
    pki.root("Trusted Root", ROOT);
    forger.root("Trusted Root", ROOT);
    assert_eq!(
        pki.cert("Trusted Root").tbs_certificate.subject,
        forger.cert("Trusted Root").tbs_certificate.subject
    );
    forger.issue("Forged Publisher", "Trusted Root", CODE_SIGNING);
    let signer = describe(
        &forger.cert("Forged Publisher"),
        &[],
        &[pki.cert("Trusted Root")],
        SystemTime::now(),
    );
    refused(&signer, &["not signed by the key", "forged"]);

    // A self-signed signer the way `mcpb sign --self-signed` makes one (CA:TRUE, nothing
    // else): valid, not trusted; trusted when this computer's store holds that certificate.
    pki.root("MCPB Self-Signed", "basicConstraints = critical, CA:TRUE");
    let own = pki.cert("MCPB Self-Signed");
    let signer = describe(&own, &[], &[], SystemTime::now());
    assert!(
        signer.self_signed && signer.chain_valid && !signer.trusted,
        "{signer:?}"
    );
    let signer = describe(&own, &[], std::slice::from_ref(&own), SystemTime::now());
    assert!(
        signer.self_signed && signer.chain_valid && signer.trusted,
        "{signer:?}"
    );
    // Expired: named, with the day.
    let later = SystemTime::now() + std::time::Duration::from_secs(5 * 86400);
    refused(
        &describe(&own, &[], std::slice::from_ref(&own), later),
        &["MCPB Self-Signed expired on 2"],
    );
    // An intermediate expired while the signer is not: the intermediate is named.
    pki.root("Long Root", ROOT);
    pki.issue_for("Short CA", "Long Root", ROOT, 1);
    pki.issue_for("Publisher", "Short CA", CODE_SIGNING, 3);
    let pool = [pki.cert("Short CA")];
    let anchors = [pki.cert("Long Root")];
    let in_a_day_and_a_half = SystemTime::now() + std::time::Duration::from_secs(36 * 3600);
    let signer = describe(&pki.cert("Publisher"), &pool, &anchors, in_a_day_and_a_half);
    refused(&signer, &["The certificate of Short CA expired on"]);
}

#[test]
fn the_code_signing_purpose_is_id_kp_code_signing() {
    assert_eq!(
        chain::CODE_SIGNING,
        const_oid::db::rfc5912::ID_KP_CODE_SIGNING.as_bytes()
    );
}
