//! Faults from fakes: rate limiting, 5xx bursts, resets, missing and wrong digest headers.

use std::time::{Duration, Instant};

use tagpin_registry::{ResolverOptions, RetryPolicy};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{count, digest_text, error_kind, fast_options, host, key, resolve, sha256};

const MANIFEST: &str = "/v2/org/img/manifests/v1";
const BODY: &str =
    r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json"}"#;

fn ok_head() -> ResponseTemplate {
    ResponseTemplate::new(200).insert_header("docker-content-digest", sha256(BODY.as_bytes()))
}

async fn mount_sequence(server: &MockServer, first: ResponseTemplate, times: u64) {
    Mock::given(method("HEAD"))
        .and(path(MANIFEST))
        .respond_with(first)
        .up_to_n_times(times)
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("HEAD"))
        .and(path(MANIFEST))
        .respond_with(ok_head())
        .with_priority(2)
        .mount(server)
        .await;
}

#[tokio::test]
async fn rate_limited_then_success_honours_retry_after() {
    let server = MockServer::start().await;
    mount_sequence(
        &server,
        ResponseTemplate::new(429).insert_header("retry-after", "1"),
        1,
    )
    .await;
    let tag = key(&host(&server), "org/img", "v1");
    let started = Instant::now();
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited Retry-After"
    );
    assert_eq!(digest_text(&resolution, &tag), sha256(BODY.as_bytes()));
    assert_eq!(count(&server, "HEAD", MANIFEST).await, 2);
    assert_eq!(resolution.stats.retries, 1);
    assert_eq!(resolution.stats.requests["HEAD"]["429"], 1);
}

#[tokio::test]
async fn retry_after_as_http_date() {
    let server = MockServer::start().await;
    mount_sequence(
        &server,
        ResponseTemplate::new(503).insert_header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
        1,
    )
    .await;
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), sha256(BODY.as_bytes()));
    assert_eq!(count(&server, "HEAD", MANIFEST).await, 2);
}

#[tokio::test]
async fn retry_after_beyond_the_budget_gives_up_at_once() {
    let server = MockServer::start().await;
    mount_sequence(
        &server,
        ResponseTemplate::new(429).insert_header("retry-after", "3600"),
        1,
    )
    .await;
    let tag = key(&host(&server), "org/img", "v1");
    let started = Instant::now();
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(error_kind(&resolution, &tag), "rate-limited");
    assert_eq!(count(&server, "HEAD", MANIFEST).await, 1);
}

#[tokio::test]
async fn service_unavailable_bursts() {
    let server = MockServer::start().await;
    mount_sequence(&server, ResponseTemplate::new(503), 3).await;
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), sha256(BODY.as_bytes()));
    assert_eq!(count(&server, "HEAD", MANIFEST).await, 4);
    assert_eq!(resolution.stats.retries, 3);

    // Longer than the attempts allow: the last status is reported.
    let server = MockServer::start().await;
    for status in [502, 504] {
        Mock::given(method("HEAD"))
            .respond_with(ResponseTemplate::new(status))
            .up_to_n_times(2)
            .mount(&server)
            .await;
    }
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "unexpected-status");
    let message = resolution.digests[&tag].as_ref().unwrap_err().to_string();
    assert!(message.contains("504 after 4 attempt(s)"), "{message}");
    assert_eq!(count(&server, "HEAD", MANIFEST).await, 4);
}

#[tokio::test]
async fn not_found_and_unauthorized_are_not_retried() {
    for (status, kind) in [
        (404, "not-found"),
        (401, "unauthorized"),
        (403, "unauthorized"),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("HEAD"))
            .respond_with(ResponseTemplate::new(status))
            .mount(&server)
            .await;
        let tag = key(&host(&server), "org/img", "v1");
        let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
        assert_eq!(error_kind(&resolution, &tag), kind, "{status}");
        assert_eq!(count(&server, "HEAD", MANIFEST).await, 1, "{status}");
        assert_eq!(resolution.stats.total_requests(), 1, "{status}");
    }
}

#[tokio::test]
async fn missing_digest_header_falls_back_to_get_and_hashes() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(MANIFEST))
        .respond_with(ResponseTemplate::new(200).set_body_string(BODY))
        .expect(1)
        .mount(&server)
        .await;
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), sha256(BODY.as_bytes()));
    assert_eq!(resolution.stats.requests_with_method("GET"), 1);
}

