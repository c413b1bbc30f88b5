//! The MCP interop panels: servers protocheck's authors did not write (the
//! official Python SDK, fastmcp, the reference `server-everything` and the
//! reference servers `mcp-server-time`, `mcp-server-git`, `server-memory`,
//! `server-filesystem`), small servers on the official SDKs (one of them a
//! protected server, checked with and without a bearer token) and servers
//! written from the specification text alone, each checked with `protocheck
//! check --suite mcp --mcp-revision R --format json` several times. Every run
//! must give the same verdict, and that verdict must be the one `tests/interop/EXPECTED.md`
//! derives from the specification: section "## MCP" for revision 2026-07-28,
//! "## MCP 2025-11-25" for 2025-11-25 (over Streamable HTTP and stdio).
//!
//! The tools come from the package registries; `scripts/test-all.sh` installs them
//! (`install_interop_mcp`) and names them in `PROTOCHECK_INTEROP_PYTHON`,
//! `PROTOCHECK_INTEROP_NODE` and `PROTOCHECK_INTEROP_EVERYTHING`, and the
//! third-party servers users point protocheck at (`mcp-server-time`,
//! `mcp-server-git`, server-memory, server-filesystem) in
//! `PROTOCHECK_INTEROP_SERVERS_PYTHON` and `PROTOCHECK_INTEROP_SERVERS_NPM`,
//! and published servers on the Go and C# SDKs (kubernetes-mcp-server and
//! @azure/mcp from npm, mcp-grafana from PyPI) in `PROTOCHECK_INTEROP_REAL_NPM`
//! and `PROTOCHECK_INTEROP_GRAFANA`, and one on fastmcp (mcp-server-motherduck
//! from PyPI) in `PROTOCHECK_INTEROP_MOTHERDUCK`.
//! Without them the test says `SKIPPED: …` and passes, except under
//! `PROTOCHECK_REQUIRE_TOOLS=1`. `PROTOCHECK_INTEROP_ONLY=a,b` limits the panel
//! to the named servers, `PROTOCHECK_INTEROP_RUNS` sets the runs per server
//! (default 10, at least 2).

use crate::common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Says on the real stderr (the harness captures `eprintln!` of passing tests)
/// that a part of a test did not run.
fn say_skipped(what: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what}");
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn panel_dir() -> PathBuf {
    root().join("tests/interop/mcp")
}

/// One panel: a section of `EXPECTED.md` and the revision it judges.
struct Panel {
    heading: &'static str,
    revision: &'static str,
    /// The prefix of the rule ids of its suite.
    prefix: &'static str,
}

const PANEL_2026: Panel = Panel {
    heading: "## MCP",
    revision: "2026-07-28",
    prefix: "MCP-",
};

const PANEL_2025: Panel = Panel {
    heading: "## MCP 2025-11-25",
    revision: "2025-11-25",
    prefix: "MCP25-",
};

/// The tools `scripts/test-all.sh` installs, where they are.
struct Tools {
    /// A Python with the SDK as `pip install mcp==2.3.0` installs it.
    python: Option<PathBuf>,
    /// A Python with fastmcp, apart: fastmcp brings `rich`, with which the
    /// SDK renders every handler exception as a rich traceback.
    fastmcp_python: Option<PathBuf>,
    node: Option<PathBuf>,
    everything: Option<PathBuf>,
    /// A Python with the reference servers `mcp-server-time` and
    /// `mcp-server-git` (on the same SDK pin), for the third-party rows.
    servers_python: Option<PathBuf>,
    /// The `node_modules` holding `@modelcontextprotocol/server-memory` and
    /// `@modelcontextprotocol/server-filesystem`.
    servers_npm: Option<PathBuf>,
    /// The `node_modules` holding `kubernetes-mcp-server` and `@azure/mcp`
    /// with their linux-x64 binaries.
    real_npm: Option<PathBuf>,
    /// mcp-grafana's command, as its PyPI wheel installs it.
    grafana: Option<PathBuf>,
    /// mcp-server-motherduck's command, as its PyPI package installs it.
    motherduck: Option<PathBuf>,
}

impl Tools {
    fn from_env() -> Self {
        let file = |var: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .filter(|p| p.is_file())
        };
        Self {
            python: file("PROTOCHECK_INTEROP_PYTHON"),
            fastmcp_python: file("PROTOCHECK_INTEROP_FASTMCP_PYTHON"),
            node: file("PROTOCHECK_INTEROP_NODE"),
            everything: file("PROTOCHECK_INTEROP_EVERYTHING"),
            servers_python: file("PROTOCHECK_INTEROP_SERVERS_PYTHON"),
            servers_npm: std::env::var_os("PROTOCHECK_INTEROP_SERVERS_NPM")
                .map(PathBuf::from)
                .filter(|p| p.is_dir()),
            real_npm: std::env::var_os("PROTOCHECK_INTEROP_REAL_NPM")
                .map(PathBuf::from)
                .filter(|p| p.is_dir()),
            grafana: file("PROTOCHECK_INTEROP_GRAFANA"),
            motherduck: file("PROTOCHECK_INTEROP_MOTHERDUCK"),
        }
    }
}

fn tools_required() -> bool {
    std::env::var("PROTOCHECK_REQUIRE_TOOLS").as_deref() == Ok("1")
}

/// How a panel server is reached: a command that prints `PORT n` on stdout
/// once it listens on 127.0.0.1:n (endpoint `/mcp`), or a command line that
/// `protocheck check --stdio` starts itself, with the environment it needs.
enum Launch {
    Http(Command),
    /// A server told its port on its command line: it listens on
    /// 127.0.0.1:`port` and prints nothing the panel reads.
    HttpOn {
        cmd: Command,
        port: u16,
    },
    Stdio {
        line: String,
        env: Vec<(String, PathBuf)>,
    },
}

/// The `node_modules` that holds server-everything and the TypeScript SDK it
/// depends on.
fn node_modules(everything: &std::path::Path) -> Option<PathBuf> {
    everything
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "node_modules"))
        .map(PathBuf::from)
}

fn launcher(name: &str, tools: &Tools) -> Result<Launch, String> {
    let node = || {
        tools
            .node
            .clone()
            .ok_or("PROTOCHECK_INTEROP_NODE names no Node 22")
    };
    let everything = || {
        tools
            .everything
            .clone()
            .ok_or("PROTOCHECK_INTEROP_EVERYTHING names no server-everything dist/index.js")
    };
    let dir = panel_dir();
    let shown = |p: &std::path::Path| p.display().to_string();
    match name {
        "everything-stdio" => {
            return Ok(Launch::Stdio {
                line: format!("{} {} stdio", shown(&node()?), shown(&everything()?)),
                env: Vec::new(),
            });
        }
        "ts-sdk" | "ts-sdk-stdio" => {
            let modules = node_modules(&everything()?)
                .ok_or("server-everything is not under a node_modules")?;
            let script = dir.join("ts_sdk_server.cjs");
            if name == "ts-sdk-stdio" {
                return Ok(Launch::Stdio {
                    line: format!("{} {} stdio", shown(&node()?), shown(&script)),
                    env: vec![("NODE_PATH".into(), modules)],
                });
            }
            let mut cmd = Command::new(node()?);
            cmd.arg(script)
                .arg("http")
                .arg("0")
                .env("NODE_PATH", modules);
            return Ok(Launch::Http(cmd));
        }
        _ if name.starts_with("spec25-") => return spec25_launcher(name, tools),
        _ if THIRD_PARTY.contains(&name) => return third_party_launcher(name, tools),
        _ if PUBLISHED.contains(&name) => return published_launcher(name, tools),
        "spec-stdio-dual" => {
            let python = tools
                .python
                .clone()
                .ok_or("PROTOCHECK_INTEROP_PYTHON names no Python 3")?;
            return Ok(Launch::Stdio {
                line: format!(
                    "{} {}",
                    shown(&python),
                    shown(&dir.join("spec/stdio_dual.py"))
                ),
                env: vec![("PYTHONDONTWRITEBYTECODE".into(), PathBuf::from("1"))],
            });
        }
        "sdk-stdio" => {
            let python = tools
                .python
                .clone()
                .ok_or("PROTOCHECK_INTEROP_PYTHON names no Python with mcp")?;
            return Ok(Launch::Stdio {
                line: format!(
                    "{} {} stdio",
                    shown(&python),
                    shown(&dir.join("sdk_server.py"))
                ),
                env: vec![("PYTHONDONTWRITEBYTECODE".into(), PathBuf::from("1"))],
            });
        }
        _ => {}
    }
    http_launcher(name, tools).map(Launch::Http)
}

