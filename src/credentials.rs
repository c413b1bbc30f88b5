//! Credentials submitted with a run through the API (`credentials:
//! {bearer_token, limited_token?}`): sealed when the run is queued, opened only
//! by the worker that runs it, and wiped from the store when the run ends in
//! any state (a trigger in the migrations does it, so no path that ends a run
//! can forget).
//!
//! The cipher is XChaCha20-Poly1305 (RustCrypto `chacha20poly1305`): an
//! authenticated cipher, so a changed ciphertext is refused rather than opened
//! to garbage, and its 192-bit nonces are safe to draw at random for every
//! seal. The associated data binds a ciphertext to its run and key id: a row
//! copied onto another run does not open.
//!
//! The key is the operator's, like the signing key, but never generated: a key
//! kept beside the database it protects protects nothing from whoever can read
//! that directory, so without `PROTOCHECK_CREDENTIALS_KEY` (or its file) the
//! service refuses credentials. The key text is one or more keys (64 hex
//! digits each, separated by whitespace or commas): the first seals, every one
//! opens. Rotation is putting a new key first and dropping the old one once
//! the runs sealed with it have ended. Each ciphertext names its key's id.

use crate::config::CredentialsArgs;
use crate::suite::{BearerToken, MAX_BEARER_TOKEN_BYTES, RunOptions};
use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;
use zeroize::Zeroizing;

/// The version of the sealed form; part of the associated data.
const SEAL_CONTEXT: &str = "protocheck run credentials v1";
/// XChaCha20-Poly1305 nonce length.
const NONCE_BYTES: usize = 24;
/// What `runs.credentials` says about a run judged with a submitted token.
pub const KIND_BEARER: &str = "bearer";
/// What reports say about such a run.
pub const JUDGED_WITH_TOKEN: &str = "judged with a token supplied by the submitter";

/// What every output says of how a run was judged, when it had a token
/// (`credentials`, the run's kind of credentials): the submitter's own
/// ([`JUDGED_WITH_TOKEN`]), or one protocheck obtained when the submitter
/// signed in on the web form (see `web::sign_in`; `options` are the run's).
pub fn judged_with(credentials: Option<&str>, options: &RunOptions) -> Option<String> {
    credentials?;
    Some(match &options.sign_in {
        Some(sign_in) => format!(
            "judged with a token protocheck obtained when the submitter signed in at {}",
            sign_in.issuer
        ),
        None => JUDGED_WITH_TOKEN.to_owned(),
    })
}

/// The `credentials` member of a submission. `Debug` hides both tokens; it
/// serialises as its kind only (for the idempotency hash), never as a token.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// The OAuth bearer token sent on every request to the target (and only
    /// to the target's origin). Held encrypted until the run ends, then wiped.
    #[schema(value_type = String, min_length = 1, max_length = 4096)]
    pub bearer_token: BearerToken,
    /// A second token with less scope, for the rule that expects 403
    /// `insufficient_scope` (MCP25-AUT-007).
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 4096)]
    pub limited_token: Option<BearerToken>,
}

impl serde::Serialize for Credentials {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(if self.limited_token.is_some() {
            "bearer+limited"
        } else {
            KIND_BEARER
        })
    }
}

impl Credentials {
    /// Checks each token as `options.bearer_token` was checked: 1 to
    /// [`MAX_BEARER_TOKEN_BYTES`] visible ASCII characters (RFC 6750 §2.1).
    /// The message names the field, never the value.
    pub fn validate(&self) -> Result<(), String> {
        for (name, token) in [
            ("bearer_token", Some(&self.bearer_token)),
            ("limited_token", self.limited_token.as_ref()),
        ] {
            if let Some(token) = token {
                let t = token.expose();
                if t.is_empty()
                    || t.len() > MAX_BEARER_TOKEN_BYTES
                    || !t.bytes().all(|b| b.is_ascii_graphic())
                {
                    return Err(format!(
                        "credentials.{name} must be 1 to {MAX_BEARER_TOKEN_BYTES} visible ASCII characters"
                    ));
                }
            }
        }
        Ok(())
    }

    /// `options` carrying these tokens, for the engine.
    pub fn apply(self, options: &mut RunOptions) {
        options.bearer_token = Some(self.bearer_token);
        options.limited_token = self.limited_token;
    }
}

/// Credentials as the store keeps them: the key's id and base64 of the nonce
/// followed by the ciphertext.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedCredentials {
    pub key_id: String,
    pub sealed: String,
}

