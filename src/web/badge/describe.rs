//! What a badge says: the words and colour of a target's newest run of a suite.

use super::render::{self, Badge, Color};
use crate::store::{RunStatus, SuiteRuns, Target};
use crate::suite::grade::NOT_JUDGED;
use crate::suite::{McpRevision, SuiteId, Verdict, VerdictDetail};

/// What a badge shows for `suite` on `target`, given its runs. An MCP badge
/// names the revision its verdict certifies (each one, for a run that judged
/// several); without a verdict, the revision the run asked for, if it asked
/// for one.
pub fn describe(suite: SuiteId, target: Option<&Target>, runs: &SuiteRuns) -> Badge {
    let verdict = runs.finished.as_ref().and_then(|r| r.verdict.as_ref());
    let label = match suite {
        SuiteId::Rcp => "RCP".to_owned(),
        SuiteId::Mcp => match verdict {
            // Several revisions: the message names each beside its grade.
            Some(v) if v.revisions().len() > 1 => "MCP".to_owned(),
            Some(v) => match v.revisions() {
                [only] => format!("MCP {}", only.spec_revision),
                _ => format!("MCP {}", v.spec_revision),
            },
            None => {
                let asked = runs
                    .finished
                    .as_ref()
                    .or(runs.active.as_ref())
                    .and_then(|r| r.options.mcp_revision);
                match asked {
                    Some(r @ (McpRevision::V2026_07_28 | McpRevision::V2025_11_25)) => {
                        format!("MCP {}", r.as_str())
                    }
                    _ => "MCP".to_owned(),
                }
            }
        },
    };
    let Some(target) = target else {
        // Nothing about the target is known, so nothing of it is echoed either.
        return Badge::new(&label, "unknown", Color::LightGrey, None).error();
    };
    let url = Some(target.canonical_url.as_str());
    match (&runs.finished, &runs.active) {
        (None, None) => Badge::new(&label, "unknown", Color::LightGrey, url).error(),
        (None, Some(_)) => Badge::new(&label, "pending", Color::Blue, url),
        (Some(run), _) => match (run.status, verdict) {
            (RunStatus::Passed | RunStatus::Failed, Some(v)) => verdict_badge(&label, v, url),
            _ => Badge::new(&label, "error", Color::LightGrey, url).error(),
        },
    }
}

fn verdict_badge(label: &str, v: &Verdict, url: Option<&str>) -> Badge {
    match &v.detail {
        VerdictDetail::Rcp {
            certified_level,
            declared_level,
            honest,
            ..
        } => {
            if *honest == Some(false) {
                // The declared level is the target's own text: cut it short so the
                // word that matters always fits.
                let claimed = declared_level.as_deref().unwrap_or(certified_level);
                let message = format!("{} OVERCLAIMED", render::clean(claimed, 12));
                return Badge::new(label, &message, Color::Red, url);
            }
            let color = match certified_level.as_str() {
                "L2" => Color::BrightGreen,
                "L1" => Color::Green,
                "L0" => Color::YellowGreen,
                "none" => Color::Red,
                _ => Color::LightGrey,
            };
            Badge::new(label, certified_level, color, url)
        }
        VerdictDetail::Mcp {
            grade,
            withheld,
            revisions,
            ..
        } if revisions.is_empty() => {
            let (message, color) = grade_words(grade, withheld.as_deref(), v.counts.fail);
            Badge::new(label, &message, color, url)
        }
        // One revision of a run of several: its grade, as for one.
        VerdictDetail::Mcp { revisions, .. } if revisions.len() == 1 => {
            let only = &revisions[0];
            let (message, color) =
                grade_words(&only.grade, only.withheld.as_deref(), only.counts.fail);
            Badge::new(label, &message, color, url)
        }
        // Several: the message names each revision beside its grade
        // (`2026-07-28 strict · 2025-11-25 compliant`), so that the lowest
        // grade, which gives the colour, is never read as every revision's.
        VerdictDetail::Mcp {
            grade, revisions, ..
        } => {
            let words: Vec<String> = revisions
                .iter()
                .map(|r| {
                    format!(
                        "{} {}",
                        r.spec_revision,
                        grade_words(&r.grade, r.withheld.as_deref(), r.counts.fail).0
                    )
                })
                .collect();
            let (_, color) = grade_words(grade, None, v.counts.fail);
            Badge::new(label, &words.join(" · "), color, url)
        }
    }
}