/// Third-party servers from the package registries, each over stdio as its
/// users start it: `mcp-server-time` and `mcp-server-git` (PyPI, on the
/// Python SDK), `@modelcontextprotocol/server-memory` and
/// `@modelcontextprotocol/server-filesystem` (npm, on the TypeScript SDK).
const THIRD_PARTY: &[&str] = &[
    "time-stdio",
    "git-stdio",
    "memory-stdio",
    "filesystem-stdio",
];

/// Where the third-party servers keep what they serve: a Git repository of
/// one commit (`repo`, for `mcp-server-git --repository`), a directory of one
/// file (`files`, server-filesystem's one allowed directory) and the path of
/// server-memory's graph (`memory/memory.jsonl`, never written: protocheck
/// calls only tools annotated `readOnlyHint: true`). Made by [`fixtures`].
fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("interop-mcp-fixtures")
}

/// Makes [`fixture_dir`]'s contents once per test process.
fn fixtures() -> Result<PathBuf, String> {
    static MADE: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let dir = fixture_dir();
        let io = |what: &str, e: std::io::Error| format!("fixture {what}: {e}");
        std::fs::create_dir_all(dir.join("files")).map_err(|e| io("files", e))?;
        std::fs::write(dir.join("files/hello.txt"), "hello\n").map_err(|e| io("hello.txt", e))?;
        std::fs::create_dir_all(dir.join("memory")).map_err(|e| io("memory", e))?;
        std::fs::write(dir.join("kubeconfig"), KUBECONFIG).map_err(|e| io("kubeconfig", e))?;
        let repo = dir.join("repo");
        if !repo.join(".git").is_dir() {
            let _ = std::fs::remove_dir_all(&repo);
            std::fs::create_dir_all(&repo).map_err(|e| io("repo", e))?;
            std::fs::write(repo.join("README.txt"), "fixture\n").map_err(|e| io("README", e))?;
            let git = |args: &[&str]| -> Result<(), String> {
                let out = Command::new("git")
                    .args([
                        "-c",
                        "user.name=protocheck",
                        "-c",
                        "user.email=protocheck@localhost",
                    ])
                    .args([
                        "-c",
                        "init.defaultBranch=main",
                        "-c",
                        "commit.gpgsign=false",
                    ])
                    .args(args)
                    .current_dir(&repo)
                    .output()
                    .map_err(|e| format!("run git: {e}"))?;
                if out.status.success() {
                    Ok(())
                } else {
                    Err(format!(
                        "git {args:?}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    ))
                }
            };
            git(&["init", "-q"])?;
            git(&["add", "README.txt"])?;
            git(&["commit", "-q", "-m", "fixture"])?;
        }
        Ok(dir)
    })
    .clone()
}

fn third_party_launcher(name: &str, tools: &Tools) -> Result<Launch, String> {
    let dir = fixture_dir();
    let no_bytecode = ("PYTHONDONTWRITEBYTECODE".to_owned(), PathBuf::from("1"));
    let python = || {
        tools
            .servers_python
            .clone()
            .ok_or("PROTOCHECK_INTEROP_SERVERS_PYTHON names no Python with mcp-server-time and mcp-server-git")
    };
    let script = |package: &str| -> Result<String, String> {
        let npm = tools
            .servers_npm
            .clone()
            .ok_or("PROTOCHECK_INTEROP_SERVERS_NPM names no node_modules with server-memory and server-filesystem")?;
        let node = tools
            .node
            .clone()
            .ok_or("PROTOCHECK_INTEROP_NODE names no Node 22")?;
        let index = npm
            .join("@modelcontextprotocol")
            .join(package)
            .join("dist/index.js");
        Ok(format!("{} {}", node.display(), index.display()))
    };
    Ok(match name {
        // The local time zone pinned, so that the tools' descriptions (which
        // name it) do not depend on the machine.
        "time-stdio" => Launch::Stdio {
            line: format!(
                "{} -m mcp_server_time --local-timezone UTC",
                python()?.display()
            ),
            env: vec![no_bytecode],
        },
        "git-stdio" => Launch::Stdio {
            line: format!(
                "{} -m mcp_server_git --repository {}",
                python()?.display(),
                dir.join("repo").display()
            ),
            env: vec![no_bytecode],
        },
        "memory-stdio" => Launch::Stdio {
            line: script("server-memory")?,
            env: vec![("MEMORY_FILE_PATH".into(), dir.join("memory/memory.jsonl"))],
        },
        "filesystem-stdio" => Launch::Stdio {
            line: format!(
                "{} {}",
                script("server-filesystem")?,
                dir.join("files").display()
            ),
            env: Vec::new(),
        },
        _ => return Err(format!("`{name}` is not a third-party server")),
    })
}

/// Published servers from the package registries: kubernetes-mcp-server
/// 0.0.67 (npm; Go), mcp-grafana 2.1.1 (PyPI; Go), @azure/mcp 2.0.5 (npm; C#)
/// and mcp-server-motherduck 1.1.0 (PyPI; fastmcp), over Streamable HTTP and
/// over stdio.
const PUBLISHED: &[&str] = &[
    "kubernetes-mcp",
    "grafana-mcp",
    "azure-mcp",
    "motherduck-mcp",
    "kubernetes-mcp-stdio",
    "grafana-mcp-stdio",
    "azure-mcp-stdio",
    "motherduck-mcp-stdio",
];

/// A loopback port nothing listens on: every outbound connection of a
/// published server goes there (as its proxy, or as the cluster or Grafana
/// it serves) and is refused at once, so that its tools answer the same on a
/// machine with network access and on one without.
const NOWHERE: &str = "http://127.0.0.1:9";

/// The environment of a published server: outbound HTTP through a proxy that
/// refuses every connection (both spellings: Go reads the upper-case one
/// first, .NET the lower-case one), loopback direct, and no telemetry (nor,
/// for fastmcp, its banner's check of PyPI for a newer fastmcp).
fn published_env(name: &str) -> Vec<(&'static str, &'static str)> {
    let mut env = vec![
        ("HTTP_PROXY", NOWHERE),
        ("HTTPS_PROXY", NOWHERE),
        ("ALL_PROXY", NOWHERE),
        ("http_proxy", NOWHERE),
        ("https_proxy", NOWHERE),
        ("all_proxy", NOWHERE),
        ("NO_PROXY", "127.0.0.1,localhost"),
        ("no_proxy", "127.0.0.1,localhost"),
    ];
    if name.starts_with("azure-mcp") {
        env.push(("AZURE_MCP_COLLECT_TELEMETRY", "false"));
    }
    if name.starts_with("grafana-mcp") {
        env.push(("GRAFANA_URL", NOWHERE));
        env.push(("GRAFANA_USAGE_STATS", "disabled"));
    }
    if name.starts_with("motherduck-mcp") {
        env.push(("FASTMCP_SHOW_SERVER_BANNER", "false"));
        env.push(("FASTMCP_CHECK_FOR_UPDATES", "off"));
    }
    env
}

