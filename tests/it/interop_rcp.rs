//! The RCP/1 interop panel: small servers written from the published spec on
//! the PyPI SDK `rcp-protocol==1.0.1` (tests/interop/rcp), each checked by
//! `protocheck check --suite rcp` many times, in the `spec` profile and in the
//! `reference` profile. The verdicts must be identical run after run, and
//! must equal the expectations in the "## RCP" section of
//! tests/interop/EXPECTED.md, which gives the spec sentence behind each one.
//!
//! The servers need a Python with the SDK: `PROTOCHECK_INTEROP_RCP_PYTHON`
//! (set by scripts/test-all.sh's `install_interop_rcp`). Without it the test says
//! `SKIPPED: …` and passes, unless `PROTOCHECK_REQUIRE_TOOLS=1`, where a
//! missing tool fails it. `PROTOCHECK_INTEROP_RUNS` (default 10) sets the
//! repetitions, `PROTOCHECK_INTEROP_JOBS` (default 3) how many run at once.

use crate::common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

const SDK_VERSION: &str = "1.0.1";
const DEFAULT_RUNS: usize = 10;
const DEFAULT_JOBS: usize = 3;
const PROFILES: [&str; 2] = ["spec", "reference"];

pub(crate) fn panel_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/rcp")
}

pub(crate) fn expected_md() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/EXPECTED.md")
}

/// Says on the real stderr (the harness captures `eprintln!` of passing tests).
pub(crate) fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The Python that has the pinned SDK, or `None` (skipped) when it is missing
/// and tools are not required.
pub(crate) fn python() -> Option<String> {
    let problem = match std::env::var("PROTOCHECK_INTEROP_RCP_PYTHON") {
        Ok(p) if !p.is_empty() => {
            let out = Command::new(&p)
                .args([
                    "-c",
                    "import importlib.metadata as m; print(m.version('rcp-protocol'))",
                ])
                .output();
            match out {
                Ok(o) if String::from_utf8_lossy(&o.stdout).trim() == SDK_VERSION => {
                    return Some(p);
                }
                Ok(o) => format!(
                    "{p} has no rcp-protocol=={SDK_VERSION} (it says {:?})",
                    String::from_utf8_lossy(&o.stdout).trim()
                ),
                Err(e) => format!("{p} cannot run: {e}"),
            }
        }
        _ => "PROTOCHECK_INTEROP_RCP_PYTHON is not set".to_owned(),
    };
    let what = format!(
        "the RCP interop panel: {problem}; scripts/test-all.sh's install_interop_rcp installs rcp-protocol=={SDK_VERSION} and sets it"
    );
    if std::env::var("PROTOCHECK_REQUIRE_TOOLS").as_deref() == Ok("1") {
        panic!("PROTOCHECK_REQUIRE_TOOLS=1 and {what}");
    }
    say(&format!("SKIPPED: {what}"));
    None
}

pub(crate) fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(default)
}

/// How a row's server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    Http,
    Stdio,
    /// A second run against the same HTTP process, right after the `http` row's run.
    HttpSecondRun,
    /// The same, submitted to the service, which has the first run in the
    /// target's history. Judged by the service's tests, not here.
    ServiceSecondRun,
}

impl Transport {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "http" => Some(Self::Http),
            "stdio" => Some(Self::Stdio),
            "http, second run" => Some(Self::HttpSecondRun),
            "service, second run" => Some(Self::ServiceSecondRun),
            _ => None,
        }
    }
}

/// One row of the expectations table.
#[derive(Debug, Clone)]
pub(crate) struct Expected {
    pub(crate) server: String,
    pub(crate) transport: Transport,
    pub(crate) level: String,
    /// `None`: not judged (`*`); `Some(None)`: no declaration (`—`).
    declared: Option<Option<String>>,
    fails: BTreeSet<String>,
    /// `at least: …`: the listed checks must fail, others may too.
    at_least: bool,
    reference: String,
}

fn cell(s: &str) -> String {
    s.trim().trim_matches('`').trim().to_owned()
}

