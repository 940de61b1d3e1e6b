//! The rolling pull request against the fake GitHub: call sequences, recovery, retries,
//! Enterprise base paths and the token canary.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tagpin_fake_github::{FakeGitHub, Fault, Options, PushAfter};
use tagpin_github::{
    Error, FileChange, FileMode, GitHub, Method, RetrySettings, RollingPullRequest, Secret,
    SyncOutcome,
};

const REPO: &str = "acme/app";
const SEED: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
const BRANCH: &str = "tagpin/digests";
const CANARY: &str = "ghp_CANARY0123456789abcdefCANARY";

fn retry() -> RetrySettings {
    RetrySettings {
        max_attempts: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        max_rate_limit_wait: Duration::from_secs(5),
        timeout: Duration::from_secs(5),
    }
}

fn seed(github: &FakeGitHub) {
    github.seed_repo(
        REPO,
        "main",
        SEED,
        &[
            ("README.md", b"# app\n", "100644"),
            ("deploy/app.yaml", b"image: nginx:1.27\n", "100644"),
            (
                "scripts/run.sh",
                b"#!/bin/sh\ndocker run busybox\n",
                "100755",
            ),
        ],
    );
}

async fn start() -> (FakeGitHub, GitHub) {
    let fake = FakeGitHub::start().await;
    seed(&fake);
    let client = client(&fake);
    (fake, client)
}

fn client(fake: &FakeGitHub) -> GitHub {
    GitHub::with_retry(
        &fake.url(),
        Secret::new(CANARY),
        REPO.parse().unwrap(),
        retry(),
    )
    .unwrap()
}

fn plan(tag_digest: &str) -> RollingPullRequest {
    RollingPullRequest {
        base: None,
        base_head: None,
        branch: BRANCH.to_owned(),
        files: vec![
            FileChange {
                path: "deploy/app.yaml".to_owned(),
                content: format!("image: nginx:1.27@sha256:{tag_digest}\n").into_bytes(),
                mode: FileMode::Regular,
            },
            FileChange {
                path: "scripts/run.sh".to_owned(),
                content: format!("#!/bin/sh\ndocker run busybox:latest@sha256:{tag_digest}\n")
                    .into_bytes(),
                mode: FileMode::Executable,
            },
        ],
        commit_message: "Pin image digests\n\n- nginx:1.27\n- busybox".to_owned(),
        title: "Pin container image digests".to_owned(),
        body: format!("| file | image | digest |\n| deploy/app.yaml:1 | nginx | {tag_digest} |"),
        labels: vec!["dependencies".to_owned(), "tagpin".to_owned()],
    }
}

const D1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const D2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// Call list with object ids (40 hex digits) replaced by `{sha}`.
fn calls(fake: &FakeGitHub) -> Vec<String> {
    fake.calls()
        .into_iter()
        .map(|call| {
            let mut out = String::new();
            let mut run = String::new();
            for c in call.chars().chain(std::iter::once(' ')) {
                if c.is_ascii_hexdigit() {
                    run.push(c);
                    continue;
                }
                if run.len() == 40 {
                    out.push_str("{sha}");
                } else {
                    out.push_str(&run);
                }
                run.clear();
                out.push(c);
            }
            out.pop();
            out
        })
        .collect()
}

const SURVEY_NEW_BRANCH: &[&str] = &[
    "GET /repos/acme/app",
    "GET /repos/acme/app/git/ref/heads/main",
    "GET /repos/acme/app/git/commits/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/ref/heads/tagpin/digests",
    "GET /repos/acme/app/pulls?head=acme%3Atagpin%2Fdigests&state=open",
];

const SURVEY_EXISTING_BRANCH: &[&str] = &[
    "GET /repos/acme/app",
    "GET /repos/acme/app/git/ref/heads/main",
    "GET /repos/acme/app/git/commits/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/ref/heads/tagpin/digests",
    "GET /repos/acme/app/git/commits/{sha}",
    "GET /repos/acme/app/pulls?head=acme%3Atagpin%2Fdigests&state=open",
];

fn concat(parts: &[&[&str]]) -> Vec<String> {
    parts
        .iter()
        .flat_map(|p| p.iter().map(|s| (*s).to_owned()))
        .collect()
}

