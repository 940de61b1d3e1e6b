//! A real registry for the end-to-end tests: `tagpin_testkit::TestRegistry` (Debian's
//! `docker-registry`) on a runtime that keeps serving while the test runs the binary, images
//! pushed under one path prefix per upstream registry, and the `--mirror` flags that send
//! tagpin there.

use std::collections::BTreeMap;

use tagpin_testkit::{FaultProxy, PlatformImage, TestRegistry};

pub struct Registry {
    /// Kept running on its worker threads for the `FaultProxy`'s tasks.
    runtime: tokio::runtime::Runtime,
    server: TestRegistry,
    proxy: Option<FaultProxy>,
    /// `registry/repository:tag` (normalised, `docker.io/library/busybox:1.36`) → digest.
    pushed: BTreeMap<String, String>,
}

/// How an image is pushed: the manifest kinds a registry serves.
#[derive(Clone, Copy)]
pub enum Flavour {
    Image,
    OciIndex,
    DockerList,
}

impl Registry {
    pub fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let registry = runtime.block_on(TestRegistry::start());
        Self {
            runtime,
            server: registry,
            proxy: None,
            pushed: BTreeMap::new(),
        }
    }

    /// Puts a [`FaultProxy`] between tagpin and the registry; the mirror flags point at it.
    pub fn with_proxy(mut self) -> Self {
        let proxy = self.runtime.block_on(FaultProxy::start(self.server.host()));
        self.proxy = Some(proxy);
        self
    }

    pub fn proxy(&self) -> &FaultProxy {
        self.proxy.as_ref().expect("started with_proxy")
    }

    /// Pushes `key` (`docker.io/library/busybox:1.36`: the normalised registry, repository and
    /// tag) as repository `<registry>/<repository>` at the test registry; returns the digest.
    pub fn push(&mut self, key: &str, flavour: Flavour) -> String {
        let (repository, tag) = key.rsplit_once(':').expect("registry/repository:tag");
        let digest = self.runtime.block_on(async {
            match flavour {
                Flavour::Image => self.server.push_image(repository, tag).await,
                Flavour::OciIndex => self.server.push_index(repository, tag).await,
                Flavour::DockerList => self.server.push_docker_manifest_list(repository, tag).await,
            }
        });
        self.pushed.insert(key.to_owned(), digest.clone());
        digest
    }

    /// Pushes an untagged single-platform image (`os/arch[/variant]`) to the repository of
    /// `key` (`quay.io/org/img:1.0`), to list in [`Self::push_index_of`].
    pub fn push_platform_image(&self, key: &str, platform: &str) -> PlatformImage {
        let (repository, _) = key.rsplit_once(':').expect("registry/repository:tag");
        self.runtime
            .block_on(self.server.push_platform_image(repository, platform))
    }

    /// [`Self::push_platform_image`] with `created` (RFC 3339) as the config's creation time.
    pub fn push_platform_image_created(
        &self,
        key: &str,
        platform: &str,
        created: &str,
    ) -> PlatformImage {
        let (repository, _) = key.rsplit_once(':').expect("registry/repository:tag");
        self.runtime.block_on(
            self.server
                .push_platform_image_created(repository, platform, created),
        )
    }

    /// Pushes an OCI index of `children` as `key`; returns its digest. Each push is a new
    /// digest, even of the same children.
    pub fn push_index_of(&mut self, key: &str, children: &[PlatformImage]) -> String {
        let (repository, tag) = key.rsplit_once(':').expect("registry/repository:tag");
        let digest = self
            .runtime
            .block_on(self.server.push_index_of(repository, tag, children));
        self.pushed.insert(key.to_owned(), digest.clone());
        digest
    }

    pub fn pushed(&self) -> &BTreeMap<String, String> {
        &self.pushed
    }

    /// `--mirror R=HOST/R` for each of `registries`, to the proxy when there is one.
    pub fn mirror_args<'a>(&self, registries: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let host = self
            .proxy
            .as_ref()
            .map_or_else(|| self.server.host(), FaultProxy::host);
        registries
            .into_iter()
            .flat_map(|registry| {
                [
                    "--mirror".to_owned(),
                    format!("{registry}={host}/{registry}"),
                ]
            })
            .collect()
    }
}