/// The "## RCP" section's table: `| server | transport | level | declared |
/// fails | reference |`. Only that section is read.
pub(crate) fn parse_expected(md: &str) -> Vec<Expected> {
    let mut in_section = false;
    let mut in_table = false;
    let mut rows = Vec::new();
    for line in md.lines() {
        if line.starts_with("## ") {
            in_section = line.trim() == "## RCP";
            in_table = false;
            continue;
        }
        if !in_section {
            continue;
        }
        let t = line.trim();
        if t.starts_with("| server |") {
            in_table = true;
            continue;
        }
        if !in_table || !t.starts_with('|') {
            in_table = false;
            continue;
        }
        if t.starts_with("|---") || t.starts_with("| ---") {
            continue;
        }
        let cells: Vec<&str> = t.trim_matches('|').split('|').collect();
        assert_eq!(cells.len(), 6, "an EXPECTED.md row has six cells: {t}");
        let server = cell(cells[0]);
        let transport = Transport::parse(&cell(cells[1]))
            .unwrap_or_else(|| panic!("unknown transport in EXPECTED.md row: {t}"));
        let declared = match cell(cells[3]).as_str() {
            "*" => None,
            "—" | "-" | "" => Some(None),
            d => Some(Some(d.to_owned())),
        };
        let mut fails_text = cells[4].trim();
        let at_least = fails_text.starts_with("at least:");
        if at_least {
            fails_text = &fails_text["at least:".len()..];
        }
        let fails = fails_text
            .split(',')
            .map(cell)
            .filter(|f| !f.is_empty() && f != "—" && f != "-")
            .collect();
        rows.push(Expected {
            server,
            transport,
            level: cell(cells[2]),
            declared,
            fails,
            at_least,
            reference: cell(cells[5]),
        });
    }
    rows
}

/// What one `protocheck check` said, reduced to what must be stable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Observed {
    pub(crate) level: String,
    declared: Option<String>,
    pub(crate) summary: String,
    /// rule id → outcomes of its findings, in order.
    outcomes: BTreeMap<String, Vec<String>>,
}

