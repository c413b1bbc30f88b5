//! Bounded reader for server-sent events.
//!
//! Parses a `text/event-stream` body by the WHATWG rules ("Interpreting an event
//! stream", HTML Living Standard §9.2.6), with every bound from [`Limits`] applied:
//! the stream comes from an untrusted target, so a line, an event, the number of
//! events and the time spent reading are all capped. The one deliberate departure
//! from the standard is that invalid UTF-8 is an error rather than replaced: a
//! conformance checker reports it instead of hiding it.

use super::{Limits, StreamingResponse, TransportError};
use bytes::{Buf, Bytes, BytesMut};
use futures::StreamExt;
use futures::stream::BoxStream;
use http::HeaderMap;
use std::time::Duration;
use tokio::time::Instant;

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or `None` when the event had none (or an empty one),
    /// which a browser would deliver as type `message`.
    pub event: Option<String>,
    /// The `data:` lines of the event joined with `\n`.
    pub data: String,
    /// The `id:` field sent with this event, if it had one. Unlike a browser's
    /// `lastEventId`, this is not carried over from earlier events, so a check can
    /// tell which events the server labelled; see [`SseReader::last_event_id`]
    /// for the carried-over value.
    pub id: Option<String>,
}

/// Whether `headers` declare a `text/event-stream` body (media type compared
/// case-insensitively, parameters such as `charset` allowed).
pub fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("text/event-stream"))
}

/// The longest field prefix a `data` line carries (`data: `). An unterminated line
/// may be this much longer than `sse_max_frame_bytes`, so that an event whose data
/// is exactly at the limit is accepted however the bytes are split into chunks.
const DATA_PREFIX_BYTES: usize = "data: ".len();

const BOM: &str = "\u{feff}";

/// Reads events from a streaming response, one at a time, within [`Limits`].
///
/// Once [`next_event`](Self::next_event) has returned an error, every later call
/// returns the same error; once it has returned `Ok(None)`, every later call does.
pub struct SseReader {
    status: u16,
    headers: HeaderMap,
    body: BoxStream<'static, Result<Bytes, TransportError>>,
    /// Bytes received but not yet split into lines.
    buf: BytesMut,
    /// How far `buf` is known to hold no line terminator, so a long line that
    /// arrives a byte at a time is scanned once, not once per chunk.
    scanned: usize,
    /// The previous chunk ended in `\r`: a `\n` opening the next chunk belongs to
    /// that line ending, not a new (blank) line.
    skip_lf: bool,
    /// No line has been taken yet: a byte order mark may still open the stream.
    at_start: bool,
    /// The body has ended; what was left in `buf` has been discarded.
    eof: bool,
    failed: Option<TransportError>,
    // The event being assembled.
    data: String,
    event: Option<String>,
    id: Option<String>,
    last_event_id: String,
    retry: Option<u64>,
    events: usize,
    max_frame: usize,
    max_events: usize,
    max_duration: Duration,
    deadline: Instant,
}

