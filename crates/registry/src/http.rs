//! Sending one request: concurrency limits, the per-request timeout, retries and statistics.

use std::error::Error as _;
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};

use crate::ResolveError;
use crate::breaker::Breaker;
use crate::error::redact;
use crate::limits::Limits;
use crate::retry::{RetryPolicy, is_retryable_status, retry_after};
use crate::stats::Recorder;

/// The most of a response body that is read: distribution's limit for a manifest (4 MiB).
pub(crate) const MAX_BODY: usize = 4 * 1024 * 1024;

/// The one HTTP client of a resolver, with its limits and retry policy.
pub(crate) struct Http {
    client: reqwest::Client,
    limits: Limits,
    breaker: Breaker,
    retry: RetryPolicy,
    timeout: Duration,
}

/// What to send. Built again for every attempt.
pub(crate) struct Request<'a> {
    pub method: Method,
    pub url: &'a Url,
    /// The host whose per-registry limit applies.
    pub host: &'a str,
    pub headers: HeaderMap,
    /// An `application/x-www-form-urlencoded` body.
    pub form: Option<String>,
}

/// A response, read in full.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The body, or its first [`MAX_BODY`] bytes when `too_large`.
    pub body: Vec<u8>,
    pub too_large: bool,
    /// Attempts it took, retries included.
    pub attempts: u32,
}

impl Http {
    pub fn new(
        client: reqwest::Client,
        limits: Limits,
        retry: RetryPolicy,
        timeout: Duration,
    ) -> Self {
        Self {
            client,
            limits,
            breaker: Breaker::default(),
            retry,
            timeout,
        }
    }

    /// Sends `request`, retrying 429, 502, 503, 504 and reset connections per the policy. Any
    /// status is returned as a [`Reply`] (the last one when retries ran out); only the absence of
    /// a response is an error. A host whose breaker is open is not asked
    /// ([`ResolveError::HostDown`]).
    pub async fn send(
        &self,
        stats: &Recorder,
        request: &Request<'_>,
    ) -> Result<Reply, ResolveError> {
        let mut schedule = self.retry.schedule();
        loop {
            self.closed(request)?;
            let outcome = {
                let _permit = self.limits.acquire(Some(request.host)).await;
                // It may have opened while this request queued for the host.
                self.closed(request)?;
                self.send_once(stats, request).await
            };
            match &outcome {
                Ok(_) => self.breaker.answered(request.host),
                Err(error) if error.is_connect() || error.is_timeout() => {
                    let kind = if error.is_timeout() {
                        "timeout"
                    } else {
                        "transport"
                    };
                    let open = self.breaker.failed(request.host, kind, || {
                        if error.is_timeout() {
                            format!(
                                "{}: no response within {:?}",
                                redact(request.url),
                                self.timeout
                            )
                        } else {
                            format!("{}: {}", redact(request.url), causes(error))
                        }
                    });
                    if open && let Err(error) = outcome {
                        return Err(self.transport_error(request.url, error, schedule.attempts()));
                    }
                }
                Err(_) => {}
            }
            let (retry_after, cause) = match outcome {
                Ok(reply) if is_retryable_status(reply.status) => {
                    (retry_after(&reply.headers), Err(reply))
                }
                Ok(mut reply) => {
                    reply.attempts = schedule.attempts();
                    return Ok(reply);
                }
                Err(error) if is_retryable_error(&error) => (None, Ok(error)),
                Err(error) => {
                    return Err(self.transport_error(request.url, error, schedule.attempts()));
                }
            };
            let Some(delay) = schedule.next_delay(retry_after) else {
                return match cause {
                    Err(mut reply) => {
                        reply.attempts = schedule.attempts();
                        Ok(reply)
                    }
                    Ok(error) => Err(self.transport_error(request.url, error, schedule.attempts())),
                };
            };
            stats.retry();
            tracing::debug!(
                url = %redact(request.url),
                status = cause.as_ref().err().map(|reply| reply.status.as_u16()),
                ?delay,
                attempt = schedule.attempts(),
                "retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }

    async fn send_once(
        &self,
        stats: &Recorder,
        request: &Request<'_>,
    ) -> Result<Reply, reqwest::Error> {
        let mut builder = self
            .client
            .request(request.method.clone(), request.url.clone())
            .headers(request.headers.clone())
            .timeout(self.timeout);
        if let Some(form) = &request.form {
            builder = builder
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .body(form.clone());
        }
        let response = match builder.send().await {
            Ok(response) => response,
            Err(error) => {
                stats.request(request.method.as_str(), None, None);
                return Err(error);
            }
        };
        let code = response.status();
        let headers = response.headers().clone();
        stats.request(request.method.as_str(), Some(code.as_u16()), Some(&headers));
        let mut response = response;
        let mut body = Vec::new();
        let mut too_large = false;
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_BODY {
                too_large = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Reply {
            status: code,
            headers,
            body,
            too_large,
            attempts: 1,
        })
    }

    /// `Err(HostDown)` when the request's host is not to be asked any more.
    #[expect(
        clippy::result_large_err,
        reason = "one error per failed lookup; its URL is what makes it large"
    )]
    fn closed(&self, request: &Request<'_>) -> Result<(), ResolveError> {
        match self.breaker.check(request.host) {
            None => Ok(()),
            Some(open) => Err(ResolveError::HostDown {
                url: redact(request.url),
                host: request.host.to_owned(),
                failures: open.failures,
                kind: open.kind,
                cause: open.cause,
            }),
        }
    }

    fn transport_error(&self, url: &Url, source: reqwest::Error, attempts: u32) -> ResolveError {
        let url = redact(url);
        if source.is_timeout() {
            ResolveError::Timeout {
                url,
                timeout: self.timeout,
                source,
            }
        } else {
            ResolveError::Transport {
                url,
                attempts,
                source,
            }
        }
    }
}

/// Connection refused or reset, or closed mid-response (reading the body fails as a "decode"
/// error: tagpin has reqwest decode nothing, so that is the connection): worth another
/// attempt. Timeouts and DNS failures are not (the first would double the wait, the second
/// will not heal in seconds).
fn is_retryable_error(error: &reqwest::Error) -> bool {
    if error.is_timeout() || is_dns_failure(error) {
        return false;
    }
    error.is_connect() || error.is_request() || error.is_body() || error.is_decode()
}

/// The error and its causes, `: `-separated, each said once.
fn causes(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(error) = cause {
        let next = error.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        cause = error.source();
    }
    text
}

/// Whether name resolution failed; hyper-util reports it as a "dns error" in the cause chain.
fn is_dns_failure(error: &reqwest::Error) -> bool {
    let mut cause = error.source();
    while let Some(error) = cause {
        let text = error.to_string();
        if text.starts_with("dns error") || text.contains("failed to lookup address") {
            return true;
        }
        cause = error.source();
    }
    false
}
