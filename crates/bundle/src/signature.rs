//! The signature `mcpb sign` appends, and where the zip ends.
//!
//! `@anthropic-ai/mcpb` (2.1.2, `dist/node/sign.js`) signs the whole `.mcpb` file with
//! node-forge: a detached PKCS#7 SignedData (RSA, SHA-256, with the signed attributes
//! `contentType`, `messageDigest` and `signingTime`), DER-encoded, appended to the zip as
//! `MCPB_SIG_V1`, its length (4 bytes, little-endian), the DER, `MCPB_SIG_END`. The signed
//! content is every byte before `MCPB_SIG_V1`.
//!
//! Stricter than the official tool in one way that matters: a block that does not verify
//! makes the bundle [`Signature::Tampered`], never "unsigned", and so does anything after the
//! zip's end that is not exactly one signature block; otherwise a changed bundle could be
//! passed off by damaging its signature. Stripping the block whole does make a signed bundle
//! unsigned, which is what Toolgate then shows.

use der::{Decode, Encode};
use serde::Serialize;
use sha2::{Digest, Sha256};
use x509_cert::Certificate;

use crate::chain;
pub use crate::chain::Signer;

const HEADER: &[u8] = b"MCPB_SIG_V1";
const FOOTER: &[u8] = b"MCPB_SIG_END";

/// What the bundle's signature says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Signature {
    /// No signature block: only the zip's own checksums vouch for the content.
    Unsigned,
    /// The block verifies against the content.
    Signed(Signer),
    /// A block (or trailing data) that does not verify: the bundle was changed after it was
    /// signed, or damaged. Never installed.
    Tampered { reason: String },
}

/// The zip's bytes and what its signature says.
pub(crate) fn split(file: &[u8]) -> (&[u8], Signature) {
    if let Some((content, der)) = signature_block(file) {
        let signature = match verify(content, der) {
            Ok(signer) => Signature::Signed(signer),
            Err(reason) => Signature::Tampered { reason },
        };
        if !zip_ends_at_end(content) {
            return (
                content,
                Signature::Tampered {
                    reason: "the signed part does not end where its zip ends".into(),
                },
            );
        }
        return (content, signature);
    }
    // Not a zip at all is for the zip reader to say.
    if zip_ends_at_end(file) || find(file, b"PK\x05\x06").is_none() {
        return (file, Signature::Unsigned);
    }
    let reason = if find(file, HEADER).is_some() {
        "its signature block is damaged or has data after it"
    } else {
        "there is data after the end of its zip"
    };
    (
        file,
        Signature::Tampered {
            reason: reason.into(),
        },
    )
}

/// The signed content and the DER of a block that ends the file exactly.
fn signature_block(file: &[u8]) -> Option<(&[u8], &[u8])> {
    let body = file.strip_suffix(FOOTER)?;
    // The last header whose length field reaches exactly to the footer (the DER itself may
    // hold the header's bytes by chance).
    let mut end = body.len();
    while let Some(at) = rfind(&body[..end], HEADER) {
        let start = at + HEADER.len();
        if let Some(len) = body.get(start..start + 4) {
            let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
            if start + 4 + len == body.len() {
                return Some((&file[..at], &body[start + 4..]));
            }
        }
        end = at;
    }
    None
}

