//! Against Debian's `docker-registry` (distribution 2.8) started by the testkit.

use std::time::Duration;

use tagpin_registry::{Credentials, Mirror, ResolverOptions, Secret};
use tagpin_testkit::{FaultProxy, TestRegistry};

use crate::support::{digest_text, error_kind, fast_options, key, resolve, result};

#[tokio::test]
async fn resolves_each_manifest_kind_to_the_pushed_digest() {
    let registry = TestRegistry::start().await;
    let host = registry.host();
    let single = registry.push_image("org/single", "1.0").await;
    let index = registry.push_index("org/multi", "1.0").await;
    let list = registry
        .push_docker_manifest_list("org/docker", "1.0")
        .await;
    let keys = [
        key(&host, "org/single", "1.0"),
        key(&host, "org/multi", "1.0"),
        key(&host, "org/docker", "1.0"),
    ];
    let (resolution, done) = resolve(fast_options(), keys.clone()).await;
    assert_eq!(digest_text(&resolution, &keys[0]), single);
    assert_eq!(digest_text(&resolution, &keys[1]), index);
    assert_eq!(digest_text(&resolution, &keys[2]), list);
    assert_eq!(done.len(), 3, "progress once per key");
    let stats = &resolution.stats;
    assert_eq!(stats.requests["HEAD"]["200"], 3, "{stats:?}");
    assert_eq!(
        stats.total_requests(),
        3,
        "one HEAD per tag, nothing else: {stats:?}"
    );
    assert_eq!(
        (stats.lookups, stats.deduplicated, stats.retries),
        (3, 0, 0)
    );
}

#[tokio::test]
async fn repushing_a_tag_moves_its_digest() {
    let registry = TestRegistry::start().await;
    let tag = key(&registry.host(), "org/img", "latest");
    let first = registry.push_image("org/img", "latest").await;
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), first);
    let second = registry.push_image("org/img", "latest").await;
    assert_ne!(first, second);
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), second);
}

#[tokio::test]
async fn missing_tag_and_repository_are_not_found() {
    let registry = TestRegistry::start().await;
    let host = registry.host();
    registry.push_image("org/img", "1.0").await;
    let missing_tag = key(&host, "org/img", "2.0");
    let missing_repository = key(&host, "org/nothing", "1.0");
    let (resolution, _) = resolve(
        fast_options(),
        [missing_tag.clone(), missing_repository.clone()],
    )
    .await;
    assert_eq!(error_kind(&resolution, &missing_tag), "not-found");
    assert_eq!(error_kind(&resolution, &missing_repository), "not-found");
    let message = result(&resolution, &missing_tag)
        .as_ref()
        .unwrap_err()
        .to_string();
    assert!(
        message.contains(&format!("http://{host}/v2/org/img/manifests/2.0")),
        "{message}"
    );
    let stats = &resolution.stats;
    assert_eq!(stats.requests["HEAD"]["404"], 2, "{stats:?}");
    assert_eq!(stats.total_requests(), 2, "404 is never retried: {stats:?}");
}

#[tokio::test]
async fn basic_auth_with_htpasswd() {
    let registry = TestRegistry::start_with_htpasswd("alice", "right-password").await;
    let host = registry.host();
    let digest = registry.push_image("private/img", "1.0").await;
    let tag = key(&host, "private/img", "1.0");

    let right = ResolverOptions {
        credentials: Credentials::anonymous().with_basic(
            &host,
            "alice",
            Secret::new("right-password"),
        ),
        ..fast_options()
    };
    let (resolution, _) = resolve(right, [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), digest);
    let stats = &resolution.stats;
    assert_eq!(stats.requests["HEAD"]["401"], 1, "the challenge: {stats:?}");
    assert_eq!(stats.requests["HEAD"]["200"], 1, "{stats:?}");
    assert_eq!(stats.tokens_fetched, 0);

    let wrong = ResolverOptions {
        credentials: Credentials::anonymous().with_basic(
            &host,
            "alice",
            Secret::new("wrong-password"),
        ),
        ..fast_options()
    };
    let (resolution, _) = resolve(wrong, [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "unauthorized");
    assert_eq!(
        resolution.stats.requests["HEAD"]["401"], 2,
        "challenge, one authenticated try, no retries: {:?}",
        resolution.stats
    );

    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "unauthorized", "anonymous");
    assert_eq!(resolution.stats.total_requests(), 1);
}

