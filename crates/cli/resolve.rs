//! Resolving tags to digests for a command: the resolver built from the settings, run on a
//! tokio runtime owned by this call. Credentials come from Docker's `config.json` (through
//! `tagpin-registry`) and `GITHUB_TOKEN`/`GH_TOKEN` for ghcr.io.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context as _;
use tagpin_registry::{Credentials, Resolution, Resolver, ResolverOptions, Stats, TagKey};

use crate::settings::{Settings, env};

/// Reports resolution as it goes (the printer's progress bar, or nothing).
pub trait Progress: Sync {
    /// `total` distinct tags are about to be looked up.
    fn start(&self, total: usize);
    /// One more tag is done.
    fn advance(&self, key: &TagKey);
    fn finish(&self);
}

/// Looks every distinct key up once (`keys` may repeat; the stats count what that saved). Nothing to look up means no runtime, no credentials, no request.
pub fn resolve(
    keys: Vec<TagKey>,
    settings: &Settings,
    progress: &dyn Progress,
) -> anyhow::Result<Resolution> {
    if keys.is_empty() {
        return Ok(Resolution {
            digests: BTreeMap::new(),
            stats: Stats::default(),
        });
    }
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
        credentials,
        ..ResolverOptions::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let resolver = Resolver::new(options).context("cannot set up the registry client")?;
        progress.start(keys.iter().collect::<BTreeSet<_>>().len());
        let resolution = resolver.resolve(keys, &|key| progress.advance(key)).await;
        progress.finish();
        Ok(resolution)
    })
}