#[tokio::test]
async fn first_sync_opens_one_pull_request_with_the_files_modes_and_labels() {
    let (fake, github) = start().await;
    let outcome = github.sync(&plan(D1)).await.unwrap();
    let SyncOutcome::Opened { number, url } = outcome else {
        panic!("expected Opened, got {outcome:?}");
    };
    assert_eq!(number, 1);
    assert!(url.ends_with("/acme/app/pull/1"), "{url}");

    assert_eq!(
        calls(&fake),
        concat(&[
            SURVEY_NEW_BRANCH,
            &[
                "POST /repos/acme/app/git/blobs",
                "POST /repos/acme/app/git/blobs",
                "POST /repos/acme/app/git/trees",
                "POST /repos/acme/app/git/commits",
                "POST /repos/acme/app/git/refs",
                "POST /repos/acme/app/pulls",
                "POST /repos/acme/app/issues/1/labels",
            ],
        ])
    );

    let head = fake.branch_head(REPO, BRANCH).unwrap();
    let commit = fake.commit(REPO, &head).unwrap();
    assert_eq!(commit.parents, vec![SEED.to_owned()]);
    assert!(commit.message.starts_with("Pin image digests"));
    let files = fake.files_at(REPO, &head);
    let file = |path: &str| {
        let (content, mode) = &files[path];
        (String::from_utf8(content.clone()).unwrap(), mode.clone())
    };
    assert_eq!(
        file("README.md"),
        ("# app\n".to_owned(), "100644".to_owned())
    );
    assert_eq!(
        file("deploy/app.yaml"),
        (
            format!("image: nginx:1.27@sha256:{D1}\n"),
            "100644".to_owned()
        )
    );
    assert_eq!(
        file("scripts/run.sh"),
        (
            format!("#!/bin/sh\ndocker run busybox:latest@sha256:{D1}\n"),
            "100755".to_owned()
        ),
        "an executable script stays executable"
    );
    assert_eq!(files.len(), 3);

    let pulls = fake.pulls(REPO);
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0].state, "open");
    assert_eq!(pulls[0].head, BRANCH);
    assert_eq!(pulls[0].base, "main");
    assert_eq!(pulls[0].title, "Pin container image digests");
    assert_eq!(pulls[0].labels, vec!["dependencies", "tagpin"]);
    assert_eq!(
        fake.branch_head(REPO, "main").unwrap(),
        SEED,
        "the base is untouched"
    );
}

#[tokio::test]
async fn second_sync_with_the_same_files_writes_nothing() {
    let (fake, github) = start().await;
    github.sync(&plan(D1)).await.unwrap();
    let head = fake.branch_head(REPO, BRANCH);
    fake.clear_requests();

    let outcome = github.sync(&plan(D1)).await.unwrap();
    assert!(
        matches!(outcome, SyncOutcome::Unchanged { number: 1, .. }),
        "{outcome:?}"
    );
    assert_eq!(calls(&fake), concat(&[SURVEY_EXISTING_BRANCH]), "GETs only");
    assert_eq!(fake.branch_head(REPO, BRANCH), head);
    assert_eq!(fake.pulls(REPO).len(), 1);
}

