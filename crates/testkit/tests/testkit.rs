//! The harness itself: the registry serves what was pushed, auth is enforced, the proxy counts
//! and injects.

use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};
use tagpin_testkit::{FaultProxy, TestRegistry, media_types};

const ACCEPT: &str = "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json";

async fn get_manifest(host: &str, path: &str) -> (u16, String, Vec<u8>) {
    let response = reqwest::Client::new()
        .get(format!("http://{host}/v2/{path}"))
        .header("accept", ACCEPT)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (
        status,
        content_type,
        response.bytes().await.unwrap().to_vec(),
    )
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

#[tokio::test]
async fn pushed_manifests_are_served_with_their_digests() {
    let registry = TestRegistry::start().await;
    let cases = [
        (
            registry.push_image("org/single", "v1").await,
            "org/single",
            media_types::OCI_MANIFEST,
        ),
        (
            registry.push_index("org/multi", "v1").await,
            "org/multi",
            media_types::OCI_INDEX,
        ),
        (
            registry.push_docker_manifest_list("org/docker", "v1").await,
            "org/docker",
            media_types::DOCKER_MANIFEST_LIST,
        ),
    ];
    let original = cases[0].0.clone();
    for (digest, repository, media_type) in cases {
        let (status, content_type, body) =
            get_manifest(&registry.host(), &format!("{repository}/manifests/v1")).await;
        assert_eq!(status, 200, "{repository}");
        assert_eq!(content_type, media_type, "{repository}");
        assert_eq!(sha256(&body), digest, "{repository}");
    }
    let moved = registry.push_image("org/single", "v1").await;
    assert_ne!(moved, original, "every push has unique content");
    let (_, _, body) = get_manifest(&registry.host(), "org/single/manifests/v1").await;
    assert_eq!(sha256(&body), moved, "re-pushing moves the tag");
}

#[tokio::test]
async fn push_image_tags_shares_one_manifest() {
    let registry = TestRegistry::start().await;
    let tags: Vec<String> = (0..40).map(|n| format!("t{n}")).collect();
    let digest = registry.push_image_tags("org/many", &tags).await;
    for tag in ["t0", "t39"] {
        let (_, _, body) =
            get_manifest(&registry.host(), &format!("org/many/manifests/{tag}")).await;
        assert_eq!(sha256(&body), digest);
    }
}

#[tokio::test]
async fn htpasswd_registry_requires_basic_auth() {
    let registry = TestRegistry::start_with_htpasswd("alice", "s3cret").await;
    let digest = registry.push_image("private/img", "v1").await;
    let (status, _, _) = get_manifest(&registry.host(), "private/img/manifests/v1").await;
    assert_eq!(status, 401);
    let response = reqwest::Client::new()
        .get(format!("{}/v2/private/img/manifests/v1", registry.url()))
        .header("accept", ACCEPT)
        .basic_auth("alice", Some("s3cret"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(sha256(&response.bytes().await.unwrap()), digest);
}

#[tokio::test]
async fn proxy_counts_delays_and_injects() {
    let registry = TestRegistry::start().await;
    let digest = registry.push_image("org/img", "v1").await;
    let proxy = FaultProxy::start(registry.host()).await;
    proxy.set_latency(Duration::from_millis(50));
    let started = Instant::now();
    let (status, _, body) = get_manifest(&proxy.host(), "org/img/manifests/v1").await;
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!((status, sha256(&body)), (200, digest));
    proxy.set_latency(Duration::ZERO);
    proxy.answer_not_found("/v2/org/img/manifests/gone");
    let (status, _, body) = get_manifest(&proxy.host(), "org/img/manifests/gone").await;
    assert_eq!(status, 404);
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("MANIFEST_UNKNOWN")
    );
    assert_eq!(proxy.count("GET", "/v2/org/img/manifests/"), 2);
    assert_eq!(proxy.total(), 2);
}
