//! The crate's one error type. Network errors carry the method and the URL (the API base has no
//! credentials: they are refused when the client is built) and never the token.

use std::fmt;

/// An HTTP method, as the requests of this crate use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Post,
    Patch,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Patch => "PATCH",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid GitHub API URL `{url}`: {reason}")]
    InvalidApiUrl { url: String, reason: &'static str },

    #[error("invalid repository `{0}`: expected OWNER/NAME")]
    InvalidRepo(String),

    #[error("invalid branch name `{0}`")]
    InvalidBranch(String),

    #[error("invalid file path `{0}`: expected a relative path without `.`, `..` or empty parts")]
    InvalidPath(String),

    #[error("the GitHub token is empty or contains whitespace or control characters")]
    InvalidToken,

    #[error("could not set up the HTTP client for {url}")]
    Client {
        url: String,
        #[source]
        source: octocrab::Error,
    },

    #[error("{method} {url} failed")]
    Transport {
        method: Method,
        url: String,
        #[source]
        source: octocrab::Error,
    },

    #[error("{method} {url}: GitHub answered {status}: {message}")]
    Status {
        method: Method,
        url: String,
        status: u16,
        /// GitHub's `message`, with the `errors[].message` details when present.
        message: String,
    },

    #[error(
        "{method} {url}: rate limited for {wait_secs}s more, longer than the {cap_secs}s this run waits"
    )]
    RateLimited {
        method: Method,
        url: String,
        wait_secs: u64,
        cap_secs: u64,
    },

    #[error("{method} {url}: unexpected response body")]
    Decode {
        method: Method,
        url: String,
        #[source]
        source: serde_json::Error,
    },

    #[error("branch `{branch}` does not exist in {repo}")]
    BranchNotFound { repo: String, branch: String },

    #[error("the changes leave branch `{base}` as it is: nothing to commit")]
    NoChanges { base: String },

    #[error("invalid commit id `{0}`: expected 40 or 64 lowercase hex digits")]
    InvalidCommit(String),

    /// The base branch no longer points at the head the caller built the files from
    /// ([`RollingPullRequest::base_head`](crate::RollingPullRequest::base_head)); nothing was
    /// written.
    #[error("branch `{base}` moved from {expected} to {found}: nothing was pushed")]
    BaseMoved {
        base: String,
        expected: String,
        found: String,
    },
}

impl Error {
    /// The HTTP status GitHub answered, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the request may have been applied although no success was seen: a 5xx, a
    /// timeout or a broken connection.
    pub(crate) fn is_lost_response(&self) -> bool {
        match self {
            Error::Transport { .. } => true,
            Error::Status { status, .. } => *status >= 500,
            _ => false,
        }
    }

    pub(crate) fn message(&self) -> &str {
        match self {
            Error::Status { message, .. } => message,
            _ => "",
        }
    }
}
