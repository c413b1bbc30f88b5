//! What a badge says: the words and colour of a target's newest run of a suite.

use super::render::{self, Badge, Color};
use crate::store::{Run, RunStatus, SuiteRuns, Target};
use crate::suite::grade::NOT_JUDGED;
use crate::suite::{McpRevision, SuiteId, Verdict, VerdictDetail};
use std::time::Duration;

/// When a badge is drawn, and how old a verdict may be before its badge
/// says it is stale.
#[derive(Debug, Clone, Copy)]
pub struct Age {
    pub now_ms: i64,
    pub stale_after: Duration,
}

impl Age {
    fn is_past(&self, at_ms: i64) -> bool {
        self.now_ms.saturating_sub(at_ms) > crate::duration_ms(self.stale_after)
    }
}

/// Which run a badge shows, and as what.
#[derive(Debug, Clone, Copy)]
pub enum Shown<'a> {
    /// No run at all.
    Unknown,
    /// Only a run queued or running.
    Pending(&'a Run),
    /// A verdict; `stale` when it is older than the stale limit.
    Verdict { run: &'a Run, stale: bool },
    /// The newest run errored (for a reason other than an unreachable
    /// target, or with no verdict before it to show).
    Error(&'a Run),
    /// The runs since the last other ending could not reach the target, for
    /// longer than the stale limit: since the end of the first of them.
    Unreachable { run: &'a Run, since_ms: i64 },
}

impl<'a> Shown<'a> {
    /// The run the badge links to, if it shows one.
    pub fn run(&self) -> Option<&'a Run> {
        match *self {
            Self::Unknown => None,
            Self::Pending(run)
            | Self::Verdict { run, .. }
            | Self::Error(run)
            | Self::Unreachable { run, .. } => Some(run),
        }
    }
}

/// What a badge of `runs` shows at `age`: the newest verdict, with how old it
/// is; while the target cannot be reached, its last verdict until the stale
/// limit, then "unreachable since"; any other error as it is.
pub fn shown(runs: &SuiteRuns, age: Age) -> Shown<'_> {
    let as_verdict = |run: &'_ Run| -> Option<bool> {
        matches!(run.status, RunStatus::Passed | RunStatus::Failed)
            .then_some(())
            .and(run.verdict.as_ref())
            .map(|_| run.finished_at_ms.is_none_or(|at| age.is_past(at)))
    };
    match (&runs.finished, &runs.active) {
        (None, None) => Shown::Unknown,
        (None, Some(active)) => Shown::Pending(active),
        (Some(run), _) => {
            if let Some(stale) = as_verdict(run) {
                return Shown::Verdict { run, stale };
            }
            match (runs.unreachable_since_ms, &runs.verdict) {
                (Some(since_ms), _) if age.is_past(since_ms) => {
                    Shown::Unreachable { run, since_ms }
                }
                (Some(_), Some(last)) => match as_verdict(last) {
                    Some(stale) => Shown::Verdict { run: last, stale },
                    None => Shown::Error(run),
                },
                _ => Shown::Error(run),
            }
        }
    }
}

/// The day (`YYYY-MM-DD`, UTC) of a time in the store's milliseconds.
fn day_of(ms: i64) -> String {
    crate::rfc3339(ms).chars().take(10).collect()
}

/// What a badge shows for `suite` on `target`, given its runs, drawn at
/// `age` (see [`shown`]). An MCP badge names the revision its verdict
/// certifies (each one, for a run that judged several); without a verdict,
/// the revision the run asked for, if it asked for one.
pub fn describe(suite: SuiteId, target: Option<&Target>, runs: &SuiteRuns, age: Age) -> Badge {
    let shown = shown(runs, age);
    let verdict = match shown {
        Shown::Verdict { run, .. } => run.verdict.as_ref(),
        _ => None,
    };
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
    match shown {
        Shown::Unknown => Badge::new(&label, "unknown", Color::LightGrey, url).error(),
        Shown::Pending(_) => Badge::new(&label, "pending", Color::Blue, url),
        Shown::Error(_) => Badge::new(&label, "error", Color::LightGrey, url).error(),
        Shown::Unreachable { since_ms, .. } => Badge::new(
            &label,
            &format!("unreachable since {}", day_of(since_ms)),
            Color::LightGrey,
            url,
        )
        .error(),
        Shown::Verdict { run, stale } => {
            let Some(v) = verdict else {
                return Badge::new(&label, "error", Color::LightGrey, url).error();
            };
            let mut badge = verdict_badge(&label, v, url);
            if stale {
                // Grey: a verdict this old certifies what the server was then.
                // First, so that cutting a long message never cuts it.
                badge = Badge::new(
                    &label,
                    &format!("stale · {}", badge.message),
                    Color::LightGrey,
                    url,
                );
            }
            match run.finished_at_ms {
                Some(at) => badge.dated(&day_of(at)),
                None => badge,
            }
        }
    }
}