#[tokio::test]
async fn digest_header_on_get_is_verified() {
    let wrong = format!("sha256:{}", "0".repeat(64));
    let sha512 = {
        use sha2::Digest as _;
        format!(
            "sha512:{}",
            hex::encode(sha2::Sha512::digest(BODY.as_bytes()))
        )
    };
    let cases = [
        (Some(wrong.as_str()), Err("bad-digest")),
        (Some("md5:abcdef"), Err("bad-digest")),
        (Some(sha512.as_str()), Ok(sha512.clone())),
        (None, Ok(sha256(BODY.as_bytes()))),
    ];
    for (header, expected) in cases {
        let server = MockServer::start().await;
        Mock::given(method("HEAD"))
            .respond_with(ResponseTemplate::new(200))
            .mount(&server)
            .await;
        let mut get = ResponseTemplate::new(200).set_body_string(BODY);
        if let Some(header) = header {
            get = get.insert_header("docker-content-digest", header);
        }
        Mock::given(method("GET"))
            .respond_with(get)
            .expect(1)
            .mount(&server)
            .await;
        let tag = key(&host(&server), "org/img", "v1");
        let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
        match expected {
            Ok(digest) => assert_eq!(digest_text(&resolution, &tag), digest, "{header:?}"),
            Err(kind) => assert_eq!(error_kind(&resolution, &tag), kind, "{header:?}"),
        }
    }
}

#[tokio::test]
async fn invalid_digest_header_on_head_is_rejected() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(
            ResponseTemplate::new(200).insert_header("docker-content-digest", "sha256:XYZ"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "bad-digest");
}

#[tokio::test]
async fn duplicate_keys_are_looked_up_once() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .and(path(MANIFEST))
        .respond_with(ok_head())
        .expect(1)
        .mount(&server)
        .await;
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, done) = resolve(fast_options(), vec![tag.clone(); 50]).await;
    assert_eq!(digest_text(&resolution, &tag), sha256(BODY.as_bytes()));
    assert_eq!(done, [tag]);
    assert_eq!(
        (resolution.stats.lookups, resolution.stats.deduplicated),
        (1, 49)
    );
    assert_eq!(resolution.stats.total_requests(), 1);
}

/// A raw TCP server: the first `resets` connections are closed with a reset after the request
/// arrives; later ones get a HEAD answer with a digest. Returns its address and a connection
/// counter.
async fn resetting_server(
    resets: usize,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let connections = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&connections);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let seen = counter.fetch_add(1, Ordering::SeqCst);
            let mut buffer = [0_u8; 4096];
            let _ = socket.read(&mut buffer).await;
            if seen < resets {
                #[expect(deprecated, reason = "SO_LINGER 0 is how a test makes a reset")]
                let _ = socket.set_linger(Some(Duration::ZERO));
                drop(socket);
                continue;
            }
            let response = format!(
                "HTTP/1.1 200 OK\r\nDocker-Content-Digest: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                sha256(BODY.as_bytes())
            );
            let _ = socket.write_all(response.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    (addr, connections)
}

#[tokio::test]
async fn connection_reset_is_retried() {
    use std::sync::atomic::Ordering;
    let (addr, connections) = resetting_server(2).await;
    let tag = key(&addr, "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), sha256(BODY.as_bytes()));
    assert_eq!(connections.load(Ordering::SeqCst), 3);
    assert_eq!(resolution.stats.retries, 2);
    assert_eq!(resolution.stats.requests["HEAD"]["error"], 2);

    let (addr, connections) = resetting_server(usize::MAX).await;
    let tag = key(&addr, "org/img", "v1");
    let options = ResolverOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            ..fast_options().retry
        },
        ..fast_options()
    };
    let (resolution, _) = resolve(options, [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "transport");
    assert_eq!(
        connections.load(Ordering::SeqCst),
        3,
        "capped at max_attempts"
    );
}

#[tokio::test]
async fn dns_failure_is_not_retried() {
    let tag = key("registry.invalid", "org/img", "v1");
    let options = ResolverOptions {
        insecure_registries: vec!["registry.invalid".to_owned()],
        request_timeout: Duration::from_secs(3),
        ..fast_options()
    };
    let (resolution, _) = resolve(options, [tag.clone()]).await;
    let kind = error_kind(&resolution, &tag);
    assert!(kind == "transport" || kind == "timeout", "{kind}");
    assert_eq!(resolution.stats.retries, 0, "{:?}", resolution.stats);
    assert_eq!(resolution.stats.total_requests(), 1);
}

#[tokio::test]
async fn head_not_allowed_falls_back_to_get() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(405))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string(BODY)
                .insert_header("docker-content-digest", sha256(BODY.as_bytes())),
        )
        .expect(1)
        .mount(&server)
        .await;
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), sha256(BODY.as_bytes()));
}