#[tokio::test]
async fn basic_auth_is_sent_up_front_once_the_challenge_is_known() {
    let registry = TestRegistry::start_with_htpasswd("alice", "pw").await;
    let host = registry.host();
    let tags: Vec<String> = (0..5).map(|n| format!("t{n}")).collect();
    let digest = registry.push_image_tags("private/img", &tags).await;
    let options = ResolverOptions {
        credentials: Credentials::anonymous().with_basic(&host, "alice", Secret::new("pw")),
        concurrency: 1,
        ..fast_options()
    };
    let resolver = tagpin_registry::Resolver::new(options).unwrap();
    let first = key(&host, "private/img", "t0");
    let (resolution, _) = crate::support::resolve_with(&resolver, [first.clone()]).await;
    assert_eq!(digest_text(&resolution, &first), digest);
    let rest: Vec<_> = tags[1..]
        .iter()
        .map(|tag| key(&host, "private/img", tag))
        .collect();
    let (resolution, _) = crate::support::resolve_with(&resolver, rest).await;
    assert_eq!(
        resolution.stats.requests["HEAD"].get("401"),
        None,
        "no second challenge: {:?}",
        resolution.stats
    );
    assert_eq!(resolution.stats.total_requests(), 4);
}

#[tokio::test]
async fn mirrors_with_a_prefix() {
    let registry = TestRegistry::start().await;
    let quay = registry.push_index("quay.io/org/img", "v1").await;
    let hub = registry.push_image("hub/library/busybox", "1.36").await;
    let proxy = FaultProxy::start(registry.host()).await;
    proxy.answer_not_found("/v2/quay.io/org/absent/");
    let options = ResolverOptions {
        mirrors: vec![
            format!("quay.io={}/quay.io", proxy.host())
                .parse::<Mirror>()
                .unwrap(),
            Mirror::new("docker.io", &format!("{}/hub", proxy.host())).unwrap(),
        ],
        ..fast_options()
    };
    let quay_key = key("quay.io", "org/img", "v1");
    let hub_key = key("docker.io", "library/busybox", "1.36");
    let absent = key("quay.io", "org/absent", "v1");
    let (resolution, _) =
        resolve(options, [quay_key.clone(), hub_key.clone(), absent.clone()]).await;
    assert_eq!(digest_text(&resolution, &quay_key), quay);
    assert_eq!(digest_text(&resolution, &hub_key), hub);
    assert_eq!(error_kind(&resolution, &absent), "not-found");
    assert_eq!(proxy.count("HEAD", "/v2/quay.io/org/img/manifests/v1"), 1);
    assert_eq!(
        proxy.count("HEAD", "/v2/hub/library/busybox/manifests/1.36"),
        1
    );
    assert_eq!(
        proxy.count("HEAD", "/v2/quay.io/org/absent/manifests/v1"),
        1
    );
    assert_eq!(proxy.total(), 3);
}

#[tokio::test]
async fn slow_registry_is_a_timeout() {
    let registry = TestRegistry::start().await;
    registry.push_image("org/img", "v1").await;
    let proxy = FaultProxy::start(registry.host()).await;
    proxy.set_latency(Duration::from_secs(2));
    let options = ResolverOptions {
        request_timeout: Duration::from_millis(200),
        ..fast_options()
    };
    let tag = key(&proxy.host(), "org/img", "v1");
    let (resolution, _) = resolve(options, [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "timeout");
    assert_eq!(proxy.total(), 1, "timeouts are not retried");
    assert_eq!(resolution.stats.requests["HEAD"]["error"], 1);
}
