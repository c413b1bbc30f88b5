//! A target's rate limit, as one run meets it.
//!
//! A server behind a rate limiter answers a burst with HTTP 429 (or 503) and
//! `Retry-After` (RFC 9110 §10.2.3, RFC 6585 §4). That answer is the limiter
//! speaking, not the server answering the probe: judging it would fail a
//! correct server for protocheck's own haste. So every request of a run goes
//! through one [`Throttle`]: such an answer is waited out as told (within the
//! run's deadline) and the request sent again, and from then on the run sends
//! at most [`GENTLE_CONCURRENCY`] requests side by side. Short waits (at most
//! [`PACE_WAIT`] each) are the target's pace, not the run's time: the run's
//! deadline moves later by them, up to [`WAIT_ALLOWANCE`] in all, so that a
//! server behind a limiter that asks for a second now and then gets the
//! verdict it gets without one, however busy protocheck's machine is. A
//! longer wait must fit the deadline as it stands. A wait that does not fit
//! is not taken: the request fails with [`TransportError::RateLimited`], and
//! its rule is not verified, never failed.
//!
//! Outside a run (no deadline set) nothing is waited for or resent.

use super::TransportError;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{Semaphore, SemaphorePermit};

/// Most requests a run has in flight once its target has asked it to wait: a
/// quarter of the default (`suite::context::DEFAULT_TARGET_CONCURRENCY`).
/// Not one at a time: a probe may hold a stream open while another request
/// of its check is what ends it.
pub const GENTLE_CONCURRENCY: usize = 4;

/// The longest single wait honoured whatever the deadline: a `Retry-After`
/// of an hour is a refusal for this run, not a pause.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// How much later a run may end for the short waits its target's rate limit
/// asked for (their sum, so waits taken side by side count each).
pub const WAIT_ALLOWANCE: Duration = Duration::from_secs(300);

/// The longest wait that moves the run's deadline (see [`WAIT_ALLOWANCE`]).
pub const PACE_WAIT: Duration = Duration::from_secs(5);

/// What a run has learned of its target's rate limit; shared by every clone
/// of the run's [`super::HttpClient`].
#[derive(Debug)]
pub struct Throttle {
    /// When the run ends; `None` outside a run.
    deadline: Option<Instant>,
    /// Set by the first answer that asked the run to wait.
    gentle: AtomicBool,
    /// Answers that asked the run to wait, and the waits taken (ms).
    asked: AtomicU64,
    waited_ms: AtomicU64,
    /// The waits of at most [`PACE_WAIT`] (ms), which move the deadline.
    paced_ms: AtomicU64,
    places: Semaphore,
}

/// What to do with an answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It is the server's answer.
    Answer,
    /// The limiter's: wait this long, then send the request again.
    Retry(Duration),
}

impl Throttle {
    pub fn new(deadline: Option<Instant>) -> Self {
        Self {
            deadline,
            gentle: AtomicBool::new(false),
            asked: AtomicU64::new(0),
            waited_ms: AtomicU64::new(0),
            paced_ms: AtomicU64::new(0),
            places: Semaphore::new(GENTLE_CONCURRENCY),
        }
    }

    /// A place for one request once the run has gone gentle; `None` (and no
    /// wait) before that, which is every run whose target never asked.
    pub async fn place(&self) -> Option<SemaphorePermit<'_>> {
        if !self.gentle.load(Ordering::Relaxed) {
            return None;
        }
        self.places.acquire().await.ok()
    }

    /// When the run must end: its deadline, later by the short waits its
    /// target asked for (at most [`WAIT_ALLOWANCE`]); `None` outside a run.
    pub fn deadline(&self) -> Option<Instant> {
        let paced = Duration::from_millis(self.paced_ms.load(Ordering::Relaxed));
        self.deadline.map(|d| d + paced.min(WAIT_ALLOWANCE))
    }

    /// Reads an answer's status and `Retry-After`: whether it is the
    /// limiter's and how long to wait, or the error of a wait that does not
    /// fit the run.
    pub fn judge(&self, status: u16, retry: Option<&str>) -> Result<Verdict, TransportError> {
        if !matches!(status, 429 | 503) {
            return Ok(Verdict::Answer);
        }
        let Some(deadline) = self.deadline else {
            return Ok(Verdict::Answer);
        };
        // A 503 without `Retry-After` is the server's own answer (an outage
        // is judged as one); a 429 always is the limiter's.
        let wait = match retry.and_then(|v| retry_after(v, SystemTime::now())) {
            Some(wait) => wait,
            None if status == 429 => Duration::from_secs(1),
            None => return Ok(Verdict::Answer),
        };
        let asked = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        self.gentle.store(true, Ordering::Relaxed);
        // The deadline as this wait, once taken, would leave it.
        let paced = Duration::from_millis(self.paced_ms.load(Ordering::Relaxed))
            + if wait <= PACE_WAIT {
                wait
            } else {
                Duration::ZERO
            };
        let deadline = deadline + paced.min(WAIT_ALLOWANCE);
        let left = deadline.saturating_duration_since(Instant::now());
        if wait > MAX_WAIT || wait >= left {
            return Err(TransportError::RateLimited {
                status,
                wait_s: wait.as_secs(),
                detail: format!(
                    "{} s before the run's deadline ({asked} answer(s) of this run asked it to wait)",
                    left.as_secs()
                ),
                resend_after: None,
            });
        }
        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        self.waited_ms.fetch_add(ms, Ordering::Relaxed);
        if wait <= PACE_WAIT {
            self.paced_ms.fetch_add(ms, Ordering::Relaxed);
        }
        Ok(Verdict::Retry(wait))
    }

    /// Answers that asked this run to wait, and the time waited in all.
    pub fn figures(&self) -> (u64, Duration) {
        (
            self.asked.load(Ordering::Relaxed),
            Duration::from_millis(self.waited_ms.load(Ordering::Relaxed)),
        )
    }
}

