use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;
use tagpin_reference::{Digest, ParseError};

/// Errors building a [`crate::Resolver`] or reading its configuration.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {}", path.display())]
    ReadConfig {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON. The parser's message names a position, never a value.
    #[error("cannot parse {} as JSON", path.display())]
    ParseConfig {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A field has the wrong shape; the value itself is never shown, it may be a secret.
    #[error("{}: {field} for {registry:?} {problem}", path.display())]
    InvalidConfigEntry {
        path: PathBuf,
        registry: String,
        field: &'static str,
        problem: &'static str,
    },
    #[error("invalid mirror {text:?}: {problem}")]
    InvalidMirror { text: String, problem: &'static str },
    #[error("running credential helper docker-credential-{helper} for {registry}")]
    CredentialHelper {
        helper: String,
        registry: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "credential helper docker-credential-{helper} failed for {registry} ({status}); its output is not shown, it may hold secrets"
    )]
    CredentialHelperFailed {
        helper: String,
        registry: String,
        status: std::process::ExitStatus,
    },
    #[error("cannot build the HTTP client")]
    Client(#[source] reqwest::Error),
    /// Two mirrors for one registry (Docker Hub's names are one registry).
    #[error("two mirrors for {registry}: {first} and {second}")]
    ConflictingMirrors {
        registry: String,
        first: String,
        second: String,
    },
}

/// Why one tag could not be resolved. Every variant names the URL asked (without credentials)
/// and keeps its cause as a `source`; [`ResolveError::kind`] gives a short stable code.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The registry answered 404 (`MANIFEST_UNKNOWN`, `NAME_UNKNOWN`, or no error code).
    #[error("{url}: not found{}", code.as_deref().map(|code| format!(" ({code})")).unwrap_or_default())]
    NotFound { url: Url, code: Option<String> },
    /// 401 or 403 after authenticating with whatever credentials there are.
    #[error("{url}: unauthorized (HTTP {status})")]
    Unauthorized { url: Url, status: u16 },
    /// 429 on every attempt, or a `Retry-After` longer than the retry budget allows.
    #[error("{url}: rate limited (HTTP 429) after {attempts} attempt(s)")]
    RateLimited {
        url: Url,
        attempts: u32,
        retry_after: Option<Duration>,
    },
    #[error("{url}: no response within {timeout:?}")]
    Timeout {
        url: Url,
        timeout: Duration,
        #[source]
        source: reqwest::Error,
    },
    /// The manifest body does not hash to the digest it should: the one its
    /// `Docker-Content-Digest` header gives, or the one it was asked for by.
    #[error("{url}: digest mismatch: {}, the body hashes to {body}", expected.describe())]
    BadDigest {
        url: Url,
        expected: Expected,
        body: Digest,
    },
    /// The `Docker-Content-Digest` header is not a `sha256` or `sha512` digest.
    #[error("{url}: unusable Docker-Content-Digest header {value:?}")]
    InvalidDigest {
        url: Url,
        value: String,
        #[source]
        source: ParseError,
    },
    /// The manifest body has a `Content-Encoding` tagpin cannot undo (only `gzip` and
    /// `identity` are known), or it does not decode: its digest cannot be checked.
    #[error("{url}: cannot decode the manifest body (Content-Encoding: {encoding})")]
    BadEncoding {
        url: Url,
        encoding: String,
        #[source]
        source: Option<std::io::Error>,
    },
    /// A manifest fetched by digest is not one tagpin can read (not JSON, no entries, no
    /// config).
    #[error("{url}: unreadable manifest: {problem}")]
    BadManifest {
        url: Url,
        problem: &'static str,
        #[source]
        source: Option<serde_json::Error>,
    },
    /// The manifest body is over the size a registry may serve.
    #[error("{url}: the manifest is larger than {limit} bytes")]
    TooLarge { url: Url, limit: usize },
    /// Any other status, after retries for 502/503/504.
    #[error("{url}: unexpected HTTP status {status} after {attempts} attempt(s)")]
    Status {
        url: Url,
        status: u16,
        attempts: u32,
    },
    /// The token endpoint answered but gave no usable token.
    #[error("{url}: token response has no token")]
    BadToken {
        url: Url,
        #[source]
        source: Option<serde_json::Error>,
    },
    /// Connection refused or reset (after retries), DNS failure, TLS or protocol errors.
    #[error("{url}: request failed after {attempts} attempt(s)")]
    Transport {
        url: Url,
        attempts: u32,
        #[source]
        source: reqwest::Error,
    },
    /// Not asked: requests to this host failed to connect or timed out several times in a row
    /// (the circuit breaker). `cause` is the failure that opened it, with its causes; `kind`
    /// is its [`ResolveError::kind`].
    #[error("{url}: not asked: {host} failed {failures} times in a row, last: {cause}")]
    HostDown {
        url: Url,
        host: String,
        failures: u32,
        kind: &'static str,
        cause: String,
    },
    /// The run's deadline passed before this lookup finished.
    #[error("{url}: not looked up within the run's deadline of {deadline:?}")]
    Deadline { url: Url, deadline: Duration },
    /// The credentials for the registry could not be read (a credential helper failed).
    #[error("{url}: cannot get credentials")]
    Credentials {
        url: Url,
        #[source]
        source: Error,
    },
}

impl ResolveError {
    /// A short stable code for reports and JSON: `not-found`, `unauthorized`, `rate-limited`,
    /// `timeout`, `bad-digest`, `bad-manifest`, `unexpected-status`, `bad-token`, `transport`, `credentials`,
    /// `deadline`. A lookup the circuit breaker saved has the kind of the failure that opened it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotFound { .. } => "not-found",
            Self::Unauthorized { .. } => "unauthorized",
            Self::RateLimited { .. } => "rate-limited",
            Self::Timeout { .. } => "timeout",
            Self::BadDigest { .. }
            | Self::InvalidDigest { .. }
            | Self::BadEncoding { .. }
            | Self::TooLarge { .. } => "bad-digest",
            Self::HostDown { kind, .. } => kind,
            Self::BadManifest { .. } => "bad-manifest",
            Self::Deadline { .. } => "deadline",
            Self::Status { .. } => "unexpected-status",
            Self::BadToken { .. } => "bad-token",
            Self::Transport { .. } => "transport",
            Self::Credentials { .. } => "credentials",
        }
    }

    /// The URL that was asked, without credentials.
    pub fn url(&self) -> &Url {
        match self {
            Self::NotFound { url, .. }
            | Self::Unauthorized { url, .. }
            | Self::RateLimited { url, .. }
            | Self::Timeout { url, .. }
            | Self::BadDigest { url, .. }
            | Self::InvalidDigest { url, .. }
            | Self::BadEncoding { url, .. }
            | Self::TooLarge { url, .. }
            | Self::BadManifest { url, .. }
            | Self::HostDown { url, .. }
            | Self::Deadline { url, .. }
            | Self::Status { url, .. }
            | Self::BadToken { url, .. }
            | Self::Transport { url, .. }
            | Self::Credentials { url, .. } => url,
        }
    }
}

