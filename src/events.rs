//! In-process wake-ups for progress streams. The store is the source of truth:
//! a progress stream reads findings from it, and this bus only tells streams in
//! the same process to look now rather than at their next poll. Streams watching
//! a run that a worker in another process executes fall back to polling.

use tokio::sync::broadcast;
use uuid::Uuid;

/// The events a webhook receiver can ask for, by their names on the wire
/// (`protocheck-event` and the JSON's `event`): a run ended; a run of a
/// watched target is worse than the run before it; or better again.
pub const RUN_FINISHED: &str = "run.finished";
pub const RUN_REGRESSED: &str = "run.regressed";
pub const RUN_RECOVERED: &str = "run.recovered";
/// Every event, in the order the API lists them.
pub const WEBHOOK_EVENTS: [&str; 3] = [RUN_FINISHED, RUN_REGRESSED, RUN_RECOVERED];

/// Capacity of the wake-up channel; a lagging receiver just polls the store.
const CAPACITY: usize = 1024;

#[derive(Clone)]
pub struct RunEvents {
    tx: broadcast::Sender<Uuid>,
}

impl Default for RunEvents {
    fn default() -> Self {
        Self::new()
    }
}

impl RunEvents {
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        Self { tx }
    }

    /// Something about `run` changed in the store (a finding, a status).
    pub fn changed(&self, run: Uuid) {
        // No receiver is not an error: nobody is watching.
        let _ = self.tx.send(run);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Uuid> {
        self.tx.subscribe()
    }
}