impl Observed {
    pub(crate) fn fails(&self) -> BTreeSet<String> {
        self.outcomes
            .iter()
            .filter(|(_, o)| o.iter().any(|x| x == "fail"))
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// An observation with the given level and failing rules, for the tests of
/// the profile comparison.
pub(crate) fn observed_for_tests(level: &str, fails: &[&str]) -> Observed {
    Observed {
        level: level.to_owned(),
        declared: None,
        summary: level.to_owned(),
        outcomes: fails
            .iter()
            .map(|id| ((*id).to_owned(), vec!["fail".to_owned()]))
            .collect(),
    }
}

fn observe(report: &Value) -> Result<Observed, String> {
    let verdict = report
        .get("verdict")
        .filter(|v| !v.is_null())
        .ok_or_else(|| format!("no verdict; error: {}", report["error"]))?;
    let mut outcomes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in report["findings"].as_array().into_iter().flatten() {
        let id = f["rule_id"].as_str().unwrap_or("?").to_owned();
        let outcome = f["outcome"].as_str().unwrap_or("?").to_owned();
        outcomes.entry(id).or_default().push(outcome);
    }
    Ok(Observed {
        level: verdict["certified_level"]
            .as_str()
            .unwrap_or("?")
            .to_owned(),
        declared: verdict["declared_level"].as_str().map(str::to_owned),
        summary: verdict["summary"].as_str().unwrap_or("?").to_owned(),
        outcomes,
    })
}

/// A panel server process, killed when dropped (also on panic).
pub(crate) struct ServerProc {
    child: Child,
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `file --http` on an ephemeral loopback port; returns it and its base URL.
pub(crate) fn start_http(python: &str, file: &Path) -> Result<(ServerProc, String), String> {
    let mut child = Command::new(python)
        .arg(file)
        .arg("--http")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", file.display()))?;
    let stdout = child.stdout.take();
    let proc = ServerProc { child };
    let mut line = String::new();
    if let Some(out) = stdout {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    match line.trim().strip_prefix("RCP-PANEL-LISTENING ") {
        Some(url) => Ok((proc, url.to_owned())),
        None => Err(format!(
            "{} did not say where it listens: {line:?}",
            file.display()
        )),
    }
}

pub(crate) fn check(target: &[String], profile: &str) -> Result<Observed, String> {
    let mut cmd = common::cli::protocheck();
    // A stdio server is spawned by protocheck and inherits this: no
    // __pycache__ in the source tree.
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    cmd.arg("check").args(target).args([
        "--suite",
        "rcp",
        "--format",
        "json",
        "--profile",
        profile,
    ]);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run protocheck: {e}"))?;
    let report: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("the report is not JSON ({e}): {}", common::cli::show(&out)))?;
    observe(&report)
}

/// One job: a fresh server process, one run (and, for a server with a
/// second-run row, a second run against the same process).
#[derive(Debug, Clone)]
struct Job {
    row: usize,
    second: Option<usize>,
    profile: &'static str,
}

type Results = BTreeMap<(usize, &'static str), Vec<Result<Observed, String>>>;

fn run_job(python: &str, rows: &[Expected], job: &Job) -> Vec<(usize, Result<Observed, String>)> {
    let row = &rows[job.row];
    let file = panel_dir().join(format!("{}.py", row.server));
    match row.transport {
        Transport::Stdio => {
            let cmd = format!("{python} {} --stdio", file.display());
            vec![(job.row, check(&["--stdio".to_owned(), cmd], job.profile))]
        }
        _ => match start_http(python, &file) {
            Err(e) => {
                let mut v = vec![(job.row, Err(e.clone()))];
                v.extend(job.second.map(|s| (s, Err(e))));
                v
            }
            Ok((_server, url)) => {
                let mut v = vec![(job.row, check(std::slice::from_ref(&url), job.profile))];
                if let Some(s) = job.second {
                    v.push((s, check(&[url], job.profile)));
                }
                v
            }
        },
    }
}

fn run_panel(python: &str, rows: &[Expected], runs: usize, jobs: usize) -> Results {
    let mut queue = VecDeque::new();
    for _ in 0..runs {
        for profile in PROFILES {
            for (i, row) in rows.iter().enumerate() {
                if matches!(
                    row.transport,
                    Transport::HttpSecondRun | Transport::ServiceSecondRun
                ) {
                    continue;
                }
                let second = (row.transport == Transport::Http)
                    .then(|| {
                        rows.iter().position(|r| {
                            r.server == row.server && r.transport == Transport::HttpSecondRun
                        })
                    })
                    .flatten();
                queue.push_back(Job {
                    row: i,
                    second,
                    profile,
                });
            }
        }
    }
    let queue = Arc::new(Mutex::new(queue));
    let results: Arc<Mutex<Results>> = Arc::default();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let queue = Arc::clone(&queue);
            let results = Arc::clone(&results);
            scope.spawn(move || {
                loop {
                    let next = queue.lock().map(|mut q| q.pop_front()).ok().flatten();
                    let Some(job) = next else { break };
                    for (row, observed) in run_job(python, rows, &job) {
                        if let Ok(mut r) = results.lock() {
                            r.entry((row, job.profile)).or_default().push(observed);
                        }
                    }
                }
            });
        }
    });
    results.lock().map(|r| r.clone()).unwrap_or_default()
}

fn label(row: &Expected) -> String {
    let t = match row.transport {
        Transport::Http => "http",
        Transport::Stdio => "stdio",
        Transport::HttpSecondRun => "http, second run",
        Transport::ServiceSecondRun => "service, second run",
    };
    format!("{} ({t})", row.server)
}

/// The disagreements of one row with its expectation, and with itself across runs.
fn judge(
    row: &Expected,
    spec: &[Result<Observed, String>],
    reference: &[Result<Observed, String>],
) -> Vec<String> {
    let name = label(row);
    let mut problems = Vec::new();
    for (profile, runs) in [("spec", spec), ("reference", reference)] {
        let Some(first) = runs.first() else {
            problems.push(format!("{name} [{profile}]: no run"));
            continue;
        };
        let first = match first {
            Ok(o) => o,
            Err(e) => {
                problems.push(format!("{name} [{profile}]: {e}"));
                continue;
            }
        };
        for (i, other) in runs.iter().enumerate().skip(1) {
            match other {
                Ok(o) if o == first => {}
                Ok(o) => {
                    let diff: Vec<String> = first
                        .outcomes
                        .iter()
                        .filter(|(id, out)| o.outcomes.get(*id) != Some(out))
                        .map(|(id, out)| format!("{id} {out:?} then {:?}", o.outcomes.get(id)))
                        .collect();
                    problems.push(format!(
                        "{name} [{profile}]: run {} differs from run 1: {} / {} vs {} / {}; {}",
                        i + 1,
                        first.level,
                        first.summary,
                        o.level,
                        o.summary,
                        diff.join("; ")
                    ));
                }
                Err(e) => problems.push(format!("{name} [{profile}]: run {}: {e}", i + 1)),
            }
        }
        if profile == "reference" {
            if first.summary != row.reference {
                problems.push(format!(
                    "{name} [reference]: headline `{}`, expected `{}`",
                    first.summary, row.reference
                ));
            }
            continue;
        }
        if first.level != row.level {
            problems.push(format!(
                "{name} [spec]: certified {}, expected {} (summary `{}`)",
                first.level, row.level, first.summary
            ));
        }
        if let Some(declared) = &row.declared
            && first.declared != *declared
        {
            problems.push(format!(
                "{name} [spec]: declared {:?}, expected {declared:?}",
                first.declared
            ));
        }
        let fails = first.fails();
        let missing: Vec<&String> = row.fails.difference(&fails).collect();
        let extra: Vec<&String> = fails.difference(&row.fails).collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{name} [spec]: expected to fail but did not: {missing:?}"
            ));
        }
        if !extra.is_empty() && !row.at_least {
            problems.push(format!("{name} [spec]: failed unexpectedly: {extra:?}"));
        }
    }
    problems
}

