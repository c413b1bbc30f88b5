//! Signing keys: the service's Ed25519 key, where it comes from, and the public
//! key set (JWKS, RFC 7517 with the OKP key type of RFC 8037) that verifiers use.
//!
//! A key's `kid` is its RFC 7638 JWK thumbprint: base64url (no padding) of the
//! SHA-256 of `{"crv":"Ed25519","kty":"OKP","x":"…"}`. Anyone can recompute it
//! from the public key, so a `kid` can neither collide by accident nor be
//! claimed for another key.

use crate::config::AttestArgs;
use crate::store::PublicKeyRecord;
use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// The only algorithm protocheck signs with, as the store records it.
pub const ALGORITHM: &str = "Ed25519";

/// The service's private signing key with its `kid`. `Debug` never shows the key.
pub struct SigningKeyPair {
    key: SigningKey,
    kid: String,
}

impl std::fmt::Debug for SigningKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKeyPair")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

/// Why key text was refused. Never quotes the text: it may be a secret.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "the signing key is neither a PKCS#8 PEM Ed25519 private key nor 64 hex digits of a seed"
    )]
    Unreadable,
    #[error("the operating system's random source failed: {0}")]
    Random(String),
}

impl SigningKeyPair {
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        let key = SigningKey::from_bytes(seed);
        let kid = key_id(&key.verifying_key());
        Self { key, kid }
    }

    /// A new key from the operating system's random source.
    pub fn generate() -> Result<Self, KeyError> {
        use rand::TryRngCore;
        let mut seed = Zeroizing::new([0u8; 32]);
        rand::rngs::OsRng
            .try_fill_bytes(seed.as_mut())
            .map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(Self::from_seed(&seed))
    }

    /// Reads a PKCS#8 PEM private key (what `openssl genpkey -algorithm ed25519`
    /// writes) or 64 hex digits of the 32-byte seed.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        if text.starts_with("-----BEGIN") {
            let key = SigningKey::from_pkcs8_pem(text).map_err(|_| KeyError::Unreadable)?;
            return Ok(Self::from_seed(key.as_bytes()));
        }
        let mut seed = Zeroizing::new([0u8; 32]);
        hex::decode_to_slice(text, seed.as_mut()).map_err(|_| KeyError::Unreadable)?;
        Ok(Self::from_seed(&seed))
    }

    /// The key as PKCS#8 PEM, for the key file.
    pub fn to_pkcs8_pem(&self) -> anyhow::Result<Zeroizing<String>> {
        self.key
            .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .context("encoding the signing key as PKCS#8")
    }

    pub fn key_id(&self) -> &str {
        &self.kid
    }

    pub fn verifying_key(&self) -> VerifyingKey {
        self.key.verifying_key()
    }

    pub fn sign(&self, message: &[u8]) -> Signature {
        self.key.sign(message)
    }

    /// The public half as the store keeps it.
    pub fn public_record(&self, now_ms: i64) -> PublicKeyRecord {
        PublicKeyRecord {
            key_id: self.kid.clone(),
            algorithm: ALGORITHM.to_owned(),
            public_key: URL_SAFE_NO_PAD.encode(self.verifying_key().as_bytes()),
            created_at_ms: now_ms,
        }
    }
}

/// The RFC 7638 thumbprint of an Ed25519 public key.
pub fn key_id(key: &VerifyingKey) -> String {
    thumbprint(&URL_SAFE_NO_PAD.encode(key.as_bytes()))
}

fn thumbprint(x: &str) -> String {
    // The required members in lexicographic order, no whitespace (RFC 7638 §3.2);
    // `x` is base64url, which needs no JSON escaping.
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// One key of a JWKS. Only what an Ed25519 verifier needs is read; other members pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Jwk {
    pub kty: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crv: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kid: Option<String>,
    #[serde(rename = "use", default, skip_serializing_if = "Option::is_none")]
    pub use_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alg: Option<String>,
}