/// What an MCP badge says of a grade, and in which colour. A run whose
/// core rules could not be judged says why instead of a grade
/// (`authorization required`), in grey: it certifies nothing.
fn grade_words(grade: &str, withheld: Option<&str>, failing: u32) -> (String, Color) {
    match grade {
        "strict" => ("strict".to_owned(), Color::BrightGreen),
        "compliant" => ("compliant".to_owned(), Color::Green),
        NOT_JUDGED => (
            render::clean(withheld.unwrap_or(NOT_JUDGED), 40),
            Color::LightGrey,
        ),
        _ if failing > 0 => (format!("{failing} failing"), Color::Red),
        other => (other.to_owned(), Color::Red),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Run;
    use crate::suite::mcp::SPEC_REVISION as MCP_REVISION;
    use crate::suite::{Counts, RunOptions};
    use uuid::Uuid;

    fn target() -> Target {
        Target {
            id: "00112233445566778899aabb".into(),
            canonical_url: "http://example.com/rcp".into(),
            protocol: Some("rcp".into()),
            created_at_ms: 1,
        }
    }

    fn run(status: RunStatus, verdict: Option<Verdict>) -> Run {
        Run {
            id: Uuid::nil(),
            target_id: target().id,
            target_url: target().canonical_url,
            suite: crate::suite::SuiteChoice::Rcp,
            suite_version: None,
            options: RunOptions::default(),
            webhook_url: None,
            dedup_key: "k".into(),
            status,
            attempts: 1,
            max_attempts: 3,
            locked_by: None,
            lease_expires_at_ms: None,
            available_at_ms: 0,
            created_at_ms: 0,
            started_at_ms: Some(0),
            finished_at_ms: status.is_finished().then_some(10),
            verdict,
            error: None,
            credentials: None,
            target_host: None,
        }
    }

    fn rcp(level: &str, declared: Option<&str>, honest: Option<bool>) -> Verdict {
        Verdict {
            suite: SuiteId::Rcp,
            suite_version: "0.1.0".into(),
            spec_revision: "RCP/1 1.0".into(),
            passed: level != "none" && honest != Some(false),
            summary: level.into(),
            counts: Counts::default(),
            detail: VerdictDetail::Rcp {
                profile: "spec".into(),
                certified_level: level.into(),
                declared_level: declared.map(str::to_owned),
                honest,
                protocol_observed: true,
                report: Default::default(),
            },
        }
    }

    fn mcp(grade: &str, fail: u32) -> Verdict {
        Verdict {
            suite: SuiteId::Mcp,
            suite_version: "0.1.0".into(),
            spec_revision: MCP_REVISION.into(),
            passed: grade != "non-compliant",
            summary: grade.into(),
            counts: Counts {
                fail,
                ..Counts::default()
            },
            detail: VerdictDetail::mcp(grade),
        }
    }

    fn said(suite: SuiteId, runs: SuiteRuns) -> (String, String, Color) {
        let b = describe(suite, Some(&target()), &runs);
        (b.label, b.message, b.color)
    }

    fn finished(v: Verdict) -> SuiteRuns {
        let status = if v.passed {
            RunStatus::Passed
        } else {
            RunStatus::Failed
        };
        SuiteRuns {
            finished: Some(run(status, Some(v))),
            active: None,
        }
    }

    #[test]
    fn every_state_has_its_words_and_colour() {
        let s = |l: &str, m: &str, c| (l.to_owned(), m.to_owned(), c);
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("L2", Some("L2"), Some(true)))),
            s("RCP", "L2", Color::BrightGreen)
        );
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("L1", None, None))),
            s("RCP", "L1", Color::Green)
        );
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("L0", None, None))),
            s("RCP", "L0", Color::YellowGreen)
        );
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("none", None, None))),
            s("RCP", "none", Color::Red)
        );
        // A declaration that is not a level was compared with nothing: the
        // badge shows the certified level, never OVERCLAIMED.
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("L1", Some("l2"), None))),
            s("RCP", "L1", Color::Green)
        );
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("none", Some("L2"), Some(false)))),
            s("RCP", "L2 OVERCLAIMED", Color::Red)
        );
        assert_eq!(
            said(SuiteId::Mcp, finished(mcp("strict", 0))),
            s("MCP 2026-07-28", "strict", Color::BrightGreen)
        );
        assert_eq!(
            said(SuiteId::Mcp, finished(mcp("compliant", 0))),
            s("MCP 2026-07-28", "compliant", Color::Green)
        );
        assert_eq!(
            said(SuiteId::Mcp, finished(mcp("non-compliant", 3))),
            s("MCP 2026-07-28", "3 failing", Color::Red)
        );
        // A run whose core rules were not judged certifies nothing: the
        // badge says why, in grey, never a grade.
        let mut unjudged = mcp(NOT_JUDGED, 0);
        unjudged.passed = false;
        unjudged.detail =
            VerdictDetail::mcp_graded(NOT_JUDGED, Some("authorization required".into()));
        assert_eq!(
            said(SuiteId::Mcp, finished(unjudged)),
            s("MCP 2026-07-28", "authorization required", Color::LightGrey)
        );
        let pending = SuiteRuns {
            finished: None,
            active: Some(run(RunStatus::Queued, None)),
        };
        assert_eq!(
            said(SuiteId::Rcp, pending),
            s("RCP", "pending", Color::Blue)
        );
        let errored = SuiteRuns {
            finished: Some(run(RunStatus::Error, None)),
            active: Some(run(RunStatus::Running, None)),
        };
        assert_eq!(
            said(SuiteId::Rcp, errored),
            s("RCP", "error", Color::LightGrey)
        );
        assert_eq!(
            said(SuiteId::Rcp, SuiteRuns::default()),
            s("RCP", "unknown", Color::LightGrey)
        );
        let unknown = describe(SuiteId::Mcp, None, &SuiteRuns::default());
        assert_eq!(unknown.message, "unknown");
        assert!(unknown.is_error);
        assert_eq!(unknown.title, "MCP: unknown");
    }

    #[test]
    fn an_mcp_badge_names_the_revisions_its_verdict_certifies() {
        let s = |l: &str, m: &str, c| (l.to_owned(), m.to_owned(), c);
        let mut older = mcp("compliant", 0);
        older.spec_revision = "2025-11-25".into();
        assert_eq!(
            said(SuiteId::Mcp, finished(older.clone())),
            s("MCP 2025-11-25", "compliant", Color::Green)
        );
        let both = Verdict::of_revisions(vec![mcp("strict", 0), older.clone()], Vec::new())
            .expect("two parts");
        // Several: each revision beside its grade, in the lowest one's colour.
        assert_eq!(
            said(SuiteId::Mcp, finished(both)),
            s(
                "MCP",
                "2026-07-28 strict · 2025-11-25 compliant",
                Color::Green
            )
        );
        let failing = Verdict::of_revisions(vec![mcp("non-compliant", 2), older], Vec::new())
            .expect("two parts");
        let (label, message, color) = said(SuiteId::Mcp, finished(failing));
        assert_eq!(label, "MCP");
        assert_eq!(message, "2026-07-28 2 failing · 2025-11-25 compliant");
        assert_eq!(color, Color::Red);
        // The longest two grades fit whole.
        let mut worst = mcp("non-compliant", 0);
        worst.spec_revision = "2025-11-25".into();
        let both_worst = Verdict::of_revisions(vec![mcp("non-compliant", 0), worst], Vec::new())
            .expect("two parts");
        let (_, message, _) = said(SuiteId::Mcp, finished(both_worst));
        assert_eq!(
            message,
            "2026-07-28 non-compliant · 2025-11-25 non-compliant"
        );
        // Before a verdict, the revision the run asked for, or none.
        let mut asked = run(RunStatus::Queued, None);
        asked.options.mcp_revision = Some(McpRevision::V2025_11_25);
        let pending = SuiteRuns {
            finished: None,
            active: Some(asked),
        };
        assert_eq!(
            said(SuiteId::Mcp, pending),
            s("MCP 2025-11-25", "pending", Color::Blue)
        );
    }

    #[test]
    fn a_long_declared_level_leaves_room_for_overclaimed() {
        let v = rcp("none", Some(&"<L9>".repeat(20)), Some(false));
        let (_, message, _) = said(SuiteId::Rcp, finished(v));
        assert!(message.ends_with("… OVERCLAIMED"), "{message}");
        assert!(message.chars().count() <= render::MAX_TEXT_CHARS);
    }
}
