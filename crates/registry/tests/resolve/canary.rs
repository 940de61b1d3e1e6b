//! A canary password in every credential source must never show up in Debug output, error
//! messages, log lines or the statistics JSON.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use tagpin_registry::{Credentials, Mirror, Resolver, ResolverOptions, Secret};
use tagpin_testkit::TestRegistry;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{fast_options, host, key, resolve_with};

const CANARY: &str = "canary-Pa55w0rd-7f3a";

/// Everything the tracing subscriber wrote.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn assert_clean(what: &str, text: &str) {
    let encoded = STANDARD.encode(format!("canary:{CANARY}"));
    assert!(
        !text.contains(CANARY),
        "the canary leaked into {what}:\n{text}"
    );
    assert!(
        !text.contains(&encoded),
        "the encoded canary leaked into {what}:\n{text}"
    );
    assert!(
        !text.contains("Y2FuYXJ5"),
        "base64 of the canary user leaked into {what}"
    );
}

#[tokio::test]
async fn canary_never_leaks() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // The test runs on one thread (current-thread runtime), so spawned lookups log here too.
    let _guard = tracing::subscriber::set_default(subscriber);

    // A real registry with Basic auth whose password is the canary.
    let basic = TestRegistry::start_with_htpasswd("canary", CANARY).await;
    basic.push_image("private/img", "v1").await;
    // A Bearer registry whose token endpoint wants the canary.
    let bearer = MockServer::start().await;
    let realm = format!("{}/token", bearer.uri());
    Mock::given(method("HEAD"))
        .and(header("authorization", "Bearer canary-token-ok"))
        .respond_with(ResponseTemplate::new(200).insert_header(
            "docker-content-digest",
            format!("sha256:{}", "a".repeat(64)),
        ))
        .mount(&bearer)
        .await;
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(401).insert_header(
            "www-authenticate",
            format!(r#"Bearer realm="{realm}",service="fake""#),
        ))
        .mount(&bearer)
        .await;
    let basic_header = format!("Basic {}", STANDARD.encode(format!("canary:{CANARY}")));
    Mock::given(method("GET"))
        .and(path("/token"))
        .and(header("authorization", basic_header.as_str()))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"token": "canary-token-ok"})),
        )
        .mount(&bearer)
        .await;

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    let auth = STANDARD.encode(format!("canary:{CANARY}"));
    std::fs::write(
        &config,
        format!(
            r#"{{"auths": {{
                "{basic}": {{"auth": "{auth}"}},
                "{bearer}": {{"username": "canary", "password": "{CANARY}"}},
                "wrong.example": {{"identitytoken": "{CANARY}"}}
            }}}}"#,
            basic = basic.host(),
            bearer = host(&bearer),
        ),
    )
    .unwrap();
    let credentials = Credentials::from_docker_config_file(&config)
        .unwrap()
        .with_github_token(Secret::new(CANARY))
        .with_basic("other.example", "canary", Secret::new(CANARY));
    let options = ResolverOptions {
        credentials,
        ..fast_options()
    };
    let mut texts = vec![
        ("options Debug", format!("{options:?}")),
        (
            "secret",
            format!("{} {:?}", Secret::new(CANARY), Secret::new(CANARY)),
        ),
    ];
    let resolver = Resolver::new(options).unwrap();
    let keys = [
        key(&basic.host(), "private/img", "v1"),
        key(&basic.host(), "private/img", "missing"),
        key(&host(&bearer), "org/img", "v1"),
    ];
    let (resolution, _) = resolve_with(&resolver, keys.clone()).await;
    assert!(
        resolution.digests[&keys[0]].is_ok(),
        "{:?}",
        resolution.digests[&keys[0]]
    );
    assert_eq!(
        resolution.digests[&keys[1]].as_ref().unwrap_err().kind(),
        "not-found"
    );
    assert!(
        resolution.digests[&keys[2]].is_ok(),
        "{:?}",
        resolution.digests[&keys[2]]
    );

    // Failure paths: a wrong password against the real registry and a refused token.
    let wrong = Resolver::new(ResolverOptions {
        credentials: Credentials::anonymous().with_basic(
            &basic.host(),
            "canary",
            Secret::new(format!("{CANARY}-wrong")),
        ),
        ..fast_options()
    })
    .unwrap();
    let (failed, _) = resolve_with(&wrong, [keys[0].clone()]).await;
    assert_eq!(
        failed.digests[&keys[0]].as_ref().unwrap_err().kind(),
        "unauthorized"
    );

    for resolution in [&resolution, &failed] {
        texts.push(("resolution Debug", format!("{resolution:?}")));
        texts.push((
            "stats JSON",
            serde_json::to_string(&resolution.stats).unwrap(),
        ));
        for result in resolution.digests.values() {
            if let Err(error) = result {
                let mut chain = format!("{error} / {error:?}");
                let mut source = std::error::Error::source(error);
                while let Some(cause) = source {
                    let _ = write!(chain, " / {cause}");
                    source = cause.source();
                }
                texts.push(("error", chain));
            }
        }
    }
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        format!(r#"{{"auths": {{"x": {{"auth": "{CANARY}"}}}}}}"#),
    )
    .unwrap();
    let error = Credentials::from_docker_config_file(&broken).err().unwrap();
    texts.push(("config error", format!("{error} {error:?}")));

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("looked up credentials"),
        "logging was captured:\n{logs}"
    );
    texts.push(("logs", logs));
    for (what, text) in texts {
        assert_clean(what, &text);
    }
}

