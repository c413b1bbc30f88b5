//! The SSE streams of one HTTP session, kept so that a client can resume
//! one: every stream (a POST's answer or the GET stream) has a number, each
//! event an id `<stream>-<seq>`, and a GET with `Last-Event-ID` replays what
//! followed that event on that stream, then goes on with it if it is still
//! open (streamable-http, "Resumability and Redelivery").

use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Events a stream keeps for replay.
const BACKLOG: usize = 256;
/// Streams a session remembers; the oldest are forgotten first. More than
/// one protocheck run opens: answering every request over SSE (`--sse`),
/// a run with 16 requests in flight opened over 64 streams while one of its
/// rules waited to resume a stream cut early, which was forgotten by then
/// (the resumption then opened a new GET stream instead).
const MAX_STREAMS: usize = 1024;

/// One event to write: its id and its message (`None` for the priming
/// event, whose data is empty).
pub(super) type Event = (String, Option<Value>);

#[derive(Debug, Default)]
struct Stream {
    next: u64,
    backlog: VecDeque<(u64, Value)>,
    /// The connection now carrying the stream; dropped when it ends.
    live: Option<UnboundedSender<Event>>,
    /// The stream has sent all it will (a POST's answer was sent).
    done: bool,
}

#[derive(Debug, Default)]
pub(super) struct Streams {
    next: u64,
    streams: BTreeMap<u64, Stream>,
    /// The stream of the open GET, which server-initiated messages take.
    standalone: Option<u64>,
}

impl Streams {
    /// Opens a new stream; its receiver starts with the priming event
    /// (an id and empty data) when `prime` is set.
    pub(super) fn open(
        &mut self,
        standalone: bool,
        prime: bool,
    ) -> (u64, UnboundedReceiver<Event>) {
        self.next += 1;
        let number = self.next;
        let (tx, rx) = unbounded_channel();
        if prime {
            let _ = tx.send((format!("{number}-0"), None));
        }
        self.streams.insert(
            number,
            Stream {
                live: Some(tx),
                ..Stream::default()
            },
        );
        if standalone && let Some(old) = self.standalone.replace(number) {
            self.close(old);
        }
        while self.streams.len() > MAX_STREAMS {
            self.streams.pop_first();
        }
        (number, rx)
    }

    /// Sends `message` on stream `number` (kept for replay).
    pub(super) fn publish(&mut self, number: u64, message: Value) {
        let Some(stream) = self.streams.get_mut(&number) else {
            return;
        };
        stream.next += 1;
        let seq = stream.next;
        if stream.backlog.len() >= BACKLOG {
            stream.backlog.pop_front();
        }
        stream.backlog.push_back((seq, message.clone()));
        let sent = stream.live.as_ref().is_some_and(|live| {
            live.send((format!("{number}-{seq}"), Some(message)))
                .is_ok()
        });
        if !sent {
            // The client went away: the stream waits for a resumption.
            stream.live = None;
        }
    }

    /// Sends a server-initiated message on the GET stream, if one is open.
    pub(super) fn publish_standalone(&mut self, message: Value) -> bool {
        match self.standalone {
            Some(number) => {
                self.publish(number, message);
                true
            }
            None => false,
        }
    }

    /// Ends stream `number`: its connection closes after what it was sent.
    pub(super) fn close(&mut self, number: u64) {
        if let Some(stream) = self.streams.get_mut(&number) {
            stream.done = true;
            stream.live = None;
        }
    }

    /// Resumes after the event `last` (`<stream>-<seq>`): the events that
    /// followed it, then the rest of the stream if it is still open. `None`
    /// if no stream of this session has that event id. With `mixed` (the
    /// fault of MCP25-HTP-011) the events of every other stream that came
    /// later in their own order are replayed too.
    pub(super) fn resume(&mut self, last: &str, mixed: bool) -> Option<UnboundedReceiver<Event>> {
        let (number, seq) = last.split_once('-')?;
        let (number, seq) = (number.parse::<u64>().ok()?, seq.parse::<u64>().ok()?);
        let (tx, rx) = unbounded_channel();
        if mixed {
            for (other, stream) in self.streams.iter().filter(|(n, _)| **n != number) {
                for (s, message) in stream.backlog.iter().filter(|(s, _)| *s > seq) {
                    let _ = tx.send((format!("{other}-{s}"), Some(message.clone())));
                }
            }
        }
        let stream = self.streams.get_mut(&number)?;
        if seq > stream.next {
            return None;
        }
        for (s, message) in stream.backlog.iter().filter(|(s, _)| *s > seq) {
            let _ = tx.send((format!("{number}-{s}"), Some(message.clone())));
        }
        if !stream.done {
            // The resumed connection replaces any other carrying this stream.
            stream.live = Some(tx);
        }
        Some(rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn drain(rx: &mut UnboundedReceiver<Event>) -> Vec<String> {
        let mut ids = Vec::new();
        while let Ok((id, _)) = rx.try_recv() {
            ids.push(id);
        }
        ids
    }

    #[test]
    fn resumption_replays_what_followed_on_that_stream() {
        let mut streams = Streams::default();
        let (get, mut rx) = streams.open(true, true);
        let (post, _post_rx) = streams.open(false, true);
        for i in 0..3 {
            streams.publish(get, json!(i));
        }
        streams.publish(post, json!("other stream"));
        assert_eq!(drain(&mut rx), ["1-0", "1-1", "1-2", "1-3"]);
        let mut resumed = streams.resume("1-1", false).expect("known id");
        assert_eq!(drain(&mut resumed), ["1-2", "1-3"]);
        streams.publish(get, json!("later"));
        assert_eq!(drain(&mut resumed), ["1-4"]);
        assert!(streams.resume("9-1", false).is_none());
        assert!(streams.resume("1-99", false).is_none());
        assert!(streams.resume("garbage", false).is_none());
        let mut mixed = streams.resume("1-0", true).expect("known id");
        assert!(drain(&mut mixed).contains(&"2-1".to_owned()));
    }
}
