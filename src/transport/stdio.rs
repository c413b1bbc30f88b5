//! Child processes speaking newline-delimited JSON (CLI only).
//!
//! The child is as untrusted as a remote server: lines are bounded by
//! [`Limits::stdio_max_line_bytes`], every read has a deadline, stderr is kept
//! only as a bounded tail for diagnostics, and the child is killed when the
//! handle is dropped. The command line is split without a shell, so nothing in it
//! is expanded or interpreted.

use super::{Limits, TransportError};
use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How much of the child's stderr is kept for diagnostics.
pub const STDERR_TAIL_BYTES: usize = 8 * 1024;

/// How long [`StdioChild::close`] waits for a child to exit on its own after
/// stdin is closed (EOF is an implicit `shutdown` in RCP, spec §5) before killing it.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// Splits a command line into words the way a POSIX shell would for plain words,
/// single quotes, double quotes and backslashes, and nothing more: no variables,
/// globs, pipes or redirections.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err("unterminated single quote in the command".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        // Inside double quotes a backslash escapes only these, as in sh.
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => word.push(ch),
                            Some(ch) => {
                                word.push('\\');
                                word.push(ch);
                            }
                            None => {
                                return Err("unterminated double quote in the command".into());
                            }
                        },
                        Some(ch) => word.push(ch),
                        None => return Err("unterminated double quote in the command".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(ch) => word.push(ch),
                    None => return Err("the command ends with a lone backslash".into()),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err("the command is empty".into());
    }
    Ok(words)
}

/// The last bytes a child wrote to stderr.
#[derive(Debug, Default)]
struct StderrTail {
    bytes: VecDeque<u8>,
    dropped: bool,
}

impl StderrTail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        while self.bytes.len() > STDERR_TAIL_BYTES {
            self.bytes.pop_front();
            self.dropped = true;
        }
    }
}

/// The least time a child's first stdout line is awaited. The first line
/// comes after the child's start-up: an interpreter that loads its modules
/// from a cold disk cache on a busy machine takes tens of seconds (the
/// Python SDK's servers took over 10 s on a 2-core machine running tests in
/// parallel), and that wait says nothing of how the server answers. A
/// shorter deadline made the same server's first answer, and with it the
/// verdict, depend on the machine's load.
pub const STARTUP_ALLOWANCE: Duration = Duration::from_secs(30);

/// A spawned child with piped stdin and stdout.
pub struct StdioChild {
    child: Child,
    stdin: Option<ChildStdin>,
    /// `None` once [`Self::take_stdout`] has handed it to a reader of its own.
    stdout: Option<StdoutReader>,
    stderr: Arc<Mutex<StderrTail>>,
    /// The task draining stderr; it ends when the child closes stderr.
    stderr_task: Option<tokio::task::JoinHandle<()>>,
}

/// A child's stdout, read line by line.
pub struct StdoutReader {
    stdout: BufReader<ChildStdout>,
    max_line: usize,
    /// Bytes of the line being read. Kept here, not on the stack of `read_line`, so
    /// that a read cut by its deadline loses nothing and the next read resumes.
    pending: Vec<u8>,
    /// Set after an over-long line: the rest of it is discarded up to its newline.
    discarding: bool,
    eof: bool,
    /// Empty (or all-whitespace) lines read and skipped.
    blank_lines: usize,
    /// Whether stdout has carried any byte yet (see [`STARTUP_ALLOWANCE`]).
    heard: bool,
}

