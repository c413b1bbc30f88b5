//! `GET /api/v1/runs/{id}/events`: server-sent progress of one run.
//!
//! Every event comes from the store, so a page served by one process shows a run
//! that a worker in another process executes. A subscriber first receives what
//! already happened, then each new finding, then the verdict, and the stream
//! ends. Event ids are finding sequence numbers, so a client reconnecting with
//! `Last-Event-ID` resumes where it stopped.

use super::AppState;
use super::api::ClientAddr;
use super::api::{finding_json, run_json};
use super::error::{ApiResult, WebError};
use super::extract::ApiPath;
use super::openapi::{InternalError, NotFound, TooManyStreams};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::{Stream, StreamExt};
use serde_json::json;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use uuid::Uuid;

/// The headers of a progress request (documentation only: the handler reads them itself).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct ResumeHeaders {
    /// Resume after this finding `seq`: the stream replays only later findings.
    #[param(rename = "Last-Event-ID", value_type = String, required = false)]
    pub last_event_id: Option<String>,
}

/// The stream's events: `finding` (a finding, as in a run's `findings`; the
/// event id is its `seq`), `restart` (a retry starts the findings over:
/// `{"attempt": n}`), `verdict` (the finished run, without findings; the
/// stream ends) and `error`.
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}/events",
    tag = "runs",
    summary = "Live progress of a run",
    params(
        ("id" = String, Path, description = "The run's id (a UUID)"),
        ResumeHeaders,
    ),
    responses(
        (status = 200, description = "Server-sent events: what already happened, then each new \
            finding, then the verdict. While the run is queued, a `queue` event says its place and \
            what it waits for (the run resource's `queue`), each time that changes, and `null` \
            once it leaves the queue; `restart` when an attempt starts over.",
            content_type = "text/event-stream", body = String),
        (status = 404, response = NotFound),
        (status = 429, response = TooManyStreams),
        (status = 500, response = InternalError),
    )
)]
pub async fn run_events(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let id = Uuid::parse_str(&id)
        .map_err(|_| WebError::NotFound(format!("no run has the id `{id}`")))?;
    // Each stream holds a connection and wakes on every event of the service,
    // so one address follows a bounded number; the slot is given back when the
    // stream ends or the client goes away.
    let slot = state
        .streams
        .take(client)
        .map_err(|_| WebError::TooManyStreams(state.streams.per_client_limit()))?;
    let run = state
        .store
        .get_run(id)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no run has the id `{id}`")))?;
    let resume_after: i64 = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1);

    let stream = async_stream(state, run.id, run.attempts, resume_after).map(move |event| {
        let _held = &slot;
        event
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

fn async_stream(
    state: AppState,
    run_id: Uuid,
    attempt: i32,
    resume_after: i64,
) -> impl Stream<Item = Result<Event, Infallible>> {
    // Subscribe before the first read so no change between the read and the wait is missed.
    let wake = state.events.subscribe();
    futures::stream::unfold(
        Some((
            state,
            wake,
            attempt,
            resume_after,
            Vec::<Event>::new(),
            None,
        )),
        move |st| async move {
            let (state, mut wake, mut attempt, mut last_seq, mut pending, mut queued) = st?;
            loop {
                if let Some(ev) = pending.pop() {
                    return Some((
                        Ok(ev),
                        Some((state, wake, attempt, last_seq, pending, queued)),
                    ));
                }
                // The response began with a 200 long ago, so a failure here can
                // no longer be a status: it is logged and the stream ends with an
                // `error` event, which tells the client to stop rather than wait
                // for a verdict that this stream would never deliver.
                let run = match state.store.get_run(run_id).await {
                    Ok(Some(run)) => run,
                    Ok(None) => return Some((Ok(read_failed("the run could not be read")), None)),
                    Err(e) => {
                        tracing::error!(run = %run_id, error = %e, "reading a run for its progress stream failed");
                        return Some((Ok(read_failed("the run could not be read")), None));
                    }
                };
                if run.attempts != attempt {
                    // A retry starts the findings over; tell the client before replaying them.
                    attempt = run.attempts;
                    last_seq = -1;
                    let ev = Event::default()
                        .event("restart")
                        .data(json!({"attempt": attempt}).to_string());
                    return Some((
                        Ok(ev),
                        Some((state, wake, attempt, last_seq, pending, queued)),
                    ));
                }
                // An unreadable page of findings is not "no new findings": taken
                // as such, the stream would announce a verdict without them.
                let findings = match state.store.findings(run_id, last_seq).await {
                    Ok(findings) => findings,
                    Err(e) => {
                        tracing::error!(run = %run_id, error = %e, "reading findings for a progress stream failed");
                        return Some((
                            Ok(read_failed("the run's findings could not be read")),
                            None,
                        ));
                    }
                };
                if !findings.is_empty() {
                    // `pending` is popped from the end, so it holds events newest first.
                    for f in findings.iter().rev() {
                        pending.push(
                            Event::default()
                                .event("finding")
                                .id(f.seq.to_string())
                                .data(finding_json(f).to_string()),
                        );
                    }
                    last_seq = findings.last().map_or(last_seq, |f| f.seq);
                    continue;
                }
                // A queued run says where it stands, each time that changes
                // (`null` once it has left the queue).
                let place = match super::api::queue_view(&state, &run).await {
                    Ok(place) => place,
                    Err(e) => {
                        tracing::warn!(run = %run_id, error = %e, "reading a run's place in the queue failed");
                        queued.clone()
                    }
                };
                if place != queued {
                    let ev = Event::default()
                        .event("queue")
                        .data(serde_json::to_string(&place).unwrap_or_else(|_| "null".into()));
                    queued = place;
                    return Some((
                        Ok(ev),
                        Some((state, wake, attempt, last_seq, pending, queued)),
                    ));
                }
                if run.status.is_finished() {
                    let doc = run_json(&run, None);
                    let ev = Event::default().event("verdict").data(doc.to_string());
                    return Some((Ok(ev), None));
                }
                // Nothing new: wait for a wake-up about this run, or poll the store.
                let poll = tokio::time::sleep(state.progress_poll);
                tokio::pin!(poll);
                loop {
                    tokio::select! {
                        _ = &mut poll => break,
                        msg = wake.recv() => match msg {
                            Ok(changed) if changed == run_id => break,
                            Ok(_) => {}
                            Err(RecvError::Lagged(_)) => break,
                            Err(RecvError::Closed) => { poll.as_mut().await; break }
                        },
                    }
                }
            }
        },
    )
}

/// The last event of a stream that can no longer read the store.
fn read_failed(why: &'static str) -> Event {
    Event::default().event("error").data(why)
}
