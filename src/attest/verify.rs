//! Verification: an envelope and a key set in, the signed statement (or the
//! reason it cannot be trusted) out. Used by `POST /api/v1/verify` and by
//! `protocheck verify`, which works offline with a key file.

use super::dsse::{self, Envelope, PAYLOAD_TYPE};
use super::keys::{Jwks, KeySet};
use super::statement::{PREDICATE_TYPE, STATEMENT_TYPE, Statement};
use anyhow::Context;
use ed25519_dalek::Signature;
use std::process::ExitCode;
use std::time::Duration;

/// A verified attestation.
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    /// The `kid` of the key whose signature matched.
    pub key_id: String,
    pub statement: Statement,
}

/// Why an attestation is not trusted. [`VerifyError::Malformed`] is bad input;
/// the rest are well-formed envelopes that fail a check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("not a DSSE envelope: {0}")]
    Malformed(String),
    #[error("signed by key `{0}`, which is not in the key set")]
    UnknownKey(String),
    #[error("no signature matches the payload with any key in the key set")]
    BadSignature,
    #[error("the payload type is `{0}`, not `{PAYLOAD_TYPE}`")]
    PayloadType(String),
    #[error("the signed payload is not a protocheck verdict statement: {0}")]
    NotAStatement(String),
    #[error("the signed payload is not in RFC 8785 canonical form")]
    NotCanonical,
}

impl VerifyError {
    pub fn is_malformed(&self) -> bool {
        matches!(self, Self::Malformed(_))
    }
}

/// Parses envelope JSON; anything that is not one is [`VerifyError::Malformed`].
pub fn parse_envelope(bytes: &[u8]) -> Result<Envelope, VerifyError> {
    serde_json::from_slice(bytes).map_err(|e| VerifyError::Malformed(e.to_string()))
}

/// Checks the signatures, then the statement. An envelope is trusted when at
/// least one of its signatures is a valid Ed25519 signature (strict: no weak keys,
/// no malleable encodings) of the PAE by a key of `keys`.
pub fn verify_envelope(envelope: &Envelope, keys: &KeySet) -> Result<Verified, VerifyError> {
    let payload = dsse::decode(&envelope.payload)
        .ok_or_else(|| VerifyError::Malformed("the payload is not base64".into()))?;
    if envelope.signatures.is_empty() {
        return Err(VerifyError::Malformed(
            "the envelope has no signature".into(),
        ));
    }
    let message = dsse::pae(&envelope.payload_type, &payload);
    let mut unknown = None;
    let mut tried_a_key = false;
    let mut signer = None;
    for s in &envelope.signatures {
        let bytes = dsse::decode(&s.sig)
            .ok_or_else(|| VerifyError::Malformed("a signature is not base64".into()))?;
        let bytes: [u8; 64] = bytes
            .try_into()
            .map_err(|_| VerifyError::Malformed("a signature is not 64 bytes".into()))?;
        let signature = Signature::from_bytes(&bytes);
        // The keyid is an unsigned hint: it picks the key, it proves nothing.
        let candidates: Vec<(&str, &ed25519_dalek::VerifyingKey)> = if s.keyid.is_empty() {
            keys.iter().collect()
        } else {
            match keys.get(&s.keyid) {
                Some(key) => vec![(s.keyid.as_str(), key)],
                None => {
                    unknown.get_or_insert_with(|| s.keyid.clone());
                    continue;
                }
            }
        };
        tried_a_key |= !candidates.is_empty();
        if let Some((kid, _)) = candidates
            .into_iter()
            .find(|(_, key)| key.verify_strict(&message, &signature).is_ok())
        {
            signer = Some(kid.to_owned());
            break;
        }
    }
    let Some(key_id) = signer else {
        return Err(match unknown {
            Some(kid) if !tried_a_key => VerifyError::UnknownKey(kid),
            _ => VerifyError::BadSignature,
        });
    };
    if envelope.payload_type != PAYLOAD_TYPE {
        return Err(VerifyError::PayloadType(envelope.payload_type.clone()));
    }
    let value: serde_json::Value = serde_json::from_slice(&payload)
        .map_err(|e| VerifyError::NotAStatement(format!("not JSON: {e}")))?;
    // Signed bytes in any other form would still verify, but could not be rebuilt
    // from the report by a third party; protocheck never produces them.
    if serde_jcs::to_vec(&value).ok().as_deref() != Some(payload.as_slice()) {
        return Err(VerifyError::NotCanonical);
    }
    let statement: Statement =
        serde_json::from_value(value).map_err(|e| VerifyError::NotAStatement(e.to_string()))?;
    if statement.statement_type != STATEMENT_TYPE {
        return Err(VerifyError::NotAStatement(format!(
            "`_type` is `{}`",
            statement.statement_type
        )));
    }
    if statement.predicate_type != PREDICATE_TYPE {
        return Err(VerifyError::NotAStatement(format!(
            "`predicateType` is `{}`",
            statement.predicate_type
        )));
    }
    Ok(Verified { key_id, statement })
}

/// Parses and verifies envelope JSON.
pub fn verify_json(bytes: &[u8], keys: &KeySet) -> Result<Verified, VerifyError> {
    verify_envelope(&parse_envelope(bytes)?, keys)
}

/// Where the published key set lives, relative to the service's origin.
pub const KEYS_PATH: &str = "/.well-known/protocheck/keys.json";