impl std::fmt::Debug for StdioChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioChild")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl StdioChild {
    /// Spawns `command` (split by [`split_command`], never given to a shell).
    pub fn spawn(command: &str, limits: &Limits) -> Result<Self, TransportError> {
        let argv = split_command(command).map_err(TransportError::Protocol)?;
        let Some((program, args)) = argv.split_first() else {
            return Err(TransportError::Protocol("the command is empty".into()));
        };
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| TransportError::Io(format!("cannot start `{}`: {e}", program)))?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| TransportError::Io("the child's stdout is not piped".into()))?;
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        let mut stderr_task = None;
        if let Some(mut pipe) = child.stderr.take() {
            let tail = Arc::clone(&stderr);
            // Drained continuously: a child blocked on a full stderr pipe would
            // look like a server that stopped answering.
            stderr_task = Some(tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                loop {
                    match pipe.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            if let Ok(mut tail) = tail.lock() {
                                tail.push(&buf[..n]);
                            }
                        }
                    }
                }
            }));
        }
        Ok(Self {
            child,
            stdin,
            stdout: Some(StdoutReader {
                stdout: BufReader::new(stdout),
                max_line: limits.stdio_max_line_bytes,
                pending: Vec::new(),
                discarding: false,
                eof: false,
                blank_lines: 0,
                heard: false,
            }),
            stderr,
            stderr_task,
        })
    }

    /// Hands stdout to a reader of its own (a task that reads while frames
    /// are written); [`Self::read_line`] fails from then on.
    pub fn take_stdout(&mut self) -> Option<StdoutReader> {
        self.stdout.take()
    }

    /// Writes `line` and a newline to the child's stdin.
    pub async fn write_line(&mut self, line: &str) -> Result<(), TransportError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| TransportError::Io("the server's stdin is already closed".into()))?;
        let mut frame = Vec::with_capacity(line.len() + 1);
        frame.extend_from_slice(line.as_bytes());
        frame.push(b'\n');
        let write = async {
            stdin.write_all(&frame).await?;
            stdin.flush().await
        };
        write
            .await
            .map_err(|e| TransportError::Io(format!("cannot write to the server's stdin: {e}")))
    }

    /// Writes `bytes` as they are, with no newline added: probes of framing
    /// tolerance send blank lines and frames split across writes (spec §5.1).
    pub async fn write_raw(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| TransportError::Io("the server's stdin is already closed".into()))?;
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        write
            .await
            .map_err(|e| TransportError::Io(format!("cannot write to the server's stdin: {e}")))
    }

    /// Reads the next non-blank line of stdout (see [`StdoutReader::read_line`]).
    pub async fn read_line(&mut self, timeout: Duration) -> Result<String, TransportError> {
        match self.stdout.as_mut() {
            Some(stdout) => stdout.read_line(timeout).await,
            None => Err(TransportError::Io(
                "the server's stdout is read elsewhere".into(),
            )),
        }
    }

    /// How many empty lines the child wrote on stdout so far (skipped when
    /// reading; 0 once stdout was handed to a reader of its own).
    pub fn blank_lines(&self) -> usize {
        self.stdout.as_ref().map_or(0, StdoutReader::blank_lines)
    }

    /// Whether stdout has reached end of file.
    pub fn is_closed(&self) -> bool {
        self.stdout.as_ref().is_none_or(|s| s.eof)
    }

    /// The end of stderr once the child has closed it, waiting up to `wait` for
    /// that: an exiting child's last words are usually why it exited.
    pub async fn settled_stderr_tail(&mut self, wait: Duration) -> String {
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(wait, task).await;
        }
        self.stderr_tail()
    }

    /// The last bytes the child wrote to stderr, lossily decoded.
    pub fn stderr_tail(&self) -> String {
        match self.stderr.lock() {
            Ok(tail) => {
                let (a, b) = tail.bytes.as_slices();
                let mut bytes = Vec::with_capacity(a.len() + b.len());
                bytes.extend_from_slice(a);
                bytes.extend_from_slice(b);
                let text = String::from_utf8_lossy(&bytes).into_owned();
                if tail.dropped {
                    format!("…{text}")
                } else {
                    text
                }
            }
            Err(_) => String::new(),
        }
    }

    /// The child's exit status, if it exits within `wait`.
    pub async fn exit_status(&mut self, wait: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()?
            .ok()
    }

    /// Ends the child as the MCP lifecycle describes for stdio: closes stdin,
    /// waits `grace` for it to exit, then sends SIGTERM (on Unix) and waits
    /// `term_grace`, then kills it. Says which step ended it.
    pub async fn shut_down(mut self, grace: Duration, term_grace: Duration) -> Shutdown {
        drop(self.stdin.take());
        let started = std::time::Instant::now();
        if let Ok(Ok(status)) = tokio::time::timeout(grace, self.child.wait()).await {
            return Shutdown::Exited {
                after: started.elapsed(),
                status,
            };
        }
        if self.terminate()
            && let Ok(Ok(status)) = tokio::time::timeout(term_grace, self.child.wait()).await
        {
            return Shutdown::Terminated { status };
        }
        let _ = self.child.kill().await;
        Shutdown::Killed
    }

    /// Sends SIGTERM; `false` where that is not possible.
    #[cfg(unix)]
    fn terminate(&self) -> bool {
        let Some(pid) = self.child.id().and_then(|p| libc::pid_t::try_from(p).ok()) else {
            return false;
        };
        // SAFETY: kill(2) with a pid of a child this process spawned and has
        // not reaped (wait() has not returned), and a constant signal.
        unsafe { libc::kill(pid, libc::SIGTERM) == 0 }
    }

    #[cfg(not(unix))]
    fn terminate(&self) -> bool {
        false
    }

    /// Closes stdin (an implicit `shutdown`), gives the child a moment to exit,
    /// then kills it.
    pub async fn close(mut self) {
        drop(self.stdin.take());
        if tokio::time::timeout(EXIT_GRACE, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

impl StdoutReader {
    /// Reads the next non-blank line (without its `\n` or `\r\n`), waiting at most
    /// `timeout`. Blank lines are skipped: NDJSON readers tolerate them (spec §5).
    /// Until the child has written anything, the wait is at least
    /// [`STARTUP_ALLOWANCE`].
    pub async fn read_line(&mut self, timeout: Duration) -> Result<String, TransportError> {
        let timeout = if self.heard {
            timeout
        } else {
            timeout.max(STARTUP_ALLOWANCE)
        };
        tokio::time::timeout(timeout, self.read_line_inner())
            .await
            .map_err(|_| TransportError::Timeout(timeout))?
    }

    async fn read_line_inner(&mut self) -> Result<String, TransportError> {
        loop {
            if self.eof {
                return Err(TransportError::Io("the server closed stdout".into()));
            }
            let buf =
                self.stdout.fill_buf().await.map_err(|e| {
                    TransportError::Io(format!("cannot read the server's stdout: {e}"))
                })?;
            if buf.is_empty() {
                self.eof = true;
                continue;
            }
            self.heard = true;
            let newline = buf.iter().position(|&b| b == b'\n');
            let take = newline.map_or(buf.len(), |i| i + 1);
            if self.discarding {
                self.stdout.consume(take);
                if newline.is_some() {
                    self.discarding = false;
                }
                continue;
            }
            let line_len = self.pending.len() + newline.unwrap_or(buf.len());
            if line_len > self.max_line {
                self.stdout.consume(take);
                self.pending.clear();
                self.discarding = newline.is_none();
                return Err(TransportError::TooLarge {
                    limit: self.max_line,
                });
            }
            self.pending
                .extend_from_slice(&buf[..newline.unwrap_or(buf.len())]);
            self.stdout.consume(take);
            if newline.is_some() {
                let mut line = std::mem::take(&mut self.pending);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    self.blank_lines = self.blank_lines.saturating_add(1);
                    continue;
                }
                return Ok(String::from_utf8_lossy(&line).into_owned());
            }
        }
    }

    /// How many empty lines were read and skipped so far.
    pub fn blank_lines(&self) -> usize {
        self.blank_lines
    }
}

/// How a child ended in [`StdioChild::shut_down`].
#[derive(Debug)]
pub enum Shutdown {
    /// It exited on its own once stdin was closed.
    Exited {
        after: Duration,
        status: std::process::ExitStatus,
    },
    /// It needed SIGTERM.
    Terminated { status: std::process::ExitStatus },
    /// It needed SIGKILL.
    Killed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell_without_one() {
        assert_eq!(split_command("a b  c").unwrap(), ["a", "b", "c"]);
        assert_eq!(
            split_command(r#"'/x y/bin' --n "a \"b\" c" d\ e"#).unwrap(),
            ["/x y/bin", "--n", "a \"b\" c", "d e"]
        );
        assert_eq!(split_command("a '' b").unwrap(), ["a", "", "b"]);
        assert_eq!(split_command("echo $HOME").unwrap(), ["echo", "$HOME"]);
        assert!(split_command("  ").is_err());
        assert!(split_command("a 'b").is_err());
        assert!(split_command("a \"b").is_err());
    }

    fn limits(max_line: usize) -> Limits {
        Limits {
            stdio_max_line_bytes: max_line,
            ..Limits::default()
        }
    }

    #[tokio::test]
    async fn reads_lines_skips_blanks_and_reports_eof() {
        let mut child = StdioChild::spawn(
            "sh -c 'printf \"\\n{\\\"a\\\":1}\\r\\n\\n{}\\n\"; echo oops >&2'",
            &limits(64),
        )
        .unwrap();
        let t = Duration::from_secs(5);
        assert_eq!(child.read_line(t).await.unwrap(), r#"{"a":1}"#);
        assert_eq!(child.read_line(t).await.unwrap(), "{}");
        let err = child.read_line(t).await.unwrap_err();
        assert_eq!(err, TransportError::Io("the server closed stdout".into()));
        assert!(child.is_closed());
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(child.stderr_tail().contains("oops"));
    }

    #[tokio::test]
    async fn long_lines_are_refused_and_skipped() {
        let mut child =
            StdioChild::spawn("sh -c 'printf \"%0200d\\nok\\n\" 0'", &limits(64)).unwrap();
        let t = Duration::from_secs(5);
        assert_eq!(
            child.read_line(t).await.unwrap_err(),
            TransportError::TooLarge { limit: 64 }
        );
        assert_eq!(child.read_line(t).await.unwrap(), "ok");
    }

    #[tokio::test]
    async fn a_silent_child_times_out_and_echo_round_trips() {
        let mut child = StdioChild::spawn("cat", &limits(64)).unwrap();
        child.write_line(r#"{"x":1}"#).await.unwrap();
        assert_eq!(
            child.read_line(Duration::from_secs(5)).await.unwrap(),
            r#"{"x":1}"#
        );
        // Once it has answered, a short wait is a short wait.
        let short = Duration::from_millis(50);
        assert_eq!(
            child.read_line(short).await.unwrap_err(),
            TransportError::Timeout(short)
        );
        child.close().await;
    }

    #[tokio::test]
    async fn a_child_that_has_written_nothing_yet_gets_the_start_up_allowance() {
        // A start-up slower than the wait asked for: the first line still counts.
        let mut child = StdioChild::spawn("sh -c 'sleep 1; echo ready; cat'", &limits(64)).unwrap();
        assert_eq!(
            child.read_line(Duration::from_millis(50)).await.unwrap(),
            "ready"
        );
        child.close().await;
    }

    #[tokio::test]
    async fn a_missing_program_is_an_io_error() {
        let err =
            StdioChild::spawn("/nonexistent/protocheck-test-binary", &limits(64)).unwrap_err();
        assert!(matches!(err, TransportError::Io(m) if m.contains("cannot start")));
    }
}
