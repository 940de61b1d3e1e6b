//! Looking tags up: de-duplication, the manifest HEAD and its GET fallback, digest checks.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use sha2::{Digest as _, Sha256, Sha512};
use tagpin_reference::{Digest, DigestAlgorithm, TagKey};
use tokio::task::JoinSet;

use crate::auth::Auth;
use crate::endpoint::Endpoint;
use crate::error::redact;
use crate::http::{Http, Reply, Request};
use crate::limits::Limits;
use crate::stats::{Recorder, Stats};
use crate::{Error, Mirror, ResolveError, ResolverOptions};

/// The four manifest media types, so the registry serves what a runtime would pull: the index
/// or manifest list for a multi-arch image, the image manifest otherwise.
pub const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.index.v1+json, \
application/vnd.oci.image.manifest.v1+json, \
application/vnd.docker.distribution.manifest.list.v2+json, \
application/vnd.docker.distribution.manifest.v2+json";

const DOCKER_CONTENT_DIGEST: &str = "docker-content-digest";

/// The longest a connection may take to open, within the request timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves tags to manifest digests. Cheap to share: one HTTP client, one token cache.
pub struct Resolver {
    inner: Arc<Inner>,
}

/// The digests of a run, one result per distinct tag, and what the run cost.
#[derive(Debug)]
pub struct Resolution {
    pub digests: BTreeMap<TagKey, Result<Digest, ResolveError>>,
    pub stats: Stats,
}

struct Inner {
    http: Http,
    auth: Auth,
    mirrors: Vec<Mirror>,
    insecure: Vec<String>,
}

impl Resolver {
    pub fn new(options: ResolverOptions) -> Result<Self, Error> {
        let client = reqwest::Client::builder()
            .user_agent(options.user_agent)
            .connect_timeout(options.request_timeout.min(CONNECT_TIMEOUT))
            .pool_max_idle_per_host(options.per_registry_concurrency)
            .build()
            .map_err(Error::Client)?;
        let limits = Limits::new(options.concurrency, options.per_registry_concurrency);
        Ok(Self {
            inner: Arc::new(Inner {
                http: Http::new(client, limits, options.retry, options.request_timeout),
                auth: Auth::new(options.credentials),
                mirrors: options.mirrors,
                insecure: options
                    .insecure_registries
                    .iter()
                    .map(|host| host.trim().to_ascii_lowercase())
                    .collect(),
            }),
        })
    }

    /// Resolves every distinct key once, concurrently within the limits, calling `progress` as
    /// each finishes. Never fails as a whole: each key has its own result.
    pub async fn resolve(
        &self,
        keys: impl IntoIterator<Item = TagKey>,
        progress: &(dyn Fn(&TagKey) + Sync),
    ) -> Resolution {
        let mut asked = 0_u64;
        let distinct: BTreeSet<TagKey> = keys.into_iter().inspect(|_| asked += 1).collect();
        let lookups = distinct.len() as u64;
        let stats = Arc::new(Recorder::default());
        let mut tasks = JoinSet::new();
        for key in distinct {
            let inner = Arc::clone(&self.inner);
            let stats = Arc::clone(&stats);
            tasks.spawn(async move {
                let result = inner.lookup(&stats, &key).await;
                (key, result)
            });
        }
        let mut digests = BTreeMap::new();
        while let Some(joined) = tasks.join_next().await {
            let (key, result) = match joined {
                Ok(done) => done,
                Err(error) => std::panic::resume_unwind(error.into_panic()),
            };
            progress(&key);
            digests.insert(key, result);
        }
        Resolution {
            digests,
            stats: stats.finish(lookups, asked - lookups),
        }
    }
}

impl Inner {
    async fn lookup(&self, stats: &Recorder, key: &TagKey) -> Result<Digest, ResolveError> {
        let endpoint = Endpoint::for_key(key, &self.mirrors, &self.insecure);
        let url = endpoint.manifest_url(&key.tag);
        let result = self.lookup_at(stats, &endpoint, &url).await;
        match &result {
            Ok(digest) => tracing::debug!(%key, url = %redact(&url), %digest, "resolved"),
            Err(error) => tracing::debug!(%key, kind = error.kind(), %error, "not resolved"),
        }
        result
    }

