//! What a badge says: the words and colour of a target's newest run of a suite.

use super::render::{self, Badge, Color};
use crate::store::{RunStatus, SuiteRuns, Target};
use crate::suite::mcp::SPEC_REVISION as MCP_REVISION;
use crate::suite::{SuiteId, Verdict, VerdictDetail};

/// What a badge shows for `suite` on `target`, given its runs.
pub fn describe(suite: SuiteId, target: Option<&Target>, runs: &SuiteRuns) -> Badge {
    let verdict = runs.finished.as_ref().and_then(|r| r.verdict.as_ref());
    let label = match suite {
        SuiteId::Rcp => "RCP".to_owned(),
        SuiteId::Mcp => format!(
            "MCP {}",
            verdict.map_or(MCP_REVISION, |v| v.spec_revision.as_str())
        ),
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
        VerdictDetail::Mcp { grade } => match grade.as_str() {
            "strict" => Badge::new(label, "strict", Color::BrightGreen, url),
            "compliant" => Badge::new(label, "compliant", Color::Green, url),
            _ if v.counts.fail > 0 => Badge::new(
                label,
                &format!("{} failing", v.counts.fail),
                Color::Red,
                url,
            ),
            other => Badge::new(label, other, Color::Red, url),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Run;
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
            detail: VerdictDetail::Mcp {
                grade: grade.into(),
            },
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
        assert_eq!(unknown.title, "MCP 2026-07-28: unknown");
    }

    #[test]
    fn a_long_declared_level_leaves_room_for_overclaimed() {
        let v = rcp("none", Some(&"<L9>".repeat(20)), Some(false));
        let (_, message, _) = said(SuiteId::Rcp, finished(v));
        assert!(message.ends_with("… OVERCLAIMED"), "{message}");
        assert!(message.chars().count() <= render::MAX_TEXT_CHARS);
    }
}