impl Default for Throttle {
    fn default() -> Self {
        Self::new(None)
    }
}

/// `Retry-After` (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date (a date
/// already past is no wait). `None` when absent or unreadable.
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than a u64 holds is "very long": capped by the caller.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ra(value: &str) -> Option<&str> {
        Some(value)
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").expect("date");
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:40 GMT", now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-1", now), None);
        assert_eq!(retry_after("", now), None);
        assert_eq!(
            retry_after("99999999999999999999999", now),
            Some(Duration::from_secs(u64::MAX))
        );
    }

    #[tokio::test]
    async fn a_wait_is_taken_within_the_deadline_and_the_run_goes_gentle() {
        let throttle = Throttle::new(Some(Instant::now() + Duration::from_secs(30)));
        assert!(throttle.place().await.is_none(), "not gentle before a 429");
        assert_eq!(throttle.judge(200, ra("1")), Ok(Verdict::Answer));
        // A 503 without Retry-After is an outage, judged as the answer.
        assert_eq!(throttle.judge(503, None), Ok(Verdict::Answer));
        assert_eq!(
            throttle.judge(429, ra("2")),
            Ok(Verdict::Retry(Duration::from_secs(2)))
        );
        assert_eq!(
            throttle.judge(503, ra("1")),
            Ok(Verdict::Retry(Duration::from_secs(1)))
        );
        assert_eq!(throttle.figures(), (2, Duration::from_secs(3)));
        let held: Vec<_> =
            futures::future::join_all((0..GENTLE_CONCURRENCY).map(|_| throttle.place())).await;
        assert!(held.iter().all(Option::is_some));
        assert!(
            throttle.places.try_acquire().is_err(),
            "at most {GENTLE_CONCURRENCY} at once"
        );
    }

    #[test]
    fn short_waits_move_the_deadline_up_to_the_allowance_and_long_ones_do_not() {
        let start = Instant::now() + Duration::from_secs(10);
        let throttle = Throttle::new(Some(start));
        assert_eq!(throttle.deadline(), Some(start));
        assert_eq!(
            throttle.judge(429, ra("2")),
            Ok(Verdict::Retry(Duration::from_secs(2)))
        );
        assert_eq!(throttle.deadline(), Some(start + Duration::from_secs(2)));
        // A long wait fits the deadline as it stands, and does not move it.
        assert_eq!(
            throttle.judge(429, ra("8")),
            Ok(Verdict::Retry(Duration::from_secs(8)))
        );
        assert_eq!(throttle.deadline(), Some(start + Duration::from_secs(2)));
        // The allowance bounds what short waits add.
        for _ in 0..(WAIT_ALLOWANCE.as_secs() / PACE_WAIT.as_secs() + 5) {
            let _ = throttle.judge(429, ra("5"));
        }
        assert_eq!(throttle.deadline(), Some(start + WAIT_ALLOWANCE));
    }

    #[test]
    fn a_wait_past_the_deadline_is_rate_limited_and_outside_a_run_nothing_waits() {
        let throttle = Throttle::new(Some(Instant::now() + Duration::from_secs(5)));
        assert!(matches!(
            throttle.judge(429, ra("30")),
            Err(TransportError::RateLimited {
                status: 429,
                wait_s: 30,
                resend_after: None,
                ..
            })
        ));
        assert!(matches!(
            throttle.judge(429, ra("3600")),
            Err(TransportError::RateLimited { .. })
        ));
        assert_eq!(Throttle::default().judge(429, ra("1")), Ok(Verdict::Answer));
    }
}
