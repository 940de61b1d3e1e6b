//! Sending requests: one octocrab client, its own retries switched off, and the retry rules of
//! this crate on top.
//!
//! Why octocrab's raw `_get`/`_post`/`_patch` and not its typed API or its retry layer:
//! - octocrab's retry layer (`RetryConfig::Simple`, the default when its `retry` feature is on)
//!   re-sends any request on a 5xx or a transport error, POSTs included: a lost response to
//!   "create pull request" would open a second one. It cannot tell methods apart, so it is
//!   set to `RetryConfig::None` explicitly (features unify across a workspace, so leaving the
//!   feature off would not be enough) and the rules below are applied here.
//! - The rate-limit rules need the response headers (`retry-after`, `x-ratelimit-*`), which
//!   octocrab's typed errors drop; the raw methods return the whole response.
//! - The typed models require many fields; reading only the fields used keeps the client
//!   tolerant of GitHub Enterprise versions and lets the fake stay small.
//! - GitHub Enterprise base paths (`https://host/api/v3`) work: octocrab's base-URI layer keeps
//!   the path of the base and prefixes it to each request path.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use octocrab::Octocrab;
use octocrab::service::middleware::retry::RetryConfig;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Method};
use crate::secret::Secret;

/// How requests are retried. The defaults suit a scheduled job; tests use small values.
#[derive(Debug, Clone)]
pub struct RetrySettings {
    /// Attempts per request in all, the first included.
    pub max_attempts: u32,
    /// First backoff after a 5xx or transport error; doubles each time.
    pub base_delay: Duration,
    /// Longest backoff between two attempts.
    pub max_delay: Duration,
    /// Longest wait for a rate limit to reset; a longer one fails with `Error::RateLimited`
    /// instead of holding the job for up to an hour.
    pub max_rate_limit_wait: Duration,
    /// Per-request read timeout (a timeout counts as a lost response).
    pub timeout: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_rate_limit_wait: Duration::from_secs(120),
            timeout: Duration::from_secs(30),
        }
    }
}

/// Whether a request may be sent again after a 5xx or a transport error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replay {
    /// Idempotent: GET, PATCH of a ref with force, PATCH of a pull request, adding labels, and
    /// POSTs of content-addressed objects.
    Safe,
    /// Creates something (ref, pull request, comment): the caller recovers by looking it up.
    Never,
}

pub(crate) struct Transport {
    octocrab: Octocrab,
    /// The API base as given, without a trailing slash; has no credentials.
    base: String,
    retry: RetrySettings,
}

