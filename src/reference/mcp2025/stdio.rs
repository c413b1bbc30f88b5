//! The stdio transport of the 2025-11-25 reference server
//! (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio):
//! one JSON-RPC message per line on stdin and stdout, nothing else on
//! stdout (logs go to stderr), and the end of stdin ends the server.

use super::engine::{self, Call, Incoming, Noted, Reply, Session};
use super::{Mcp25ReferenceConfig, faults};
use serde_json::Value;
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Longest line read; a longer one is skipped and answered with an error.
const MAX_LINE: usize = 1024 * 1024;
/// How long MCP25-STD-003's fault outlives the end of stdin.
const NO_EXIT_LINGER: std::time::Duration = std::time::Duration::from_secs(3600);

/// Serves newline-delimited JSON-RPC on `stdin`/`stdout` until `stdin` ends.
pub async fn serve_mcp25_stdio<R, W>(
    config: Mcp25ReferenceConfig,
    stdin: R,
    stdout: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let config = Arc::new(config);
    let session = Arc::new(Session::default());
    let (out, queue) = unbounded_channel::<Value>();
    let reading = async {
        let mut reader = BufReader::new(stdin);
        let read = serve_lines(&config, &session, &mut reader, &out).await;
        if config.breaks(faults::STDIO_NO_EXIT) {
            // Deaf, but alive until killed (bounded all the same).
            tokio::time::sleep(NO_EXIT_LINGER).await;
        }
        // The end of stdin ends the server: requests still running stop.
        session.ended.cancel();
        drop(out);
        read
    };
    let (read, written) = tokio::join!(reading, write_lines(&config, queue, stdout));
    read.and(written)
}

/// Writes each message as one line, until every sender is gone.
async fn write_lines<W: AsyncWrite + Unpin>(
    config: &Mcp25ReferenceConfig,
    mut queue: UnboundedReceiver<Value>,
    mut stdout: W,
) -> std::io::Result<()> {
    if config.breaks(faults::STDIO_ONLY_MESSAGES) {
        stdout.write_all(b"reference server starting\n").await?;
    }
    while let Some(message) = queue.recv().await {
        if !config.latency.is_zero() {
            tokio::time::sleep(config.latency).await;
        }
        let mut line = if config.breaks(faults::STDIO_NEWLINES) {
            serde_json::to_string_pretty(&message)
                .unwrap_or_default()
                .into_bytes()
        } else {
            engine::encode(config, &message)
        };
        line.push(b'\n');
        stdout.write_all(&line).await?;
        stdout.flush().await?;
    }
    Ok(())
}

async fn serve_lines<R: AsyncBufRead + Unpin>(
    config: &Arc<Mcp25ReferenceConfig>,
    session: &Arc<Session>,
    reader: &mut R,
    out: &UnboundedSender<Value>,
) -> std::io::Result<()> {
    loop {
        let line = match read_line(reader).await? {
            None => return Ok(()),
            Some(Some(line)) => line,
            Some(None) => {
                let reply = engine::error(&Value::Null, -32600, "message too long", None);
                let _ = out.send(reply.0);
                continue;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(answers) = engine::batch(config, session, &line).await {
            let _ = out.send(answers);
            continue;
        }
        let (id, method, params) = match engine::classify(config, &line) {
            Err(reply) => {
                let _ = out.send(reply.0);
                continue;
            }
            Ok(Incoming::Notification { method, params }) => {
                match engine::notification(config, session, &method, &params) {
                    Noted::Quiet => {}
                    Noted::Answer(reply) => {
                        let _ = out.send(reply.0);
                    }
                    Noted::End => return Ok(()),
                }
                continue;
            }
            Ok(Incoming::Response) => continue,
            Ok(Incoming::Request { id, method, params }) => (id, method, params),
        };
        // A tool call runs on its own, so that a cancellation can reach it.
        let long = method == "tools/call";
        let cancel = session.begin(&id);
        let (config, session, out) = (config.clone(), session.clone(), out.clone());
        let answer = async move {
            let call = Call {
                config: &config,
                session: &session,
                id: &id,
                params: &params,
                cancel,
                sink: &out,
            };
            let reply: Option<Reply> = engine::request(call, &method).await;
            session.finish(&id);
            if let Some(reply) = reply {
                let answered = reply.code().is_none();
                let _ = out.send(reply.0);
                if method == "initialize"
                    && answered
                    && let Some(early) = engine::early_request(&config)
                {
                    let _ = out.send(early);
                }
            }
        };
        if long {
            tokio::spawn(answer);
        } else {
            answer.await;
        }
    }
}

/// One line without its newline (shared with the 2026-07-28 server's stdio
/// face); `Some(None)` for a line over [`MAX_LINE`]
/// (consumed, never buffered whole); `None` at the end of input.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<Option<Vec<u8>>>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let end = newline.unwrap_or(buf.len());
        if !too_long {
            if line.len() + end > MAX_LINE {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&buf[..end]);
            }
        }
        let consumed = newline.map_or(buf.len(), |i| i + 1);
        reader.consume(consumed);
        if newline.is_some() {
            break;
        }
    }
    Ok(Some((!too_long).then_some(line)))
}
