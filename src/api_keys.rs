//! API keys: operators create them with `protocheck keys create`; a client sends
//! the token as `Authorization: Bearer …` on `POST /api/v1/runs`, which then
//! counts against the key's own quota instead of the per-address one and marks
//! the run with the key's owner.
//!
//! A token is `pck_` and 32 base64url characters: 192 bits from the operating
//! system's random source. Only its SHA-256 is stored. A fast hash is right here
//! (a password hash is slow because passwords are guessable; a 192-bit random
//! token is not), and it lets the token be looked up by its hash, so no stored
//! value is compared with the presented token byte by byte.
//!
//! Each key also has a webhook signing secret (`whsec_…`), the HMAC key of the
//! webhooks of its runs. Receivers need it in clear, and so does protocheck to
//! sign: it is stored as is. Both are shown once, when the key is created.

use crate::store::{ApiKey, NewApiKey, Store, StoreError};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::TryRngCore;
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// Every token starts with this, so a leaked one is recognisable (secret scanners).
pub const TOKEN_PREFIX: &str = "pck_";
/// Every webhook signing secret starts with this.
pub const SECRET_PREFIX: &str = "whsec_";
/// Random bytes in a token or a secret: 192 bits, 32 base64url characters.
const RANDOM_BYTES: usize = 24;
const RANDOM_CHARS: usize = 32;
/// Longest key name and owner.
pub const MAX_NAME_CHARS: usize = 64;
pub const MAX_OWNER_CHARS: usize = 128;
/// Largest count of a rate: beyond it a limit limits nothing.
pub const MAX_RATE_COUNT: u32 = 1_000_000;

/// How many watches a key may keep unless it was created with another quota
/// (`protocheck keys create --watch-quota`): plenty for one project's
/// servers, and a bound on the runs one key can schedule.
pub const DEFAULT_WATCH_QUOTA: u32 = 100;

/// The largest watch quota a key may be given.
pub const MAX_WATCH_QUOTA: u32 = 1_000_000;

/// A submit quota: `count` submissions per `period_s` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub count: u32,
    pub period_s: u64,
}

impl FromStr for Rate {
    type Err = String;

    /// `N/s`, `N/m`, `N/h`, `N/d`, or with the unit spelled out (`N/min`, `N/hour`…).
    fn from_str(s: &str) -> Result<Self, String> {
        let usage = "write a rate as N/s, N/m, N/h or N/d (for example 60/h)";
        let (count, unit) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("rate `{s}`: {usage}"))?;
        let count: u32 = count
            .trim()
            .parse()
            .map_err(|_| format!("rate `{s}`: the count must be a whole number; {usage}"))?;
        if count == 0 || count > MAX_RATE_COUNT {
            return Err(format!(
                "rate `{s}`: the count must be between 1 and {MAX_RATE_COUNT}"
            ));
        }
        let period_s = match unit.trim().to_ascii_lowercase().as_str() {
            "s" | "sec" | "second" => 1,
            "m" | "min" | "minute" => 60,
            "h" | "hour" => 3600,
            "d" | "day" => 86_400,
            _ => return Err(format!("rate `{s}`: unknown unit; {usage}")),
        };
        Ok(Self { count, period_s })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.period_s {
            1 => "s",
            60 => "min",
            3600 => "h",
            86_400 => "d",
            other => return write!(f, "{}/{other}s", self.count),
        };
        write!(f, "{}/{unit}", self.count)
    }
}