impl Transport {
    pub fn new(api_url: &str, token: Secret, retry: RetrySettings) -> Result<Self, Error> {
        let base = check_api_url(api_url)?;
        let token = token.into_inner();
        if token.is_empty() || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Error::InvalidToken);
        }
        let octocrab = build(&base, token, &retry).map_err(|source| Error::Client {
            url: base.clone(),
            source,
        })?;
        Ok(Self {
            octocrab,
            base,
            retry,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a request and decodes a 2xx body as `T`, applying the retry rules.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        replay: Replay,
    ) -> Result<T, Error> {
        let text = self.send(method, path, body, replay).await?;
        serde_json::from_str(&text).map_err(|source| Error::Decode {
            method,
            url: self.url(path),
            source,
        })
    }

    /// Sends a request and returns the body of a 2xx answer.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        replay: Replay,
    ) -> Result<String, Error> {
        let url = self.url(path);
        let mut attempt = 1;
        loop {
            tracing::debug!(%method, %url, attempt, "GitHub request");
            let outcome = self.once(method, path, body).await;
            let error = match outcome {
                Ok(answer) if (200..300).contains(&answer.status) => return Ok(answer.body),
                Ok(answer) => {
                    // A rate-limited request was refused, not applied, so waiting and sending
                    // it again is safe for every method, creating ones included.
                    if let Some(wait) = answer.rate_limit_wait() {
                        if wait > self.retry.max_rate_limit_wait {
                            return Err(Error::RateLimited {
                                method,
                                url,
                                wait_secs: wait.as_secs(),
                                cap_secs: self.retry.max_rate_limit_wait.as_secs(),
                            });
                        }
                        if attempt < self.retry.max_attempts {
                            tracing::warn!(%method, %url, status = answer.status, wait_ms = wait.as_millis(), "GitHub rate limit; waiting");
                            tokio::time::sleep(wait).await;
                            attempt += 1;
                            continue;
                        }
                    }
                    Error::Status {
                        method,
                        url: url.clone(),
                        status: answer.status,
                        message: github_message(&answer.body),
                    }
                }
                Err(source) => Error::Transport {
                    method,
                    url: url.clone(),
                    source,
                },
            };
            if replay == Replay::Safe
                && error.is_lost_response()
                && attempt < self.retry.max_attempts
            {
                let delay = self.backoff(attempt);
                tracing::warn!(%method, %url, error = %error, delay_ms = delay.as_millis(), "GitHub request failed; retrying");
                tokio::time::sleep(delay).await;
                attempt += 1;
                continue;
            }
            return Err(error);
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.retry
            .base_delay
            .saturating_mul(factor)
            .min(self.retry.max_delay)
    }

    async fn once(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, octocrab::Error> {
        let response = match method {
            Method::Get => self.octocrab._get(path).await?,
            Method::Post => self.octocrab._post(path, body).await?,
            Method::Patch => self.octocrab._patch(path, body).await?,
        };
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let retry_after = header("retry-after");
        let remaining = header("x-ratelimit-remaining");
        let reset = header("x-ratelimit-reset");
        let body = self.octocrab.body_to_string(response).await?;
        Ok(Answer {
            status,
            retry_after,
            remaining,
            reset,
            body,
        })
    }
}

fn build(base: &str, token: String, retry: &RetrySettings) -> Result<Octocrab, octocrab::Error> {
    Octocrab::builder()
        .base_uri(base)?
        .personal_token(token)
        // Explicitly off: see the module comment.
        .add_retry_config(RetryConfig::None)
        .set_connect_timeout(Some(Duration::from_secs(10)))
        .set_read_timeout(Some(retry.timeout))
        .set_write_timeout(Some(retry.timeout))
        .build()
}

/// Checks the API base and returns it without a trailing slash.
fn check_api_url(api_url: &str) -> Result<String, Error> {
    let invalid = |reason| Error::InvalidApiUrl {
        // Never echo credentials back, even in this error.
        url: redact_userinfo(api_url),
        reason,
    };
    let url = url::Url::parse(api_url).map_err(|_| invalid("not an absolute URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("only http and https are supported"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("credentials belong in the token, not the URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("a query or fragment is not allowed"));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

fn redact_userinfo(text: &str) -> String {
    match (text.find("://"), text.find('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://<redacted>@{}", &text[..scheme], &text[at + 1..])
        }
        _ => text.to_owned(),
    }
}

struct Answer {
    status: u16,
    retry_after: Option<String>,
    remaining: Option<String>,
    reset: Option<String>,
    body: String,
}

impl Answer {
    /// How long GitHub asks to wait, when this answer is a rate-limit refusal: 403 or 429 with
    /// `retry-after` (seconds), or with `x-ratelimit-remaining: 0` and `x-ratelimit-reset`
    /// (epoch seconds). A bare 403 is a permission problem and is not retried.
    fn rate_limit_wait(&self) -> Option<Duration> {
        if !matches!(self.status, 403 | 429) {
            return None;
        }
        if let Some(secs) = self
            .retry_after
            .as_deref()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            return Some(Duration::from_secs(secs));
        }
        if self.remaining.as_deref().map(str::trim) == Some("0") {
            let reset = self.reset.as_deref()?.trim().parse::<u64>().ok()?;
            let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
            // At least a second: the reset time has a one-second resolution.
            return Some(Duration::from_secs(reset.saturating_sub(now).max(1)));
        }
        None
    }
}

/// GitHub's error `message`, with the details of a validation failure.
fn github_message(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return body.chars().take(200).collect();
    };
    let mut message = value["message"].as_str().unwrap_or("").to_owned();
    for detail in value["errors"].as_array().into_iter().flatten() {
        if let Some(text) = detail["message"].as_str() {
            message.push_str(": ");
            message.push_str(text);
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_urls() {
        assert_eq!(
            check_api_url("https://api.github.com").unwrap(),
            "https://api.github.com"
        );
        assert_eq!(
            check_api_url("https://ghe.example/api/v3/").unwrap(),
            "https://ghe.example/api/v3"
        );
        let error = check_api_url("https://user:hunter2@ghe.example/api/v3").unwrap_err();
        assert!(!error.to_string().contains("hunter2"), "{error}");
        assert!(check_api_url("ftp://x").is_err());
        assert!(check_api_url("not a url").is_err());
    }

    #[test]
    fn rate_limit_waits() {
        let answer = |status,
                      retry_after: Option<&str>,
                      remaining: Option<&str>,
                      reset: Option<String>| Answer {
            status,
            retry_after: retry_after.map(str::to_owned),
            remaining: remaining.map(str::to_owned),
            reset,
            body: String::new(),
        };
        assert_eq!(
            answer(429, Some("3"), None, None).rate_limit_wait(),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            answer(403, Some("0"), None, None).rate_limit_wait(),
            Some(Duration::ZERO)
        );
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let wait = answer(403, None, Some("0"), Some((now + 30).to_string()))
            .rate_limit_wait()
            .unwrap();
        assert!(
            wait >= Duration::from_secs(29) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(
            answer(403, None, None, None).rate_limit_wait(),
            None,
            "a bare 403 is a permission error"
        );
        assert_eq!(
            answer(403, None, Some("12"), Some(now.to_string())).rate_limit_wait(),
            None
        );
        assert_eq!(answer(500, Some("3"), None, None).rate_limit_wait(), None);
    }

    #[test]
    fn messages_include_validation_details() {
        let body = r#"{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for o:b."}]}"#;
        assert_eq!(
            github_message(body),
            "Validation Failed: A pull request already exists for o:b."
        );
    }
}
