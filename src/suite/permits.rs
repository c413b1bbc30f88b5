//! The requests one run has in flight to its target: at most a fixed number
//! (`RunContext::target_concurrency`), and when requests wait for a place,
//! those of a check already under way go first.
//!
//! A run starts most of its rules at once, and their first requests fill
//! every place; a rule that needs several round trips one after another (a
//! session of its own, then a stream watched for a window) would otherwise
//! queue each of its later requests behind every other rule's first, and the
//! run would last as long as its longest chain times the queue. A check
//! runs [`under_way`]: once one of its requests has been answered, its next
//! ones are urgent, and a place that frees goes to the oldest urgent request,
//! else to the oldest other. The target sees the same number of requests in
//! flight; only their order changes, which over HTTP was never fixed.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;

tokio::task_local! {
    /// The answers the check being polled has had so far.
    static ANSWERED: Arc<AtomicUsize>;
}

/// Runs `check` as one check under way: its requests are urgent once one of
/// them has been answered (see the module's documentation).
pub(crate) async fn under_way<F: Future>(check: F) -> F::Output {
    ANSWERED.scope(Arc::new(AtomicUsize::new(0)), check).await
}

/// At most `n` requests in flight; cheap to clone, clones share the places.
#[derive(Debug, Clone)]
pub(crate) struct Permits {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// Every request waits in one queue, first come first served (see
    /// [`Permits::first_come`]).
    first_come: bool,
    free: usize,
    urgent: VecDeque<oneshot::Sender<Permit>>,
    other: VecDeque<oneshot::Sender<Permit>>,
}

/// One place, held while a request is in flight; dropping it frees the place
/// and counts an answer for the check that held it.
#[derive(Debug)]
pub(crate) struct Permit {
    /// `None` for a permit that holds no place.
    state: Option<Arc<Mutex<State>>>,
    answered: Option<Arc<AtomicUsize>>,
}

impl Permits {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                free: n.max(1),
                ..State::default()
            })),
        }
    }

    /// At most `n` requests in flight, served in the order they asked
    /// whether or not their check is under way: for an engine whose verdicts
    /// rest on its requests' order in time (see the MCP 2025-11-25 engine).
    pub(crate) fn first_come(n: usize) -> Self {
        let permits = Self::new(n);
        permits.lock().first_come = true;
        permits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Waits for a place. Urgent when the check being polled (see
    /// [`under_way`]) has had an answer.
    pub(crate) async fn acquire(&self) -> Permit {
        let answered = ANSWERED.try_with(Arc::clone).ok();
        let urgent = answered
            .as_ref()
            .is_some_and(|n| n.load(Ordering::Relaxed) > 0);
        let waiting = {
            let mut state = self.lock();
            if state.free > 0 {
                state.free -= 1;
                None
            } else {
                let (tx, rx) = oneshot::channel();
                if urgent && !state.first_come {
                    state.urgent.push_back(tx);
                } else {
                    state.other.push_back(tx);
                }
                Some(rx)
            }
        };
        let mut permit = match waiting {
            None => Permit {
                state: Some(Arc::clone(&self.state)),
                answered: None,
            },
            // The sender lives in the state this future holds: it is never
            // dropped unsent. Should it be, the request goes without a place
            // (as a closed semaphore did), rather than never.
            Some(rx) => rx.await.unwrap_or(Permit {
                state: None,
                answered: None,
            }),
        };
        permit.answered = answered;
        permit
    }

    /// Places free now (for tests).
    #[cfg(test)]
    fn free(&self) -> usize {
        self.lock().free
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // A poisoned lock only means a thread panicked while it held it; the
    // counts and queues are still whole.
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(n) = &self.answered {
            n.fetch_add(1, Ordering::Relaxed);
        }
        let Some(state) = self.state.take() else {
            return;
        };
        // Hands the place to the oldest urgent waiter, else the oldest
        // other; a waiter that gave up (its receiver dropped) is skipped.
        loop {
            let next = {
                let mut queues = lock(&state);
                match queues
                    .urgent
                    .pop_front()
                    .or_else(|| queues.other.pop_front())
                {
                    Some(next) => next,
                    None => {
                        queues.free += 1;
                        return;
                    }
                }
            };
            let handed = Permit {
                state: Some(Arc::clone(&state)),
                answered: None,
            };
            if let Err(mut back) = next.send(handed) {
                // The place stays with this loop: the permit that came back
                // must not free it a second time.
                back.state = None;
            } else {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn no_more_than_n_at_once_and_every_place_comes_back() {
        let permits = Permits::new(2);
        let a = permits.acquire().await;
        let b = permits.acquire().await;
        assert_eq!(permits.free(), 0);
        let third = tokio::time::timeout(Duration::from_millis(50), permits.acquire()).await;
        assert!(third.is_err(), "a third place was given");
        drop(a);
        let c = tokio::time::timeout(Duration::from_secs(5), permits.acquire())
            .await
            .expect("a freed place is given");
        drop((b, c));
        assert_eq!(permits.free(), 2);
    }

    #[tokio::test]
    async fn a_check_under_way_goes_before_checks_not_yet_answered() {
        let permits = Permits::new(1);
        let held = permits.acquire().await;
        let order = Arc::new(Mutex::new(Vec::new()));
        // A new check waits first; then a check that has had an answer.
        let fresh = {
            let (permits, order) = (permits.clone(), Arc::clone(&order));
            tokio::spawn(under_way(async move {
                let _p = permits.acquire().await;
                lock_vec(&order).push("fresh");
            }))
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let going = {
            let (permits, order) = (permits.clone(), Arc::clone(&order));
            tokio::spawn(under_way(async move {
                ANSWERED.with(|n| n.store(1, Ordering::Relaxed));
                let _p = permits.acquire().await;
                lock_vec(&order).push("under way");
            }))
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(held);
        fresh.await.expect("fresh");
        going.await.expect("going");
        assert_eq!(*lock_vec(&order), ["under way", "fresh"]);
    }

    #[tokio::test]
    async fn an_answer_makes_the_next_request_urgent() {
        let permits = Permits::new(4);
        under_way(async {
            let counter = ANSWERED.with(Arc::clone);
            drop(permits.acquire().await);
            assert_eq!(counter.load(Ordering::Relaxed), 1);
        })
        .await;
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_keeps_no_place() {
        let permits = Permits::new(1);
        let held = permits.acquire().await;
        let gave_up = tokio::time::timeout(Duration::from_millis(20), permits.acquire()).await;
        assert!(gave_up.is_err());
        drop(held);
        assert_eq!(permits.free(), 1, "the place went to a waiter that left");
    }

    fn lock_vec<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