#[tokio::test]
async fn changed_files_force_move_the_branch_and_edit_the_same_pull_request() {
    let (fake, github) = start().await;
    github.sync(&plan(D1)).await.unwrap();
    let first = fake.branch_head(REPO, BRANCH).unwrap();
    fake.clear_requests();

    let outcome = github.sync(&plan(D2)).await.unwrap();
    assert!(
        matches!(
            outcome,
            SyncOutcome::Updated {
                number: 1,
                pushed: true,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(
        calls(&fake),
        concat(&[
            SURVEY_EXISTING_BRANCH,
            &[
                "POST /repos/acme/app/git/blobs",
                "POST /repos/acme/app/git/blobs",
                "POST /repos/acme/app/git/trees",
                "POST /repos/acme/app/git/commits",
                "PATCH /repos/acme/app/git/refs/heads/tagpin/digests",
                "PATCH /repos/acme/app/pulls/1",
            ],
        ])
    );
    let second = fake.branch_head(REPO, BRANCH).unwrap();
    assert_ne!(first, second);
    assert_eq!(
        fake.commit(REPO, &second).unwrap().parents,
        vec![SEED.to_owned()],
        "rebuilt on the base, not stacked"
    );
    let files = fake.files_at(REPO, &second);
    assert!(String::from_utf8_lossy(&files["deploy/app.yaml"].0).contains(D2));
    let pulls = fake.pulls(REPO);
    assert_eq!(pulls.len(), 1);
    assert!(pulls[0].body.as_deref().unwrap().contains(D2));
}

#[tokio::test]
async fn a_base_that_moved_on_rebuilds_the_branch_on_the_new_head() {
    let (fake, github) = start().await;
    github.sync(&plan(D1)).await.unwrap();
    let moved = fake.push_commit(REPO, "main", &[("docs/new.md", b"new\n", "100644")]);

    let outcome = github.sync(&plan(D1)).await.unwrap();
    assert!(
        matches!(
            outcome,
            SyncOutcome::Updated {
                number: 1,
                pushed: true,
                ..
            }
        ),
        "{outcome:?}"
    );
    let head = fake.branch_head(REPO, BRANCH).unwrap();
    assert_eq!(fake.commit(REPO, &head).unwrap().parents, vec![moved]);
    let files = fake.files_at(REPO, &head);
    assert!(
        files.contains_key("docs/new.md"),
        "keeps the base's new work"
    );
    assert!(String::from_utf8_lossy(&files["deploy/app.yaml"].0).contains(D1));
}

/// The survey with the base head given by the caller: the base ref is not read up front.
const SURVEY_EXPECTED_NEW_BRANCH: &[&str] = &[
    "GET /repos/acme/app",
    "GET /repos/acme/app/git/commits/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/ref/heads/tagpin/digests",
    "GET /repos/acme/app/pulls?head=acme%3Atagpin%2Fdigests&state=open",
];

const SURVEY_EXPECTED_EXISTING_BRANCH: &[&str] = &[
    "GET /repos/acme/app",
    "GET /repos/acme/app/git/commits/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/trees/{sha}",
    "GET /repos/acme/app/git/ref/heads/tagpin/digests",
    "GET /repos/acme/app/git/commits/{sha}",
    "GET /repos/acme/app/pulls?head=acme%3Atagpin%2Fdigests&state=open",
];

/// The check before the first write that the base still points at the expected head.
const CHECK_BASE: &[&str] = &["GET /repos/acme/app/git/ref/heads/main"];

fn expecting(head: &str, tag_digest: &str) -> RollingPullRequest {
    RollingPullRequest {
        base_head: Some(head.to_owned()),
        ..plan(tag_digest)
    }
}

/// Someone else's change to a file the plan rewrites: building the plan's files on it would
/// revert it.
const THEIR_CHANGE: &[(&str, &[u8], &str)] =
    &[("deploy/app.yaml", b"image: nginx:1.28\n", "100644")];

#[tokio::test]
async fn an_expected_base_head_is_the_parent_and_is_checked_once_before_the_push() {
    let (fake, github) = start().await;
    let head = github.branch_head("main").await.unwrap().unwrap();
    fake.clear_requests();

    let outcome = github.sync(&expecting(&head, D1)).await.unwrap();
    assert!(
        matches!(outcome, SyncOutcome::Opened { number: 1, .. }),
        "{outcome:?}"
    );
    assert_eq!(
        calls(&fake),
        concat(&[
            SURVEY_EXPECTED_NEW_BRANCH,
            CHECK_BASE,
            &[
                "POST /repos/acme/app/git/blobs",
                "POST /repos/acme/app/git/blobs",
                "POST /repos/acme/app/git/trees",
                "POST /repos/acme/app/git/commits",
                "POST /repos/acme/app/git/refs",
                "POST /repos/acme/app/pulls",
                "POST /repos/acme/app/issues/1/labels",
            ],
        ])
    );
    let branch = fake.branch_head(REPO, BRANCH).unwrap();
    assert_eq!(
        fake.commit(REPO, &branch).unwrap().parents,
        vec![head.clone()]
    );

    // Nothing to push: no check, and no read of the base ref at all.
    fake.clear_requests();
    let outcome = github.sync(&expecting(&head, D1)).await.unwrap();
    assert!(
        matches!(outcome, SyncOutcome::Unchanged { number: 1, .. }),
        "{outcome:?}"
    );
    assert_eq!(calls(&fake), concat(&[SURVEY_EXPECTED_EXISTING_BRANCH]));
}

#[tokio::test]
async fn a_base_that_moved_after_the_callers_read_is_refused_and_nothing_is_written() {
    let (fake, github) = start().await;
    // The caller read the base head (and built its files from that commit)...
    let head = github.branch_head("main").await.unwrap().unwrap();
    // ...then someone pushed.
    let theirs = fake.push_commit(REPO, "main", THEIR_CHANGE);
    fake.clear_requests();

    let error = github.sync(&expecting(&head, D1)).await.unwrap_err();
    let Error::BaseMoved {
        base,
        expected,
        found,
    } = &error
    else {
        panic!("expected BaseMoved, got {error:?}");
    };
    assert_eq!((base.as_str(), expected, found), ("main", &head, &theirs));
    assert_eq!(
        error.to_string(),
        format!("branch `main` moved from {head} to {theirs}: nothing was pushed")
    );
    assert_eq!(
        calls(&fake),
        concat(&[SURVEY_EXPECTED_NEW_BRANCH, CHECK_BASE])
    );
    assert_eq!(fake.branch_head(REPO, BRANCH), None);
    assert!(fake.pulls(REPO).is_empty());
    assert_eq!(fake.branch_head(REPO, "main").unwrap(), theirs);

    // The dry run makes the same reads and sees the same thing.
    fake.clear_requests();
    let error = github
        .plan_requests(&expecting(&head, D1))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::BaseMoved { .. }), "{error:?}");
    assert_eq!(
        calls(&fake),
        concat(&[SURVEY_EXPECTED_NEW_BRANCH, CHECK_BASE])
    );
}

#[tokio::test]
async fn a_base_that_moves_while_sync_runs_is_caught_before_the_first_write() {
    let (fake, github) = start().await;
    let head = github.branch_head("main").await.unwrap().unwrap();
    fake.clear_requests();
    // The push lands right after the survey read the base commit.
    fake.push_after(PushAfter {
        method: "GET".to_owned(),
        path_prefix: "/repos/acme/app/git/commits/".to_owned(),
        nth: 1,
        repo: REPO.to_owned(),
        branch: "main".to_owned(),
        files: THEIR_CHANGE
            .iter()
            .map(|(path, content, mode)| ((*path).to_owned(), content.to_vec(), (*mode).to_owned()))
            .collect(),
    });

    let error = github.sync(&expecting(&head, D1)).await.unwrap_err();
    let theirs = fake.branch_head(REPO, "main").unwrap();
    assert_ne!(theirs, head);
    assert!(
        matches!(&error, Error::BaseMoved { expected, found, .. } if *expected == head && *found == theirs),
        "{error:?}"
    );
    let calls = calls(&fake);
    assert_eq!(calls, concat(&[SURVEY_EXPECTED_NEW_BRANCH, CHECK_BASE]));
    assert!(calls.iter().all(|c| c.starts_with("GET ")), "{calls:?}");
    assert_eq!(fake.branch_head(REPO, BRANCH), None);
    assert!(fake.pulls(REPO).is_empty());
    // Their change stands.
    assert_eq!(
        fake.files_at(REPO, &theirs)["deploy/app.yaml"].0,
        b"image: nginx:1.28\n"
    );
}

#[tokio::test]
async fn an_expected_base_head_must_be_a_commit_id() {
    let (fake, github) = start().await;
    for bad in ["../../pulls", "HEAD", &SEED.to_uppercase(), &SEED[..39]] {
        let error = github.sync(&expecting(bad, D1)).await.unwrap_err();
        assert!(matches!(error, Error::InvalidCommit(_)), "{bad}: {error:?}");
    }
    assert_eq!(calls(&fake), ["GET /repos/acme/app"; 4]);
}

#[tokio::test]
async fn close_stale_closes_the_pull_request_with_a_comment() {
    let (fake, github) = start().await;
    github.sync(&plan(D1)).await.unwrap();
    fake.clear_requests();

    let closed = github
        .close_stale(BRANCH, "Every reference is pinned on main now; closing.")
        .await
        .unwrap();
    assert_eq!(closed, Some(1));
    assert_eq!(
        calls(&fake),
        vec![
            "GET /repos/acme/app/pulls?head=acme%3Atagpin%2Fdigests&state=open",
            "POST /repos/acme/app/issues/1/comments",
            "PATCH /repos/acme/app/pulls/1",
        ]
    );
    assert_eq!(fake.pulls(REPO)[0].state, "closed");
    assert_eq!(
        fake.comments(REPO, 1),
        vec!["Every reference is pinned on main now; closing."]
    );
    assert_eq!(github.close_stale(BRANCH, "again").await.unwrap(), None);
}

#[tokio::test]
async fn a_lost_response_to_opening_the_pull_request_yields_exactly_one() {
    let (fake, github) = start().await;
    fake.inject(Fault::after("POST", "/repos/acme/app/pulls", 502));

    let outcome = github.sync(&plan(D1)).await.unwrap();
    assert!(
        matches!(outcome, SyncOutcome::Opened { number: 1, .. }),
        "{outcome:?}"
    );
    let calls = calls(&fake);
    let tail: Vec<&str> = calls[calls.len() - 3..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        vec![
            "POST /repos/acme/app/pulls",
            "GET /repos/acme/app/pulls?head=acme%3Atagpin%2Fdigests&state=open",
            "POST /repos/acme/app/issues/1/labels",
        ],
        "a lookup, not a second create"
    );
    assert_eq!(fake.pulls(REPO).len(), 1);
    assert_eq!(fake.pulls(REPO)[0].labels, vec!["dependencies", "tagpin"]);
}

#[tokio::test]
async fn a_failed_pull_request_create_is_sent_again_only_after_a_lookup() {
    let (fake, github) = start().await;
    fake.inject(Fault::before("POST", "/repos/acme/app/pulls", 502));

    let outcome = github.sync(&plan(D1)).await.unwrap();
    assert!(
        matches!(outcome, SyncOutcome::Opened { number: 1, .. }),
        "{outcome:?}"
    );
    let calls = calls(&fake);
    let tail: Vec<&str> = calls[calls.len() - 4..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        vec![
            "POST /repos/acme/app/pulls",
            "GET /repos/acme/app/pulls?head=acme%3Atagpin%2Fdigests&state=open",
            "POST /repos/acme/app/pulls",
            "POST /repos/acme/app/issues/1/labels",
        ]
    );
    assert_eq!(fake.pulls(REPO).len(), 1);
}

#[tokio::test]
async fn a_lost_response_to_creating_the_branch_is_followed_by_a_lookup() {
    let (fake, github) = start().await;
    fake.inject(Fault::after("POST", "/repos/acme/app/git/refs", 502));

    let outcome = github.sync(&plan(D1)).await.unwrap();
    assert!(
        matches!(outcome, SyncOutcome::Opened { number: 1, .. }),
        "{outcome:?}"
    );
    let calls = calls(&fake);
    let refs: Vec<&String> = calls.iter().filter(|c| c.contains("/git/ref")).collect();
    assert_eq!(
        refs,
        vec![
            "GET /repos/acme/app/git/ref/heads/main",
            "GET /repos/acme/app/git/ref/heads/tagpin/digests",
            "POST /repos/acme/app/git/refs",
            "GET /repos/acme/app/git/ref/heads/tagpin/digests",
        ]
    );
}

#[tokio::test]
async fn server_errors_on_gets_are_retried() {
    let (fake, github) = start().await;
    fake.inject(Fault::before(
        "GET",
        "/repos/acme/app/git/ref/heads/main",
        502,
    ));
    fake.inject(Fault::before(
        "GET",
        "/repos/acme/app/git/ref/heads/main",
        503,
    ));
    assert_eq!(
        github.branch_head("main").await.unwrap().as_deref(),
        Some(SEED)
    );
    assert_eq!(fake.calls().len(), 3);
}

#[tokio::test]
async fn retries_stop_after_max_attempts_and_report_the_url() {
    let (fake, github) = start().await;
    for _ in 0..3 {
        fake.inject(Fault::before("GET", "/repos/acme/app", 500));
    }
    let error = github.default_branch().await.unwrap_err();
    assert_eq!(error.status(), Some(500));
    let text = error.to_string();
    assert!(
        text.starts_with(&format!(
            "GET {}/repos/acme/app: GitHub answered 500",
            fake.url()
        )),
        "{text}"
    );
    assert_eq!(fake.calls().len(), 3);
}

#[tokio::test]
async fn rate_limited_get_waits_for_the_reset_and_retries() {
    let (fake, github) = start().await;
    fake.inject(Fault::rate_limited("GET", "/repos/acme/app", 1));
    let started = Instant::now();
    assert_eq!(github.default_branch().await.unwrap(), "main");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        fake.calls(),
        vec!["GET /repos/acme/app", "GET /repos/acme/app"]
    );
}

