//! The Bearer challenge flow against a wiremock registry and token endpoint.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use tagpin_registry::{Credentials, Resolver, ResolverOptions, Secret};
use wiremock::matchers::{header, method, path, path_regex, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::support::{
    count, digest_text, error_kind, fast_options, host, key, resolve, resolve_with,
};

const SERVICE: &str = "fake-registry";

fn digest_for(repository: &str) -> String {
    crate::support::sha256(repository.as_bytes())
}

fn no_authorization(request: &Request) -> bool {
    !request.headers.contains_key("authorization")
}

/// A registry that challenges unauthenticated requests and serves `repositories` to holders of
/// `Bearer token-for-<repository>`; its token endpoint checks `service` and `scope`, and,
/// with `login`, the Basic credentials.
async fn bearer_registry(repositories: &[&str], login: Option<(&str, &str)>) -> MockServer {
    let server = MockServer::start().await;
    let realm = format!("{}/token", server.uri());
    Mock::given(path_regex("^/v2/.*/manifests/"))
        .and(no_authorization)
        .respond_with(ResponseTemplate::new(401).insert_header(
            "www-authenticate",
            format!(r#"Bearer realm="{realm}",service="{SERVICE}",scope="repository:x:pull""#),
        ))
        .mount(&server)
        .await;
    for repository in repositories {
        let token = format!("token-for-{}", repository.replace('/', "-"));
        Mock::given(method("HEAD"))
            .and(path_regex(format!("^/v2/{repository}/manifests/")))
            .and(header("authorization", format!("Bearer {token}").as_str()))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("docker-content-digest", digest_for(repository)),
            )
            .mount(&server)
            .await;
        let mut token_mock = Mock::given(method("GET"))
            .and(path("/token"))
            .and(query_param("service", SERVICE))
            .and(query_param(
                "scope",
                format!("repository:{repository}:pull").as_str(),
            ));
        if let Some((user, password)) = login {
            let basic = format!("Basic {}", STANDARD.encode(format!("{user}:{password}")));
            token_mock = token_mock.and(header("authorization", basic.as_str()));
        }
        token_mock
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(serde_json::json!({"token": token, "expires_in": 300})),
            )
            .mount(&server)
            .await;
    }
    server
}

#[tokio::test]
async fn anonymous_token_checked_scope_and_reused_within_a_repository() {
    let server = bearer_registry(&["org/img", "org/other"], None).await;
    let registry = host(&server);
    let resolver = Resolver::new(fast_options()).unwrap();

    let first = key(&registry, "org/img", "v1");
    let (resolution, _) = resolve_with(&resolver, [first.clone()]).await;
    assert_eq!(digest_text(&resolution, &first), digest_for("org/img"));
    assert_eq!(resolution.stats.requests["HEAD"]["401"], 1);
    assert_eq!(resolution.stats.tokens_fetched, 1);

    // Same repository: the cached token, no challenge. Another repository: the realm is known,
    // so its token is fetched before the first request.
    let more = [
        key(&registry, "org/img", "v2"),
        key(&registry, "org/img", "v3"),
        key(&registry, "org/other", "v1"),
    ];
    let (resolution, _) = resolve_with(&resolver, more.clone()).await;
    for tag in &more {
        assert_eq!(digest_text(&resolution, tag), digest_for(&tag.repository));
    }
    let stats = &resolution.stats;
    assert_eq!(stats.requests["HEAD"].get("401"), None, "{stats:?}");
    assert_eq!(stats.requests["HEAD"]["200"], 3, "{stats:?}");
    assert_eq!(stats.tokens_fetched, 1, "only org/other's: {stats:?}");

    assert_eq!(
        count(&server, "GET", "/token").await,
        2,
        "one token per repository"
    );
    assert_eq!(count(&server, "HEAD", "/v2/org/img/manifests/v1").await, 2);
    assert_eq!(
        count(&server, "HEAD", "/v2/org/other/manifests/v1").await,
        1
    );
}

