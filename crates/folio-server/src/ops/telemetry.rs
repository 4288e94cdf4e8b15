//! What a server tells its operators: per-key rate limits, the audit log
//! (one JSON line per call) and the counters `/metrics` exposes.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// Upper bounds of the call duration histogram, in seconds (OpenTelemetry's
/// default boundaries for `mcp.server.operation.duration`).
pub const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// Calls of one tool (or route) with one outcome.
#[derive(Debug, Default, Clone)]
pub struct CallStats {
    pub count: u64,
    pub seconds: f64,
    /// Calls at or under each bound of `BUCKETS`.
    pub buckets: [u64; BUCKETS.len()],
}

/// One call as the audit log and the counters record it.
#[derive(Debug)]
pub struct CallRecord<'a> {
    /// The key's name; None where no key is asked.
    pub caller: Option<&'a str>,
    pub transport: &'a str,
    /// A tool, or an HTTP route.
    pub operation: &'a str,
    pub library: Option<&'a str>,
    /// "ok", or the error code the caller was answered with.
    pub outcome: &'a str,
    pub duration: Duration,
    pub correlation_id: &'a str,
    /// The query the call asked, only where the server is configured to
    /// log queries (`[audit] include_queries`).
    pub query: Option<&'a str>,
}

/// A token bucket per caller.
#[derive(Default)]
struct Buckets(HashMap<String, (f64, Instant)>);

/// Callers remembered at most by the rate limiter; beyond, it starts afresh.
const CALLERS_LIMIT: usize = 100_000;

impl Buckets {
    /// `caller`'s bucket, refilled at `per_second` up to `capacity` (a new
    /// caller's is full).
    fn level(&mut self, caller: &str, capacity: f64, per_second: f64) -> &mut f64 {
        let now = Instant::now();
        if self.0.len() >= CALLERS_LIMIT && !self.0.contains_key(caller) {
            self.0.clear();
        }
        let (tokens, at) = self.0.entry(caller.to_string()).or_insert((capacity, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * per_second).min(capacity);
        *at = now;
        tokens
    }

    /// Takes one call from `caller`'s bucket of `per_minute` calls a
    /// minute (up to that many at once), or says how long until one is
    /// there.
    fn take(&mut self, caller: &str, per_minute: u32) -> Result<(), Duration> {
        let capacity = f64::from(per_minute.max(1));
        let per_second = capacity / 60.0;
        let tokens = self.level(caller, capacity, per_second);
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / per_second))
        }
    }
}

/// A byte budget of `per_hour`, refilled evenly, up to an hour's worth at
/// once: (capacity, refill per second).
fn hourly(per_hour: u64) -> (f64, f64) {
    let capacity = per_hour.max(1) as f64;
    (capacity, capacity / 3600.0)
}

/// Calls in one minute of the history.
#[derive(Debug, Default, Clone, Copy)]
struct Minute {
    calls: u64,
    /// Calls answered with an error.
    errors: u64,
    seconds: f64,
}

/// Minutes of history a server keeps: a day.
const HISTORY_MINUTES: usize = 24 * 60;

/// A server process's limits, audit log and counters.
#[derive(Default)]
pub struct Telemetry {
    /// Calls per minute (minutes since the epoch), oldest first, for the
    /// last day.
    history: Mutex<VecDeque<(u64, Minute)>>,
    calls: Mutex<BTreeMap<(String, String), CallStats>>,
    auth_failures: Mutex<BTreeMap<String, u64>>,
    rate_limited: Mutex<BTreeMap<String, u64>>,
    buckets: Mutex<Buckets>,
    /// Bytes each caller may still ingest.
    ingest_buckets: Mutex<Buckets>,
    audit: Option<Mutex<Box<dyn Write + Send>>>,
}