    async fn lookup_at(
        &self,
        stats: &Recorder,
        endpoint: &Endpoint,
        url: &Url,
    ) -> Result<Digest, ResolveError> {
        let head = self.fetch(stats, endpoint, Method::HEAD, url).await?;
        if head.status == StatusCode::METHOD_NOT_ALLOWED {
            tracing::debug!(url = %redact(url), "HEAD not allowed; hashing the body of a GET");
        } else if !head.status.is_success() {
            return Err(status_error(url, &head));
        } else if let Some(digest) = header_digest(url, &head.headers)? {
            return Ok(digest);
        } else {
            tracing::debug!(url = %redact(url), "no Docker-Content-Digest on HEAD; hashing the body");
        }
        let get = self.fetch(stats, endpoint, Method::GET, url).await?;
        if !get.status.is_success() {
            return Err(status_error(url, &get));
        }
        if get.too_large {
            return Err(ResolveError::TooLarge {
                url: redact(url),
                limit: crate::http::MAX_BODY,
            });
        }
        let header = header_digest(url, &get.headers)?;
        let algorithm = header
            .as_ref()
            .map_or(DigestAlgorithm::Sha256, Digest::algorithm);
        let body = hash(algorithm, &get.body);
        match header {
            Some(header) if header != body => Err(ResolveError::BadDigest {
                url: redact(url),
                header,
                body,
            }),
            _ => Ok(body),
        }
    }

    /// Sends a manifest request, authenticating up front when the host's challenge is known and
    /// once more after a 401.
    async fn fetch(
        &self,
        stats: &Recorder,
        endpoint: &Endpoint,
        method: Method,
        url: &Url,
    ) -> Result<Reply, ResolveError> {
        let started = Instant::now();
        let mut authorization = self
            .auth
            .authorization(&self.http, stats, endpoint, url)
            .await?;
        let mut challenged = false;
        loop {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_static(MANIFEST_ACCEPT));
            if let Some(value) = &authorization {
                headers.insert(reqwest::header::AUTHORIZATION, value.clone());
            }
            let request = Request {
                method: method.clone(),
                url,
                host: &endpoint.host,
                headers,
                form: None,
            };
            let reply = self.http.send(stats, &request).await?;
            if reply.status == StatusCode::UNAUTHORIZED && !challenged {
                challenged = true;
                let next = self
                    .auth
                    .after_challenge(
                        &self.http,
                        stats,
                        endpoint,
                        url,
                        &reply.headers,
                        authorization.as_ref().map(|sent| (sent, started)),
                    )
                    .await?;
                if next.is_some() {
                    authorization = next;
                    continue;
                }
            }
            return Ok(reply);
        }
    }
}

/// The `Docker-Content-Digest` header, if present; an unusable one is an error.
#[expect(
    clippy::result_large_err,
    reason = "one error per failed lookup; its URL is what makes it large"
)]
fn header_digest(url: &Url, headers: &HeaderMap) -> Result<Option<Digest>, ResolveError> {
    let Some(value) = headers.get(DOCKER_CONTENT_DIGEST) else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(value.as_bytes()).trim().to_owned();
    match Digest::parse(&text) {
        Ok(digest) => Ok(Some(digest)),
        Err(source) => Err(ResolveError::InvalidDigest {
            url: redact(url),
            value: text,
            source,
        }),
    }
}

fn hash(algorithm: DigestAlgorithm, body: &[u8]) -> Digest {
    let bytes = match algorithm {
        DigestAlgorithm::Sha256 => Sha256::digest(body).to_vec(),
        DigestAlgorithm::Sha512 => Sha512::digest(body).to_vec(),
    };
    Digest::from_bytes(algorithm, &bytes).expect("hash length matches its algorithm")
}

/// The error for a final non-success reply.
fn status_error(url: &Url, reply: &Reply) -> ResolveError {
    let url = redact(url);
    match reply.status.as_u16() {
        404 => ResolveError::NotFound {
            url,
            code: error_code(&reply.body),
        },
        401 | 403 => ResolveError::Unauthorized {
            url,
            status: reply.status.as_u16(),
        },
        429 => ResolveError::RateLimited {
            url,
            attempts: reply.attempts,
            retry_after: crate::retry::retry_after(&reply.headers),
        },
        status => ResolveError::Status {
            url,
            status,
            attempts: reply.attempts,
        },
    }
}

/// The first `errors[].code` of a distribution error body, such as `MANIFEST_UNKNOWN`.
fn error_code(body: &[u8]) -> Option<String> {
    let body: serde_json::Value = serde_json::from_slice(body).ok()?;
    let code = body.get("errors")?.get(0)?.get("code")?.as_str()?;
    Some(code.to_owned())
}
