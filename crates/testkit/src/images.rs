//! Pushing test images: blobs and manifests through oci-client (`push_blob`,
//! `push_manifest_raw`), every image with unique content so re-pushing a tag moves it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::{SystemTime, UNIX_EPOCH};

use oci_client::{Reference, RegistryOperation};
use reqwest::header::HeaderValue;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::TestRegistry;

/// The manifest media types the helpers push.
pub mod media_types {
    pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
    pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
    pub const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
    pub const OCI_LAYER: &str = "application/vnd.oci.image.layer.v1.tar";
    pub const DOCKER_MANIFEST_LIST: &str =
        "application/vnd.docker.distribution.manifest.list.v2+json";
    pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
    pub const DOCKER_CONFIG: &str = "application/vnd.docker.container.image.v1+json";
    pub const DOCKER_LAYER: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";
}

use media_types::{
    DOCKER_CONFIG, DOCKER_LAYER, DOCKER_MANIFEST, DOCKER_MANIFEST_LIST, OCI_CONFIG, OCI_INDEX,
    OCI_LAYER, OCI_MANIFEST,
};

/// Which manifest flavour a single-platform image is pushed as.
#[derive(Clone, Copy)]
enum Flavour {
    Oci,
    Docker,
}

/// A single-platform image pushed by digest (untagged), to list in an index with
/// [`TestRegistry::push_index_of`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformImage {
    /// `os/architecture[/variant]`, as the index lists it.
    pub platform: String,
    /// The manifest digest.
    pub digest: String,
    media_type: &'static str,
    size: usize,
}

/// A manifest as pushed: the exact bytes and their digest.
struct Pushed {
    digest: String,
    media_type: &'static str,
    size: usize,
}

static NONCE: AtomicU64 = AtomicU64::new(0);

fn unique() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        NONCE.fetch_add(1, Ordering::Relaxed)
    )
}

/// `sha256:<hex>` of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

impl TestRegistry {
    /// Pushes a single-platform OCI image with unique content to `repository:tag`; returns the
    /// manifest digest (`sha256:` of the exact bytes pushed).
    pub async fn push_image(&self, repository: &str, tag: &str) -> String {
        let manifest = self
            .push_platform(repository, Flavour::Oci, "linux/amd64")
            .await;
        self.put_manifest(repository, tag, manifest.0.media_type, manifest.1)
            .await
    }

    /// Pushes a two-platform OCI image index (amd64, arm64) to `repository:tag`; returns the
    /// index digest.
    pub async fn push_index(&self, repository: &str, tag: &str) -> String {
        self.push_multi(repository, tag, Flavour::Oci).await
    }

    /// Pushes a two-platform Docker manifest list of Docker v2 manifests to `repository:tag`;
    /// returns the list digest.
    pub async fn push_docker_manifest_list(&self, repository: &str, tag: &str) -> String {
        self.push_multi(repository, tag, Flavour::Docker).await
    }

    /// Pushes a single-platform OCI image with unique content for `platform`
    /// (`os/architecture[/variant]`) by its digest, untagged.
    pub async fn push_platform_image(&self, repository: &str, platform: &str) -> PlatformImage {
        self.push_platform_image_created(repository, platform, CREATED)
            .await
    }

    /// [`Self::push_platform_image`] with `created` (RFC 3339) as its config's creation time.
    pub async fn push_platform_image_created(
        &self,
        repository: &str,
        platform: &str,
        created: &str,
    ) -> PlatformImage {
        let (pushed, body) = self
            .push_platform_at(repository, Flavour::Oci, platform, created)
            .await;
        self.put_manifest(repository, &pushed.digest, pushed.media_type, body)
            .await;
        PlatformImage {
            platform: platform.to_owned(),
            digest: pushed.digest,
            media_type: pushed.media_type,
            size: pushed.size,
        }
    }

    /// Pushes an OCI image index listing `children` (pushed with
    /// [`Self::push_platform_image`]) to `repository:tag`; returns the index digest. Every
    /// index gets a unique annotation, as a re-signed or rebuilt index would: pushing the same
    /// children again moves the tag.
    pub async fn push_index_of(
        &self,
        repository: &str,
        tag: &str,
        children: &[PlatformImage],
    ) -> String {
        let entries: Vec<Value> = children
            .iter()
            .map(|child| {
                json!({
                    "mediaType": child.media_type,
                    "digest": child.digest,
                    "size": child.size,
                    "platform": platform_json(&child.platform),
                })
            })
            .collect();
        let index = json!({
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": entries,
            "annotations": {"tagpin.test.nonce": unique()},
        });
        self.put_manifest(repository, tag, OCI_INDEX, to_bytes(&index))
            .await
    }

    /// Pushes one single-platform image and tags it as each of `tags` (concurrently, 16 at a
    /// time); returns the manifest digest all the tags share.
    pub async fn push_image_tags(&self, repository: &str, tags: &[String]) -> String {
        let (pushed, body) = self
            .push_platform(repository, Flavour::Oci, "linux/amd64")
            .await;
        let mut pending = tags.iter();
        loop {
            let batch: Vec<_> = pending
                .by_ref()
                .take(16)
                .map(|tag| self.put_manifest(repository, tag, pushed.media_type, body.clone()))
                .collect();
            if batch.is_empty() {
                return pushed.digest;
            }
            for pushed_tag in join_all(batch).await {
                assert_eq!(pushed_tag, pushed.digest);
            }
        }
    }

