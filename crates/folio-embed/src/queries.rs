//! Queries asked at once share a forward pass. Searches from many clients
//! each embed one short question; one after another behind the session's
//! lock, each pass pays the network's fixed cost for a dozen tokens. A
//! question asked while a pass runs waits for the next pass, which takes
//! every question waiting by then (up to [`QUERY_BATCH`]); the first
//! caller to find no pass running runs it for all.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use crate::EmbedError;

/// Questions one pass takes at most.
const QUERY_BATCH: usize = 32;

#[derive(Default)]
pub(crate) struct Queries {
    state: Mutex<State>,
    answered: Condvar,
    passes: AtomicU64,
}

#[derive(Default)]
struct State {
    next: u64,
    waiting: Vec<(u64, String)>,
    answers: HashMap<u64, Result<Vec<f32>, EmbedError>>,
    running: bool,
}

impl Queries {
    /// The vector of `text`, embedded by `run` in one pass with the other
    /// questions waiting; `run` returns one vector per text, in order.
    pub(crate) fn embed(
        &self,
        text: String,
        run: impl Fn(Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError>,
    ) -> Result<Vec<f32>, EmbedError> {
        let lock = || self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut state = lock();
        let ticket = state.next;
        state.next += 1;
        state.waiting.push((ticket, text));
        loop {
            if let Some(answer) = state.answers.remove(&ticket) {
                return answer;
            }
            if state.running {
                state = self.answered.wait(state).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            let take = state.waiting.len().min(QUERY_BATCH);
            let (tickets, texts): (Vec<u64>, Vec<String>) = state.waiting.drain(..take).unzip();
            state.running = true;
            drop(state);
            self.passes.fetch_add(1, Ordering::Relaxed);
            // A panic in the network is every waiting question's error, not
            // a pass that never ends for the others.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(texts)))
                .unwrap_or_else(|_| Err(EmbedError::Inference("the encoder panicked".into())));
            let result = result.and_then(|vectors| {
                if vectors.len() == tickets.len() {
                    Ok(vectors)
                } else {
                    Err(EmbedError::Inference(format!(
                        "{} vectors for {} questions",
                        vectors.len(),
                        tickets.len()
                    )))
                }
            });
            state = lock();
            match result {
                Ok(vectors) => {
                    for (ticket, vector) in tickets.into_iter().zip(vectors) {
                        state.answers.insert(ticket, Ok(vector));
                    }
                }
                Err(e) => {
                    for ticket in tickets {
                        state.answers.insert(ticket, Err(e.clone()));
                    }
                }
            }
            state.running = false;
            self.answered.notify_all();
        }
    }

    /// Passes run so far.
    pub(crate) fn passes(&self) -> u64 {
        self.passes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    /// A "network" whose vector is the text's length and the size of the
    /// batch it came in, and that takes its time, as a forward pass does.
    fn slow(texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let n = texts.len() as f32;
        Ok(texts.iter().map(|t| vec![t.len() as f32, n]).collect())
    }

    #[test]
    fn questions_asked_together_share_passes_and_get_their_own_vectors() {
        let queries = Queries::default();
        let start = Barrier::new(16);
        std::thread::scope(|scope| {
            for i in 0..16usize {
                let (queries, start) = (&queries, &start);
                scope.spawn(move || {
                    start.wait();
                    for j in 0..4usize {
                        let text = "x".repeat(1 + i * 4 + j);
                        let vector = queries.embed(text.clone(), slow).unwrap();
                        assert_eq!(vector[0], text.len() as f32, "its own vector");
                    }
                });
            }
        });
        // 64 questions from 16 callers at once: far fewer passes, and some
        // of them held several questions.
        assert!(queries.passes() < 32, "{} passes", queries.passes());
        assert!(queries.state.lock().unwrap().answers.is_empty());
        // Alone, a question is a pass of its own.
        let before = queries.passes();
        assert_eq!(queries.embed("abc".into(), slow).unwrap(), vec![3.0, 1.0]);
        assert_eq!(queries.passes(), before + 1);
    }

    #[test]
    fn a_failed_or_panicking_pass_is_each_waiting_questions_error() {
        let queries = Queries::default();
        let failed = queries.embed("a".into(), |_| Err(EmbedError::Inference("no".into())));
        assert!(matches!(failed, Err(EmbedError::Inference(m)) if m == "no"));
        let panicked = queries.embed("a".into(), |_| panic!("boom"));
        assert!(matches!(panicked, Err(EmbedError::Inference(m)) if m.contains("panicked")));
        // The next question is answered: no pass was left running.
        assert_eq!(queries.embed("ab".into(), slow).unwrap(), vec![2.0, 1.0]);
    }
}