/// A free port on 127.0.0.1 for a server that must be told its port: the
/// kernel's choice, released just before the server binds it.
fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| format!("no free loopback port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

/// kubernetes-mcp-server's configuration: one cluster at [`NOWHERE`], so the
/// server starts (it needs a current context) and every call to the cluster
/// is refused. The token is a made-up string, not a credential.
const KUBECONFIG: &str = "apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster:
    server: https://127.0.0.1:9
contexts:
- name: nowhere
  context:
    cluster: nowhere
    user: nobody
current-context: nowhere
users:
- name: nobody
  user:
    token: protocheck-interop-none
";

fn published_launcher(name: &str, tools: &Tools) -> Result<Launch, String> {
    let npm = || {
        tools
            .real_npm
            .clone()
            .ok_or("PROTOCHECK_INTEROP_REAL_NPM names no node_modules with kubernetes-mcp-server and @azure/mcp")
    };
    let motherduck = || {
        tools
            .motherduck
            .clone()
            .ok_or("PROTOCHECK_INTEROP_MOTHERDUCK names no mcp-server-motherduck")
    };
    let grafana = || {
        tools
            .grafana
            .clone()
            .ok_or("PROTOCHECK_INTEROP_GRAFANA names no mcp-grafana")
    };
    let shown = |p: PathBuf| p.display().to_string();
    // Over stdio, each is started as its documentation says for a client
    // that spawns it: the same binary and options, without a port.
    let stdio =
        match name {
            "kubernetes-mcp-stdio" => Some(format!(
                "{} --read-only --kubeconfig {}",
                shown(npm()?.join(
                    "kubernetes-mcp-server-linux-amd64/bin/kubernetes-mcp-server-linux-amd64"
                )),
                shown(fixture_dir().join("kubeconfig"))
            )),
            "grafana-mcp-stdio" => Some(format!(
                "{} --usage-stats=disabled --disable-write",
                shown(grafana()?)
            )),
            "azure-mcp-stdio" => Some(format!(
                "{} server start --read-only",
                shown(npm()?.join("@azure/mcp-linux-x64/dist/azmcp"))
            )),
            // An in-memory database, which the server opens only with
            // `--read-write` (it has no read-only mode for one).
            "motherduck-mcp-stdio" => Some(format!(
                "{} --db-path :memory: --read-write",
                shown(motherduck()?)
            )),
            _ => None,
        };
    if let Some(line) = stdio {
        return Ok(Launch::Stdio {
            line,
            env: published_env(name)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), PathBuf::from(v)))
                .collect(),
        });
    }
    let port = free_port()?;
    let mut cmd = match name {
        "kubernetes-mcp" => {
            let mut cmd =
                Command::new(npm()?.join(
                    "kubernetes-mcp-server-linux-amd64/bin/kubernetes-mcp-server-linux-amd64",
                ));
            cmd.arg("--read-only")
                .arg("--kubeconfig")
                .arg(fixture_dir().join("kubeconfig"))
                .args(["--bind-address", "127.0.0.1", "--port"])
                .arg(port.to_string());
            cmd
        }
        "grafana-mcp" => {
            let mut cmd = Command::new(grafana()?);
            cmd.args(["-t", "streamable-http", "-address"])
                .arg(format!("127.0.0.1:{port}"))
                .args(["--usage-stats=disabled", "--disable-write"]);
            cmd
        }
        "azure-mcp" => {
            let mut cmd = Command::new(npm()?.join("@azure/mcp-linux-x64/dist/azmcp"));
            cmd.args([
                "server",
                "start",
                "--transport",
                "http",
                "--read-only",
                "--dangerously-disable-http-incoming-auth",
            ])
            .env("ASPNETCORE_URLS", format!("http://127.0.0.1:{port}"));
            cmd
        }
        "motherduck-mcp" => {
            let mut cmd = Command::new(motherduck()?);
            cmd.args(["--transport", "http", "--host", "127.0.0.1", "--port"])
                .arg(port.to_string())
                .args(["--db-path", ":memory:", "--read-write"]);
            cmd
        }
        _ => return Err(format!("`{name}` is not a published server")),
    };
    cmd.envs(published_env(name));
    Ok(Launch::HttpOn { cmd, port })
}

/// `spec25-NAME` is the variant NAME of `spec25/variants.py` over Streamable
/// HTTP, `spec25-NAME-stdio` the same variant over stdio.
fn spec25_launcher(name: &str, tools: &Tools) -> Result<Launch, String> {
    let python = tools
        .python
        .clone()
        .ok_or("PROTOCHECK_INTEROP_PYTHON names no Python 3")?;
    let rest = name
        .strip_prefix("spec25-")
        .ok_or_else(|| format!("`{name}` is not a spec25 server"))?;
    // The behaviours seen on published servers live in a file of their own.
    let variant = rest.strip_suffix("-stdio").unwrap_or(rest);
    let file = if variant_names("spec25/observed.py")
        .iter()
        .any(|v| v == variant)
    {
        "spec25/observed.py"
    } else {
        "spec25/variants.py"
    };
    let script = panel_dir().join(file);
    if let Some(variant) = rest.strip_suffix("-stdio") {
        return Ok(Launch::Stdio {
            line: format!("{} {} {variant} stdio", python.display(), script.display()),
            env: vec![("PYTHONDONTWRITEBYTECODE".into(), PathBuf::from("1"))],
        });
    }
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(rest).arg("0");
    Ok(Launch::Http(cmd))
}