/// Why sealed credentials could not be opened. Never quotes them.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(
        "the run's credentials were sealed with key `{0}`, which this worker does not have (PROTOCHECK_CREDENTIALS_KEY)"
    )]
    UnknownKey(String),
    #[error(
        "this worker has no credentials key (PROTOCHECK_CREDENTIALS_KEY), so it cannot use the run's token"
    )]
    NoKeyring,
    #[error(
        "the run's sealed credentials do not open with key `{0}`: they were changed or damaged"
    )]
    Damaged(String),
}

/// One credentials key and its id.
struct Key {
    id: String,
    cipher: XChaCha20Poly1305,
}

/// The operator's credentials keys: the first seals, all open.
pub struct Keyring {
    keys: Vec<Key>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|k| k.id.as_str()).collect();
        f.debug_struct("Keyring").field("key_ids", &ids).finish()
    }
}

impl Keyring {
    /// Reads keys of 64 hex digits, separated by whitespace or commas; the first
    /// one seals. The error never quotes the text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut keys = Vec::new();
        for word in text
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
        {
            let mut bytes = Zeroizing::new([0u8; 32]);
            hex::decode_to_slice(word, bytes.as_mut()).map_err(|_| {
                format!(
                    "credentials key {} is not 64 hex digits (32 random bytes, e.g. `openssl rand -hex 32`)",
                    keys.len() + 1
                )
            })?;
            keys.push(Key {
                id: key_id(&bytes),
                cipher: XChaCha20Poly1305::new(bytes.as_ref().into()),
            });
        }
        if keys.is_empty() {
            return Err("the credentials key is empty".to_owned());
        }
        Ok(Self { keys })
    }

    /// The id of the key that seals.
    pub fn sealing_key_id(&self) -> &str {
        &self.keys[0].id
    }

    /// Seals `credentials` for run `run_id` with the first key.
    pub fn seal(
        &self,
        run_id: Uuid,
        credentials: &Credentials,
    ) -> Result<SealedCredentials, String> {
        use rand::TryRngCore;
        let key = &self.keys[0];
        let plain = Zeroizing::new(
            serde_json::json!({
                "bearer_token": credentials.bearer_token.expose(),
                "limited_token": credentials.limited_token.as_ref().map(BearerToken::expose),
            })
            .to_string(),
        );
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rngs::OsRng
            .try_fill_bytes(&mut nonce)
            .map_err(|e| format!("the operating system's random source failed: {e}"))?;
        let aad = associated_data(run_id, &key.id);
        let ciphertext = key
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plain.as_bytes(),
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| "sealing the credentials failed".to_owned())?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&ciphertext);
        Ok(SealedCredentials {
            key_id: key.id.clone(),
            sealed: STANDARD.encode(out),
        })
    }

    /// Opens what [`Keyring::seal`] sealed for `run_id`, with whichever key it names.
    pub fn open(&self, run_id: Uuid, sealed: &SealedCredentials) -> Result<Credentials, OpenError> {
        let key = self
            .keys
            .iter()
            .find(|k| k.id == sealed.key_id)
            .ok_or_else(|| OpenError::UnknownKey(sealed.key_id.clone()))?;
        let damaged = || OpenError::Damaged(sealed.key_id.clone());
        let bytes = STANDARD.decode(&sealed.sealed).map_err(|_| damaged())?;
        if bytes.len() < NONCE_BYTES {
            return Err(damaged());
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let aad = associated_data(run_id, &key.id);
        let plain = Zeroizing::new(
            key.cipher
                .decrypt(
                    XNonce::from_slice(nonce),
                    Payload {
                        msg: ciphertext,
                        aad: aad.as_bytes(),
                    },
                )
                .map_err(|_| damaged())?,
        );
        #[derive(Deserialize)]
        struct Plain {
            bearer_token: String,
            limited_token: Option<String>,
        }
        let plain: Plain = serde_json::from_slice(&plain).map_err(|_| damaged())?;
        Ok(Credentials {
            bearer_token: BearerToken::new(plain.bearer_token),
            limited_token: plain.limited_token.map(BearerToken::new),
        })
    }
}

fn associated_data(run_id: Uuid, key_id: &str) -> String {
    format!("{SEAL_CONTEXT}\0{run_id}\0{key_id}")
}

/// A key's id: the first 16 hex digits of SHA-256 over a label and the key.
/// It names the key in stored rows without revealing anything of it.
fn key_id(key: &[u8; 32]) -> String {
    let mut h = Sha256::new();
    h.update(b"protocheck credentials key id\0");
    h.update(key);
    hex::encode(&h.finalize()[..8])
}