#[test]
fn the_panel_gets_the_verdicts_the_spec_gives_it_every_time() {
    let Some(python) = python() else { return };
    let md = std::fs::read_to_string(expected_md()).expect("read tests/interop/EXPECTED.md");
    let rows = parse_expected(&md);
    assert!(
        rows.len() >= 10,
        "the ## RCP table of EXPECTED.md has {} rows",
        rows.len()
    );
    for row in &rows {
        let file = panel_dir().join(format!("{}.py", row.server));
        assert!(file.is_file(), "no server {}", file.display());
        if matches!(
            row.transport,
            Transport::HttpSecondRun | Transport::ServiceSecondRun
        ) {
            assert!(
                rows.iter()
                    .any(|r| r.server == row.server && r.transport == Transport::Http),
                "{}: a second-run row needs the server's http row",
                row.server
            );
        }
    }
    let runs = env_count("PROTOCHECK_INTEROP_RUNS", DEFAULT_RUNS);
    let jobs = env_count("PROTOCHECK_INTEROP_JOBS", DEFAULT_JOBS);
    let results = run_panel(&python, &rows, runs, jobs);

    let mut problems = Vec::new();
    say(&format!(
        "RCP interop panel, {runs} runs per server and profile:"
    ));
    for (i, row) in rows.iter().enumerate() {
        if row.transport == Transport::ServiceSecondRun {
            say(&format!(
                "  {}: judged by the service tests (history)",
                label(row)
            ));
            continue;
        }
        let empty = Vec::new();
        let spec = results.get(&(i, "spec")).unwrap_or(&empty);
        let reference = results.get(&(i, "reference")).unwrap_or(&empty);
        let show = |r: &[Result<Observed, String>]| match r.first() {
            Some(Ok(o)) => format!("{} [fails: {:?}]", o.summary, o.fails()),
            Some(Err(e)) => format!("error: {e}"),
            None => "no run".to_owned(),
        };
        say(&format!(
            "  {}: spec {} | reference {}",
            label(row),
            show(spec),
            show(reference)
        ));
        problems.extend(judge(row, spec, reference));
    }
    assert!(
        problems.is_empty(),
        "{} disagreement(s) with tests/interop/EXPECTED.md:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_expectations_table_parses_only_the_rcp_section() {
    let md = "# Expected\n\n## MCP\n\n| server | transport | level | declared | fails | reference |\n|---|---|---|---|---|---|\n\
              | mcp_one | http | L9 | — | — | x |\n\n## RCP\n\ntext\n\n\
              | server | transport | level | declared | fails | reference |\n|---|---|---|---|---|---|\n\
              | a | http | L2 | L2 | — | `L2` |\n\
              | a | http, second run | none | * | at least: `RCP-L0-011` | `none` |\n\
              | b | stdio | none | — | `RCP-L0-019`, `RCP-L0-020` | `L1 · OVERCLAIMED (declared L2)` |\n\n## Other\n\n\
              | server | transport | level | declared | fails | reference |\n| z | http | L0 | — | — | x |\n";
    let rows = parse_expected(md);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0].server, "a");
    assert!(rows[0].fails.is_empty() && !rows[0].at_least);
    assert_eq!(rows[1].transport, Transport::HttpSecondRun);
    assert!(rows[1].at_least);
    assert_eq!(rows[0].declared, Some(Some("L2".to_owned())));
    assert_eq!(rows[1].declared, None);
    assert_eq!(rows[2].declared, Some(None));
    assert_eq!(
        rows[2].fails.iter().cloned().collect::<Vec<_>>(),
        ["RCP-L0-019", "RCP-L0-020"]
    );
    assert_eq!(rows[2].reference, "L1 · OVERCLAIMED (declared L2)");
}