/// The names in the `VARIANTS = {` table of a variants file.
fn variant_names(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(panel_dir().join(file))
        .unwrap_or_else(|e| panic!("read {file}: {e}"));
    let listed = text
        .split("VARIANTS = {")
        .nth(1)
        .unwrap_or_else(|| panic!("{file} has no VARIANTS table"));
    listed
        .lines()
        .take_while(|l| !l.starts_with('}'))
        .filter_map(|l| l.trim().strip_prefix('"')?.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// The path of a panel server's endpoint: `/mcp`, or `/sse` for the servers
/// of the 2024-11-05 HTTP+SSE transport, whose one URL a user would give.
///
/// The servers of `served.py` are mounted where their users are told to
/// point a client: at `/mcp/` (which refuses `/mcp` with 404) or at a URL
/// whose query carries a key. Each request of the run must go to that URL.
fn endpoint_path(name: &str) -> &'static str {
    match name {
        "sdk-legacy-sse" | "everything-sse" => "/sse",
        "spec-mounted-slash" | "spec25-mounted-slash" => "/mcp/",
        "spec-mounted-query" | "spec25-mounted-query" => "/mcp?key=interop-7f3a",
        // @azure/mcp serves its endpoint at the root.
        "azure-mcp" => "/",
        _ => "/mcp",
    }
}

/// The command of a panel server over Streamable HTTP (or, for the legacy
/// rows, over HTTP+SSE).
fn http_launcher(name: &str, tools: &Tools) -> Result<Command, String> {
    let python = || {
        tools
            .python
            .clone()
            .ok_or("PROTOCHECK_INTEROP_PYTHON names no Python with mcp")
    };
    let dir = panel_dir();
    if name == "sdk-auth" || name == "sdk-auth-token" {
        let mut cmd = Command::new(python()?);
        cmd.arg(dir.join("sdk_auth_server.py"))
            .args(["--token", SDK_AUTH_TOKEN])
            .arg("0");
        return Ok(cmd);
    }
    if let Some(mode) = name.strip_prefix("sdk-") {
        let mut cmd = Command::new(python()?);
        cmd.arg(dir.join("sdk_server.py")).arg(mode).arg("0");
        return Ok(cmd);
    }
    if name == "fastmcp" || name == "fastmcp-default-origin" {
        let python = tools
            .fastmcp_python
            .clone()
            .ok_or("PROTOCHECK_INTEROP_FASTMCP_PYTHON names no Python with fastmcp")?;
        let mut cmd = Command::new(python);
        cmd.arg(dir.join("fastmcp_server.py"));
        if name == "fastmcp-default-origin" {
            cmd.arg("--default-origin");
        }
        cmd.arg("0");
        return Ok(cmd);
    }
    if name == "everything" || name == "everything-sse" {
        let node = tools
            .node
            .clone()
            .ok_or("PROTOCHECK_INTEROP_NODE names no Node 22")?;
        let everything = tools
            .everything
            .clone()
            .ok_or("PROTOCHECK_INTEROP_EVERYTHING names no server-everything dist/index.js")?;
        let mut cmd = Command::new(node);
        cmd.arg("--require")
            .arg(dir.join("loopback.cjs"))
            .arg(everything)
            .arg(if name == "everything" {
                "streamableHttp"
            } else {
                "sse"
            })
            .env("PORT", "0");
        return Ok(cmd);
    }
    if let Some(variant) = name.strip_prefix("spec-") {
        let mut cmd = Command::new(python()?);
        cmd.arg(dir.join("spec/variants.py")).arg(variant).arg("0");
        return Ok(cmd);
    }
    // Servers of the blind audits (tests/interop/mcp/blind/BLIND.md),
    // written from the specification by someone who did not read the probes.
    for (prefix, file) in [
        ("blind-", "blind/blind_stl.py"),
        ("blind26-", "blind/blind26.py"),
        ("blind4-", "blind/blind_r4.py"),
    ] {
        if let Some(variant) = name.strip_prefix(prefix) {
            let mut cmd = Command::new(python()?);
            cmd.arg(dir.join(file)).arg(variant).arg("0");
            return Ok(cmd);
        }
    }
    Err(format!("no launcher for panel server `{name}`"))
}

/// A running panel server, killed when dropped (also on panic).
struct Running {
    child: Child,
    port: u16,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts an HTTP panel server; `known` is the port it was told to listen
/// on, else it prints `PORT n` once it listens.
fn start(name: &str, mut cmd: Command, known: Option<u16>) -> Result<Running, String> {
    cmd.env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(if known.is_some() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stderr(Stdio::null());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{name}: cannot start: {e}"))?;
    if let Some(port) = known {
        return ready(name, Running { child, port });
    }
    let Some(stdout) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("{name}: no stdout"));
    };
    let mut running = Running { child, port: 0 };
    // The first `PORT n` line; the rest of stdout is drained so the server
    // never blocks on a full pipe.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if let Some(port) = line.strip_prefix("PORT ") {
                let _ = tx.send(port.trim().parse::<u16>().ok());
                break;
            }
        }
        for _ in lines {}
    });
    let port = rx
        .recv_timeout(Duration::from_secs(120))
        .ok()
        .flatten()
        .ok_or_else(|| format!("{name}: never printed `PORT n`"))?;
    running.port = port;
    ready(name, running)
}

/// Waits (at most a minute) until the server answers an HTTP request on its
/// port, any status.
fn ready(name: &str, mut running: Running) -> Result<Running, String> {
    let port = running.port;
    for _ in 0..600 {
        if answers(port) {
            return Ok(running);
        }
        if let Ok(Some(status)) = running.child.try_wait() {
            return Err(format!("{name}: exited with {status} before answering"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("{name}: did not answer on 127.0.0.1:{port}"))
}

fn answers(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let req = format!("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.")
}

/// One run's verdict: the grade and each rule's outcome (with the skip reason).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Verdict {
    grade: String,
    outcomes: BTreeMap<String, String>,
    /// Rule → its finding's message, whatever the outcome.
    messages: BTreeMap<String, String>,
}

/// Where `check` finds a panel server.
enum Target {
    Url(String),
    Stdio {
        line: String,
        env: Vec<(String, PathBuf)>,
    },
}

/// Panel servers over stdio whose every process imports the Python SDK (about
/// a second of CPU): protocheck starts several at once (the rules that need a
/// process of their own), and on the shared 2-core machine under load one of
/// them was seen to take 12 s to answer its first `initialize`. With the
/// default 10 s per request such probes go unanswered on some runs and not on
/// others (`sdk-stdio` in a full CI run: MCP-DEP-006 skipped and MCP-STL-003
/// failed in some runs only; these servers on 2025-11-25: MCP25-LIF-003 and
/// MCP25-LIF-006 skipped), so the verdict would depend on the machine's load.
/// No sentence of either revision bounds how long a server may take to
/// start; these rows give each request 30 s. `motherduck-mcp-stdio` imports
/// fastmcp and DuckDB besides (about 1.2 s to its first answer on an idle
/// machine, 2 s of CPU over a process's life): at 10 s, `MCP-STL-003` failed
/// on one run of ten and `MCP25-LIF-003`, `-004`, `-006` and
/// `MCP25-RPC-004`, `-005`, `-008`, `-010` went unanswered on others.
const SLOW_START: &[&str] = &["time-stdio", "git-stdio", "motherduck-mcp-stdio"];

/// The one bearer token `sdk_auth_server.py` accepts (given to it with
/// `--token`): a made-up string for a loopback server, not a credential.
const SDK_AUTH_TOKEN: &str = "protocheck-interop-token-5f1c";

/// Rows checked with more `check` arguments than the panel's own, by name:
/// `sdk-auth` is checked as a user without a token would check it (a grade of
/// `not judged`), `sdk-auth-token` with the token its server accepts.
/// `spec25-apps-bundle-over-limit` is checked with a read limit below its
/// 1.36 MB resource, to show an answer over the limit is not judged.
const CHECK_ARGS: &[(&str, &[&str])] = &[
    ("sdk-auth-token", &["--bearer-token", SDK_AUTH_TOKEN]),
    (
        "spec25-apps-bundle-over-limit",
        &["--max-answer-bytes", "1048576"],
    ),
];

/// One `protocheck check` of `target` (the panel server `name`) on the
/// panel's revision.
fn check(name: &str, target: &Target, panel: &Panel) -> Result<Verdict, String> {
    let mut cmd = common::cli::protocheck();
    cmd.arg("check");
    let shown = match target {
        Target::Url(url) => {
            cmd.arg(url);
            url.clone()
        }
        Target::Stdio { line, env } => {
            cmd.arg("--stdio").arg(line);
            cmd.envs(env.iter().map(|(k, v)| (k, v)));
            format!("--stdio {line}")
        }
    };
    // A panel is judged on its revision, whatever else a server speaks.
    cmd.args([
        "--suite",
        "mcp",
        "--mcp-revision",
        panel.revision,
        "--format",
        "json",
    ]);
    if SLOW_START.contains(&name) {
        cmd.args(["--timeout-ms", "30000"]);
    }
    let extra: &[&str] = CHECK_ARGS
        .iter()
        .find(|(row, _)| *row == name)
        .map_or(&[], |(_, args)| args);
    cmd.args(extra);
    let out = cmd.output().map_err(|e| format!("run protocheck: {e}"))?;
    if !matches!(out.status.code(), Some(0 | 1)) {
        return Err(format!(
            "protocheck check {shown} gave no verdict:\n{}",
            common::cli::show(&out)
        ));
    }
    if extra.contains(&SDK_AUTH_TOKEN)
        && [&out.stdout, &out.stderr]
            .iter()
            .any(|o| String::from_utf8_lossy(o).contains(SDK_AUTH_TOKEN))
    {
        return Err("the report shows the bearer token it was given".into());
    }
    let doc: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("protocheck's JSON report does not parse: {e}"))?;
    let grade = doc["verdict"]["grade"]
        .as_str()
        .ok_or_else(|| format!("the report has no MCP grade: {}", doc["verdict"]))?
        .to_owned();
    let mut outcomes = BTreeMap::new();
    let mut messages = BTreeMap::new();
    for f in doc["findings"].as_array().into_iter().flatten() {
        let (Some(rule), Some(outcome)) = (f["rule_id"].as_str(), f["outcome"].as_str()) else {
            return Err(format!("a finding without rule_id or outcome: {f}"));
        };
        outcomes.insert(rule.to_owned(), outcome.to_owned());
        let message = f["message"].as_str().unwrap_or_default();
        messages.insert(rule.to_owned(), message.to_owned());
    }
    Ok(Verdict {
        grade,
        outcomes,
        messages,
    })
}

/// What `EXPECTED.md` says of one server.
#[derive(Debug, Default)]
struct Expected {
    grades: BTreeSet<String>,
    /// Rule → the outcomes it may have; a rule not listed must pass or skip.
    outcomes: BTreeMap<String, BTreeSet<String>>,
    /// Rule → a substring its skip reason must contain.
    skip_reasons: BTreeMap<String, String>,
}

/// The parsed table of the panel's section of `tests/interop/EXPECTED.md`.
fn expectations(panel: &Panel) -> BTreeMap<String, Expected> {
    let path = root().join("tests/interop/EXPECTED.md");
    let text = std::fs::read_to_string(&path).expect("read tests/interop/EXPECTED.md");
    parse_expected(&text, panel).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|c| c.trim().to_owned()).collect()
}

