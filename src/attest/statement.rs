//! The signed statement: an in-toto Statement v1
//! (<https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md>) whose
//! subject is the target and whose predicate is the run's verdict.
//!
//! The statement is serialised with the JSON Canonicalization Scheme (RFC 8785,
//! JCS): object members sorted by their UTF-16 code units, no insignificant
//! whitespace, minimal string escapes, numbers as ECMAScript prints them. Anyone
//! holding the run's JSON can rebuild the exact signed bytes, and a verifier
//! refuses a payload that is not in that form.

use crate::store::{Run, StoredFinding};
use crate::suite::{Counts, Finding, RevisionVerdict, Verdict, VerdictDetail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// `_type` of an in-toto Statement v1.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// `predicateType` of protocheck's verdict predicate, version 1. A URN: the
/// type names a format and promises no document at an address.
pub const PREDICATE_TYPE: &str = "urn:protocheck:predicate:verdict:v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    #[serde(rename = "_type")]
    pub statement_type: String,
    pub subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    pub predicate: VerdictPredicate,
}

/// The target. in-toto requires a digest of each subject; a server has no bytes
/// to hash, so the digest is the SHA-256 of its canonical URL (whose first 12
/// bytes are the target key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subject {
    pub name: String,
    pub digest: BTreeMap<String, String>,
}

/// What protocheck found, and about which run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictPredicate {
    pub run_id: String,
    pub target_id: String,
    /// `mcp` or `rcp`.
    pub suite: String,
    pub suite_version: String,
    pub spec_revision: String,
    /// The RCP profile; absent for suites without profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub verdict: PredicateVerdict,
    pub counts: Counts,
    /// Hex SHA-256 of the JCS form of the run's findings, in order: the `findings`
    /// array of `GET /api/v1/runs/{id}` with `seq` and `created_at` removed.
    pub findings_sha256: String,
    /// RFC 3339, UTC, milliseconds.
    pub finished_at: String,
    /// The protocheck version that signed.
    pub protocheck_version: String,
    /// `bearer` when the run was judged with a token its submitter supplied
    /// (never the token). Absent otherwise, so earlier statements read as signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// The verdict fields, flat: `grade` for MCP; the levels and honesty for RCP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredicateVerdict {
    pub passed: bool,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certified_level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub honest: Option<bool>,
    /// For a run that judged several MCP revisions: each one's verdict,
    /// newest first, and the revisions it did not judge, with why. Absent
    /// otherwise, so statements signed before they existed read as signed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<RevisionVerdict>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<String>,
}

impl Statement {
    /// The statement of a finished run with its verdict and findings (in order).
    pub fn of_run(
        run: &Run,
        verdict: &Verdict,
        finished_at_ms: i64,
        findings: &[StoredFinding],
    ) -> Result<Self, serde_json::Error> {
        let findings: Vec<&Finding> = findings.iter().map(|f| &f.finding).collect();
        Self::of_findings(run, verdict, finished_at_ms, &findings)
    }

    /// [`Statement::of_run`] over the findings themselves, as the worker that
    /// stored them holds them.
    pub fn of_findings(
        run: &Run,
        verdict: &Verdict,
        finished_at_ms: i64,
        findings: &[&Finding],
    ) -> Result<Self, serde_json::Error> {
        let (profile, detail) = match &verdict.detail {
            VerdictDetail::Rcp {
                profile,
                certified_level,
                declared_level,
                honest,
                ..
            } => (
                Some(profile.clone()),
                PredicateVerdict {
                    passed: verdict.passed,
                    summary: verdict.summary.clone(),
                    grade: None,
                    certified_level: Some(certified_level.clone()),
                    declared_level: declared_level.clone(),
                    honest: *honest,
                    revisions: Vec::new(),
                    not_judged: Vec::new(),
                },
            ),
            VerdictDetail::Mcp {
                grade,
                revisions,
                not_judged,
                ..
            } => (
                None,
                PredicateVerdict {
                    passed: verdict.passed,
                    summary: verdict.summary.clone(),
                    grade: Some(grade.clone()),
                    certified_level: None,
                    declared_level: None,
                    honest: None,
                    revisions: revisions.clone(),
                    not_judged: not_judged.clone(),
                },
            ),
        };
        Ok(Self {
            statement_type: STATEMENT_TYPE.to_owned(),
            subject: vec![Subject {
                name: run.target_url.clone(),
                digest: BTreeMap::from([(
                    "sha256".to_owned(),
                    hex::encode(Sha256::digest(run.target_url.as_bytes())),
                )]),
            }],
            predicate_type: PREDICATE_TYPE.to_owned(),
            predicate: VerdictPredicate {
                run_id: run.id.to_string(),
                target_id: run.target_id.clone(),
                suite: verdict.suite.as_str().to_owned(),
                suite_version: verdict.suite_version.clone(),
                spec_revision: verdict.spec_revision.clone(),
                profile,
                verdict: detail,
                counts: verdict.counts,
                findings_sha256: findings_sha256(findings)?,
                finished_at: crate::rfc3339(finished_at_ms),
                protocheck_version: env!("CARGO_PKG_VERSION").to_owned(),
                // A token is claimed only where the suite sent it: the RCP
                // suite never does.
                credentials: run
                    .credentials
                    .clone()
                    .filter(|_| verdict.suite == crate::suite::SuiteId::Mcp),
            },
        })
    }

    /// The bytes that are signed.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, serde_json::Error> {
        serde_jcs::to_vec(self)
    }

    /// The target URL the statement is about.
    pub fn target_url(&self) -> Option<&str> {
        self.subject.first().map(|s| s.name.as_str())
    }
}

/// Hex SHA-256 of the JCS form of `findings`.
pub fn findings_sha256(findings: &[&Finding]) -> Result<String, serde_json::Error> {
    Ok(hex::encode(Sha256::digest(serde_jcs::to_vec(findings)?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Outcome;

    #[test]
    fn jcs_sorts_members_and_drops_whitespace() {
        let f = Finding {
            rule_id: "RCP-L0-001".into(),
            outcome: Outcome::Pass,
            message: "é \u{1} \"q\"".into(),
            evidence: vec![],
            duration_ms: 3,
        };
        let bytes = serde_jcs::to_vec(&[&f]).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            r#"[{"duration_ms":3,"message":"é \u0001 \"q\"","outcome":"pass","rule_id":"RCP-L0-001"}]"#
        );
    }
}
