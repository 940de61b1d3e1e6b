//! tagpin's GitHub client: the Git Data API (blobs, trees, commits, refs) and pull requests,
//! enough to keep one rolling pull request up to date. See `docs/github.md` for the call
//! sequence of [`GitHub::sync`] and the retry rules.
//!
//! This crate depends on no other tagpin crate: the binary renders commit messages and pull
//! request bodies and hands them over as text.

mod api;
mod error;
mod git;
mod rolling;
mod secret;
mod transport;

use std::fmt;
use std::str::FromStr;

pub use error::{Error, Method};
pub use rolling::{
    FileChange, FileMode, Plan, PlannedRequest, PullRequestRef, RollingPullRequest, SyncOutcome,
};
pub use secret::Secret;
pub use transport::RetrySettings;

use transport::Transport;

/// The default API base (`GITHUB_API_URL` overrides it in the binary).
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// A repository name, `owner/name`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(into = "String")]
pub struct RepoName {
    owner: String,
    name: String,
}

impl RepoName {
    pub fn owner(&self) -> &str {
        &self.owner
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl FromStr for RepoName {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let valid = |part: &str| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        match text.split_once('/') {
            Some((owner, name)) if valid(owner) && valid(name) => Ok(Self {
                owner: owner.to_owned(),
                name: name.to_owned(),
            }),
            _ => Err(Error::InvalidRepo(text.to_owned())),
        }
    }
}

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

impl From<RepoName> for String {
    fn from(repo: RepoName) -> Self {
        repo.to_string()
    }
}

/// A client for one repository. Holds the token, so it has no derived `Debug`; the manual one
/// prints the API base and the repository only.
pub struct GitHub {
    transport: Transport,
    repo: RepoName,
}

impl fmt::Debug for GitHub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GitHub")
            .field("api_url", &self.transport.base())
            .field("repo", &self.repo)
            .field("token", &"<redacted>")
            .finish()
    }
}

impl GitHub {
    /// A client for `repo` at `api_url` (`https://api.github.com`, or a GitHub Enterprise base
    /// such as `https://host/api/v3`) with the default retry settings.
    pub fn new(api_url: &str, token: Secret, repo: RepoName) -> Result<Self, Error> {
        Self::with_retry(api_url, token, repo, RetrySettings::default())
    }

    /// Like [`GitHub::new`] with explicit retry settings.
    pub fn with_retry(
        api_url: &str,
        token: Secret,
        repo: RepoName,
        retry: RetrySettings,
    ) -> Result<Self, Error> {
        Ok(Self {
            transport: Transport::new(api_url, token, retry)?,
            repo,
        })
    }

    pub fn repo(&self) -> &RepoName {
        &self.repo
    }

    /// The API base this client talks to, without a trailing slash.
    pub fn api_url(&self) -> &str {
        self.transport.base()
    }
}