#[tokio::test]
async fn concurrent_lookups_share_one_token_fetch() {
    let server = bearer_registry(&["org/img"], None).await;
    let registry = host(&server);
    let keys: Vec<_> = (0..12)
        .map(|n| key(&registry, "org/img", &format!("t{n}")))
        .collect();
    let (resolution, _) = resolve(fast_options(), keys.clone()).await;
    for tag in &keys {
        assert_eq!(digest_text(&resolution, tag), digest_for("org/img"));
    }
    assert_eq!(count(&server, "GET", "/token").await, 1);
    assert_eq!(resolution.stats.tokens_fetched, 1);
    assert_eq!(resolution.stats.requests["HEAD"]["200"], 12);
}

#[tokio::test]
async fn token_with_credentials() {
    let server = bearer_registry(&["private/img"], Some(("bob", "hunter2"))).await;
    let registry = host(&server);
    let tag = key(&registry, "private/img", "v1");
    let options = ResolverOptions {
        credentials: Credentials::anonymous().with_basic(&registry, "bob", Secret::new("hunter2")),
        ..fast_options()
    };
    let (resolution, _) = resolve(options, [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), digest_for("private/img"));
    assert_eq!(count(&server, "GET", "/token").await, 1);

    // Wrong password: the token endpoint's mock does not match (wiremock answers 404).
    let options = ResolverOptions {
        credentials: Credentials::anonymous().with_basic(&registry, "bob", Secret::new("nope")),
        ..fast_options()
    };
    let (resolution, _) = resolve(options, [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "unexpected-status");
    assert_eq!(
        count(&server, "GET", "/token").await,
        2,
        "no retry of the token request"
    );
}

#[tokio::test]
async fn identity_token_is_exchanged_with_oauth2() {
    let server = MockServer::start().await;
    let registry = host(&server);
    let realm = format!("{}/token", server.uri());
    Mock::given(method("HEAD"))
        .and(no_authorization)
        .respond_with(ResponseTemplate::new(401).insert_header(
            "www-authenticate",
            format!(r#"Bearer realm="{realm}",service="{SERVICE}""#),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(|request: &Request| {
            let body = String::from_utf8_lossy(&request.body);
            body.contains("grant_type=refresh_token")
                && body.contains("refresh_token=my-refresh")
                && body.contains("scope=repository%3Aorg%2Fimg%3Apull")
                && body.contains("service=fake-registry")
        })
        .respond_with(
            ResponseTemplate::new(200).set_body_json(serde_json::json!({"access_token": "oauth"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("HEAD"))
        .and(header("authorization", "Bearer oauth"))
        .respond_with(
            ResponseTemplate::new(200).insert_header("docker-content-digest", digest_for("x")),
        )
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        format!(r#"{{"auths": {{"{registry}": {{"identitytoken": "my-refresh"}}}}}}"#),
    )
    .unwrap();
    let options = ResolverOptions {
        credentials: Credentials::from_docker_config_file(&config).unwrap(),
        ..fast_options()
    };
    let tag = key(&registry, "org/img", "v1");
    let (resolution, _) = resolve(options, [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), digest_for("x"));
}

#[tokio::test]
async fn refused_token_is_unauthorized_without_retries() {
    let server = MockServer::start().await;
    let registry = host(&server);
    let realm = format!("{}/token", server.uri());
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(401).insert_header(
            "www-authenticate",
            format!(r#"Bearer realm="{realm}",service="{SERVICE}""#),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/token"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(serde_json::json!({"token": "weak"})),
        )
        .mount(&server)
        .await;
    let tag = key(&registry, "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "unauthorized");
    assert_eq!(count(&server, "HEAD", "/v2/org/img/manifests/v1").await, 2);
    assert_eq!(count(&server, "GET", "/token").await, 1);
}

/// Once a host's realm is known, a lookup fetches its token up front; when that token is refused,
/// it was fetched for this very request, so a second fetch would only be refused again.
#[tokio::test]
async fn token_refused_right_after_fetching_is_not_fetched_again() {
    let server = MockServer::start().await;
    let registry = host(&server);
    let realm = format!("{}/token", server.uri());
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(401).insert_header(
            "www-authenticate",
            format!(r#"Bearer realm="{realm}",service="{SERVICE}""#),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/token"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"token": "weak", "expires_in": 300})),
        )
        .mount(&server)
        .await;
    let resolver = Resolver::new(fast_options()).unwrap();
    let first = key(&registry, "org/img", "v1");
    let (resolution, _) = resolve_with(&resolver, [first.clone()]).await;
    assert_eq!(error_kind(&resolution, &first), "unauthorized");

    let second = key(&registry, "org/private", "v1");
    let (resolution, _) = resolve_with(&resolver, [second.clone()]).await;
    assert_eq!(error_kind(&resolution, &second), "unauthorized");
    assert_eq!(resolution.stats.tokens_fetched, 1, "{:?}", resolution.stats);
    assert_eq!(
        count(&server, "HEAD", "/v2/org/private/manifests/v1").await,
        1
    );
    assert_eq!(
        count(&server, "GET", "/token").await,
        2,
        "one per repository"
    );
}

/// A cached token refused later (revoked before it expired) is replaced once.
#[tokio::test]
async fn cached_token_refused_later_is_replaced_once() {
    let server = MockServer::start().await;
    let registry = host(&server);
    let realm = format!("{}/token", server.uri());
    let ok =
        || ResponseTemplate::new(200).insert_header("docker-content-digest", digest_for("org/img"));
    Mock::given(method("HEAD"))
        .and(header("authorization", "Bearer old"))
        .respond_with(ok())
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("HEAD"))
        .and(header("authorization", "Bearer new"))
        .respond_with(ok())
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(401).insert_header(
            "www-authenticate",
            format!(r#"Bearer realm="{realm}",service="{SERVICE}""#),
        ))
        .with_priority(2)
        .mount(&server)
        .await;
    for (token, priority) in [("old", 1), ("new", 2)] {
        Mock::given(method("GET"))
            .and(path("/token"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(serde_json::json!({"token": token, "expires_in": 300})),
            )
            .up_to_n_times(if token == "old" { 1 } else { u64::MAX })
            .with_priority(priority)
            .mount(&server)
            .await;
    }
    let resolver = Resolver::new(fast_options()).unwrap();
    for tag in ["v1", "v2", "v3"] {
        let tag = key(&registry, "org/img", tag);
        let (resolution, _) = resolve_with(&resolver, [tag.clone()]).await;
        assert_eq!(digest_text(&resolution, &tag), digest_for("org/img"));
    }
    assert_eq!(count(&server, "GET", "/token").await, 2, "old, then new");
    assert_eq!(count(&server, "HEAD", "/v2/org/img/manifests/v2").await, 2);
    assert_eq!(count(&server, "HEAD", "/v2/org/img/manifests/v3").await, 1);
}

/// A registry offering Bearer and Basic: its token realm refuses the credentials, Basic
/// accepts them. Only the first challenge used to be tried (unauthorized); each is tried in
/// turn now, and later lookups on the host use the one that worked up front.
#[tokio::test]
async fn every_challenge_is_tried_in_turn() {
    let server = MockServer::start().await;
    let realm = format!("{}/token", server.uri());
    let basic = format!("Basic {}", STANDARD.encode("bob:pw"));
    Mock::given(path_regex("^/v2/.*/manifests/"))
        .and(header("authorization", basic.as_str()))
        .respond_with(
            ResponseTemplate::new(200).insert_header("docker-content-digest", digest_for("org/a")),
        )
        .mount(&server)
        .await;
    Mock::given(path_regex("^/v2/.*/manifests/"))
        .respond_with(
            ResponseTemplate::new(401)
                .append_header(
                    "www-authenticate",
                    format!(r#"Bearer realm="{realm}",service="{SERVICE}""#).as_str(),
                )
                .append_header("www-authenticate", r#"Basic realm="registry""#),
        )
        .with_priority(10)
        .mount(&server)
        .await;
    Mock::given(path("/token"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let options = ResolverOptions {
        credentials: Credentials::default().with_basic(&host(&server), "bob", Secret::new("pw")),
        ..fast_options()
    };
    let resolver = Resolver::new(options).unwrap();
    let first = key(&host(&server), "org/a", "v1");
    let (resolution, _) = resolve_with(&resolver, [first.clone()]).await;
    assert_eq!(digest_text(&resolution, &first), digest_for("org/a"));
    assert_eq!(count(&server, "GET", "/token").await, 1);

    let second = key(&host(&server), "org/b", "v1");
    let (resolution, _) = resolve_with(&resolver, [second.clone()]).await;
    assert_eq!(digest_text(&resolution, &second), digest_for("org/a"));
    assert_eq!(
        resolution.stats.total_requests(),
        1,
        "Basic up front: {:?}",
        resolution.stats
    );
}