    /// Pushes `body` as a manifest of `media_type` to `repository:tag` (or `@digest` when `tag`
    /// is a digest); returns its digest.
    pub async fn put_manifest(
        &self,
        repository: &str,
        tag: &str,
        media_type: &str,
        body: Vec<u8>,
    ) -> String {
        let reference = if tag.starts_with("sha256:") {
            Reference::with_digest(self.host(), repository.to_owned(), tag.to_owned())
        } else {
            Reference::with_tag(self.host(), repository.to_owned(), tag.to_owned())
        };
        self.authenticate(&reference).await;
        let digest = sha256(&body);
        self.client
            .push_manifest_raw(
                &reference,
                body,
                HeaderValue::from_str(media_type).expect("media type is a header value"),
            )
            .await
            .unwrap_or_else(|error| panic!("push manifest {reference}: {error}"));
        digest
    }

    async fn push_multi(&self, repository: &str, tag: &str, flavour: Flavour) -> String {
        let mut entries = Vec::new();
        for architecture in ["linux/amd64", "linux/arm64"] {
            let (pushed, body) = self.push_platform(repository, flavour, architecture).await;
            self.put_manifest(repository, &pushed.digest, pushed.media_type, body)
                .await;
            entries.push(json!({
                "mediaType": pushed.media_type,
                "digest": pushed.digest,
                "size": pushed.size,
                "platform": platform_json(architecture),
            }));
        }
        let media_type = match flavour {
            Flavour::Oci => OCI_INDEX,
            Flavour::Docker => DOCKER_MANIFEST_LIST,
        };
        let index = json!({
            "schemaVersion": 2,
            "mediaType": media_type,
            "manifests": entries,
        });
        self.put_manifest(repository, tag, media_type, to_bytes(&index))
            .await
    }

    /// Pushes a config and a layer with unique content; returns the manifest (not yet pushed)
    /// that refers to them.
    async fn push_platform(
        &self,
        repository: &str,
        flavour: Flavour,
        platform: &str,
    ) -> (Pushed, Vec<u8>) {
        self.push_platform_at(repository, flavour, platform, CREATED)
            .await
    }

    /// [`Self::push_platform`] with `created` as the config's creation time.
    async fn push_platform_at(
        &self,
        repository: &str,
        flavour: Flavour,
        platform: &str,
        created: &str,
    ) -> (Pushed, Vec<u8>) {
        let (manifest_type, config_type, layer_type) = match flavour {
            Flavour::Oci => (OCI_MANIFEST, OCI_CONFIG, OCI_LAYER),
            Flavour::Docker => (DOCKER_MANIFEST, DOCKER_CONFIG, DOCKER_LAYER),
        };
        let nonce = unique();
        let layer = format!("tagpin test layer {nonce}").into_bytes();
        let layer_digest = sha256(&layer);
        let mut config = platform_json(platform);
        config["created"] = json!(created);
        config["config"] = json!({"Labels": {"tagpin.test.nonce": nonce}});
        config["rootfs"] = json!({"type": "layers", "diff_ids": [layer_digest]});
        let config = to_bytes(&config);
        let config_digest = sha256(&config);
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": manifest_type,
            "config": {"mediaType": config_type, "digest": config_digest, "size": config.len()},
            "layers": [{"mediaType": layer_type, "digest": layer_digest, "size": layer.len()}],
        });
        self.push_blob(repository, layer).await;
        self.push_blob(repository, config).await;
        let body = to_bytes(&manifest);
        let pushed = Pushed {
            digest: sha256(&body),
            media_type: manifest_type,
            size: body.len(),
        };
        (pushed, body)
    }

    async fn push_blob(&self, repository: &str, data: Vec<u8>) {
        let reference = Reference::with_tag(self.host(), repository.to_owned(), "blob".to_owned());
        self.authenticate(&reference).await;
        let digest = sha256(&data);
        self.client
            .push_blob(&reference, data, &digest)
            .await
            .unwrap_or_else(|error| panic!("push blob {digest} to {repository}: {error}"));
    }

    /// Logs oci-client in for pushing to the reference's repository, once per repository.
    async fn authenticate(&self, reference: &Reference) {
        let repository = reference.repository().to_owned();
        if self
            .authenticated
            .lock()
            .expect("authenticated lock")
            .contains(&repository)
        {
            return;
        }
        self.client
            .auth(reference, &self.auth, RegistryOperation::Push)
            .await
            .unwrap_or_else(|error| panic!("authenticate to the test registry: {error}"));
        self.authenticated
            .lock()
            .expect("authenticated lock")
            .insert(repository);
    }
}

/// The creation time every test image's config carries.
pub const CREATED: &str = "2026-11-28T09:30:00Z";

/// `{"os", "architecture"[, "variant"]}` of `os/architecture[/variant]`.
fn platform_json(platform: &str) -> Value {
    let mut parts = platform.split('/');
    let (Some(os), Some(architecture)) = (parts.next(), parts.next()) else {
        panic!("platform {platform:?} is not os/architecture[/variant]");
    };
    let mut value = json!({"architecture": architecture, "os": os});
    if let Some(variant) = parts.next() {
        value["variant"] = json!(variant);
    }
    value
}

fn to_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(value).expect("JSON serialises")
}

/// Awaits all `futures` concurrently in the current task (no `futures` crate needed).
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pending: Vec<_> = futures
        .into_iter()
        .map(|future| Some(Box::pin(future)))
        .collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (slot, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => {
                        *output = Some(value);
                        *slot = None;
                    }
                    Poll::Pending => done = false,
                }
            }
        }
        if done { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    outputs
        .into_iter()
        .map(|output| output.expect("every future finished"))
        .collect()
}