/// Error chains of every failed key, Display and Debug.
fn error_texts(resolution: &tagpin_registry::Resolution) -> Vec<(&'static str, String)> {
    let mut texts = vec![("resolution Debug", format!("{resolution:?}"))];
    for result in resolution.digests.values() {
        if let Err(error) = result {
            let mut chain = format!("{error} / {error:?}");
            let mut source = std::error::Error::source(error);
            while let Some(cause) = source {
                let _ = write!(chain, " / {cause} / {cause:?}");
                source = cause.source();
            }
            texts.push(("error", chain));
        }
    }
    texts
}

/// The paths where a secret is most likely to be echoed back: a credential helper that fails
/// printing it, token endpoints whose error bodies repeat what they were sent, a refused
/// identity token, and credentials written into a mirror.
#[tokio::test]
async fn canary_never_leaks_on_failure_paths() {
    use std::os::unix::fs::PermissionsExt as _;

    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let encoded = STANDARD.encode(format!("canary:{CANARY}"));

    let challenge = |server: &MockServer| {
        ResponseTemplate::new(401).insert_header(
            "www-authenticate",
            format!(r#"Bearer realm="{}/token",service="fake""#, server.uri()),
        )
    };
    // Token endpoints that echo the credentials in error bodies and in a body that is not JSON.
    let echo = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(challenge(&echo))
        .mount(&echo)
        .await;
    let echoed =
        format!(r#"{{"errors":[{{"code":"DENIED","message":"bad Basic {encoded} / {CANARY}"}}]}}"#);
    for (repository, status, body) in [
        ("org/refused", 401, echoed.clone()),
        ("org/broken", 500, echoed.clone()),
        ("org/garbled", 200, format!("not json: {CANARY}")),
        (
            "org/empty",
            200,
            format!(r#"{{"token": "", "detail": "{CANARY}"}}"#),
        ),
    ] {
        Mock::given(method("GET"))
            .and(path("/token"))
            .and(query_param(
                "scope",
                format!("repository:{repository}:pull").as_str(),
            ))
            .respond_with(ResponseTemplate::new(status).set_body_string(body))
            .mount(&echo)
            .await;
    }
    // An identity token refused by the OAuth2 endpoint, which repeats it.
    let oauth = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(challenge(&oauth))
        .mount(&oauth)
        .await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(400).set_body_string(format!(
            r#"{{"error":"invalid_grant","refresh_token":"{CANARY}"}}"#
        )))
        .expect(1)
        .mount(&oauth)
        .await;
    // A registry whose credential helper fails after printing the canary on both streams.
    let with_helper = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(challenge(&with_helper))
        .mount(&with_helper)
        .await;

    let dir = tempfile::tempdir().unwrap();
    let helper = dir.path().join("docker-credential-canary");
    std::fs::write(
        &helper,
        format!("#!/bin/sh\necho '{CANARY}'\necho '{CANARY} {encoded}' >&2\nexit 3\n"),
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"auths": {{
                "{echo}": {{"username": "canary", "password": "{CANARY}"}},
                "{oauth}": {{"identitytoken": "{CANARY}"}}
            }}, "credHelpers": {{"{with_helper}": "canary"}}}}"#,
            echo = host(&echo),
            oauth = host(&oauth),
            with_helper = host(&with_helper),
        ),
    )
    .unwrap();
    let resolver = Resolver::new(ResolverOptions {
        credentials: Credentials::from_docker_config_file(&config)
            .unwrap()
            .with_helper_path(dir.path()),
        ..fast_options()
    })
    .unwrap();
    let keys = [
        (key(&host(&echo), "org/refused", "v1"), "unauthorized"),
        (key(&host(&echo), "org/broken", "v1"), "unexpected-status"),
        (key(&host(&echo), "org/garbled", "v1"), "bad-token"),
        (key(&host(&echo), "org/empty", "v1"), "bad-token"),
        (key(&host(&oauth), "org/img", "v1"), "unexpected-status"),
        (key(&host(&with_helper), "org/img", "v1"), "credentials"),
    ];
    let (resolution, _) = resolve_with(&resolver, keys.iter().map(|(key, _)| key.clone())).await;
    for (key, kind) in &keys {
        let result = &resolution.digests[key];
        assert_eq!(
            result
                .as_ref()
                .err()
                .map(tagpin_registry::ResolveError::kind),
            Some(*kind),
            "{key}: {result:?}"
        );
    }

    let mut texts = error_texts(&resolution);
    texts.push((
        "stats JSON",
        serde_json::to_string(&resolution.stats).unwrap(),
    ));
    for text in [
        format!("quay.io=canary:{CANARY}@mirror.example/q"),
        format!("quay.io=https://canary:{CANARY}@mirror.example"),
        format!("canary:{CANARY}@mirror.example"),
    ] {
        let error = text.parse::<Mirror>().unwrap_err();
        texts.push(("mirror error", format!("{error} {error:?}")));
    }
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("fetched token") || logs.contains("not resolved"),
        "{logs}"
    );
    texts.push(("logs", logs));
    for (what, text) in texts {
        assert_clean(what, &text);
    }
}