/// Whether the zip's end-of-central-directory record (and its comment) ends `bytes`.
fn zip_ends_at_end(bytes: &[u8]) -> bool {
    const EOCD: &[u8] = b"PK\x05\x06";
    let len = bytes.len();
    if len < 22 {
        return false;
    }
    let lowest = len.saturating_sub(22 + u16::MAX as usize);
    (lowest..=len - 22).rev().any(|at| {
        bytes[at..at + 4] == *EOCD
            && usize::from(u16::from_le_bytes([bytes[at + 20], bytes[at + 21]])) == len - at - 22
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Checks the detached SignedData `der` against `content`: the message digest, the signer's
/// RSA signature over the signed attributes, then the certificate chain.
fn verify(content: &[u8], der: &[u8]) -> Result<Signer, String> {
    use cms::content_info::ContentInfo;
    use cms::signed_data::{SignedData, SignerIdentifier};
    use const_oid::db::{rfc5911, rfc5912};

    let info =
        ContentInfo::from_der(der).map_err(|e| format!("its signature cannot be read: {e}"))?;
    if info.content_type != rfc5911::ID_SIGNED_DATA {
        return Err("its signature block holds no signed data".into());
    }
    let signed: SignedData = info
        .content
        .decode_as()
        .map_err(|e| format!("its signature cannot be read: {e}"))?;
    let certificates: Vec<Certificate> = signed
        .certificates
        .iter()
        .flat_map(|set| set.0.iter())
        .filter_map(|choice| match choice {
            cms::cert::CertificateChoices::Certificate(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    let signer_info = signed
        .signer_infos
        .0
        .iter()
        .next()
        .ok_or("its signature names no signer")?;
    if signer_info.digest_alg.oid != rfc5912::ID_SHA_256 {
        return Err(format!(
            "its signature uses the digest {}, not SHA-256",
            signer_info.digest_alg.oid
        ));
    }
    let certificate = certificates
        .iter()
        .find(|c| match &signer_info.sid {
            SignerIdentifier::IssuerAndSerialNumber(id) => {
                c.tbs_certificate.issuer == id.issuer
                    && c.tbs_certificate.serial_number == id.serial_number
            }
            SignerIdentifier::SubjectKeyIdentifier(_) => false,
        })
        .ok_or("its signature does not carry the signer's certificate")?;
    let attributes = signer_info
        .signed_attrs
        .as_ref()
        .ok_or("its signature has no signed attributes")?;
    let digest = attributes
        .iter()
        .find(|a| a.oid == rfc5911::ID_MESSAGE_DIGEST)
        .and_then(|a| a.values.iter().next())
        .and_then(|v| v.decode_as::<der::asn1::OctetString>().ok())
        .ok_or("its signature has no message digest")?;
    if digest.as_bytes() != Sha256::digest(content).as_slice() {
        return Err("the content does not match its signature (changed after signing)".into());
    }
    let content_type = attributes
        .iter()
        .find(|a| a.oid == rfc5911::ID_CONTENT_TYPE)
        .and_then(|a| a.values.iter().next())
        .and_then(|v| v.decode_as::<const_oid::ObjectIdentifier>().ok());
    if content_type != Some(rfc5911::ID_DATA) {
        return Err("its signature is not over plain data".into());
    }
    let signed_bytes = signed_attributes_as_signed(der, attributes)?;
    chain::verify_rsa(
        certificate,
        &rfc5912::SHA_256_WITH_RSA_ENCRYPTION,
        &signed_bytes,
        signer_info.signature.as_bytes(),
    )
    .map_err(|e| format!("its signature does not verify with the signer's key: {e}"))?;
    Ok(chain::describe(certificate, &certificates))
}

/// The signed attributes as the signer hashed them: a DER `SET OF`, in the order they were
/// written. node-forge writes them unsorted, which a re-encoding would sort, so the bytes are
/// taken from the block itself: each attribute re-encoded alone (that is exact), then found
/// in the block's `[0]` field to learn their order.
fn signed_attributes_as_signed(
    der: &[u8],
    attributes: &cms::signed_data::SignedAttributes,
) -> Result<Vec<u8>, String> {
    let encoded: Vec<Vec<u8>> = attributes
        .iter()
        .map(|a| a.to_der())
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut placed: Vec<(usize, &Vec<u8>)> = Vec::new();
    for one in &encoded {
        let at = find(der, one).ok_or("its signed attributes cannot be found in the block")?;
        placed.push((at, one));
    }
    placed.sort_by_key(|(at, _)| *at);
    // The attributes must sit side by side, as the `[0]` field holds them.
    for pair in placed.windows(2) {
        if pair[0].0 + pair[0].1.len() != pair[1].0 {
            return Err("its signed attributes are not where a signature keeps them".into());
        }
    }
    let body: Vec<u8> = placed.iter().flat_map(|(_, b)| b.iter().copied()).collect();
    let length = der::Length::try_from(body.len()).map_err(|e| e.to_string())?;
    let mut out = vec![0x31];
    length.encode_to_vec(&mut out).map_err(|e| e.to_string())?;
    out.extend(body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zip_bytes() -> Vec<u8> {
        crate::tests::zip_of(&[("manifest.json", b"{}".as_slice(), 0o644)])
    }

    #[test]
    fn a_plain_zip_is_unsigned_and_trailing_bytes_are_not() {
        let zip = zip_bytes();
        assert_eq!(split(&zip).1, Signature::Unsigned);
        let mut longer = zip.clone();
        longer.extend(b"junk");
        assert!(matches!(split(&longer).1, Signature::Tampered { .. }));
        let mut block = zip.clone();
        block.extend(HEADER);
        block.extend(4u32.to_le_bytes());
        block.extend(b"\x30\x02\x05\x00");
        block.extend(FOOTER);
        let (content, signature) = split(&block);
        assert_eq!(content, zip.as_slice());
        assert!(
            matches!(&signature, Signature::Tampered { reason } if reason.contains("cannot be read")),
            "{signature:?}"
        );
        // A block whose length field is wrong is not a block.
        let mut wrong = zip.clone();
        wrong.extend(HEADER);
        wrong.extend(9u32.to_le_bytes());
        wrong.extend(b"\x30\x02\x05\x00");
        wrong.extend(FOOTER);
        assert!(
            matches!(split(&wrong).1, Signature::Tampered { reason } if reason.contains("damaged"))
        );
    }
}