impl Rate {
    /// The rate stored with a key.
    pub fn of(key: &ApiKey) -> Self {
        Self {
            count: u32::try_from(key.rate_count).unwrap_or(1).max(1),
            period_s: u64::try_from(key.rate_period_s).unwrap_or(1).max(1),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "key name `{0}` is not valid: use 1 to {MAX_NAME_CHARS} letters, digits, `.`, `_` or `-`"
    )]
    InvalidName(String),
    #[error("owner is not valid: use 1 to {MAX_OWNER_CHARS} printable characters")]
    InvalidOwner,
    #[error("a key named `{0}` exists already; revoke it first or choose another name")]
    NameTaken(String),
    #[error("the system random source failed: {0}")]
    Random(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A key just created, with the two values that are never shown again.
pub struct CreatedKey {
    pub key: ApiKey,
    pub token: String,
    pub webhook_secret: String,
}

impl fmt::Debug for CreatedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreatedKey")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

fn random_string(prefix: &str) -> Result<String, KeyError> {
    let mut bytes = [0u8; RANDOM_BYTES];
    rand::rngs::OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|e| KeyError::Random(e.to_string()))?;
    Ok(format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// SHA-256 of a token, hex: what the store keeps and looks keys up by.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Whether `token` has the shape of a protocheck token (says nothing of whether it exists).
pub fn is_well_formed(token: &str) -> bool {
    token.strip_prefix(TOKEN_PREFIX).is_some_and(|rest| {
        rest.len() == RANDOM_CHARS
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn valid_owner(owner: &str) -> bool {
    !owner.trim().is_empty()
        && owner.chars().count() <= MAX_OWNER_CHARS
        && !owner.chars().any(char::is_control)
}

/// Creates a key: a fresh token and webhook secret, stored hashed and as is
/// respectively; it may keep [`DEFAULT_WATCH_QUOTA`] watches.
pub async fn create_key(
    store: &dyn Store,
    name: &str,
    owner: Option<&str>,
    rate: Rate,
    now_ms: i64,
) -> Result<CreatedKey, KeyError> {
    create_key_with_quota(store, name, owner, rate, DEFAULT_WATCH_QUOTA, now_ms).await
}

/// [`create_key`], for a key that may keep `watch_quota` watches.
pub async fn create_key_with_quota(
    store: &dyn Store,
    name: &str,
    owner: Option<&str>,
    rate: Rate,
    watch_quota: u32,
    now_ms: i64,
) -> Result<CreatedKey, KeyError> {
    if !valid_name(name) {
        return Err(KeyError::InvalidName(name.chars().take(80).collect()));
    }
    if owner.is_some_and(|o| !valid_owner(o)) {
        return Err(KeyError::InvalidOwner);
    }
    let token = random_string(TOKEN_PREFIX)?;
    let webhook_secret = random_string(SECRET_PREFIX)?;
    let new = NewApiKey {
        id: Uuid::now_v7(),
        name: name.to_owned(),
        owner: owner.map(|o| o.trim().to_owned()),
        token_hash: hash_token(&token),
        rate_count: i32::try_from(rate.count).unwrap_or(i32::MAX),
        rate_period_s: i64::try_from(rate.period_s).unwrap_or(i64::MAX),
        webhook_secret: webhook_secret.clone(),
        created_at_ms: now_ms,
        watch_quota: i32::try_from(watch_quota.min(MAX_WATCH_QUOTA)).unwrap_or(i32::MAX),
    };
    let key = store
        .create_api_key(&new)
        .await?
        .ok_or_else(|| KeyError::NameTaken(name.to_owned()))?;
    Ok(CreatedKey {
        key,
        token,
        webhook_secret,
    })
}

/// Why a presented credential was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not `Bearer <token>` with a token of protocheck's shape.
    Malformed,
    /// Well-formed, but no key has it.
    Unknown,
    Revoked,
}

impl Refused {
    pub fn detail(self) -> &'static str {
        match self {
            Self::Malformed => {
                "the Authorization header must be `Bearer pck_…` with a protocheck API key"
            }
            Self::Unknown => "the API key is not known",
            Self::Revoked => "the API key has been revoked",
        }
    }
}

/// The key an `Authorization` header value names, if it is live.
pub async fn authenticate(
    store: &dyn Store,
    authorization: &[u8],
) -> Result<Result<ApiKey, Refused>, StoreError> {
    let Some(token) = bearer_token(authorization) else {
        return Ok(Err(Refused::Malformed));
    };
    if !is_well_formed(token) {
        return Ok(Err(Refused::Malformed));
    }
    Ok(
        match store.api_key_by_token_hash(&hash_token(token)).await? {
            None => Err(Refused::Unknown),
            Some(key) if key.is_revoked() => Err(Refused::Revoked),
            Some(key) => Ok(key),
        },
    )
}

/// The token of `Bearer <token>` (RFC 6750 §2.1; the scheme is case-insensitive).
fn bearer_token(value: &[u8]) -> Option<&str> {
    let value = std::str::from_utf8(value).ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_print() {
        let r: Rate = "60/h".parse().unwrap();
        assert_eq!(
            r,
            Rate {
                count: 60,
                period_s: 3600
            }
        );
        assert_eq!(r.to_string(), "60/h");
        assert_eq!("5/min".parse::<Rate>().unwrap().period_s, 60);
        assert_eq!("5/m".parse::<Rate>().unwrap().period_s, 60);
        assert_eq!("2/s".parse::<Rate>().unwrap().period_s, 1);
        assert_eq!("1/day".parse::<Rate>().unwrap().period_s, 86_400);
        for bad in ["60", "0/h", "x/h", "60/fortnight", "-1/s", "", "/h"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn tokens_have_their_shape() {
        let t = random_string(TOKEN_PREFIX).unwrap();
        assert!(is_well_formed(&t), "{t}");
        assert!(!is_well_formed("pck_short"));
        assert!(!is_well_formed(&t.replace("pck_", "xyz_")));
        assert_eq!(bearer_token(b"bearer abc"), Some("abc"));
        assert_eq!(bearer_token(b"Basic abc"), None);
        assert_eq!(bearer_token(b"Bearer "), None);
    }
}