impl Telemetry {
    /// Telemetry whose audit lines go to `path` (appended; `-` is stderr),
    /// or nowhere.
    pub fn new(audit: Option<&Path>) -> std::io::Result<Self> {
        let audit: Option<Box<dyn Write + Send>> = match audit {
            None => None,
            Some(path) if path.as_os_str() == "-" => Some(Box::new(std::io::stderr())),
            Some(path) => Some(Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            )),
        };
        Ok(Telemetry {
            audit: audit.map(Mutex::new),
            ..Telemetry::default()
        })
    }

    /// Counts a call and writes its audit line.
    pub fn record(&self, call: &CallRecord<'_>) {
        let seconds = call.duration.as_secs_f64();
        let now = SystemTime::now();
        self.count_in_history(now, call.outcome != "ok", seconds);
        {
            let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
            let stats = calls
                .entry((call.operation.to_string(), call.outcome.to_string()))
                .or_default();
            stats.count += 1;
            stats.seconds += seconds;
            for (bound, n) in BUCKETS.iter().zip(stats.buckets.iter_mut()) {
                if seconds <= *bound {
                    *n += 1;
                }
            }
        }
        if let Some(audit) = &self.audit {
            let mut line = json!({
                "time": folio_engine::rfc3339(now),
                "caller": call.caller,
                "transport": call.transport,
                "operation": call.operation,
                "library": call.library,
                "outcome": call.outcome,
                "duration_ms": (seconds * 1e3 * 1e3).round() / 1e3,
                "correlation_id": call.correlation_id,
            });
            if let Some(query) = call.query {
                line["query"] = Value::from(query);
            }
            let mut out = audit.lock().unwrap_or_else(|p| p.into_inner());
            // One write per line, so lines of concurrent calls never mix.
            let _ = out.write_all(format!("{line}\n").as_bytes());
            let _ = out.flush();
        }
    }

    /// Adds a call at `now` to its minute of the history.
    fn count_in_history(&self, now: SystemTime, failed: bool, seconds: f64) {
        let minute = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 60);
        let mut history = self.history.lock().unwrap_or_else(|p| p.into_inner());
        if history.back().is_none_or(|(m, _)| *m != minute) {
            history.push_back((minute, Minute::default()));
            if history.len() > HISTORY_MINUTES {
                history.pop_front();
            }
        }
        if let Some((_, stats)) = history.back_mut() {
            stats.calls += 1;
            stats.errors += u64::from(failed);
            stats.seconds += seconds;
        }
    }

    /// The calls of each minute of the last day that had any, oldest
    /// first: the minute's start (RFC 3339), calls, errors and their mean
    /// duration in milliseconds.
    pub fn history(&self) -> Vec<Value> {
        let history = self.history.lock().unwrap_or_else(|p| p.into_inner());
        history
            .iter()
            .map(|(minute, stats)| {
                json!({
                    "minute": folio_engine::rfc3339(UNIX_EPOCH + Duration::from_secs(minute * 60)),
                    "calls": stats.calls,
                    "errors": stats.errors,
                    "mean_ms": (stats.seconds * 1e3 / stats.calls.max(1) as f64 * 1e3).round() / 1e3,
                })
            })
            .collect()
    }

    /// Counts a refused authentication by reason.
    pub fn auth_failed(&self, reason: &str) {
        *self
            .auth_failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(reason.to_string())
            .or_default() += 1;
    }

    /// Lets a call of `caller` through under `per_minute`, or says how long
    /// to wait (and counts the refusal).
    pub fn admit(&self, caller: &str, per_minute: u32) -> Result<(), Duration> {
        let taken = self
            .buckets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take(caller, per_minute);
        if taken.is_err() {
            self.count_rate_limited(caller);
        }
        taken
    }

    /// Admits `bytes` ingested by `caller` while its budget of `per_hour`
    /// bytes is not spent, charging them at once (a document admitted
    /// within budget may overdraw it, and the caller then waits for the
    /// overdraft to refill), or says how long until the budget is back
    /// (and counts the refusal). Check and charge are one step, so
    /// concurrent writers cannot both pass on the same remainder.
    pub fn spend_ingest(&self, caller: &str, per_hour: u64, bytes: u64) -> Result<(), Duration> {
        let (capacity, per_second) = hourly(per_hour);
        let refused = {
            let mut buckets = self
                .ingest_buckets
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let tokens = buckets.level(caller, capacity, per_second);
            if *tokens > 0.0 {
                *tokens -= bytes as f64;
                None
            } else {
                Some(Duration::from_secs_f64((1.0 - *tokens) / per_second))
            }
        };
        match refused {
            None => Ok(()),
            Some(wait) => {
                self.count_rate_limited(caller);
                Err(wait)
            }
        }
    }

    fn count_rate_limited(&self, caller: &str) {
        *self
            .rate_limited
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(caller.to_string())
            .or_default() += 1;
    }

    /// The counters in the Prometheus text exposition format, with
    /// `extra` samples (gauges read from the engine; a null value is a
    /// comment line) appended.
    pub fn exposition(&self, extra: &[(String, Value)]) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP mcp_server_operation_duration_seconds Duration of MCP tool calls and HTTP routes.\n\
             # TYPE mcp_server_operation_duration_seconds histogram\n",
        );
        for ((operation, outcome), stats) in
            self.calls.lock().unwrap_or_else(|p| p.into_inner()).iter()
        {
            let labels = format!(
                "operation=\"{}\",outcome=\"{}\"",
                escape(operation),
                escape(outcome)
            );
            for (bound, n) in BUCKETS.iter().zip(stats.buckets) {
                out.push_str(&format!(
                    "mcp_server_operation_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {n}\n"
                ));
            }
            out.push_str(&format!(
                "mcp_server_operation_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}\n\
                 mcp_server_operation_duration_seconds_sum{{{labels}}} {}\n\
                 mcp_server_operation_duration_seconds_count{{{labels}}} {}\n",
                stats.count, stats.seconds, stats.count
            ));
        }
        out.push_str(
            "# HELP folio_auth_failures_total Requests refused for their credentials, by reason.\n\
             # TYPE folio_auth_failures_total counter\n",
        );
        for (reason, n) in self
            .auth_failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            out.push_str(&format!(
                "folio_auth_failures_total{{reason=\"{}\"}} {n}\n",
                escape(reason)
            ));
        }
        out.push_str(
            "# HELP folio_rate_limited_total Requests refused over their key's rate.\n\
             # TYPE folio_rate_limited_total counter\n",
        );
        for (caller, n) in self
            .rate_limited
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            out.push_str(&format!(
                "folio_rate_limited_total{{caller=\"{}\"}} {n}\n",
                escape(caller)
            ));
        }
        for (line, value) in extra {
            match value {
                Value::Null => out.push_str(&format!("{line}\n")),
                value => out.push_str(&format!("{line} {value}\n")),
            }
        }
        out
    }
}

