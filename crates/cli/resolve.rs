//! Resolving tags to digests for a command: the resolver built from the settings, run on a
//! tokio runtime owned by this call. Credentials come from Docker's `config.json` (through
//! `tagpin-registry`) and `GITHUB_TOKEN`/`GH_TOKEN` for ghcr.io.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context as _;
use tagpin_registry::{
    Credentials, DigestKey, Manifests, Resolution, Resolver, ResolverOptions, Stats, TagKey,
};

use crate::settings::{Settings, env};

/// Reports resolution as it goes (the printer's progress bar, or nothing).
pub trait Progress: Sync {
    /// `total` distinct tags are about to be looked up.
    fn start(&self, total: usize);
    /// One more tag is done.
    fn advance(&self, key: &TagKey);
    fn finish(&self);
}

/// One run's registry client: built on first use (so a run with nothing to look up has no
/// runtime, no credentials and sends no request), then shared by the tag lookups and the
/// manifest fetches that follow them, with one token cache.
pub struct Session<'a> {
    settings: &'a Settings,
    client: Option<(tokio::runtime::Runtime, Resolver)>,
}

impl<'a> Session<'a> {
    pub fn new(settings: &'a Settings) -> Self {
        Self {
            settings,
            client: None,
        }
    }

    /// Looks every distinct key up once (`keys` may repeat; the stats count what that saved).
    pub fn resolve(
        &mut self,
        keys: Vec<TagKey>,
        progress: &dyn Progress,
    ) -> anyhow::Result<Resolution> {
        if keys.is_empty() {
            return Ok(Resolution {
                digests: BTreeMap::new(),
                stats: Stats::default(),
            });
        }
        let (runtime, resolver) = self.client()?;
        progress.start(keys.iter().collect::<BTreeSet<_>>().len());
        let resolution = runtime.block_on(resolver.resolve(keys, &|key| progress.advance(key)));
        progress.finish();
        Ok(resolution)
    }

    /// [`Session::resolve`], fetching the manifests `follow` names for each tag as soon as it
    /// resolves, beside the lookups still running.
    pub fn resolve_following(
        &mut self,
        keys: Vec<TagKey>,
        progress: &dyn Progress,
        follow: &tagpin_registry::FollowUp<'_>,
    ) -> anyhow::Result<(Resolution, Manifests)> {
        if keys.is_empty() {
            let resolution = Resolution {
                digests: BTreeMap::new(),
                stats: Stats::default(),
            };
            return Ok((resolution, Manifests::default()));
        }
        let (runtime, resolver) = self.client()?;
        progress.start(keys.iter().collect::<BTreeSet<_>>().len());
        let both = runtime.block_on(resolver.resolve_following(
            keys,
            &|key| progress.advance(key),
            follow,
        ));
        progress.finish();
        Ok(both)
    }

    /// Fetches every distinct manifest once (by digest: what a platform comparison needs).
    pub fn manifests(&mut self, keys: Vec<DigestKey>) -> anyhow::Result<Manifests> {
        if keys.is_empty() {
            return Ok(Manifests::default());
        }
        let (runtime, resolver) = self.client()?;
        Ok(runtime.block_on(resolver.manifests(keys)))
    }

    fn client(&mut self) -> anyhow::Result<&(tokio::runtime::Runtime, Resolver)> {
        if self.client.is_none() {
            let settings = self.settings;
            let mut credentials = Credentials::from_default_docker_config().with_context(|| {
                format!(
                    "cannot read Docker's config.json (from ${} or ~/.docker)",
                    env::DOCKER_CONFIG
                )
            })?;
            if let Some(token) = &settings.github_token {
                credentials = credentials.with_github_token(token.clone());
            }
            let options = ResolverOptions {
                mirrors: settings.mirrors.clone(),
                insecure_registries: settings.insecure_registries.clone(),
                concurrency: settings.concurrency.get(),
                per_registry_concurrency: settings.per_registry_concurrency.get(),
                request_timeout: settings.timeout,
                deadline: Some(settings.deadline),
                cache_dir: settings.cache_dir.clone(),
                credentials,
                ..ResolverOptions::default()
            };
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            let resolver = {
                let _entered = runtime.enter();
                Resolver::new(options).context("cannot set up the registry client")?
            };
            self.client = Some((runtime, resolver));
        }
        Ok(self.client.as_ref().expect("just built"))
    }
}

/// The error's message followed by its causes (`…: connection refused`), so a per-reference
/// line says why, not only what; a cause the message already spells out is not repeated.
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::with_causes;

    /// An error with a cause, for `with_causes`.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn unresolved_messages_say_why_without_repeating_themselves() {
        let refused = Layer("tcp connect error: connection refused", None);
        let client = Layer("client error (Connect)", Some(Box::new(refused)));
        // The top message already spells out the middle cause; it is not repeated.
        let top = Layer(
            "request failed after 4 attempt(s): client error (Connect)",
            Some(Box::new(client)),
        );
        assert_eq!(
            with_causes(&top),
            "request failed after 4 attempt(s): client error (Connect): tcp connect error: \
             connection refused"
        );
        assert_eq!(with_causes(&Layer("not found", None)), "not found");
    }
}
