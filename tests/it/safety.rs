//! Data safety and fault hardening end to end (docs/safety.md links each guarantee here): a
//! wrong or unverified digest is never reported as good, writes never escape the PATHs or
//! half-land, and a dead registry never stalls a run.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::context::TestContext;
use crate::registry::{Flavour, Registry};

/// `check --online` against a registry answering 500 used to say its digests were "verified
/// online": only a lookup that answered the written digest verifies.
#[test]
fn check_online_verifies_nothing_when_the_registry_fails() {
    let context = TestContext::new();
    let mut registry = Registry::start().with_proxy();
    let digest = registry.push("docker.io/library/nginx:1.27", Flavour::Image);
    context.write("deploy.yaml", format!("image: nginx:1.27@{digest}\n"));
    let mut args = vec!["check".to_owned(), "--online".to_owned()];
    args.extend(registry.mirror_args(["docker.io"]));
    context.run(&args).assert_code(0);

    registry.proxy().answer("/manifests/", 500, "");
    let run = context.run(&args);
    run.assert_code(1);
    assert!(
        run.stderr
            .contains("1 digest not verified (1 reference in 1 file, 0 verified online)"),
        "{run}"
    );
    args.extend(["--format".to_owned(), "json".to_owned()]);
    let doc = context.run(&args).json();
    assert_eq!(doc["online"]["checked"], 1, "{doc}");
    assert_eq!(doc["online"]["verified"], 0, "{doc}");
    assert_eq!(doc["online"]["unresolved"][0]["error"], "unexpected-status");
}

/// A YAML file naming `n` distinct tags of Docker Hub.
fn many_tags(context: &TestContext, n: usize) {
    let text: String = std::iter::once("images:\n".to_owned())
        .chain((0..n).map(|i| format!("  - image: nginx:1.{i}\n")))
        .collect();
    context.write("images.yaml", text);
}

/// 200 tags on a registry that accepts connections and never answers used to wait out 25
/// rounds of the request timeout; the breaker fails the rest after the first few timeouts.
#[test]
fn a_registry_that_never_answers_does_not_stall_the_run() {
    let context = TestContext::new();
    many_tags(&context, 200);
    context.write(".tagpin.yaml", "timeout_seconds: 1\n");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mirror = format!("docker.io={}", listener.local_addr().unwrap());
    let started = Instant::now();
    let run = context.run(["pin", ".", "--format", "json", "--mirror", &mirror]);
    let elapsed = started.elapsed();
    run.assert_code(1);
    drop(listener);
    // Without the breaker: 200 ÷ 8 × 1 s = 25 s.
    assert!(elapsed < Duration::from_secs(12), "{elapsed:?}\n{run}");
    let doc = run.json();
    let unresolved = doc["unresolved"].as_array().unwrap();
    assert_eq!(unresolved.len(), 200);
    assert!(unresolved.iter().all(|u| u["error"] == "timeout"), "{run}");
    assert!(
        unresolved
            .iter()
            .any(|u| u["message"].as_str().unwrap().contains("not asked")),
        "{run}"
    );
}

/// The same with nothing listening: each refused lookup used to go through its retries and
/// backoff (about 4 s each at the defaults, 200 ÷ 8 rounds of them).
#[test]
fn a_registry_that_refuses_connections_does_not_stall_the_run() {
    let context = TestContext::new();
    many_tags(&context, 200);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mirror = format!("docker.io={}", listener.local_addr().unwrap());
    drop(listener);
    let started = Instant::now();
    let run = context.run(["pin", ".", "--format", "json", "--mirror", &mirror]);
    let elapsed = started.elapsed();
    run.assert_code(1);
    assert!(elapsed < Duration::from_secs(12), "{elapsed:?}\n{run}");
    let doc = run.json();
    assert_eq!(doc["unresolved"].as_array().unwrap().len(), 200, "{run}");
    assert!(
        doc["stats"]["requests"]["HEAD"]["error"].as_u64().unwrap() <= 20,
        "{run}"
    );
}

/// `--deadline`: what is not looked up by then is unresolved, and the rest is still written.
#[test]
fn the_deadline_reports_what_is_left_and_writes_the_rest() {
    let context = TestContext::new();
    let mut registry = Registry::start();
    let digest = registry.push("quay.io/org/app:1.0", Flavour::Image);
    context.write(
        "deploy.yaml",
        "a:\n  image: quay.io/org/app:1.0\nb:\n  image: nginx:1.27\n",
    );
    // Docker Hub's mirror accepts and never answers, within the 30 s request timeout.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut args = vec![
        "pin".to_owned(),
        ".".to_owned(),
        "--write".to_owned(),
        "--deadline".to_owned(),
        "2".to_owned(),
        "--mirror".to_owned(),
        format!("docker.io={}", listener.local_addr().unwrap()),
    ];
    args.extend(registry.mirror_args(["quay.io"]));
    let started = Instant::now();
    let run = context.run(&args);
    let elapsed = started.elapsed();
    run.assert_code(1);
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}\n{run}");
    assert!(
        run.stderr
            .contains("error: deploy.yaml:4:10: cannot resolve nginx:1.27 (deadline)"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(context.path("deploy.yaml")).unwrap(),
        format!("a:\n  image: quay.io/org/app:1.0@{digest}\nb:\n  image: nginx:1.27\n")
    );
    drop(listener);
}

/// `--mirror registry.hub.docker.com=…` after `--mirror docker.io=…` used to replace the first
/// for every Docker Hub image: two mirrors for one registry are a usage error.
#[test]
fn two_mirrors_for_one_registry_are_a_usage_error() {
    let context = TestContext::new();
    context.write("a.yaml", "image: nginx:1.27\n");
    let run = context.run([
        "pin",
        ".",
        "--mirror",
        "docker.io=127.0.0.1:5000",
        "--mirror",
        "registry.hub.docker.com=127.0.0.1:5001",
    ]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("are two mirrors for docker.io"),
        "{run}"
    );
}
