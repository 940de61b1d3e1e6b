use std::collections::BTreeMap;
use std::sync::Mutex;

use reqwest::header::HeaderMap;
use serde::Serialize;

/// What a run cost. Serialises to JSON for `-v` and reports.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Every HTTP request sent (manifest and token), by method, then by status code or
    /// `"error"` when no response came.
    pub requests: BTreeMap<String, BTreeMap<String, u64>>,
    /// Bearer tokens obtained from token endpoints.
    pub tokens_fetched: u64,
    /// Attempts repeated after 429, 502, 503, 504 or a reset connection.
    pub retries: u64,
    /// Distinct tags looked up.
    pub lookups: u64,
    /// Lookups saved because the same tag was asked for more than once.
    pub deduplicated: u64,
    /// Manifests and configs read from the cache instead of fetched.
    pub cache_hits: u64,
    /// The lowest Docker Hub `ratelimit-remaining` seen, when a response carried one.
    pub ratelimit_remaining: Option<RateLimitRemaining>,
}

/// Docker Hub's `ratelimit-remaining: 76;w=21600`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RateLimitRemaining {
    pub remaining: u64,
    /// The window in seconds, when given.
    pub window_seconds: Option<u64>,
}

impl Stats {
    /// Requests sent with `method`, whatever their outcome.
    pub fn requests_with_method(&self, method: &str) -> u64 {
        self.requests
            .get(method)
            .map_or(0, |statuses| statuses.values().sum())
    }

    /// Adds the figures of `other` (another call on the same run) to these.
    pub fn merge(&mut self, other: Stats) {
        for (method, statuses) in other.requests {
            let mine = self.requests.entry(method).or_default();
            for (status, count) in statuses {
                *mine.entry(status).or_default() += count;
            }
        }
        self.tokens_fetched += other.tokens_fetched;
        self.retries += other.retries;
        self.lookups += other.lookups;
        self.deduplicated += other.deduplicated;
        self.cache_hits += other.cache_hits;
        self.ratelimit_remaining = match (self.ratelimit_remaining, other.ratelimit_remaining) {
            (Some(a), Some(b)) => Some(if b.remaining < a.remaining { b } else { a }),
            (a, b) => a.or(b),
        };
    }

    /// All requests sent.
    pub fn total_requests(&self) -> u64 {
        self.requests.values().flat_map(BTreeMap::values).sum()
    }
}

/// Collects [`Stats`] from concurrent requests.
#[derive(Default)]
pub(crate) struct Recorder {
    stats: Mutex<Stats>,
}

impl Recorder {
    pub fn request(&self, method: &str, status: Option<u16>, headers: Option<&HeaderMap>) {
        let status = status.map_or_else(|| "error".to_owned(), |status| status.to_string());
        let seen = headers.and_then(parse_ratelimit_remaining);
        let mut figures = self.stats.lock().expect("stats lock");
        *figures
            .requests
            .entry(method.to_owned())
            .or_default()
            .entry(status)
            .or_default() += 1;
        if let Some(seen) = seen {
            match &figures.ratelimit_remaining {
                Some(lowest) if lowest.remaining <= seen.remaining => {}
                _ => figures.ratelimit_remaining = Some(seen),
            }
        }
    }

    pub fn token_fetched(&self) {
        self.stats.lock().expect("stats lock").tokens_fetched += 1;
    }

    pub fn cache_hit(&self) {
        self.stats.lock().expect("stats lock").cache_hits += 1;
    }

    pub fn retry(&self) {
        self.stats.lock().expect("stats lock").retries += 1;
    }

    /// Takes the figures, adding the run's lookup counts.
    pub fn finish(&self, lookups: u64, deduplicated: u64) -> Stats {
        let mut stats = std::mem::take(&mut *self.stats.lock().expect("stats lock"));
        stats.lookups = lookups;
        stats.deduplicated = deduplicated;
        stats
    }
}

fn parse_ratelimit_remaining(headers: &HeaderMap) -> Option<RateLimitRemaining> {
    let value = headers.get("ratelimit-remaining")?.to_str().ok()?;
    let mut parts = value.split(';');
    let remaining = parts.next()?.trim().parse().ok()?;
    let window_seconds = parts
        .filter_map(|part| part.trim().strip_prefix("w="))
        .find_map(|window| window.parse().ok());
    Some(RateLimitRemaining {
        remaining,
        window_seconds,
    })
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderMap, HeaderValue};

    use super::{RateLimitRemaining, Recorder};

    #[test]
    fn keeps_lowest_ratelimit_remaining() {
        let recorder = Recorder::default();
        for value in ["76;w=21600", "75;w=21600", "90"] {
            let mut headers = HeaderMap::new();
            headers.insert("ratelimit-remaining", HeaderValue::from_static(value));
            recorder.request("HEAD", Some(200), Some(&headers));
        }
        recorder.request("GET", None, None);
        let stats = recorder.finish(3, 1);
        assert_eq!(
            stats.ratelimit_remaining,
            Some(RateLimitRemaining {
                remaining: 75,
                window_seconds: Some(21600)
            })
        );
        assert_eq!(stats.requests_with_method("HEAD"), 3);
        assert_eq!(stats.requests["GET"]["error"], 1);
        assert_eq!((stats.lookups, stats.deduplicated), (3, 1));
    }
}