impl std::fmt::Debug for SseReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseReader")
            .field("status", &self.status)
            .field("events", &self.events)
            .field("buffered", &self.buf.len())
            .field("eof", &self.eof)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl SseReader {
    /// Wraps `resp`; the duration limit counts from `resp.started`, when the
    /// request was sent, not from now.
    pub fn new(resp: StreamingResponse, limits: &Limits) -> Self {
        let started = Instant::from_std(resp.started);
        Self {
            status: resp.status,
            headers: resp.headers,
            body: resp.body,
            buf: BytesMut::new(),
            scanned: 0,
            skip_lf: false,
            at_start: true,
            eof: false,
            failed: None,
            data: String::new(),
            event: None,
            id: None,
            last_event_id: String::new(),
            retry: None,
            events: 0,
            max_frame: limits.sse_max_frame_bytes,
            max_events: limits.sse_max_events,
            max_duration: limits.sse_max_duration,
            // A duration too large to add means no deadline worth enforcing; a
            // year stands in for it.
            deadline: started
                .checked_add(limits.sse_max_duration)
                .unwrap_or_else(|| started + Duration::from_secs(365 * 24 * 3600)),
        }
    }

    /// HTTP status of the response.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Response headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// Events returned so far.
    pub fn events_read(&self) -> usize {
        self.events
    }

    /// The stream's last event ID as a browser would track it: the most recent
    /// `id:` field seen, carried across events; empty when none was sent (or the
    /// server reset it with an empty `id:`).
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// The reconnection time in milliseconds from the last valid `retry:` field.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry
    }

    /// The next event; `Ok(None)` when the stream ended cleanly. An event not
    /// closed by a blank line before the end is discarded, as the standard says.
    ///
    /// Errors: [`TransportError::TooLarge`] for a line or an event's data over
    /// `sse_max_frame_bytes`; [`TransportError::Protocol`] for more than
    /// `sse_max_events` events or invalid UTF-8; [`TransportError::Timeout`] when
    /// more bytes are needed after `sse_max_duration`; and any error of the body.
    pub async fn next_event(&mut self) -> Result<Option<SseEvent>, TransportError> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        let result = self.advance().await;
        if let Err(err) = &result {
            self.failed = Some(err.clone());
            // Nothing more is read, so drop what is held.
            self.buf = BytesMut::new();
            self.scanned = 0;
            self.data = String::new();
        }
        result
    }

    async fn advance(&mut self) -> Result<Option<SseEvent>, TransportError> {
        loop {
            while let Some(line) = self.take_line()? {
                if let Some(event) = self.process_line(&line)? {
                    if self.events >= self.max_events {
                        return Err(TransportError::Protocol(format!(
                            "event stream exceeds the {}-event limit",
                            self.max_events
                        )));
                    }
                    self.events += 1;
                    return Ok(Some(event));
                }
            }
            if self.eof {
                return Ok(None);
            }
            // Checked before each read as well as by the timer: a target that always
            // has bytes ready (a flood of comments, say) would otherwise never let
            // the timer win.
            if Instant::now() >= self.deadline {
                return Err(TransportError::Timeout(self.max_duration));
            }
            match tokio::time::timeout_at(self.deadline, self.body.next()).await {
                Err(_) => return Err(TransportError::Timeout(self.max_duration)),
                Ok(None) => {
                    // Per the standard, a partial line and an undispatched event are dropped.
                    self.eof = true;
                    self.buf = BytesMut::new();
                    self.scanned = 0;
                    self.data = String::new();
                    self.event = None;
                    self.id = None;
                }
                Ok(Some(Err(err))) => return Err(err),
                Ok(Some(Ok(chunk))) => self.push(&chunk),
            }
        }
    }

    fn push(&mut self, mut chunk: &[u8]) {
        if self.skip_lf && !chunk.is_empty() {
            self.skip_lf = false;
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete line from the buffer, without its terminator.
    fn take_line(&mut self) -> Result<Option<String>, TransportError> {
        let Some(offset) = self.buf[self.scanned..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        else {
            self.scanned = self.buf.len();
            if self.buf.len() > self.max_frame.saturating_add(DATA_PREFIX_BYTES) {
                return Err(TransportError::TooLarge {
                    limit: self.max_frame,
                });
            }
            return Ok(None);
        };
        let end = self.scanned + offset;
        self.scanned = 0;
        let line = self.buf.split_to(end);
        let terminator = self.buf[0];
        self.buf.advance(1);
        if terminator == b'\r' {
            match self.buf.first() {
                Some(b'\n') => self.buf.advance(1),
                Some(_) => {}
                // The `\n` of a `\r\n` may be the first byte of the next chunk.
                None => self.skip_lf = true,
            }
        }
        let mut line = String::from_utf8(line.to_vec()).map_err(|e| {
            TransportError::Protocol(format!(
                "event stream is not valid UTF-8 (at byte {} of a line)",
                e.utf8_error().valid_up_to()
            ))
        })?;
        if std::mem::take(&mut self.at_start) && line.starts_with(BOM) {
            line.drain(..BOM.len());
        }
        Ok(Some(line))
    }

    /// Applies one line to the event being assembled; a blank line dispatches it.
    fn process_line(&mut self, line: &str) -> Result<Option<SseEvent>, TransportError> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        // A comment (a line opening with `:`) has the empty field name, which
        // matches no field below and is ignored like any unknown field.
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        // Data lines are capped by what they add to the event; any other line by
        // its own length: a comment or an unknown field is as much a flood.
        if field != "data" && line.len() > self.max_frame {
            return Err(TransportError::TooLarge {
                limit: self.max_frame,
            });
        }
        match field {
            "data" => {
                // The data held is the lines so far joined by `\n`, the joining
                // `\n` counted: exactly what the event will carry.
                let joined = if self.data.is_empty() { 0 } else { 1 };
                if self.data.len() + joined + value.len() > self.max_frame {
                    return Err(TransportError::TooLarge {
                        limit: self.max_frame,
                    });
                }
                // A `data` line with an empty value still makes an event: track
                // presence with a trailing `\n`, stripped at dispatch as the
                // standard does.
                self.data.push_str(value);
                self.data.push('\n');
            }
            "event" => self.event = Some(value.to_owned()),
            // The standard ignores an id containing NUL.
            "id" if !value.contains('\0') => {
                self.id = Some(value.to_owned());
                value.clone_into(&mut self.last_event_id);
            }
            // Only ASCII digits count (`parse` alone would take a `+`); digits too
            // many for a u64 are ignored like any other invalid value.
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take().filter(|e| !e.is_empty());
        let id = self.id.take();
        if self.data.is_empty() {
            // No data line: nothing is dispatched and the event type is reset.
            return None;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        Some(SseEvent { event, data, id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant as StdInstant;

    fn limits() -> Limits {
        Limits {
            sse_max_frame_bytes: 64,
            sse_max_events: 100,
            ..Limits::default()
        }
    }

    fn response(chunks: Vec<Result<Bytes, TransportError>>) -> StreamingResponse {
        StreamingResponse {
            status: 200,
            headers: HeaderMap::new(),
            body: futures::stream::iter(chunks).boxed(),
            started: StdInstant::now(),
        }
    }

    fn reader(chunks: &[&[u8]], limits: &Limits) -> SseReader {
        let chunks = chunks
            .iter()
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        SseReader::new(response(chunks), limits)
    }

    async fn all(mut r: SseReader) -> Result<Vec<SseEvent>, TransportError> {
        let mut out = Vec::new();
        while let Some(ev) = r.next_event().await? {
            out.push(ev);
        }
        Ok(out)
    }

    fn ev(event: Option<&str>, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.map(Into::into),
            data: data.into(),
            id: id.map(Into::into),
        }
    }

    /// Every way of cutting `input` into two and three chunks gives `expected`.
    async fn same_at_every_split(input: &[u8], expected: &[SseEvent], limits: &Limits) {
        let whole = all(reader(&[input], limits)).await.expect("whole input");
        assert_eq!(whole, expected, "whole input");
        for i in 0..=input.len() {
            let got = all(reader(&[&input[..i], &input[i..]], limits))
                .await
                .expect("two chunks");
            assert_eq!(got, expected, "split at {i}");
            for j in i..=input.len() {
                let got = all(reader(&[&input[..i], &input[i..j], &input[j..]], limits))
                    .await
                    .expect("three chunks");
                assert_eq!(got, expected, "split at {i} and {j}");
            }
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(
            all(reader(&bytes, limits)).await.expect("bytes"),
            expected,
            "byte by byte"
        );
    }

    #[tokio::test]
    async fn parses_fields_with_every_line_ending_at_every_split() {
        let expected = [
            ev(None, "one", None),
            ev(Some("ping"), "a\nb", Some("7")),
            ev(None, "", None),
            ev(None, " spaced", None),
        ];
        for eol in ["\n", "\r\n", "\r"] {
            let text = [
                "data: one",
                "",
                ": a comment",
                "event: ping",
                "id: 7",
                "data:a",
                "data: b",
                "",
                "data",
                "",
                "data:  spaced",
                "",
                "",
            ]
            .join(eol);
            same_at_every_split(text.as_bytes(), &expected, &limits()).await;
        }
    }

    #[tokio::test]
    async fn crlf_split_between_chunks_is_one_line_ending() {
        // A `\r` ending one chunk and a `\n` opening the next: one line end, so
        // `data: a` and `data: b` stay in one event.
        let got = all(reader(
            &[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"],
            &limits(),
        ))
        .await
        .expect("events");
        assert_eq!(got, [ev(None, "a\nb", None)]);
        // A lone `\r` then a chunk not opening with `\n`.
        let got = all(reader(&[b"data: a\r", b"\r", b"data: b\r\r"], &limits()))
            .await
            .expect("events");
        assert_eq!(got, [ev(None, "a", None), ev(None, "b", None)]);
        // An empty chunk between `\r` and `\n` changes nothing.
        let got = all(reader(&[b"data: a\r", b"", b"\n\r\n"], &limits()))
            .await
            .expect("events");
        assert_eq!(got, [ev(None, "a", None)]);
    }

    #[tokio::test]
    async fn comments_unknown_fields_and_empty_events_are_skipped() {
        let input = b":hello\n: ok\nfoo: bar\nData: no\n\nevent: lonely\n\ndata: x\n\n";
        let got = all(reader(&[input], &limits())).await.expect("events");
        // `Data` is not `data`; an event with no data is not dispatched and its
        // type does not leak into the next.
        assert_eq!(got, [ev(None, "x", None)]);
    }

    #[tokio::test]
    async fn only_one_space_after_the_colon_is_stripped() {
        let got = all(reader(&[b"data:   three\nevent:\n\n"], &limits()))
            .await
            .expect("events");
        assert_eq!(got, [ev(None, "  three", None)]);
    }

    #[tokio::test]
    async fn unterminated_final_event_is_discarded() {
        let got = all(reader(&[b"data: kept\n\ndata: lost\n"], &limits()))
            .await
            .expect("events");
        assert_eq!(got, [ev(None, "kept", None)]);
        let got = all(reader(&[b"data: kept\n\ndata: lost"], &limits()))
            .await
            .expect("events");
        assert_eq!(got, [ev(None, "kept", None)]);
    }

    #[tokio::test]
    async fn leading_bom_is_stripped_once() {
        let got = all(reader(
            &[b"\xef\xbb", b"\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n"],
            &limits(),
        ))
        .await
        .expect("events");
        // The second BOM makes the field name `\u{feff}data`, an unknown field.
        assert_eq!(got, [ev(None, "a", None)]);
    }

    #[tokio::test]
    async fn id_and_retry_follow_the_standard() {
        let mut r = reader(
            &[b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: x\0y\nretry: 1500\nretry: 2s\ndata: d\n\n"],
            &limits(),
        );
        let a = r.next_event().await.expect("ok").expect("a");
        assert_eq!((a.id.as_deref(), r.last_event_id()), (Some("1"), "1"));
        let b = r.next_event().await.expect("ok").expect("b");
        assert_eq!((b.id.as_deref(), r.last_event_id()), (None, "1"));
        let c = r.next_event().await.expect("ok").expect("c");
        assert_eq!((c.id.as_deref(), r.last_event_id()), (Some(""), ""));
        let d = r.next_event().await.expect("ok").expect("d");
        assert_eq!((d.id.as_deref(), r.last_event_id()), (None, ""));
        assert_eq!(r.retry_ms(), Some(1500));
        assert_eq!(r.next_event().await, Ok(None));
        assert_eq!(r.next_event().await, Ok(None), "stays ended");
    }

    #[tokio::test]
    async fn data_at_the_limit_is_accepted_and_one_byte_more_is_refused() {
        let limits = limits();
        let exact = "x".repeat(64);
        let input = format!("data: {exact}\n\n");
        same_at_every_split(input.as_bytes(), &[ev(None, &exact, None)], &limits).await;

        let over = format!("data: {}\n\n", "x".repeat(65));
        let err = all(reader(&[over.as_bytes()], &limits))
            .await
            .expect_err("too large");
        assert_eq!(err, TransportError::TooLarge { limit: 64 });
    }

    #[tokio::test]
    async fn accumulated_data_lines_are_capped_with_their_newlines() {
        // 8 lines of 7 bytes joined by 7 newlines is 63 bytes: accepted.
        let ok = "data: 1234567\n".repeat(8) + "\n";
        let got = all(reader(&[ok.as_bytes()], &limits()))
            .await
            .expect("fits");
        assert_eq!(got[0].data.len(), 63);
        // A ninth line: 71 bytes.
        let over = "data: 1234567\n".repeat(9) + "\n";
        let err = all(reader(&[over.as_bytes()], &limits()))
            .await
            .expect_err("too large");
        assert_eq!(err, TransportError::TooLarge { limit: 64 });
    }

    #[tokio::test]
    async fn unterminated_line_over_the_limit_is_refused_before_it_ends() {
        // The stream never ends the line; the reader must give up, not wait.
        let chunks = vec![Ok(Bytes::from(vec![b'x'; 40])); 3];
        let body = futures::stream::iter(chunks)
            .chain(futures::stream::pending())
            .boxed();
        let resp = StreamingResponse {
            body,
            ..response(Vec::new())
        };
        let mut r = SseReader::new(resp, &limits());
        assert_eq!(
            r.next_event().await,
            Err(TransportError::TooLarge { limit: 64 })
        );
        assert_eq!(
            r.next_event().await,
            Err(TransportError::TooLarge { limit: 64 }),
            "sticky"
        );
    }

    #[tokio::test]
    async fn long_comment_line_is_refused() {
        let line = format!(":{}\n\n", "c".repeat(64));
        let err = all(reader(&[line.as_bytes()], &limits()))
            .await
            .expect_err("too large");
        assert_eq!(err, TransportError::TooLarge { limit: 64 });
    }

    #[tokio::test]
    async fn more_events_than_the_limit_is_a_protocol_error() {
        let limits = Limits {
            sse_max_events: 2,
            ..limits()
        };
        let got = all(reader(&[b"data: 1\n\ndata: 2\n\n"], &limits))
            .await
            .expect("two fit");
        assert_eq!(got.len(), 2);

        let mut r = reader(&[b"data: 1\n\ndata: 2\n\ndata: 3\n\n"], &limits);
        assert!(r.next_event().await.expect("1").is_some());
        assert!(r.next_event().await.expect("2").is_some());
        match r.next_event().await {
            Err(TransportError::Protocol(msg)) => assert!(msg.contains("2-event limit"), "{msg}"),
            other => panic!("expected the event limit, got {other:?}"),
        }
        assert_eq!(
            r.events_read(),
            2,
            "the refused event is not counted as read"
        );
    }

    #[tokio::test]
    async fn invalid_utf8_is_a_protocol_error() {
        let err = all(reader(&[b"data: ok\n\ndata: \xff\xfe\n\n"], &limits()))
            .await
            .expect_err("bad");
        assert!(matches!(err, TransportError::Protocol(_)), "{err:?}");
        // A multi-byte character split across chunks is fine.
        let got = all(reader(&[b"data: \xc3", b"\xa9\n\n"], &limits()))
            .await
            .expect("split char");
        assert_eq!(got, [ev(None, "\u{e9}", None)]);
    }

    #[tokio::test]
    async fn body_errors_are_passed_through() {
        let chunks = vec![
            Ok(Bytes::from_static(b"data: a\n\n")),
            Err(TransportError::Io("reset".into())),
        ];
        let mut r = SseReader::new(response(chunks), &limits());
        assert_eq!(r.next_event().await, Ok(Some(ev(None, "a", None))));
        assert_eq!(
            r.next_event().await,
            Err(TransportError::Io("reset".into()))
        );
    }

    #[tokio::test]
    async fn silent_stream_is_cut_at_the_duration_limit() {
        let limits = Limits {
            sse_max_duration: Duration::from_millis(100),
            ..limits()
        };
        let body = futures::stream::iter([Ok(Bytes::from_static(b"data: a\n\n"))])
            .chain(futures::stream::pending())
            .boxed();
        let resp = StreamingResponse {
            body,
            ..response(Vec::new())
        };
        let mut r = SseReader::new(resp, &limits);
        assert_eq!(r.next_event().await, Ok(Some(ev(None, "a", None))));
        assert_eq!(
            r.next_event().await,
            Err(TransportError::Timeout(Duration::from_millis(100)))
        );
    }

    #[tokio::test]
    async fn comment_flood_is_cut_at_the_duration_limit() {
        // Bytes always ready, never an event: the timer alone would never win,
        // since a ready body is polled before the timer is looked at.
        let limits = Limits {
            sse_max_duration: Duration::from_millis(50),
            ..limits()
        };
        let body =
            futures::stream::repeat_with(|| Ok(Bytes::from_static(b": keepalive\n"))).boxed();
        let resp = StreamingResponse {
            body,
            ..response(Vec::new())
        };
        let mut r = SseReader::new(resp, &limits);
        assert_eq!(
            r.next_event().await,
            Err(TransportError::Timeout(Duration::from_millis(50)))
        );
    }

    #[test]
    fn recognises_event_stream_content_types() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(v),
            );
            is_event_stream(&h)
        };
        assert!(with("text/event-stream"));
        assert!(with("Text/Event-Stream; charset=utf-8"));
        assert!(with(" text/event-stream ;charset=utf-8"));
        assert!(!with("application/json"));
        assert!(!with("text/event-streams"));
        assert!(!with("text/plain; x=text/event-stream"));
        assert!(!is_event_stream(&HeaderMap::new()));
    }
}