impl Jwk {
    /// The published form of an Ed25519 public key (`x` in base64url).
    pub fn ed25519(kid: &str, x: &str) -> Self {
        Self {
            kty: "OKP".to_owned(),
            crv: Some("Ed25519".to_owned()),
            x: Some(x.to_owned()),
            kid: Some(kid.to_owned()),
            use_: Some("sig".to_owned()),
            alg: Some("EdDSA".to_owned()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Jwks {
    pub keys: Vec<Jwk>,
}

impl Jwks {
    /// The key set the service publishes: every key it ever recorded.
    pub fn from_records(records: &[PublicKeyRecord]) -> Self {
        let keys = records
            .iter()
            .filter(|r| r.algorithm == ALGORITHM)
            .map(|r| Jwk::ed25519(&r.key_id, &r.public_key))
            .collect();
        Self { keys }
    }
}

/// Public keys a verifier trusts, by `kid`.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    keys: BTreeMap<String, VerifyingKey>,
}

impl KeySet {
    /// The Ed25519 keys of a JWKS. Keys of other types are skipped (a JWKS may
    /// mix them); an Ed25519 key that does not decode is an error, since a
    /// verifier silently missing a key would report "unknown key" for a good
    /// attestation. A key without a `kid` is filed under its thumbprint.
    pub fn from_jwks(jwks: &Jwks) -> Result<Self, String> {
        let mut set = Self::default();
        for jwk in &jwks.keys {
            if jwk.kty != "OKP" || jwk.crv.as_deref() != Some("Ed25519") {
                continue;
            }
            let x = jwk
                .x
                .as_deref()
                .ok_or_else(|| "an Ed25519 key in the key set has no `x`".to_owned())?;
            let key = decode_public_key(x)?;
            let kid = jwk.kid.clone().unwrap_or_else(|| key_id(&key));
            set.keys.insert(kid, key);
        }
        Ok(set)
    }

    /// The keys the store records. A record that does not decode is skipped and
    /// logged: one damaged row must not stop every other attestation verifying.
    pub fn from_records(records: &[PublicKeyRecord]) -> Self {
        let mut set = Self::default();
        for r in records.iter().filter(|r| r.algorithm == ALGORITHM) {
            match decode_public_key(&r.public_key) {
                Ok(key) => {
                    set.keys.insert(r.key_id.clone(), key);
                }
                Err(e) => {
                    tracing::warn!(kid = %r.key_id, error = %e, "skipping a stored public key")
                }
            }
        }
        set
    }

    pub fn insert(&mut self, kid: &str, key: VerifyingKey) {
        self.keys.insert(kid.to_owned(), key);
    }

    pub fn get(&self, kid: &str) -> Option<&VerifyingKey> {
        self.keys.get(kid)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &VerifyingKey)> {
        self.keys.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

fn decode_public_key(x: &str) -> Result<VerifyingKey, String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(x.trim_end_matches('='))
        .map_err(|_| "an Ed25519 key's `x` is not base64url".to_owned())?;
    let bytes: [u8; 32] = bytes
        .try_into()
        .map_err(|_| "an Ed25519 key's `x` is not 32 bytes".to_owned())?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| "an Ed25519 key's `x` is not a curve point".into())
}

/// Where the signing key comes from, in order: `PROTOCHECK_SIGNING_KEY`; the key
/// file (`PROTOCHECK_SIGNING_KEY_FILE`, else [`default_key_file`]), created with
/// a new key and mode 0600 the first time. Logs the key's `kid` and the file's
/// path, never the key.
pub fn load_signing_key(args: &AttestArgs, database_url: &str) -> anyhow::Result<SigningKeyPair> {
    if let Some(text) = &args.signing_key {
        let key = SigningKeyPair::parse(text.expose()).context("PROTOCHECK_SIGNING_KEY")?;
        tracing::info!(
            kid = key.key_id(),
            "signing attestations with the configured key"
        );
        return Ok(key);
    }
    let path = match &args.signing_key_file {
        Some(path) => path.clone(),
        None => match default_key_file(database_url) {
            Some(path) => path,
            None => {
                let key = SigningKeyPair::generate()?;
                tracing::warn!(
                    kid = key.key_id(),
                    "in-memory database: signing with a key that lives only as long as this process"
                );
                return Ok(key);
            }
        },
    };
    load_or_create_key_file(&path)
}

/// The key file beside a SQLite database file (`<db>.signing-key.pem`), or
/// `protocheck-signing-key.pem` in the working directory for Postgres (several
/// machines must then share one key through `PROTOCHECK_SIGNING_KEY`). `None`
/// for an in-memory database.
pub fn default_key_file(database_url: &str) -> Option<PathBuf> {
    let Some(rest) = database_url.strip_prefix("sqlite:") else {
        return Some(PathBuf::from("protocheck-signing-key.pem"));
    };
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" || rest.contains("mode=memory") {
        return None;
    }
    let mut name = Path::new(path).file_name()?.to_os_string();
    name.push(".signing-key.pem");
    Some(Path::new(path).with_file_name(name))
}

/// Reads the key file, or creates it with a new key when it does not exist.
pub fn load_or_create_key_file(path: &Path) -> anyhow::Result<SigningKeyPair> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            crate::config::refuse_shared_key_file(path)?;
            let key = SigningKeyPair::parse(&Zeroizing::new(text))
                .with_context(|| format!("reading the signing key in {}", path.display()))?;
            tracing::info!(kid = key.key_id(), file = %path.display(), "signing attestations with the key file");
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_key_file(path),
        Err(e) => Err(e).with_context(|| format!("reading the signing key {}", path.display())),
    }
}

