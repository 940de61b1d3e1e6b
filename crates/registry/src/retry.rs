use std::time::{Duration, SystemTime};

use backon::{BackoffBuilder as _, ExponentialBackoff, ExponentialBuilder};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

/// How often and how long a request is retried after 429, 502, 503, 504 or a reset connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included. 1 disables retries.
    pub max_attempts: u32,
    /// The first backoff; each next one doubles, plus up to as much again of random jitter.
    pub base_delay: Duration,
    /// Backoff ceiling for one wait (a `Retry-After` is honoured up to `max_total_wait`).
    pub max_delay: Duration,
    /// The most one request may spend waiting between attempts; a `Retry-After` beyond what is
    /// left ends the retries at once.
    pub max_total_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_total_wait: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// A fresh schedule for one request.
    pub(crate) fn schedule(&self) -> Schedule {
        let backoff = ExponentialBuilder::new()
            .with_min_delay(self.base_delay)
            .with_max_delay(self.max_delay)
            .with_factor(2.0)
            .with_jitter()
            .with_max_times(self.max_attempts.saturating_sub(1) as usize)
            .build();
        Schedule {
            backoff,
            waited: Duration::ZERO,
            max_total_wait: self.max_total_wait,
            attempts: 1,
        }
    }
}

/// The waits of one request: backoff with jitter, overridden by `Retry-After`, within budget.
pub(crate) struct Schedule {
    backoff: ExponentialBackoff,
    waited: Duration,
    max_total_wait: Duration,
    attempts: u32,
}

impl Schedule {
    /// The wait before the next attempt, or `None` when attempts or the wait budget ran out.
    pub fn next_delay(&mut self, retry_after: Option<Duration>) -> Option<Duration> {
        let backoff = self.backoff.next()?;
        let delay = retry_after.unwrap_or(backoff);
        let waited = self.waited + delay;
        if waited > self.max_total_wait {
            return None;
        }
        self.waited = waited;
        self.attempts += 1;
        Some(delay)
    }

    /// Attempts made or started so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
}

/// Whether a status is worth another attempt: rate limiting and gateway trouble.
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 502 | 503 | 504)
}

/// `Retry-After` as delta-seconds or an HTTP date; a date in the past means no wait.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(
        date.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

    use super::{RetryPolicy, retry_after};

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn parses_retry_after() {
        assert_eq!(retry_after(&headers("1")), Some(Duration::from_secs(1)));
        assert_eq!(
            retry_after(&headers(" 120 ")),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            retry_after(&headers("Wed, 21 Oct 2015 07:28:00 GMT")),
            Some(Duration::ZERO)
        );
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        let wait = retry_after(&headers(&later)).unwrap();
        assert!(
            wait > Duration::from_secs(27) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(retry_after(&headers("soon")), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn schedule_caps_attempts_and_total_wait() {
        let policy = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
            max_total_wait: Duration::from_secs(5),
        };
        let mut schedule = policy.schedule();
        let first = schedule.next_delay(None).unwrap();
        assert!(first >= Duration::from_millis(10) && first <= Duration::from_millis(20));
        assert_eq!(
            schedule.next_delay(Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(schedule.attempts(), 3);
        assert_eq!(schedule.next_delay(None), None, "three attempts in all");

        let mut schedule = policy.schedule();
        assert_eq!(
            schedule.next_delay(Some(Duration::from_secs(6))),
            None,
            "over budget"
        );
    }
}