#[tokio::test]
async fn oversized_manifest_is_rejected() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(vec![b' '; 5 * 1024 * 1024]))
        .expect(1)
        .mount(&server)
        .await;
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "bad-digest");
    let message = resolution.digests[&tag].as_ref().unwrap_err().to_string();
    assert!(message.contains("larger than 4194304 bytes"), "{message}");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// A GET answered with `Content-Encoding: gzip` (though tagpin asks for `identity`) used to
/// be hashed as sent, compressed, and that wrong digest was written.
#[tokio::test]
async fn a_gzip_encoded_manifest_is_hashed_decoded() {
    let compressed = gzip(BODY.as_bytes());
    let right = sha256(BODY.as_bytes());
    let of_compressed = sha256(&compressed);
    let cases: [(&str, Option<&str>, Result<&str, &str>); 5] = [
        ("gzip", None, Ok(&right)),
        ("gzip", Some(&right), Ok(&right)),
        ("gzip", Some(&of_compressed), Err("bad-digest")),
        ("identity, gzip", None, Ok(&right)),
        ("br", None, Err("bad-digest")),
    ];
    for (encoding, header, expected) in cases {
        let server = MockServer::start().await;
        Mock::given(method("HEAD"))
            .respond_with(ResponseTemplate::new(200))
            .mount(&server)
            .await;
        let mut get = ResponseTemplate::new(200)
            .insert_header("content-encoding", encoding)
            .set_body_bytes(compressed.clone());
        if let Some(header) = header {
            get = get.insert_header("docker-content-digest", header);
        }
        Mock::given(method("GET"))
            .and(wiremock::matchers::header("accept-encoding", "identity"))
            .respond_with(get)
            .expect(1)
            .mount(&server)
            .await;
        let tag = key(&host(&server), "org/img", "v1");
        let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
        match expected {
            Ok(digest) => assert_eq!(
                digest_text(&resolution, &tag),
                digest,
                "{encoding} {header:?}"
            ),
            Err(kind) => assert_eq!(error_kind(&resolution, &tag), kind, "{encoding} {header:?}"),
        }
        let heads = server.received_requests().await.unwrap();
        assert!(
            heads
                .iter()
                .all(|request| request.headers.get("accept-encoding").unwrap() == "identity"),
            "every manifest request asks for identity"
        );
    }
    // A body that does not decode is not hashed either.
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-encoding", "gzip")
                .set_body_string(BODY),
        )
        .mount(&server)
        .await;
    let tag = key(&host(&server), "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(error_kind(&resolution, &tag), "bad-digest");
    let message = resolution.digests[&tag].as_ref().unwrap_err().to_string();
    assert!(message.contains("Content-Encoding: gzip"), "{message}");
}

/// A raw server: HEAD gets 200 without a digest; the first `cut` GETs get their headers and
/// part of the body, then a reset; later GETs the whole body. Returns the address and a GET
/// counter.
async fn cutting_server(cut: usize) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let gets = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&gets);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let counter = std::sync::Arc::clone(&counter);
            tokio::spawn(async move {
                let mut buffer = [0_u8; 4096];
                let Ok(n) = socket.read(&mut buffer).await else {
                    return;
                };
                if buffer[..n].starts_with(b"HEAD ") {
                    let _ = socket
                        .write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        )
                        .await;
                    return;
                }
                let seen = counter.fetch_add(1, Ordering::SeqCst);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    BODY.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                if seen < cut {
                    let _ = socket.write_all(&BODY.as_bytes()[..10]).await;
                    let _ = socket.flush().await;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    #[expect(deprecated, reason = "SO_LINGER 0 is how a test makes a reset")]
                    let _ = socket.set_linger(Some(Duration::ZERO));
                    drop(socket);
                    return;
                }
                let _ = socket.write_all(BODY.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (addr, gets)
}

/// A GET whose connection is reset in the middle of the body is retried (docs/registry.md);
/// it used to fail at once as `transport`.
#[tokio::test]
async fn a_reset_in_the_middle_of_a_body_is_retried() {
    use std::sync::atomic::Ordering;
    let (addr, gets) = cutting_server(2).await;
    let tag = key(&addr, "org/img", "v1");
    let (resolution, _) = resolve(fast_options(), [tag.clone()]).await;
    assert_eq!(digest_text(&resolution, &tag), sha256(BODY.as_bytes()));
    assert_eq!(gets.load(Ordering::SeqCst), 3);
    assert_eq!(resolution.stats.retries, 2);
}

/// A listener that accepts connections and never answers; returns its address and how many
/// connections it accepted.
async fn silent_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let accepted = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&accepted);
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            open.push(socket);
        }
    });
    (addr, accepted)
}

