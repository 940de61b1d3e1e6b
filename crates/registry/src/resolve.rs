//! Looking tags up: de-duplication, the manifest HEAD and its GET fallback, digest checks.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, ACCEPT_ENCODING, CONTENT_ENCODING, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use sha2::{Digest as _, Sha256, Sha512};
use tagpin_reference::{Digest, DigestAlgorithm, TagKey};
use tokio::task::JoinSet;

use crate::auth::{self, Auth, Challenge};
use crate::endpoint::Endpoint;
use crate::error::redact;
use crate::http::{Http, Reply, Request};
use crate::limits::Limits;
use crate::manifest::{DigestKey, Manifest, Manifests};
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
    pub(crate) inner: Arc<Inner>,
}

/// The digests of a run, one result per distinct tag, and what the run cost.
#[derive(Debug)]
pub struct Resolution {
    pub digests: BTreeMap<TagKey, Result<Digest, ResolveError>>,
    pub stats: Stats,
}

pub(crate) struct Inner {
    http: Http,
    auth: Auth,
    pub(crate) mirrors: Vec<Mirror>,
    pub(crate) insecure: Vec<String>,
    deadline: Option<Duration>,
    pub(crate) cache: Option<crate::cache::Cache>,
}

impl Resolver {
    pub fn new(options: ResolverOptions) -> Result<Self, Error> {
        for (index, mirror) in options.mirrors.iter().enumerate() {
            if let Some(other) = options.mirrors[..index]
                .iter()
                .find(|other| other.registry() == mirror.registry() && *other != mirror)
            {
                return Err(Error::ConflictingMirrors {
                    registry: mirror.registry().to_owned(),
                    first: other.to_string(),
                    second: mirror.to_string(),
                });
            }
        }
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
                deadline: options.deadline,
                cache: options.cache_dir.as_deref().map(crate::cache::Cache::new),
            }),
        })
    }

    /// Resolves every distinct key once, concurrently within the limits, calling `progress` as
    /// each finishes. Never fails as a whole: each key has its own result. When the
    /// [`ResolverOptions::deadline`] passes, the lookups still running are dropped and their
    /// keys get [`ResolveError::Deadline`].
    pub async fn resolve(
        &self,
        keys: impl IntoIterator<Item = TagKey>,
        progress: &(dyn Fn(&TagKey) + Sync),
    ) -> Resolution {
        self.resolve_following(keys, progress, &|_, _| Vec::new())
            .await
            .0
    }

    /// [`Resolver::resolve`], and as soon as a tag resolves, fetches the manifests `follow`
    /// names for it (as [`Resolver::manifests`] does), within the same limits as the lookups
    /// still running: a moved tag's GETs fill the slots the last HEADs leave, instead of
    /// waiting for every HEAD. Each distinct manifest is fetched once. Fetches still running
    /// at the deadline are dropped (their keys are absent from the manifests).
    pub async fn resolve_following(
        &self,
        keys: impl IntoIterator<Item = TagKey>,
        progress: &(dyn Fn(&TagKey) + Sync),
        follow: &FollowUp<'_>,
    ) -> (Resolution, Manifests) {
        let mut asked = 0_u64;
        let distinct: BTreeSet<TagKey> = keys.into_iter().inspect(|_| asked += 1).collect();
        let lookups = distinct.len() as u64;
        let stats = Arc::new(Recorder::default());
        let mut tasks = JoinSet::new();
        let deadline = self
            .inner
            .deadline
            .map(|deadline| (tokio::time::Instant::now() + deadline, deadline));
        let mut pending = distinct.clone();
        for key in distinct {
            let inner = Arc::clone(&self.inner);
            let stats = Arc::clone(&stats);
            tasks.spawn(async move {
                let result = inner.lookup(&stats, &key).await;
                (key, result)
            });
        }
        let mut fetches = Fetches::default();
        let mut digests = BTreeMap::new();
        loop {
            let next = match deadline {
                Some((at, _)) => match tokio::time::timeout_at(at, tasks.join_next()).await {
                    Ok(next) => next,
                    Err(_) => break,
                },
                None => tasks.join_next().await,
            };
            let Some(joined) = next else { break };
            let (key, result) = match joined {
                Ok(done) => done,
                Err(error) => std::panic::resume_unwind(error.into_panic()),
            };
            progress(&key);
            pending.remove(&key);
            if let Ok(digest) = &result {
                for wanted in follow(&key, digest) {
                    fetches.spawn(&self.inner, wanted);
                }
            }
            digests.insert(key, result);
        }
        if let Some((_, limit)) = deadline
            && !pending.is_empty()
        {
            tasks.abort_all();
            tracing::warn!(
                left = pending.len(),
                ?limit,
                "deadline reached; the lookups left are unresolved"
            );
            for key in pending {
                let endpoint = Endpoint::for_key(&key, &self.inner.mirrors, &self.inner.insecure);
                let url = redact(&endpoint.manifest_url(&key.tag));
                progress(&key);
                digests.insert(
                    key,
                    Err(ResolveError::Deadline {
                        url,
                        deadline: limit,
                    }),
                );
            }
        }
        let manifests = fetches.finish(deadline.map(|(at, _)| at)).await;
        let resolution = Resolution {
            digests,
            stats: stats.finish(lookups, asked - lookups),
        };
        (resolution, manifests)
    }
}

/// What to fetch by digest as soon as a tag resolves to a digest (see
/// [`Resolver::resolve_following`]).
pub type FollowUp<'a> = dyn Fn(&TagKey, &Digest) -> Vec<DigestKey> + Sync + 'a;