/// Largest attestation or key set `protocheck verify` reads.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// Deadline of each download of `protocheck verify`.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// `protocheck verify`: checks a signed attestation.
#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// The attestation (a DSSE envelope): a file, `-` for standard input, or a URL
    /// such as https://host/api/v1/runs/ID/attestation.
    #[arg(value_name = "FILE|URL")]
    pub attestation: String,
    /// The service's key set (JWKS): a file, or a URL. Default for an attestation
    /// given by URL: /.well-known/protocheck/keys.json on the same origin. Give a
    /// file to verify offline.
    #[arg(long, value_name = "JWKS-URL|FILE")]
    pub keys: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `protocheck verify`. Exit 0 when the attestation verifies, 1 when it does
/// not; an error (unreadable file, unreachable URL, no key set) is returned for
/// the caller to report as a usage failure.
pub async fn verify_command(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let (envelope, origin) = read_document(&args.attestation)
        .await
        .context("reading the attestation")?;
    let keys_source = match (&args.keys, origin) {
        (Some(keys), _) => keys.clone(),
        (None, Some(origin)) => format!("{origin}{KEYS_PATH}"),
        (None, None) => anyhow::bail!(
            "give --keys (the service's {KEYS_PATH}, as a file or URL) to verify an attestation from a file"
        ),
    };
    let (keys, _) = read_document(&keys_source)
        .await
        .with_context(|| format!("reading the key set {keys_source}"))?;
    let jwks: Jwks = serde_json::from_slice(&keys)
        .with_context(|| format!("the key set {keys_source} is not a JWKS"))?;
    let keys =
        KeySet::from_jwks(&jwks).map_err(|e| anyhow::anyhow!("the key set {keys_source}: {e}"))?;
    if keys.is_empty() {
        anyhow::bail!("the key set {keys_source} has no Ed25519 key");
    }
    let result = verify_json(&envelope, &keys);
    if args.json {
        // The fields of `POST /api/v1/verify`'s answer, so one reader serves both.
        let doc = match &result {
            Ok(v) => {
                serde_json::json!({"valid": true, "key_id": v.key_id, "statement": v.statement})
            }
            Err(e) => serde_json::json!({"valid": false, "reason": e.to_string()}),
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        match &result {
            Ok(v) => print_verified(v),
            Err(e) => println!("NOT VERIFIED: {e}"),
        }
    }
    Ok(if result.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_verified(v: &Verified) {
    let p = &v.statement.predicate;
    let level = match (&p.verdict.grade, &p.verdict.certified_level) {
        (Some(grade), _) => grade.clone(),
        (None, Some(level)) => level.clone(),
        (None, None) => p.verdict.summary.clone(),
    };
    let c = p.counts;
    println!("verified: signed by key {}", v.key_id);
    println!("target:   {}", v.statement.target_url().unwrap_or("?"));
    println!(
        "suite:    {} {} ({}{})",
        p.suite,
        p.suite_version,
        p.spec_revision,
        p.profile
            .as_deref()
            .map(|pr| format!(", profile {pr}"))
            .unwrap_or_default()
    );
    println!(
        "verdict:  {level} ({}) — {}",
        if p.verdict.passed { "passes" } else { "fails" },
        p.verdict.summary
    );
    println!(
        "counts:   {} passed, {} failed, {} warnings, {} info, {} skipped",
        c.pass, c.fail, c.warn, c.info, c.skip
    );
    for r in &p.verdict.revisions {
        println!(
            "  MCP {}: {} ({}) — {}",
            r.spec_revision,
            r.grade,
            if r.passed { "passes" } else { "fails" },
            r.summary
        );
    }
    println!("run:      {} finished {}", p.run_id, p.finished_at);
    println!("findings: sha256 {}", p.findings_sha256);
}

/// Reads a file, standard input (`-`) or an http(s) URL, up to
/// [`MAX_DOCUMENT_BYTES`]; for a URL also returns its origin.
async fn read_document(source: &str) -> anyhow::Result<(Vec<u8>, Option<String>)> {
    if source.starts_with("http://") || source.starts_with("https://") {
        let url = url::Url::parse(source).with_context(|| format!("`{source}` is not a URL"))?;
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .build()
            .context("starting the HTTP client")?;
        let mut resp = client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .with_context(|| format!("fetching {url}"))?;
        if !resp.status().is_success() {
            anyhow::bail!("{url} answered {}", resp.status());
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .with_context(|| format!("reading {url}"))?
        {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                anyhow::bail!("{url} sent more than {MAX_DOCUMENT_BYTES} bytes");
            }
            body.extend_from_slice(&chunk);
        }
        return Ok((body, Some(url.origin().ascii_serialization())));
    }
    let body = if source == "-" {
        use tokio::io::AsyncReadExt;
        let mut body = Vec::new();
        tokio::io::stdin()
            .take(MAX_DOCUMENT_BYTES as u64 + 1)
            .read_to_end(&mut body)
            .await
            .context("reading standard input")?;
        body
    } else {
        tokio::fs::read(source)
            .await
            .with_context(|| format!("reading {source}"))?
    };
    if body.len() > MAX_DOCUMENT_BYTES {
        anyhow::bail!("{source} is larger than {MAX_DOCUMENT_BYTES} bytes");
    }
    Ok((body, None))
}