/// `url` without user or password: safe to show (queries hold only `service` and `scope`).
pub(crate) fn redact(url: &Url) -> Url {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

/// The digest a manifest body should hash to, and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// The reply's `Docker-Content-Digest` header.
    Header(Digest),
    /// The digest the manifest was asked for by (`/manifests/sha256:…`).
    Asked(Digest),
}

impl Expected {
    fn describe(&self) -> String {
        match self {
            Self::Header(digest) => format!("the header says {digest}"),
            Self::Asked(digest) => format!("it was asked for by {digest}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_mismatch_says_where_the_expected_digest_comes_from() {
        let digest =
            |c: char| Digest::parse(&format!("sha256:{}", c.to_string().repeat(64))).unwrap();
        let url = Url::parse("http://127.0.0.1:5000/v2/a/manifests/x").unwrap();
        for (expected, says) in [
            (Expected::Header(digest('a')), "the header says sha256:aaaa"),
            (
                Expected::Asked(digest('a')),
                "it was asked for by sha256:aaaa",
            ),
        ] {
            let error = ResolveError::BadDigest {
                url: url.clone(),
                expected,
                body: digest('b'),
            };
            let text = error.to_string();
            assert!(text.contains(says), "{text}");
            assert!(
                text.ends_with(&format!("the body hashes to {}", digest('b'))),
                "{text}"
            );
            assert_eq!(error.kind(), "bad-digest");
        }
    }
}