/// A label value as the exposition format writes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_holds_its_rate_and_refills() {
        let mut buckets = Buckets::default();
        for _ in 0..60 {
            assert!(buckets.take("bot", 60).is_ok());
        }
        let wait = buckets.take("bot", 60).unwrap_err();
        assert!(
            wait <= Duration::from_secs(1) && wait > Duration::ZERO,
            "{wait:?}"
        );
        assert!(buckets.take("other", 60).is_ok(), "buckets are per caller");
        std::thread::sleep(Duration::from_millis(1_100));
        assert!(
            buckets.take("bot", 60).is_ok(),
            "one call a second comes back"
        );
    }

    #[test]
    fn an_ingest_budget_charges_each_document_as_it_is_admitted() {
        let telemetry = Telemetry::default();
        let per_hour = 3_600_000; // 1,000 bytes a second
        // One document within budget may take more than is left; it is
        // charged as it is admitted, so the next is refused at once.
        assert!(telemetry.spend_ingest("bot", per_hour, 3_650_000).is_ok());
        let wait = telemetry.spend_ingest("bot", per_hour, 1).unwrap_err();
        // 50,000 bytes overdrawn at 1,000 a second.
        assert!(
            wait >= Duration::from_secs(49) && wait <= Duration::from_secs(51),
            "{wait:?}"
        );
        assert!(telemetry.spend_ingest("other", per_hour, 0).is_ok());
        assert!(
            telemetry
                .exposition(&[])
                .contains("folio_rate_limited_total{caller=\"bot\"} 1\n")
        );
    }

    #[test]
    fn calls_are_counted_into_buckets_and_exposed() {
        let telemetry = Telemetry::default();
        for ms in [3, 40, 2_000] {
            telemetry.record(&CallRecord {
                caller: Some("alice"),
                transport: "http",
                operation: "search",
                library: Some("wiki"),
                outcome: "ok",
                duration: Duration::from_millis(ms),
                correlation_id: "c",
                query: None,
            });
        }
        telemetry.auth_failed("unknown key");
        let text = telemetry.exposition(&[]);
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_bucket{operation=\"search\",outcome=\"ok\",le=\"0.005\"} 1\n"
        ));
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_bucket{operation=\"search\",outcome=\"ok\",le=\"0.05\"} 2\n"
        ));
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_count{operation=\"search\",outcome=\"ok\"} 3\n"
        ));
        assert!(text.contains("folio_auth_failures_total{reason=\"unknown key\"} 1\n"));
    }
}