/// A key that cannot be kept is still better than no signatures: its public half
/// is recorded in the store like any other, so what it signs keeps verifying after
/// a restart brings another key.
fn ephemeral_key(path: &Path, error: &std::io::Error) -> anyhow::Result<SigningKeyPair> {
    let key = SigningKeyPair::generate()?;
    tracing::warn!(
        kid = key.key_id(),
        file = %path.display(),
        %error,
        "cannot create the signing key file; signing with a key that lives as long as this process (set PROTOCHECK_SIGNING_KEY)"
    );
    Ok(key)
}

fn create_key_file(path: &Path) -> anyhow::Result<SigningKeyPair> {
    use std::io::Write;
    let key = SigningKeyPair::generate()?;
    let pem = key.to_pkcs8_pem()?;
    let mut options = std::fs::OpenOptions::new();
    // create_new: two processes starting at once must not both write a key; the
    // loser reads the winner's.
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Owner-only from the first byte, not chmod after the write.
        options.mode(0o600);
    }
    let mut file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return load_or_create_key_file(path);
        }
        Err(e) => return ephemeral_key(path, &e),
    };
    file.write_all(pem.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing the signing key file {}", path.display()))?;
    tracing::info!(kid = key.key_id(), file = %path.display(), "created a signing key for attestations");
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kid_is_the_rfc_7638_thumbprint() {
        // RFC 8037 appendix A.3: the thumbprint of the example Ed25519 key.
        assert_eq!(
            thumbprint("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"),
            "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
        );
        // RFC 8037 appendix A.1's private key has that public key.
        let seed: [u8; 32] = URL_SAFE_NO_PAD
            .decode("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A")
            .unwrap()
            .try_into()
            .unwrap();
        let key = SigningKeyPair::from_seed(&seed);
        assert_eq!(key.key_id(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    }

    #[test]
    fn keys_read_back_from_pem_and_hex() {
        let key = SigningKeyPair::generate().unwrap();
        let pem = key.to_pkcs8_pem().unwrap();
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert_eq!(SigningKeyPair::parse(&pem).unwrap().key_id(), key.key_id());
        let hex_seed = hex::encode(key.key.as_bytes());
        assert_eq!(
            SigningKeyPair::parse(&format!(" {hex_seed}\n"))
                .unwrap()
                .key_id(),
            key.key_id()
        );
        assert!(SigningKeyPair::parse("not a key").is_err());
        assert!(
            !format!("{key:?}").contains(&hex_seed),
            "Debug hides the key"
        );
    }

    #[test]
    fn default_key_file_sits_beside_the_sqlite_file() {
        let p = |u: &str| default_key_file(u).map(|p| p.display().to_string());
        assert_eq!(
            p("sqlite://protocheck.db").as_deref(),
            Some("protocheck.db.signing-key.pem")
        );
        assert_eq!(
            p("sqlite:///var/lib/pc/data.db?mode=rwc").as_deref(),
            Some("/var/lib/pc/data.db.signing-key.pem")
        );
        assert_eq!(p("sqlite::memory:"), None);
        assert_eq!(
            p("postgres://db/protocheck").as_deref(),
            Some("protocheck-signing-key.pem")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_created_key_file_is_owner_only_and_reused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.pem");
        let first = load_or_create_key_file(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = load_or_create_key_file(&path).unwrap();
        assert_eq!(again.key_id(), first.key_id(), "the same key on restart");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = load_or_create_key_file(&path).unwrap_err();
        assert!(format!("{refused:#}").contains("chmod 600"), "{refused:#}");

        // Nowhere to keep it: a key for this process, not a failure to start.
        let nowhere = dir.path().join("missing-dir").join("k.pem");
        assert!(load_or_create_key_file(&nowhere).is_ok());
        assert!(!nowhere.exists());
    }
}