/// The operator's keyring: `PROTOCHECK_CREDENTIALS_KEY`, else the key file
/// (`PROTOCHECK_CREDENTIALS_KEY_FILE`, owner-only like the signing key's);
/// `None` when neither is set, and the service then refuses credentials.
/// Logs the sealing key's id, never a key.
pub fn load_keyring(args: &CredentialsArgs) -> anyhow::Result<Option<Keyring>> {
    let ring = if let Some(text) = &args.credentials_key {
        Keyring::parse(text.expose())
            .map_err(anyhow::Error::msg)
            .context("PROTOCHECK_CREDENTIALS_KEY")?
    } else if let Some(path) = &args.credentials_key_file {
        crate::config::refuse_shared_key_file(path)?;
        let text = Zeroizing::new(
            std::fs::read_to_string(path)
                .with_context(|| format!("reading the credentials key {}", path.display()))?,
        );
        Keyring::parse(&text)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("reading the credentials key in {}", path.display()))?
    } else {
        tracing::info!(
            "no credentials key (PROTOCHECK_CREDENTIALS_KEY): submissions with credentials are refused"
        );
        return Ok(None);
    };
    tracing::info!(
        key_id = ring.sealing_key_id(),
        keys = ring.keys.len(),
        "sealing submitted credentials with the configured key"
    );
    Ok(Some(ring))
}

#[cfg(test)]
mod tests {
    use super::*;

    const K1: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    const K2: &str = "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100";

    fn creds() -> Credentials {
        Credentials {
            bearer_token: BearerToken::new("tok-abc"),
            limited_token: Some(BearerToken::new("tok-low")),
        }
    }

    #[test]
    fn sealed_credentials_open_for_their_run_only() {
        let ring = Keyring::parse(K1).unwrap();
        let run = Uuid::now_v7();
        let sealed = ring.seal(run, &creds()).unwrap();
        assert!(!sealed.sealed.contains("tok-"));
        assert_eq!(ring.open(run, &sealed).unwrap(), creds());
        assert!(matches!(
            ring.open(Uuid::now_v7(), &sealed),
            Err(OpenError::Damaged(_))
        ));
        let mut changed = sealed.clone();
        changed.sealed.replace_range(40..41, "A");
        changed.sealed.replace_range(41..42, "B");
        assert!(ring.open(run, &changed).is_err());
    }

    #[test]
    fn a_rotated_keyring_opens_what_the_old_key_sealed() {
        let old = Keyring::parse(K1).unwrap();
        let run = Uuid::now_v7();
        let sealed = old.seal(run, &creds()).unwrap();
        let rotated = Keyring::parse(&format!("{K2},\n{K1}")).unwrap();
        assert_ne!(rotated.sealing_key_id(), old.sealing_key_id());
        assert_eq!(rotated.open(run, &sealed).unwrap(), creds());
        assert_eq!(
            rotated.seal(run, &creds()).unwrap().key_id,
            rotated.sealing_key_id()
        );
        let without_old = Keyring::parse(K2).unwrap();
        assert!(matches!(
            without_old.open(run, &sealed),
            Err(OpenError::UnknownKey(_))
        ));
    }

    #[test]
    fn key_text_is_checked_without_being_quoted() {
        let err = Keyring::parse("not-a-key").unwrap_err();
        assert!(!err.contains("not-a-key"));
        assert!(Keyring::parse(" \n").is_err());
        assert!(format!("{:?}", Keyring::parse(K1).unwrap()).contains("key_ids"));
    }

    #[cfg(unix)]
    #[test]
    fn the_key_file_must_be_the_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credentials.key");
        std::fs::write(&path, format!("{K2}\n{K1}\n")).unwrap();
        let args = CredentialsArgs {
            credentials_key: None,
            credentials_key_file: Some(path.clone()),
        };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_keyring(&args).unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let ring = load_keyring(&args).unwrap().expect("a keyring");
        assert_eq!(ring.keys.len(), 2);
        assert!(load_keyring(&CredentialsArgs::default()).unwrap().is_none());
    }

    #[test]
    fn credentials_serialise_as_their_kind_only() {
        assert_eq!(
            serde_json::to_string(&creds()).unwrap(),
            "\"bearer+limited\""
        );
        assert!(!format!("{:?}", creds()).contains("tok-"));
    }
}
