use std::sync::Mutex;
use std::time::Duration;

use sha2::{Digest as _, Sha256};
use tagpin_registry::{Resolution, Resolver, ResolverOptions, RetryPolicy, TagKey};
use wiremock::MockServer;

/// Options with quick retries and timeouts, so fault tests stay fast.
pub fn fast_options() -> ResolverOptions {
    ResolverOptions {
        request_timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
            max_total_wait: Duration::from_secs(5),
        },
        ..ResolverOptions::default()
    }
}

pub fn key(registry: &str, repository: &str, tag: &str) -> TagKey {
    TagKey::new(registry, repository, tag)
}

/// Resolves `keys` with a fresh resolver, returning the resolution and the keys reported as
/// done (in order).
pub async fn resolve(
    options: ResolverOptions,
    keys: impl IntoIterator<Item = TagKey>,
) -> (Resolution, Vec<TagKey>) {
    let resolver = Resolver::new(options).expect("build the resolver");
    resolve_with(&resolver, keys).await
}

pub async fn resolve_with(
    resolver: &Resolver,
    keys: impl IntoIterator<Item = TagKey>,
) -> (Resolution, Vec<TagKey>) {
    let done = Mutex::new(Vec::new());
    let resolution = resolver
        .resolve(keys, &|key| done.lock().unwrap().push(key.clone()))
        .await;
    (resolution, done.into_inner().unwrap())
}

/// The result for `key`, which must be present.
pub fn result<'a>(
    resolution: &'a Resolution,
    key: &TagKey,
) -> &'a Result<tagpin_registry::Digest, tagpin_registry::ResolveError> {
    resolution.digests.get(key).expect("a result for every key")
}

pub fn digest_text(resolution: &Resolution, key: &TagKey) -> String {
    match result(resolution, key) {
        Ok(digest) => digest.to_string(),
        Err(error) => panic!("{key}: {error} ({})", error.kind()),
    }
}

pub fn error_kind(resolution: &Resolution, key: &TagKey) -> &'static str {
    match result(resolution, key) {
        Ok(digest) => panic!("{key} resolved to {digest}, expected an error"),
        Err(error) => error.kind(),
    }
}

pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// `127.0.0.1:PORT` of a wiremock server.
pub fn host(server: &MockServer) -> String {
    server.address().to_string()
}

/// Requests the wiremock server received with `method` and exactly `path`.
pub async fn count(server: &MockServer, method: &str, path: &str) -> usize {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|request| request.method.as_str() == method && request.url.path() == path)
        .count()
}

/// The error's message followed by its causes.
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}