fn items(cell: &str) -> Vec<String> {
    let cell = cell.replace('`', "");
    if matches!(cell.trim(), "" | "-" | "—" | "none") {
        return Vec::new();
    }
    cell.split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn parse_expected(text: &str, panel: &Panel) -> Result<BTreeMap<String, Expected>, String> {
    const HEADER: [&str; 7] = ["server", "grade", "fail", "warn", "info", "skip", "either"];
    // The panel's section only: it ends at the next second-level heading.
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim() != panel.heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect();
    if section.is_empty() {
        return Err(format!("no `{}` section", panel.heading));
    }
    let start = section
        .iter()
        .position(|l| l.trim_start().starts_with('|') && cells(l) == HEADER)
        .ok_or_else(|| {
            format!(
                "the `{}` section has no table `| server | grade | fail | warn | info | skip | either |`",
                panel.heading
            )
        })?;
    let mut out = BTreeMap::new();
    for line in section[start + 2..]
        .iter()
        .take_while(|l| l.trim_start().starts_with('|'))
    {
        let c = cells(line);
        if c.len() != HEADER.len() {
            return Err(format!("row with {} cells: {line}", c.len()));
        }
        let name = c[0].replace('`', "");
        let mut e = Expected {
            grades: c[1].split('/').map(|g| g.trim().to_owned()).collect(),
            ..Default::default()
        };
        for g in &e.grades {
            // `not judged`: the verdict on a server whose core rules could
            // not be verified (a protected server checked without a token).
            if !["strict", "compliant", "non-compliant", "not judged"].contains(&g.as_str()) {
                return Err(format!("{name}: unknown grade `{g}`"));
            }
        }
        let mut add = |rule: &str, outcomes: &[&str]| -> Result<(), String> {
            if !rule.starts_with(panel.prefix) {
                return Err(format!("{name}: `{rule}` is not a rule id"));
            }
            let set = outcomes.iter().map(|o| o.to_string()).collect();
            if e.outcomes.insert(rule.to_owned(), set).is_some() {
                return Err(format!("{name}: {rule} is listed twice"));
            }
            Ok(())
        };
        for (col, outcome) in [(2, "fail"), (3, "warn"), (4, "info")] {
            for rule in items(&c[col]) {
                add(&rule, &[outcome])?;
            }
        }
        // `MCP-X-001 "reason substring"`
        for item in items(&c[5]) {
            let (rule, reason) = match item.split_once(' ') {
                Some((r, why)) => (r.to_owned(), why.trim().trim_matches('"').to_owned()),
                None => (item.clone(), String::new()),
            };
            add(&rule, &["skip"])?;
            if !reason.is_empty() {
                e.skip_reasons.insert(rule, reason);
            }
        }
        // `MCP-X-001=fail/skip`
        for item in items(&c[6]) {
            let (rule, alts) = item
                .split_once('=')
                .ok_or_else(|| format!("{name}: `{item}` is not RULE=outcome/outcome"))?;
            let alts: Vec<&str> = alts.split('/').map(str::trim).collect();
            for a in &alts {
                if !["pass", "fail", "warn", "info", "skip"].contains(a) {
                    return Err(format!("{name}: unknown outcome `{a}`"));
                }
            }
            add(rule.trim(), &alts)?;
        }
        if out.insert(name.clone(), e).is_some() {
            return Err(format!("server `{name}` has two rows"));
        }
    }
    if out.is_empty() {
        return Err("the MCP table has no rows".into());
    }
    Ok(out)
}

/// Where `got` departs from `want`, one line each.
fn disagreements(want: &Expected, got: &Verdict) -> Vec<String> {
    let mut out = Vec::new();
    if !want.grades.contains(&got.grade) {
        out.push(format!(
            "grade {} (expected {})",
            got.grade,
            want.grades.iter().cloned().collect::<Vec<_>>().join(" or ")
        ));
    }
    let neutral: BTreeSet<String> = ["pass".to_owned(), "skip".to_owned()].into();
    for (rule, outcome) in &got.outcomes {
        let allowed = want.outcomes.get(rule).unwrap_or(&neutral);
        if !allowed.contains(outcome) {
            let why = got
                .messages
                .get(rule)
                .filter(|_| outcome == "skip")
                .map(|r| format!(" ({})", clip(r)))
                .unwrap_or_default();
            out.push(format!(
                "{rule} {outcome}{why}, expected {}",
                allowed.iter().cloned().collect::<Vec<_>>().join(" or ")
            ));
        } else if outcome == "skip"
            && let Some(reason) = want.skip_reasons.get(rule)
        {
            let said = got
                .messages
                .get(rule)
                .map(String::as_str)
                .unwrap_or_default();
            if !said.contains(reason.as_str()) {
                out.push(format!(
                    "{rule} skipped with \"{}\", expected a reason with \"{reason}\"",
                    clip(said)
                ));
            }
        }
    }
    for rule in want.outcomes.keys() {
        if !got.outcomes.contains_key(rule) {
            out.push(format!("{rule} has no finding"));
        }
    }
    out
}

fn clip(s: &str) -> String {
    let s: String = s.chars().take(160).collect();
    s.replace('\n', " ")
}

fn runs_per_server() -> usize {
    std::env::var("PROTOCHECK_INTEROP_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
        .max(2)
}

/// Panel servers whose state is their whole process's, so that a run finds
/// the server in the state it was started in only when the process is new:
/// each run gets a process of its own. (`spec-discover-first-global` refuses
/// requests until some client, on any connection, has called
/// `server/discover`; once a run has, every later run in the same process
/// would find it answering.) server-everything sends its log notifications
/// on a timer that runs from the process's start, so whether one falls
/// inside a run (MCP25-LOG-004 judges those it sees, and is skipped when
/// none came) depended on how long the process had already lived.
const FRESH_PER_RUN: &[&str] = &[
    "spec-discover-first-global",
    "spec-order-later-page",
    "everything",
];

/// Rules that judge what a panel server sends on its own timer, unprompted:
/// server-everything writes a `notifications/message` every few seconds from
/// its start, so whether one falls inside a run depends on the run's length
/// on a loaded machine, even on a fresh process. MCP25-LOG-004 judges the
/// log messages a run sees and is skipped when none came: between runs it
/// may be `pass` or `skip` (both say truly what arrived), never anything
/// else; every other rule must be the same in every run.
const ON_THE_SERVERS_TIMER: &[(&str, &str)] = &[
    ("everything", "MCP25-LOG-004"),
    ("everything-stdio", "MCP25-LOG-004"),
];

/// Whether `rule` of `server` may be `a` in one run and `b` in another.
fn may_differ(server: &str, rule: &str, a: &str, b: &str) -> bool {
    ON_THE_SERVERS_TIMER.contains(&(server, rule))
        && ["pass", "skip"].contains(&a)
        && ["pass", "skip"].contains(&b)
}

/// Starts one panel server; the process (none over stdio, where each check
/// starts its own) and where `check` finds it.
fn launch(name: &str, tools: &Tools) -> Result<(Option<Running>, Target), String> {
    if THIRD_PARTY.contains(&name) || PUBLISHED.contains(&name) {
        fixtures()?;
    }
    Ok(match launcher(name, tools)? {
        Launch::Http(cmd) => {
            let server = start(name, cmd, None)?;
            let url = format!("http://127.0.0.1:{}{}", server.port, endpoint_path(name));
            (Some(server), Target::Url(url))
        }
        Launch::HttpOn { cmd, port } => {
            let server = start(name, cmd, Some(port))?;
            let url = format!("http://127.0.0.1:{port}{}", endpoint_path(name));
            (Some(server), Target::Url(url))
        }
        Launch::Stdio { line, env } => (None, Target::Stdio { line, env }),
    })
}

/// Starts a stdio server's command once, unjudged, with stdin closed, and
/// waits (at most a minute) for it to exit. The first start of an
/// interpreter after its install reads every module from a cold disk cache;
/// on a 2-core machine running the test suite that took longer than the
/// 30 s protocheck allows a child's start-up (`transport::stdio::
/// STARTUP_ALLOWANCE`), and only the first of ten runs differed. The panel
/// judges verdicts, not a cold disk cache.
fn warm_up(line: &str, env: &[(String, PathBuf)]) {
    let mut parts = line.split_whitespace();
    let Some(program) = parts.next() else {
        return;
    };
    let Ok(mut child) = Command::new(program)
        .args(parts)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return;
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts one server (over HTTP; a stdio server is started by each check),
/// checks it `runs` times, stops it; the report lines. A server of
/// [`FRESH_PER_RUN`] is started anew for each run.
fn run_server(
    name: &str,
    want: &Expected,
    tools: &Tools,
    runs: usize,
    panel: &Panel,
) -> Result<(), String> {
    let mut verdicts: Vec<Verdict> = Vec::new();
    let mut server = None;
    for _ in 0..runs {
        if server.is_none() || FRESH_PER_RUN.contains(&name) {
            drop(server.take());
            server = Some(launch(name, tools)?);
            if let Some((None, Target::Stdio { line, env })) = &server
                && verdicts.is_empty()
            {
                warm_up(line, env);
            }
        }
        let Some((_, target)) = &server else {
            unreachable!("launched above");
        };
        verdicts.push(check(name, target, panel).map_err(|e| format!("{name}: {e}"))?);
    }
    drop(server);
    let first = &verdicts[0];
    let mut problems = Vec::new();
    for (i, v) in verdicts.iter().enumerate().skip(1) {
        let changed: Vec<String> = first
            .outcomes
            .iter()
            .filter(|(r, o)| v.outcomes.get(*r) != Some(o))
            .filter(|(r, o)| {
                !v.outcomes
                    .get(*r)
                    .is_some_and(|now| may_differ(name, r, o, now))
            })
            .map(|(r, o)| {
                // What each run said, so that a CI log shows why.
                let said = |v: &Verdict| {
                    v.messages
                        .get(r)
                        .map_or(String::new(), |m| m.chars().take(400).collect())
                };
                format!(
                    "{r} {o}→{} (run 1: {:?}; this run: {:?})",
                    v.outcomes.get(r).map_or("-", |s| s),
                    said(first),
                    said(v)
                )
            })
            .collect();
        let missing = v.outcomes.keys().any(|r| !first.outcomes.contains_key(r));
        if v.grade != first.grade || !changed.is_empty() || missing {
            problems.push(format!(
                "run {} differs from run 1: grade {}→{}; {}",
                i + 1,
                first.grade,
                v.grade,
                changed.join(", ")
            ));
        }
    }
    for v in &verdicts {
        for d in disagreements(want, v) {
            if !problems.contains(&d) {
                problems.push(d);
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name} (grade {} in run 1):\n  {}",
            first.grade,
            problems.join("\n  ")
        ))
    }
}

#[test]
fn the_expected_table_parses_and_every_server_has_a_launcher() {
    let expected = expectations(&PANEL_2026);
    // Launchers exist for every row of both panels (whether the tools are here or not).
    let everywhere = Tools {
        python: Some(PathBuf::from("python3")),
        fastmcp_python: Some(PathBuf::from("python3")),
        node: Some(PathBuf::from("node")),
        everything: Some(PathBuf::from("node_modules/x/index.js")),
        servers_python: Some(PathBuf::from("python3")),
        servers_npm: Some(PathBuf::from("node_modules")),
        real_npm: Some(PathBuf::from("node_modules")),
        grafana: Some(PathBuf::from("mcp-grafana")),
        motherduck: Some(PathBuf::from("mcp-server-motherduck")),
    };
    for name in expected.keys().chain(expectations(&PANEL_2025).keys()) {
        assert!(
            launcher(name, &everywhere).is_ok(),
            "{name} has no launcher"
        );
    }
    // Every hand-written variant has a row.
    let names = variant_names("spec/variants.py");
    assert!(!names.is_empty(), "spec/variants.py lists no variant");
    let served = variant_names("spec/served.py");
    assert!(!served.is_empty(), "spec/served.py lists no variant");
    let scoped = variant_names("spec/scoped.py");
    assert!(!scoped.is_empty(), "spec/scoped.py lists no variant");
    for name in names.into_iter().chain(served).chain(scoped) {
        let row = format!("spec-{name}");
        assert!(
            expected.contains_key(&row),
            "variant {name} has no row `{row}`"
        );
    }
    // Every server of the blind session-id audit has a row.
    let blind = variant_names("blind/blind_stl.py");
    assert!(!blind.is_empty(), "blind/blind_stl.py lists no variant");
    for name in blind {
        let row = format!("blind-{name}");
        assert!(
            expected.contains_key(&row),
            "variant {name} has no row `{row}`"
        );
    }
    // Every 2025-11-25 variant has a row, over HTTP or over stdio.
    let expected_2025 = expectations(&PANEL_2025);
    let names = variant_names("spec25/variants.py");
    assert!(!names.is_empty(), "spec25/variants.py lists no variant");
    let served = variant_names("spec25/served.py");
    assert!(!served.is_empty(), "spec25/served.py lists no variant");
    for name in names.into_iter().chain(served) {
        let http = format!("spec25-{name}");
        let stdio = format!("spec25-{name}-stdio");
        assert!(
            expected_2025.contains_key(&http) || expected_2025.contains_key(&stdio),
            "variant {name} has no row `{http}` or `{stdio}`"
        );
    }
    // Every variant of a behaviour seen on published servers has a row, in
    // one panel or the other.
    let names = variant_names("spec25/observed.py");
    assert!(!names.is_empty(), "spec25/observed.py lists no variant");
    for name in names {
        let row = format!("spec25-{name}");
        let stdio = format!("{row}-stdio");
        assert!(
            [&row, &stdio]
                .iter()
                .any(|r| expected_2025.contains_key(*r) || expected.contains_key(*r)),
            "variant {name} has no row `{row}` or `{stdio}`"
        );
    }
    // A grammar error in the table is caught here, not as a confusing verdict.
    assert!(
        parse_expected(
            "## MCP\n\n| server | grade |\n|--|--|\n| x | y |\n",
            &PANEL_2026
        )
        .is_err()
    );
    let one = parse_expected(
        "## RCP\n| server | grade | fail | warn | info | skip | either |\n|-|-|-|-|-|-|-|\n| r | strict | | | | | |\n\
         ## MCP\n| server | grade | fail | warn | info | skip | either |\n|-|-|-|-|-|-|-|\n\
         | a | compliant/strict | MCP-HDR-001 | — | — | `MCP-HDR-004 \"dual-era\"` | MCP-STL-004=fail/skip |\n",
        &PANEL_2026,
    )
    .expect("parses");
    assert_eq!(one.keys().collect::<Vec<_>>(), ["a"]);
    let a = &one["a"];
    assert_eq!(a.grades.len(), 2);
    assert_eq!(a.skip_reasons["MCP-HDR-004"], "dual-era");
    assert_eq!(a.outcomes["MCP-STL-004"].len(), 2);
    assert!(a.outcomes["MCP-HDR-001"].contains("fail"));
    let withheld = parse_expected(
        "## MCP\n| server | grade | fail | warn | info | skip | either |\n|-|-|-|-|-|-|-|\n\
         | p | not judged | — | MCP-AUT-006 | — | — | — |\n",
        &PANEL_2026,
    )
    .expect("parses");
    assert!(withheld["p"].grades.contains("not judged"));
    assert!(
        parse_expected(
            "## MCP\n| server | grade | fail | warn | info | skip | either |\n|-|-|-|-|-|-|-|\n\
             | p | unjudged | — | — | — | — | — |\n",
            &PANEL_2026,
        )
        .is_err()
    );
}

/// A tool that works longer than protocheck's budget for a tool call
/// (`spec25-deliberate`'s `ponder`, 30 s) is cancelled at the budget and
/// named in the tool rules' findings as not judged, over HTTP and over
/// stdio, while the tools that answered are judged as on `spec25-correct`.
#[test]
fn a_tool_working_past_its_budget_is_cancelled_and_named_as_not_judged() {
    let tools = Tools::from_env();
    if tools.python.is_none() {
        assert!(
            !tools_required(),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_INTEROP_PYTHON names no Python"
        );
        say_skipped("the tool budget test; set PROTOCHECK_INTEROP_PYTHON");
        return;
    }
    for name in ["spec25-deliberate", "spec25-deliberate-stdio"] {
        let (server, target) = launch(name, &tools).unwrap_or_else(|e| panic!("{name}: {e}"));
        let verdict = check(name, &target, &PANEL_2025).unwrap_or_else(|e| panic!("{e}"));
        drop(server);
        assert_eq!(verdict.grade, "strict", "{name}: {:?}", verdict.outcomes);
        let content = &verdict.messages["MCP25-TOL-010"];
        assert_eq!(
            verdict.outcomes["MCP25-TOL-010"], "pass",
            "{name}: {content}"
        );
        assert!(
            content.contains("not judged: `ponder` (")
                && content.contains("cancelled with `notifications/cancelled`"),
            "{name}: MCP25-TOL-010 says {content}"
        );
        assert!(
            content.starts_with("4 tool result(s)"),
            "{name}: the other tools are judged: {content}"
        );
    }
}

/// A read-only tool that runs only as a task (`spec25-task-required`'s
/// `digest`, listed first, with a required property) is called plainly by
/// MCP25-TSK-005 alone, whose probe is that refusal: the tool rules judge
/// the other tools, and MCP25-TOL-011 takes `echo` instead of a tool that
/// refuses every plain call.
#[test]
fn a_tool_that_runs_only_as_a_task_is_never_called_plainly_but_by_its_probe() {
    let tools = Tools::from_env();
    if tools.python.is_none() {
        assert!(
            !tools_required(),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_INTEROP_PYTHON names no Python"
        );
        say_skipped("the task-only tool test; set PROTOCHECK_INTEROP_PYTHON");
        return;
    }
    let name = "spec25-task-required";
    let (server, target) = launch(name, &tools).unwrap_or_else(|e| panic!("{name}: {e}"));
    let verdict = check(name, &target, &PANEL_2025).unwrap_or_else(|e| panic!("{e}"));
    drop(server);
    assert_eq!(verdict.grade, "strict", "{:?}", verdict.outcomes);
    let input = &verdict.messages["MCP25-TOL-011"];
    assert_eq!(verdict.outcomes["MCP25-TOL-011"], "pass", "{input}");
    assert!(input.contains("`echo`"), "MCP25-TOL-011 says {input}");
    let content = &verdict.messages["MCP25-TOL-010"];
    assert!(
        content.starts_with("4 tool result(s)") && !content.contains("digest"),
        "MCP25-TOL-010 says {content}"
    );
    let refused = &verdict.messages["MCP25-TSK-005"];
    assert_eq!(verdict.outcomes["MCP25-TSK-005"], "pass", "{refused}");
    assert!(refused.contains("digest"), "MCP25-TSK-005 says {refused}");
}

/// A server that speaks 2025-11-25 and older, and says so as the
/// 2026-07-28 versioning page asks (`spec25-lists-versions`, as
/// kubernetes-mcp-server 0.0.67 over HTTP: 400 and -32022 with its
/// `supported` list to a 2026-07-28 request, `supportedVersions` at
/// `server/discover`), is judged on the newest revision it lists that
/// protocheck judges, 2025-11-25: by `check` with no revision, with
/// `--suite mcp`, and with `--mcp-revision all`, which names 2026-07-28 as
/// not spoken. No 2026-07-28 rule (MCP-STL-003, which failed it) is judged.
#[test]
fn a_server_that_lists_only_older_revisions_is_judged_on_the_newest_it_lists() {
    let tools = Tools::from_env();
    if tools.python.is_none() {
        assert!(
            !tools_required(),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_INTEROP_PYTHON names no Python"
        );
        say_skipped("the listed-revisions test; set PROTOCHECK_INTEROP_PYTHON");
        return;
    }
    let name = "spec25-lists-versions";
    let (server, target) = launch(name, &tools).unwrap_or_else(|e| panic!("{name}: {e}"));
    let Target::Url(url) = target else {
        panic!("{name} is served over HTTP");
    };
    for args in [
        &[][..],
        &["--suite", "mcp"],
        &["--suite", "mcp", "--mcp-revision", "all"],
    ] {
        let mut cmd = common::cli::protocheck();
        cmd.args(["check", &url, "--format", "json"]).args(args);
        let out = cmd.output().expect("run protocheck");
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}\n{}", common::cli::show(&out)));
        let verdict = &doc["verdict"];
        // `all` joins the revisions it judged with `, `.
        let revisions: Vec<&str> = verdict["spec_revision"]
            .as_str()
            .unwrap_or_default()
            .split(", ")
            .collect();
        assert_eq!(revisions, ["2025-11-25"], "{args:?}: {verdict}");
        let modern: Vec<&str> = doc["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["rule_id"].as_str())
            .filter(|id| !id.starts_with("MCP25-"))
            .collect();
        assert!(modern.is_empty(), "{args:?}: judged {modern:?}");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {verdict}\n{}",
            common::cli::show(&out)
        );
    }
    drop(server);
}

/// A correct server behind a rate limiter that answers every fourth request
/// with 429 and `Retry-After: 1` (`served.py`'s `rate-limited`) gets, rule by
/// rule, the verdict of the same server without the limiter, on both
/// revisions: each refusal is waited out and the request sent again, never
/// judged as the server's answer.
#[test]
fn a_rate_limited_server_gets_the_verdict_of_the_same_server_without_limits() {
    let tools = Tools::from_env();
    if tools.python.is_none() {
        assert!(
            !tools_required(),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_INTEROP_PYTHON names no Python"
        );
        say_skipped("the rate-limited server test; set PROTOCHECK_INTEROP_PYTHON");
        return;
    }
    for (panel, plain, limited) in [
        (&PANEL_2026, "spec-correct", "spec-rate-limited"),
        (&PANEL_2025, "spec25-correct", "spec25-rate-limited"),
    ] {
        let verdict = |name: &str| {
            let (server, target) = launch(name, &tools).unwrap_or_else(|e| panic!("{name}: {e}"));
            let verdict = check(name, &target, panel).unwrap_or_else(|e| panic!("{e}"));
            drop(server);
            verdict
        };
        let without = verdict(plain);
        let with = verdict(limited);
        // Pass and skip may differ where a rule judges what the server sends
        // while it works (progress notifications, MCP25-UTL-005), which
        // depends on the run's pace; every other outcome must be the same.
        let judged = |v: &Verdict| -> BTreeMap<String, String> {
            v.outcomes
                .iter()
                .filter(|(_, o)| !["pass", "skip"].contains(&o.as_str()))
                .map(|(r, o)| (r.clone(), o.clone()))
                .collect()
        };
        let rate_limited: Vec<&String> = with
            .messages
            .values()
            .filter(|m| m.contains("rate limited"))
            .collect();
        assert!(
            with.grade == without.grade
                && judged(&with) == judged(&without)
                && with.outcomes.keys().eq(without.outcomes.keys())
                && rate_limited.is_empty(),
            "{limited} ({}) against {plain} ({}): {:?} against {:?}; rate limited: {rate_limited:?}",
            with.grade,
            without.grade,
            judged(&with),
            judged(&without)
        );
    }
}

/// The findings on behaviours seen on published servers say what happened:
/// an empty list ignoring the cursor is not "a page of items", a result over
/// the read limit names the limit, and a server refusing every request is
/// quoted in the verdict's reason.
#[test]
fn behaviours_seen_on_published_servers_are_named_as_they_are() {
    let tools = Tools::from_env();
    if tools.python.is_none() {
        assert!(
            !tools_required(),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_INTEROP_PYTHON names no Python"
        );
        say_skipped("the published-behaviour test; set PROTOCHECK_INTEROP_PYTHON");
        return;
    }
    let run = |name: &str, panel: &Panel| {
        let (server, target) = launch(name, &tools).unwrap_or_else(|e| panic!("{name}: {e}"));
        let verdict = check(name, &target, panel).unwrap_or_else(|e| panic!("{e}"));
        drop(server);
        verdict
    };
    let cursor = run("spec25-empty-ignores-cursor", &PANEL_2025);
    let said = &cursor.messages["MCP25-TOL-008"];
    assert!(
        said.contains("`prompts/list` with the cursor `protocheck-invalid-cursor` was answered with a result, not error -32602 (an empty list"),
        "MCP25-TOL-008 says {said}"
    );
    let over = run("spec25-apps-bundle-over-limit", &PANEL_2025);
    let said = &over.messages["MCP25-RES-005"];
    assert_eq!(over.outcomes["MCP25-RES-005"], "skip", "{said}");
    assert!(
        said.contains("1048576-byte limit") && said.contains("`ui://apps/dashboard.html`"),
        "MCP25-RES-005 says {said}"
    );
    for panel in [&PANEL_2025, &PANEL_2026] {
        let refused = run("spec25-host-allow-list", panel);
        assert_eq!(refused.grade, "not judged");
        let said = refused
            .messages
            .values()
            .find(|m| m.contains("every request was refused with HTTP 403"))
            .unwrap_or_else(|| panic!("no finding names the 403: {:?}", refused.messages));
        assert!(
            said.contains("\"Access is only allowed at localhost:") && said.contains("allow-list"),
            "{said}"
        );
    }
}

#[test]
fn panel_servers_get_the_verdicts_the_specification_gives_them() {
    run_panel(&PANEL_2026);
}

#[test]
fn panel_servers_of_2025_11_25_get_the_verdicts_the_specification_gives_them() {
    run_panel(&PANEL_2025);
}

/// Runs every server of `panel` (those `PROTOCHECK_INTEROP_ONLY` names, if
/// set) and compares each one's verdicts with its row.
fn run_panel(panel: &Panel) {
    let tools = Tools::from_env();
    if tools.python.is_none() {
        assert!(
            !tools_required(),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_INTEROP_PYTHON names no Python (see install_interop_mcp in scripts/test-all.sh)"
        );
        say_skipped(
            "MCP interop panel; set PROTOCHECK_INTEROP_PYTHON (and PROTOCHECK_INTEROP_NODE, \
             PROTOCHECK_INTEROP_EVERYTHING) as scripts/test-all.sh's install_interop_mcp does",
        );
        return;
    }
    if tools.node.is_none()
        || tools.everything.is_none()
        || tools.fastmcp_python.is_none()
        || tools.servers_python.is_none()
        || tools.servers_npm.is_none()
        || tools.real_npm.is_none()
        || tools.grafana.is_none()
        || tools.motherduck.is_none()
    {
        assert!(
            !tools_required(),
            "PROTOCHECK_REQUIRE_TOOLS=1 but PROTOCHECK_INTEROP_NODE, PROTOCHECK_INTEROP_EVERYTHING, \
             PROTOCHECK_INTEROP_FASTMCP_PYTHON, PROTOCHECK_INTEROP_SERVERS_PYTHON, \
             PROTOCHECK_INTEROP_SERVERS_NPM, PROTOCHECK_INTEROP_REAL_NPM, \
             PROTOCHECK_INTEROP_GRAFANA or PROTOCHECK_INTEROP_MOTHERDUCK is missing"
        );
    }
    let only: Option<BTreeSet<String>> = std::env::var("PROTOCHECK_INTEROP_ONLY")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect());
    let expected = expectations(panel);
    let runs = runs_per_server();
    let mut names: Vec<String> = Vec::new();
    for name in expected.keys() {
        if only.as_ref().is_some_and(|o| !o.contains(name)) {
            continue;
        }
        let on_node = name.starts_with("everything") || name.starts_with("ts-sdk");
        if on_node && (tools.node.is_none() || tools.everything.is_none()) {
            say_skipped(&format!(
                "{name} in the MCP interop panel; Node 22 is not installed"
            ));
            continue;
        }
        let third_party_missing = match name.as_str() {
            "time-stdio" | "git-stdio" => tools.servers_python.is_none(),
            "memory-stdio" | "filesystem-stdio" => {
                tools.servers_npm.is_none() || tools.node.is_none()
            }
            "grafana-mcp" | "grafana-mcp-stdio" => tools.grafana.is_none(),
            "motherduck-mcp" | "motherduck-mcp-stdio" => tools.motherduck.is_none(),
            _ if PUBLISHED.contains(&name.as_str()) => tools.real_npm.is_none(),
            _ => false,
        };
        if third_party_missing {
            say_skipped(&format!(
                "{name} in the MCP interop panel; PROTOCHECK_INTEROP_SERVERS_PYTHON, \
                 PROTOCHECK_INTEROP_SERVERS_NPM (and Node 22), PROTOCHECK_INTEROP_REAL_NPM, \
                 PROTOCHECK_INTEROP_GRAFANA or PROTOCHECK_INTEROP_MOTHERDUCK are not set"
            ));
            continue;
        }
        names.push(name.clone());
    }
    // Runs wait on the servers more than they compute: several servers at once.
    let jobs = 6;
    let (tx, rx) = mpsc::channel();
    let queue = std::sync::Mutex::new(names.clone());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(names.len()) {
            let tx = tx.clone();
            let queue = &queue;
            let expected = &expected;
            let tools = &tools;
            scope.spawn(move || {
                loop {
                    let next = queue.lock().ok().and_then(|mut q| q.pop());
                    let Some(name) = next else { break };
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_server(&name, &expected[&name], tools, runs, panel)
                    }))
                    .unwrap_or_else(|_| Err(format!("{name}: the run panicked")));
                    let _ = tx.send((name, result));
                }
            });
        }
    });
    drop(tx);
    let mut failures = Vec::new();
    for (name, result) in rx {
        match result {
            Ok(()) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "interop: {name}: {runs} identical verdicts, as expected"
                );
            }
            Err(e) => failures.push(e),
        }
    }
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} panel servers disagree with tests/interop/EXPECTED.md:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}