/// The colour of `v`'s badge (an honest, fresh verdict): the target page's
/// chart draws each run's point in it, so the two never disagree.
pub fn verdict_color(v: &Verdict) -> Color {
    verdict_badge("", v, None).color
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
            private_targets: None,
        }
    }

    const DAY_MS: i64 = 24 * 3600 * 1000;
    /// Drawn just after the runs below ended (at 10 ms).
    const FRESH: Age = Age {
        now_ms: 20,
        stale_after: Duration::from_secs(7 * 24 * 3600),
    };

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
        let b = describe(suite, Some(&target()), &runs, FRESH);
        (b.label, b.message, b.color)
    }

    fn finished(v: Verdict) -> SuiteRuns {
        let status = if v.passed {
            RunStatus::Passed
        } else {
            RunStatus::Failed
        };
        let run = run(status, Some(v));
        SuiteRuns {
            finished: Some(run.clone()),
            active: None,
            verdict: Some(run),
            unreachable_since_ms: None,
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
            ..SuiteRuns::default()
        };
        assert_eq!(
            said(SuiteId::Rcp, pending),
            s("RCP", "pending", Color::Blue)
        );
        let errored = SuiteRuns {
            finished: Some(run(RunStatus::Error, None)),
            active: Some(run(RunStatus::Running, None)),
            ..SuiteRuns::default()
        };
        assert_eq!(
            said(SuiteId::Rcp, errored),
            s("RCP", "error", Color::LightGrey)
        );
        assert_eq!(
            said(SuiteId::Rcp, SuiteRuns::default()),
            s("RCP", "unknown", Color::LightGrey)
        );
        let unknown = describe(SuiteId::Mcp, None, &SuiteRuns::default(), FRESH);
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
            ..SuiteRuns::default()
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

    #[test]
    fn a_verdict_older_than_the_stale_limit_is_grey_and_says_so() {
        let runs = finished(mcp("strict", 0));
        let badge = describe(SuiteId::Mcp, Some(&target()), &runs, FRESH);
        assert_eq!(badge.message, "strict");
        assert_eq!(badge.dated.as_deref(), Some("1970-01-01"));
        assert!(
            badge.title.ends_with("— verdict of 1970-01-01"),
            "{}",
            badge.title
        );
        let later = Age {
            now_ms: 8 * DAY_MS,
            ..FRESH
        };
        let badge = describe(SuiteId::Mcp, Some(&target()), &runs, later);
        assert_eq!(
            (badge.message.as_str(), badge.color),
            ("stale · strict", Color::LightGrey)
        );
        assert_eq!(badge.dated.as_deref(), Some("1970-01-01"));
        let json: serde_json::Value =
            serde_json::from_str(&render::shields_json(&badge, 300)).expect("json");
        assert_eq!(json["message"], "stale · strict · 1970-01-01");
        // A long message keeps its `stale`.
        let mut older = mcp("non-compliant", 0);
        older.spec_revision = "2025-11-25".into();
        let both = Verdict::of_revisions(vec![mcp("non-compliant", 0), older], Vec::new())
            .expect("two parts");
        let badge = describe(SuiteId::Mcp, Some(&target()), &finished(both), later);
        assert!(badge.message.starts_with("stale · "), "{}", badge.message);
    }

    #[test]
    fn an_unreachable_target_keeps_its_verdict_until_the_stale_limit() {
        let good = run(RunStatus::Passed, Some(mcp("strict", 0)));
        let mut lost = run(RunStatus::Error, None);
        lost.finished_at_ms = Some(2 * DAY_MS);
        lost.error = Some(format!(
            "{} could not connect",
            crate::suite::context::UNREACHABLE_PREFIX
        ));
        let runs = SuiteRuns {
            finished: Some(lost.clone()),
            active: None,
            verdict: Some(good),
            unreachable_since_ms: Some(DAY_MS),
        };
        let at = |days: i64| Age {
            now_ms: days * DAY_MS,
            ..FRESH
        };
        // Within the limit: the last verdict, with its day.
        let badge = describe(SuiteId::Mcp, Some(&target()), &runs, at(3));
        assert_eq!(
            (badge.message.as_str(), badge.color),
            ("strict", Color::BrightGreen)
        );
        assert_eq!(badge.dated.as_deref(), Some("1970-01-01"));
        assert!(matches!(shown(&runs, at(3)), Shown::Verdict { .. }));
        // Still within it for the streak, but the verdict itself is older.
        let late = Age {
            now_ms: 7 * DAY_MS + DAY_MS / 2,
            ..FRESH
        };
        let badge = describe(SuiteId::Mcp, Some(&target()), &runs, late);
        assert_eq!(
            (badge.message.as_str(), badge.color),
            ("stale · strict", Color::LightGrey)
        );
        let recent = runs.clone();
        // Past it: unreachable since the first run that could not reach it.
        let badge = describe(SuiteId::Mcp, Some(&target()), &recent, at(9));
        assert_eq!(
            (badge.message.as_str(), badge.color),
            ("unreachable since 1970-01-02", Color::LightGrey)
        );
        assert!(badge.is_error);
        // Another error is an error, whatever came before.
        let other = SuiteRuns {
            unreachable_since_ms: None,
            ..recent
        };
        let badge = describe(SuiteId::Mcp, Some(&target()), &other, at(3));
        assert_eq!(badge.message, "error");
    }
}
