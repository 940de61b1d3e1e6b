//! Resolve container image tags to manifest digests over the OCI distribution API.
//!
//! A [`Resolver`] takes normalised [`TagKey`]s, looks each distinct one up once with
//! `HEAD /v2/<repository>/manifests/<tag>` (all four manifest media types accepted, so a
//! multi-arch image resolves to its index), and returns a digest or a typed [`ResolveError`]
//! per key, with the run's [`Stats`].
//!
//! Around that sit: the Bearer and Basic auth flows with credentials from Docker's
//! `config.json` and `GITHUB_TOKEN` ([`Credentials`]); Docker Hub's API host; [`Mirror`]s;
//! plain HTTP for loopback and `insecure_registries`; global and per-registry concurrency
//! limits over one HTTP client; and retries with backoff on 429/502/503/504 and reset
//! connections ([`RetryPolicy`]). `docs/registry.md` records the numbers and decisions.
//!
//! ```no_run
//! use tagpin_reference::ImageReference;
//! use tagpin_registry::{Mirror, Resolver, ResolverOptions};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let options = ResolverOptions {
//!     mirrors: vec!["quay.io=127.0.0.1:5000/quay.io".parse::<Mirror>()?],
//!     ..ResolverOptions::default()
//! };
//! let resolver = Resolver::new(options)?;
//! let keys = ["busybox:1.36", "quay.io/org/img"]
//!     .into_iter()
//!     .map(|text| ImageReference::parse(text).map(|reference| reference.tag_key()))
//!     .collect::<Result<Vec<_>, _>>()?;
//! let resolution = resolver.resolve(keys, &|key| tracing::info!(%key, "done")).await;
//! for (key, result) in &resolution.digests {
//!     match result {
//!         Ok(digest) => tracing::info!(%key, %digest),
//!         Err(error) => tracing::warn!(%key, kind = error.kind(), %error),
//!     }
//! }
//! # Ok(())
//! # }
//! ```

mod auth;
mod breaker;
mod cache;
mod credentials;
mod endpoint;
mod error;
mod http;
mod limits;
mod manifest;
mod mirror;
mod resolve;
mod retry;
mod secret;
mod stats;

use std::time::Duration;

pub use credentials::Credentials;
pub use error::{Error, Expected, ResolveError};
pub use manifest::{Child, DigestKey, Manifest, Manifests, Platform, PlatformError};
pub use mirror::Mirror;
pub use resolve::{FollowUp, MANIFEST_ACCEPT, Resolution, Resolver};
pub use retry::RetryPolicy;
pub use secret::Secret;
pub use stats::{RateLimitRemaining, Stats};
pub use tagpin_reference::{Digest, TagKey};

/// The `User-Agent` sent by default.
pub const USER_AGENT: &str = concat!("tagpin/", env!("CARGO_PKG_VERSION"));

/// How a [`Resolver`] reaches registries.
#[derive(Clone, Debug)]
pub struct ResolverOptions {
    /// Registries looked up elsewhere, one mirror per registry (two different mirrors for one
    /// registry, under any of its names, are [`Error::ConflictingMirrors`]).
    pub mirrors: Vec<Mirror>,
    /// Hosts (`host[:port]`, as requests go to them) spoken to over plain HTTP.
    pub insecure_registries: Vec<String>,
    /// Requests in flight in all (default 16).
    pub concurrency: usize,
    /// Requests in flight to one host (default 8).
    pub per_registry_concurrency: usize,
    /// The most one request may take, connecting and reading included (default 30 s).
    pub request_timeout: Duration,
    pub retry: RetryPolicy,
    pub credentials: Credentials,
    pub user_agent: String,
    /// Where manifests and image configs fetched by digest ([`Resolver::manifests`]) are kept
    /// across runs; `None`: not kept. Tag lookups are never cached.
    pub cache_dir: Option<std::path::PathBuf>,
    /// The most one [`Resolver::resolve`] call may take; the lookups left then are
    /// [`ResolveError::Deadline`]. `None`: no limit (the default).
    pub deadline: Option<Duration>,
}

impl Default for ResolverOptions {
    fn default() -> Self {
        Self {
            mirrors: Vec::new(),
            insecure_registries: Vec::new(),
            concurrency: 16,
            per_registry_concurrency: 8,
            request_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            credentials: Credentials::default(),
            user_agent: USER_AGENT.to_owned(),
            deadline: None,
            cache_dir: None,
        }
    }
}
