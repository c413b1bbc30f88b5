//! The stdio binding (spec §5): NDJSON, one message per line, with the line
//! limit and the split-frame fault of RCP-OUT-002.

use super::protocol::{self, Server};
use super::{FrameCtx, MAX_REQUEST_BYTES, RcpReferenceConfig, Session};
use crate::suite::rcp::outside;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// Serves NDJSON on `reader`/`writer` until EOF (an implicit `shutdown`, spec
/// §5) or until `shutdown` has been answered.
pub async fn serve_rcp_stdio<R, W>(
    config: RcpReferenceConfig,
    mut reader: R,
    mut writer: W,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let server = Server::new(config);
    let config = &server.config;
    let mut session = if config.initialized_at_start() {
        Session::initialized()
    } else {
        Session::default()
    };
    loop {
        let line = if config.has(&outside::STDIO_FRAMING) {
            read_chunk(&mut reader).await?
        } else {
            read_line(&mut reader, MAX_REQUEST_BYTES).await?
        };
        let line = match line {
            None => return Ok(()),
            Some(Ok(line)) => line,
            Some(Err(TooLong)) => {
                let reply = protocol::error_reply(
                    config,
                    Value::Null,
                    -32013,
                    "the frame exceeds the line limit",
                );
                write_frame(config, &mut writer, &reply).await?;
                continue;
            }
        };
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let mut ctx = FrameCtx {
            may_notify: true,
            ..FrameCtx::default()
        };
        let reply = match serde_json::from_str::<Value>(text) {
            Ok(message) => protocol::handle_body(&server, &mut session, &message, &mut ctx),
            Err(_) => Some(protocol::parse_error(config)),
        };
        for frame in &ctx.frames {
            write_frame(config, &mut writer, frame).await?;
        }
        if let Some(reply) = reply {
            write_frame(config, &mut writer, &reply).await?;
        }
        if ctx.shutdown {
            return Ok(());
        }
    }
}

async fn write_frame<W: AsyncWrite + Unpin>(
    config: &RcpReferenceConfig,
    writer: &mut W,
    reply: &Value,
) -> std::io::Result<()> {
    if !config.latency.is_zero() {
        tokio::time::sleep(config.latency).await;
    }
    let mut line = reply.to_string().into_bytes();
    line.push(b'\n');
    writer.write_all(&line).await?;
    writer.flush().await
}

struct TooLong;

/// The fault of RCP-OUT-002: whatever one read returns, up to a newline, is
/// taken as a whole message.
async fn read_chunk<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<Result<Vec<u8>, TooLong>>> {
    let buf = reader.fill_buf().await?;
    if buf.is_empty() {
        return Ok(None);
    }
    let newline = buf.iter().position(|&b| b == b'\n');
    let end = newline.unwrap_or(buf.len()).min(MAX_REQUEST_BYTES);
    let line = buf[..end].to_vec();
    reader.consume(newline.map_or(end, |i| i + 1));
    Ok(Some(Ok(line)))
}

/// One line without its newline; `None` at EOF. An over-long line is consumed
/// and reported, never buffered whole.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Result<Vec<u8>, TooLong>>> {
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
            if line.len() + end > max {
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
    Ok(Some(if too_long { Err(TooLong) } else { Ok(line) }))
}
