//! DSSE v1 envelopes (<https://github.com/secure-systems-lab/dsse/blob/master/envelope.md>):
//! the payload travels base64-encoded, and each signature covers the
//! pre-authentication encoding (PAE) of the payload type and the payload bytes, so
//! neither can be swapped without breaking the signature.

use base64::Engine;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, general_purpose};
use serde::{Deserialize, Serialize};

/// The payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// A DSSE envelope as JSON carries it. Unknown members are ignored on input, as
/// the DSSE specification allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Base64 of the payload bytes (standard alphabet with padding on output).
    pub payload: String,
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    pub signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeSignature {
    /// The signing key's `kid` in the published key set; a hint, covered by nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub keyid: String,
    /// Base64 of the 64-byte Ed25519 signature.
    pub sig: String,
}

/// `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths in ASCII decimal bytes.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + payload_type.len() + 32);
    out.extend_from_slice(b"DSSEv1 ");
    out.extend_from_slice(payload_type.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload_type.as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload);
    out
}

/// Encodes as protocheck writes envelopes: standard alphabet, padded.
pub fn encode(bytes: &[u8]) -> String {
    general_purpose::STANDARD.encode(bytes)
}

/// DSSE lets a producer use the standard or the URL-safe alphabet, padded or not.
/// Non-zero trailing bits are still refused, so each accepted text decodes to
/// different bytes from any other: a changed character cannot go unnoticed.
const LENIENT: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);

/// Decodes either alphabet; `None` for anything else.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    STANDARD_LENIENT
        .decode(text)
        .or_else(|_| URL_SAFE_LENIENT.decode(text))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_matches_the_specifications_example() {
        // The example from the DSSE protocol document.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn both_alphabets_decode_and_garbage_does_not() {
        let bytes = [0xfb, 0xff, 0x00, 0x10];
        assert_eq!(decode(&encode(&bytes)).as_deref(), Some(&bytes[..]));
        assert_eq!(decode("-_8AEA").as_deref(), Some(&bytes[..]));
        assert_eq!(decode("+/8AEA==").as_deref(), Some(&bytes[..]));
        assert_eq!(decode("not base64!"), None);
        // "QR==" has non-zero trailing bits: another spelling of "QQ==", refused.
        assert_eq!(decode("QR=="), None);
    }
}