#[tokio::test]
async fn too_many_requests_waits_for_retry_after_even_on_a_create() {
    let (fake, github) = start().await;
    // A rate-limited request was refused, not applied: sending it again cannot duplicate.
    fake.inject(Fault::too_many_requests("POST", "/repos/acme/app/pulls", 1));
    let started = Instant::now();
    let outcome = github.sync(&plan(D1)).await.unwrap();
    assert!(
        matches!(outcome, SyncOutcome::Opened { number: 1, .. }),
        "{outcome:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(900));
    let posts = fake
        .calls()
        .iter()
        .filter(|c| *c == "POST /repos/acme/app/pulls")
        .count();
    assert_eq!(posts, 2);
    assert_eq!(fake.pulls(REPO).len(), 1);
}

#[tokio::test]
async fn a_rate_limit_longer_than_the_cap_fails_at_once() {
    let (fake, github) = start().await;
    fake.inject(Fault::rate_limited("GET", "/repos/acme/app", 3600));
    let started = Instant::now();
    let error = github.default_branch().await.unwrap_err();
    assert!(matches!(error, Error::RateLimited { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_bare_403_is_not_retried() {
    let (fake, github) = start().await;
    fake.inject(Fault::before("GET", "/repos/acme/app", 403));
    assert_eq!(
        github.default_branch().await.unwrap_err().status(),
        Some(403)
    );
    assert_eq!(fake.calls().len(), 1);
}

#[tokio::test]
async fn enterprise_base_path_works() {
    let fake = FakeGitHub::start_with(Options {
        mount: "/api/v3".to_owned(),
        token: None,
    })
    .await;
    seed(&fake);
    assert!(fake.url().ends_with("/api/v3"));
    let github = client(&fake);
    let outcome = github.sync(&plan(D1)).await.unwrap();
    assert!(
        matches!(outcome, SyncOutcome::Opened { number: 1, .. }),
        "{outcome:?}"
    );
    let calls = fake.calls();
    assert!(calls.len() > 10);
    assert!(
        calls.iter().all(|c| c
            .split(' ')
            .nth(1)
            .unwrap()
            .starts_with("/api/v3/repos/acme/app")),
        "{calls:#?}"
    );
    // A trailing slash on the base is fine too.
    let github = GitHub::with_retry(
        &format!("{}/", fake.url()),
        Secret::new(CANARY),
        REPO.parse().unwrap(),
        retry(),
    )
    .unwrap();
    assert_eq!(github.default_branch().await.unwrap(), "main");
}

#[tokio::test]
async fn requests_without_a_token_get_401() {
    let fake = FakeGitHub::start_with(Options {
        mount: String::new(),
        token: Some("right".to_owned()),
    })
    .await;
    seed(&fake);
    let github = GitHub::with_retry(
        &fake.url(),
        Secret::new("wrong"),
        REPO.parse().unwrap(),
        retry(),
    )
    .unwrap();
    let error = github.default_branch().await.unwrap_err();
    assert_eq!(error.status(), Some(401));
    assert!(error.to_string().contains("Bad credentials"), "{error}");
}

#[tokio::test]
async fn plan_requests_only_reads_and_lists_the_writes() {
    let (fake, github) = start().await;
    let planned = github.plan_requests(&plan(D1)).await.unwrap();
    assert!(
        fake.calls().iter().all(|c| c.starts_with("GET ")),
        "{:?}",
        fake.calls()
    );
    assert!(planned.push);
    assert_eq!(planned.base, "main");
    assert_eq!(planned.base_head, SEED);
    assert_eq!(planned.branch_head, None);
    let writes: Vec<(Method, &str)> = planned
        .requests
        .iter()
        .map(|r| (r.method, r.path.as_str()))
        .collect();
    assert_eq!(
        writes,
        vec![
            (Method::Post, "/repos/acme/app/git/blobs"),
            (Method::Post, "/repos/acme/app/git/blobs"),
            (Method::Post, "/repos/acme/app/git/trees"),
            (Method::Post, "/repos/acme/app/git/commits"),
            (Method::Post, "/repos/acme/app/git/refs"),
            (Method::Post, "/repos/acme/app/pulls"),
            (Method::Post, "/repos/acme/app/issues/{number}/labels"),
        ]
    );

    github.sync(&plan(D1)).await.unwrap();
    let head = fake.branch_head(REPO, BRANCH).unwrap();
    assert_eq!(
        planned.tree,
        fake.commit(REPO, &head).unwrap().tree,
        "the local tree id matches GitHub's"
    );
    let again = github.plan_requests(&plan(D1)).await.unwrap();
    assert!(!again.push);
    assert!(again.requests.is_empty(), "{:?}", again.requests);
    assert_eq!(again.pull_request.unwrap().number, 1);
}

#[tokio::test]
async fn changes_equal_to_the_base_are_refused() {
    let (_fake, github) = start().await;
    let mut same = plan(D1);
    same.files = vec![FileChange {
        path: "deploy/app.yaml".to_owned(),
        content: b"image: nginx:1.27\n".to_vec(),
        mode: FileMode::Regular,
    }];
    assert!(matches!(
        github.sync(&same).await,
        Err(Error::NoChanges { .. })
    ));
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_token_never_appears_in_debug_errors_or_tracing() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let fake = FakeGitHub::start_with(Options {
        mount: String::new(),
        token: Some(CANARY.to_owned()),
    })
    .await;
    seed(&fake);
    let github = client(&fake);
    // Work that succeeds (the fake only accepts the canary, so it was sent), then errors.
    github.sync(&plan(D1)).await.unwrap();
    fake.inject(Fault::after(
        "POST",
        "/repos/acme/app/issues/1/comments",
        502,
    ));
    github.close_stale(BRANCH, "closing").await.unwrap();
    for _ in 0..3 {
        fake.inject(Fault::before("GET", "/repos/acme/app", 500));
    }
    let status_error = github.default_branch().await.unwrap_err();
    let transport_error = GitHub::with_retry(
        "http://127.0.0.1:9",
        Secret::new(CANARY),
        REPO.parse().unwrap(),
        retry(),
    )
    .unwrap()
    .default_branch()
    .await
    .unwrap_err();
    let bad_url = GitHub::new(
        &format!("https://x:{CANARY}@host"),
        Secret::new(CANARY),
        REPO.parse().unwrap(),
    )
    .unwrap_err();

    let mut texts = vec![
        format!("{github:?}"),
        format!("{:?}", Secret::new(CANARY)),
        format!("{}", Secret::new(CANARY)),
    ];
    for error in [&status_error, &transport_error, &bad_url] {
        texts.push(format!("{error:?}"));
        let mut source: Option<&dyn std::error::Error> = Some(error);
        while let Some(e) = source {
            texts.push(e.to_string());
            source = e.source();
        }
    }
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("GitHub request"), "tracing was captured");
    texts.push(logs);
    for text in &texts {
        assert!(!text.contains(CANARY), "token leaked into: {text}");
        assert!(!text.contains("CANARY"), "token leaked into: {text}");
    }
}