/// 200 tags on a host that never answers used to wait 200 ÷ 8 timeouts; after a few
/// timeouts in a row the breaker fails the rest at once, with the same cause.
#[tokio::test]
async fn a_host_that_never_answers_trips_the_breaker() {
    use std::sync::atomic::Ordering;
    let (addr, accepted) = silent_server().await;
    let keys: Vec<_> = (0..200)
        .map(|n| key(&addr, "org/img", &format!("v{n}")))
        .collect();
    let options = ResolverOptions {
        request_timeout: Duration::from_millis(500),
        ..fast_options()
    };
    let started = Instant::now();
    let (resolution, done) = resolve(options, keys.clone()).await;
    let elapsed = started.elapsed();
    // Without the breaker: 25 rounds of 500 ms, 12.5 s. With it: about one timeout.
    assert!(elapsed < Duration::from_secs(6), "{elapsed:?}");
    assert_eq!(done.len(), 200);
    for tag in &keys {
        assert_eq!(error_kind(&resolution, tag), "timeout", "{tag}");
    }
    let saved = keys
        .iter()
        .filter(|tag| {
            matches!(
                resolution.digests[*tag],
                Err(tagpin_registry::ResolveError::HostDown { .. })
            )
        })
        .count();
    assert!(saved >= 190, "{saved} lookups saved by the breaker");
    let message = crate::support::with_causes(resolution.digests[&keys[199]].as_ref().unwrap_err());
    assert!(message.contains("not asked"), "{message}");
    assert!(message.contains("no response within 500ms"), "{message}");
    assert!(accepted.load(Ordering::SeqCst) <= 16, "{accepted:?}");
}

/// The same for a port where nothing listens: refused connections are retried with backoff,
/// which 200 tags paid each; the breaker stops after a few.
#[tokio::test]
async fn a_refusing_host_trips_the_breaker() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    drop(listener);
    let keys: Vec<_> = (0..200)
        .map(|n| key(&addr, "org/img", &format!("v{n}")))
        .collect();
    let options = ResolverOptions {
        retry: RetryPolicy {
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_millis(800),
            ..fast_options().retry
        },
        ..fast_options()
    };
    let started = Instant::now();
    let (resolution, _) = resolve(options, keys.clone()).await;
    let elapsed = started.elapsed();
    // Without the breaker: 25 rounds of 3 backoffs (200 + 400 + 800 ms and jitter), over 35 s.
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    for tag in &keys {
        assert_eq!(error_kind(&resolution, tag), "transport", "{tag}");
    }
    assert!(
        resolution.stats.total_requests() <= 16,
        "{:?}",
        resolution.stats
    );
}

/// The run's deadline: lookups still going when it passes are `deadline`, the others keep
/// their results.
#[tokio::test]
async fn the_deadline_ends_the_lookups_left() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .and(path("/v2/org/fast/manifests/v1"))
        .respond_with(ok_head())
        .mount(&server)
        .await;
    Mock::given(method("HEAD"))
        .and(path("/v2/org/slow/manifests/v1"))
        .respond_with(ok_head().set_delay(Duration::from_secs(20)))
        .mount(&server)
        .await;
    let fast = key(&host(&server), "org/fast", "v1");
    let slow = key(&host(&server), "org/slow", "v1");
    let options = ResolverOptions {
        request_timeout: Duration::from_secs(30),
        deadline: Some(Duration::from_secs(1)),
        ..fast_options()
    };
    let started = Instant::now();
    let (resolution, done) = resolve(options, [fast.clone(), slow.clone()]).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(digest_text(&resolution, &fast), sha256(BODY.as_bytes()));
    assert_eq!(error_kind(&resolution, &slow), "deadline");
    assert_eq!(done.len(), 2);
}

/// Two different mirrors for one registry (under two of its names) are refused.
#[test]
fn conflicting_mirrors_are_refused() {
    let options = ResolverOptions {
        mirrors: vec![
            "docker.io=127.0.0.1:5000".parse().unwrap(),
            "registry.hub.docker.com=127.0.0.1:5001".parse().unwrap(),
        ],
        ..ResolverOptions::default()
    };
    let Err(error) = tagpin_registry::Resolver::new(options) else {
        panic!("accepted two mirrors for docker.io");
    };
    assert_eq!(
        error.to_string(),
        "two mirrors for docker.io: docker.io=127.0.0.1:5000 and docker.io=127.0.0.1:5001"
    );
}