/// Manifest fetches by digest, each distinct key once, running as they are spawned.
#[derive(Default)]
pub(crate) struct Fetches {
    asked: BTreeSet<DigestKey>,
    tasks: JoinSet<(DigestKey, Result<Manifest, ResolveError>)>,
    stats: Arc<Recorder>,
}

impl Fetches {
    pub(crate) fn spawn(&mut self, inner: &Arc<Inner>, key: DigestKey) {
        if !self.asked.insert(key.clone()) {
            return;
        }
        let inner = Arc::clone(inner);
        let stats = Arc::clone(&self.stats);
        self.tasks.spawn(async move {
            let result = inner.manifest(&stats, &key).await;
            (key, result)
        });
    }

    /// Waits for every fetch, or until `deadline`.
    pub(crate) async fn finish(mut self, deadline: Option<tokio::time::Instant>) -> Manifests {
        let mut manifests = BTreeMap::new();
        loop {
            let next = match deadline {
                Some(at) => {
                    let Ok(next) = tokio::time::timeout_at(at, self.tasks.join_next()).await else {
                        self.tasks.abort_all();
                        break;
                    };
                    next
                }
                None => self.tasks.join_next().await,
            };
            let Some(joined) = next else { break };
            let (key, result) = match joined {
                Ok(done) => done,
                Err(error) => std::panic::resume_unwind(error.into_panic()),
            };
            if let Err(error) = &result {
                tracing::debug!(%key, kind = error.kind(), %error, "manifest not read");
            }
            manifests.insert(key, result);
        }
        Manifests {
            manifests,
            stats: self.stats.finish(0, 0),
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
        // The digest is of the manifest as stored, not of its transfer encoding.
        let decoded = decode(url, &get)?;
        let body = hash(algorithm, &decoded);
        match header {
            Some(header) if header != body => Err(ResolveError::BadDigest {
                url: redact(url),
                expected: crate::error::Expected::Header(header),
                body,
            }),
            _ => Ok(body),
        }
    }

    /// Sends a manifest request, authenticating up front when the host's challenge is known and
    /// once more after a 401.
    pub(crate) async fn fetch(
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
        // After a 401: the challenges it offered that are still to try, best first.
        let mut challenges: Option<std::collections::VecDeque<Challenge>> = None;
        loop {
            let mut headers = HeaderMap::new();
            headers.insert(ACCEPT, HeaderValue::from_static(MANIFEST_ACCEPT));
            // The bytes to hash are the manifest's own: ask for no content coding.
            headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
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
            if reply.status != StatusCode::UNAUTHORIZED {
                return Ok(reply);
            }
            // Each challenge of the first 401 is tried once, in turn, until one is accepted: a
            // token realm that refuses us does not hide a Basic challenge that would work.
            let pending = challenges.get_or_insert_with(|| auth::challenges(&reply.headers).into());
            let mut first_error = None;
            let mut next = None;
            while let Some(challenge) = pending.pop_front() {
                let sent = authorization.as_ref().map(|sent| (sent, started));
                match self
                    .auth
                    .after_challenge(&self.http, stats, endpoint, url, &challenge, sent)
                    .await
                {
                    Ok(Some(value)) => {
                        next = Some(value);
                        break;
                    }
                    Ok(None) => {}
                    Err(error) => {
                        tracing::debug!(url = %redact(url), %error, "challenge failed; trying the next one");
                        first_error.get_or_insert(error);
                    }
                }
            }
            match (next, first_error) {
                (Some(value), _) => authorization = Some(value),
                (None, Some(error)) => return Err(error),
                (None, None) => return Ok(reply),
            }
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

/// The body with its `Content-Encoding` undone, even though we asked for `identity`: `gzip`
/// (`x-gzip`) is decoded, up to [`crate::http::MAX_BODY`] bytes; any other coding is an error,
/// since the manifest's digest cannot be checked through it.
#[expect(
    clippy::result_large_err,
    reason = "one error per failed lookup; its URL is what makes it large"
)]
pub(crate) fn decode<'a>(
    url: &Url,
    reply: &'a Reply,
) -> Result<std::borrow::Cow<'a, [u8]>, ResolveError> {
    use std::io::Read as _;
    let codings: Vec<String> = reply
        .headers
        .get_all(CONTENT_ENCODING)
        .iter()
        .flat_map(|value| {
            String::from_utf8_lossy(value.as_bytes())
                .split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .filter(|coding| !coding.is_empty() && coding != "identity")
        .collect();
    let mut body = std::borrow::Cow::Borrowed(reply.body.as_slice());
    // Codings are listed in the order they were applied: undo the last first.
    for coding in codings.iter().rev() {
        let bad = |source| ResolveError::BadEncoding {
            url: redact(url),
            encoding: coding.clone(),
            source,
        };
        if coding != "gzip" && coding != "x-gzip" {
            return Err(bad(None));
        }
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(&body[..])
            .take(crate::http::MAX_BODY as u64 + 1)
            .read_to_end(&mut decoded)
            .map_err(|error| bad(Some(error)))?;
        if decoded.len() > crate::http::MAX_BODY {
            return Err(ResolveError::TooLarge {
                url: redact(url),
                limit: crate::http::MAX_BODY,
            });
        }
        body = std::borrow::Cow::Owned(decoded);
    }
    Ok(body)
}

pub(crate) fn hash(algorithm: DigestAlgorithm, body: &[u8]) -> Digest {
    let bytes = match algorithm {
        DigestAlgorithm::Sha256 => Sha256::digest(body).to_vec(),
        DigestAlgorithm::Sha512 => Sha512::digest(body).to_vec(),
    };
    Digest::from_bytes(algorithm, &bytes).expect("hash length matches its algorithm")
}

/// The error for a final non-success reply.
pub(crate) fn status_error(url: &Url, reply: &Reply) -> ResolveError {
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
