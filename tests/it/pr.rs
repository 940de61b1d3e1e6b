//! `tagpin pr` end to end: a local git checkout, the fake GitHub API seeded with the same files
//! and the same HEAD, and the real registry behind `--mirror`. Every run's API calls are
//! asserted in full (commit and tree ids written as `{sha}`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use tagpin_fake_github::{FakeGitHub, Fault, Options, PushAfter};

use crate::context::{Run, TestContext};
use crate::registry::{Flavour, Registry};

pub(crate) const REPO: &str = "acme/app";
const BRANCH: &str = "tagpin/digests";
pub(crate) const TOKEN: &str = "ghp_canary0123456789abcdefCANARY";

const APP: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.27
          imagePullPolicy: IfNotPresent
        - name: sidecar
          image: busybox
";

const FILES: &[(&str, &str, &str)] = &[
    ("README.md", "# app\n", "100644"),
    ("Dockerfile", "FROM alpine:3.20\nRUN true\n", "100644"),
    ("deploy/app.yaml", APP, "100644"),
    (
        "scripts/run.sh",
        "#!/bin/sh\nkubectl run cache --image=redis:7 -- redis-server\n",
        "100755",
    ),
];

const IMAGES: &[&str] = &[
    "docker.io/library/alpine:3.20",
    "docker.io/library/busybox:latest",
    "docker.io/library/nginx:1.27",
    "docker.io/library/redis:7",
];

/// The files `pr` changes, in the order GitHub gets their blobs.
pub(crate) const CHANGED: [&str; 3] = ["Dockerfile", "deploy/app.yaml", "scripts/run.sh"];

/// Also the setting of the Action's end-to-end test (`action.rs`).
pub(crate) struct Setup {
    pub(crate) context: TestContext,
    pub(crate) registry: Registry,
    /// Serves the fake GitHub.
    _runtime: tokio::runtime::Runtime,
    pub(crate) github: FakeGitHub,
}

impl Setup {
    pub(crate) fn new() -> Self {
        Self::with(Options::default(), &[])
    }

    /// A checkout of `FILES` plus `extra`, committed; the fake seeded with the same HEAD.
    fn with(options: Options, extra: &[(&str, &str)]) -> Self {
        let context = TestContext::new();
        for (path, text, mode) in FILES {
            context.write(path, text);
            if *mode == "100755" {
                chmod_x(&context.path(path));
            }
        }
        for (path, text) in extra {
            context.write(path, text);
        }
        git(context.root(), &["init", "-q", "-b", "main"]);
        git(context.root(), &["add", "."]);
        git(context.root(), &["commit", "-q", "-m", "Initial commit"]);
        let head = git(context.root(), &["rev-parse", "HEAD"]);

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let github = runtime.block_on(FakeGitHub::start_with(options));
        let mut seeded: Vec<(&str, &[u8], &str)> = FILES
            .iter()
            .map(|(path, text, mode)| (*path, text.as_bytes(), *mode))
            .collect();
        seeded.extend(
            extra
                .iter()
                .map(|(path, text)| (*path, text.as_bytes(), "100644")),
        );
        github.seed_repo(REPO, "main", &head, &seeded);

        let mut registry = Registry::start();
        for key in IMAGES {
            registry.push(key, Flavour::Image);
        }
        Self {
            context,
            registry,
            _runtime: runtime,
            github,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut all: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
        all.extend(self.registry.mirror_args(["docker.io", "ghcr.io"]));
        let mut command = self.context.command(all);
        command
            .env("GITHUB_API_URL", self.github.url())
            .env("GITHUB_TOKEN", TOKEN)
            .env("GITHUB_REPOSITORY", REPO);
        command
    }

    /// `tagpin ARGS --mirror …` with the fake as the API and the canary token.
    fn run(&self, args: &[&str]) -> Run {
        self.context.run_command(&mut self.command(args))
    }

    /// The calls since the last one, with commit and tree ids written `{sha}`; clears them.
    fn calls(&self) -> Vec<String> {
        let calls = self.github.calls().iter().map(|c| redact_shas(c)).collect();
        self.github.clear_requests();
        calls
    }

    /// `pin --write` committed locally and the same files pushed to the fake's `main` as the
    /// same commit id, as a merge of the pull request would leave things; returns the files.
    pub(crate) fn land_pinned_on_base(&self) -> BTreeMap<String, Vec<u8>> {
        self.run(&["pin", ".", "--write"]).assert_code(0);
        git(self.context.root(), &["commit", "-q", "-am", "Pin digests"]);
        let pinned = self.worktree();
        let files: Vec<(&str, &[u8], &str)> = FILES
            .iter()
            .filter(|(path, _, _)| CHANGED.contains(path))
            .map(|(path, _, mode)| (*path, pinned[*path].as_slice(), *mode))
            .collect();
        self.github
            .push_commit_with_sha(REPO, "main", &self.head(), &files);
        pinned
    }

    /// The pull request's `html_url` as the fake makes it.
    pub(crate) fn pull_url(&self, number: u64) -> String {
        format!("http://{}/{REPO}/pull/{number}", self.github.addr())
    }

    fn head(&self) -> String {
        git(self.context.root(), &["rev-parse", "HEAD"])
    }

    /// Every file of the checkout (not `.git`), by path, with its bytes.
    fn worktree(&self) -> BTreeMap<String, Vec<u8>> {
        let mut files = crate::pin::tree(self.context.root());
        files.retain(|path, _| !path.starts_with(".git/"));
        files
    }

    /// The files on the fake's `branch`, by path, with their bytes.
    fn remote(&self, branch: &str) -> BTreeMap<String, Vec<u8>> {
        let head = self
            .github
            .branch_head(REPO, branch)
            .expect("branch exists");
        self.github
            .files_at(REPO, &head)
            .into_iter()
            .map(|(path, (bytes, _))| (path, bytes))
            .collect()
    }
}

#[track_caller]
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let mut permissions = std::fs::metadata(path).unwrap().permissions();
    permissions.set_mode(0o755);
    std::fs::set_permissions(path, permissions).unwrap();
}

/// `call` with every 40-hex-digit id replaced by `{sha}`.
fn redact_shas(call: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in call.chars() {
        if c.is_ascii_hexdigit() && !c.is_ascii_uppercase() {
            run.push(c);
            continue;
        }
        flush(&mut out, &mut run);
        out.push(c);
    }
    flush(&mut out, &mut run);
    out
}

fn flush(out: &mut String, run: &mut String) {
    if run.len() == 40 {
        out.push_str("{sha}");
    } else {
        out.push_str(run);
    }
    run.clear();
}

/// The reads every run starts with: the default branch and its head (the HEAD check).
fn preamble() -> Vec<String> {
    vec![
        format!("GET /repos/{REPO}"),
        format!("GET /repos/{REPO}/git/ref/heads/main"),
    ]
}

/// `sync`'s reads: base commit (the head the preamble checked is passed on, not read again),
/// the trees on the changed paths, the branch (and its commit when it exists), the open pull
/// request.
fn survey(branch_exists: bool) -> Vec<String> {
    let mut calls = vec![
        format!("GET /repos/{REPO}/git/commits/{{sha}}"),
        format!("GET /repos/{REPO}/git/trees/{{sha}}"),
        format!("GET /repos/{REPO}/git/trees/{{sha}}"),
        format!("GET /repos/{REPO}/git/trees/{{sha}}"),
        format!("GET /repos/{REPO}/git/ref/heads/{BRANCH}"),
    ];
    if branch_exists {
        calls.push(format!("GET /repos/{REPO}/git/commits/{{sha}}"));
    }
    calls.push(format!(
        "GET /repos/{REPO}/pulls?head=acme%3Atagpin%2Fdigests&state=open"
    ));
    calls
}

/// Before the first write: the base still points at the head the preamble checked.
fn check_base() -> Vec<String> {
    vec![format!("GET /repos/{REPO}/git/ref/heads/main")]
}

/// The writes that push a commit: a blob per changed file, a tree, a commit.
fn push() -> Vec<String> {
    let mut calls: Vec<String> = CHANGED
        .iter()
        .map(|_| format!("POST /repos/{REPO}/git/blobs"))
        .collect();
    calls.push(format!("POST /repos/{REPO}/git/trees"));
    calls.push(format!("POST /repos/{REPO}/git/commits"));
    calls
}

fn concat(parts: &[Vec<String>]) -> Vec<String> {
    parts.concat()
}

#[test]
fn pr_opens_keeps_refreshes_and_closes_one_pull_request() {
    let mut setup = Setup::new();
    let original = setup.worktree();
    let base_head = setup.head();

    // 1. Opens one pull request with the files `pin --write` writes.
    let first = setup.run(&["pr", "--label", "dependencies", "--format", "json"]);
    first.assert_code(0);
    let doc = first.json();
    assert_eq!(doc["outcome"], "opened", "{first}");
    assert_eq!(doc["number"], 1);
    assert_eq!(doc["url"], setup.pull_url(1).as_str());
    assert_eq!(doc["changed_files"], serde_json::json!(CHANGED));
    assert_eq!(
        setup.calls(),
        concat(&[
            preamble(),
            survey(false),
            check_base(),
            push(),
            vec![
                format!("POST /repos/{REPO}/git/refs"),
                format!("POST /repos/{REPO}/pulls"),
                format!("POST /repos/{REPO}/issues/1/labels"),
            ],
        ])
    );
    assert_eq!(setup.worktree(), original, "pr changed the working tree");

    let pulls = setup.github.open_pulls(REPO);
    assert_eq!(pulls.len(), 1);
    let pull = &pulls[0];
    assert_eq!(pull.title, "Pin container image digests");
    assert_eq!((pull.head.as_str(), pull.base.as_str()), (BRANCH, "main"));
    assert_eq!(pull.labels, ["dependencies"]);
    let body = pull.body.clone().unwrap();
    let nginx = setup.registry.pushed()["docker.io/library/nginx:1.27"].clone();
    for needle in [
        "tagpin pinned 4 image references and refreshed 0 digests whose tag moved, in 3 files.",
        &format!(
            "| `deploy/app.yaml:10` | `nginx` | `1.27` | (none) → `{}` |",
            &nginx[..19]
        ),
        &format!("| `deploy/app.yaml:10` | (none) | `{nginx}` |"),
        "<details>",
        "### Warnings\n\n- `deploy/app.yaml:13` `busybox`: tag `latest` without imagePullPolicy",
        &format!(
            "tagpin pin --write . --mirror docker.io={}",
            setup.registry.mirror_args(["docker.io"])[1].trim_start_matches("docker.io=")
        ),
    ] {
        assert!(body.contains(needle), "{needle}\n--- body\n{body}");
    }
    assert!(!body.contains("Not resolved"), "{body}");

    // The branch holds exactly what `pin --write` writes, modes kept, on the base head.
    let branch_head = setup.github.branch_head(REPO, BRANCH).unwrap();
    let commit = setup.github.commit(REPO, &branch_head).unwrap();
    assert_eq!(commit.parents, std::slice::from_ref(&base_head));
    for image in ["alpine:3.20", "busybox:latest", "nginx:1.27", "redis:7"] {
        assert!(commit.message.contains(image), "{}", commit.message);
    }
    let files = setup.github.files_at(REPO, &branch_head);
    assert_eq!(files["scripts/run.sh"].1, "100755");
    assert_eq!(files["deploy/app.yaml"].1, "100644");
    setup.run(&["pin", ".", "--write"]).assert_code(0);
    assert_eq!(setup.remote(BRANCH), setup.worktree());
    git(setup.context.root(), &["checkout", "--", "."]);
    assert_eq!(setup.worktree(), original);

    // 2. Nothing new: reads only, the same pull request.
    let second = setup.run(&["pr", "--label", "dependencies"]);
    second.assert_code(0);
    assert_eq!(
        second.stdout,
        format!("pull request #1 is up to date: {}\n", setup.pull_url(1)),
        "{second}"
    );
    assert_eq!(setup.calls(), concat(&[preamble(), survey(true)]));
    assert_eq!(setup.github.branch_head(REPO, BRANCH).unwrap(), branch_head);

    // 3. A tag moves: the branch is force-moved, the same pull request edited.
    let old_nginx = nginx;
    let new_nginx = setup
        .registry
        .push("docker.io/library/nginx:1.27", Flavour::Image);
    assert_ne!(old_nginx, new_nginx);
    let third = setup.run(&["pr", "--label", "dependencies"]);
    third.assert_code(0);
    assert_eq!(
        third.stdout,
        format!(
            "updated pull request #1 (moved {BRANCH}): {}\n",
            setup.pull_url(1)
        ),
        "{third}"
    );
    assert_eq!(
        setup.calls(),
        concat(&[
            preamble(),
            survey(true),
            check_base(),
            push(),
            vec![
                format!("PATCH /repos/{REPO}/git/refs/heads/{BRANCH}"),
                format!("PATCH /repos/{REPO}/pulls/1"),
            ],
        ])
    );
    let moved = setup.github.branch_head(REPO, BRANCH).unwrap();
    assert_ne!(moved, branch_head);
    assert_eq!(
        setup.github.commit(REPO, &moved).unwrap().parents,
        [base_head]
    );
    assert_eq!(setup.github.pulls(REPO).len(), 1);
    let body = setup.github.open_pulls(REPO)[0].body.clone().unwrap();
    assert!(body.contains(&new_nginx), "{body}");
    assert!(!body.contains(&old_nginx), "{body}");

    // 4. The digests land on the base branch (here and at the fake, the same commit): the
    //    pull request is closed with a comment.
    let pinned = setup.land_pinned_on_base();
    assert_eq!(setup.remote("main"), pinned);
    setup.calls();

    let fourth = setup.run(&["pr", "--format", "json"]);
    fourth.assert_code(0);
    let doc = fourth.json();
    assert_eq!(doc["outcome"], "closed", "{fourth}");
    assert_eq!(doc["number"], 1);
    assert_eq!(doc["changed_files"], serde_json::json!([]));
    assert_eq!(
        setup.calls(),
        concat(&[
            preamble(),
            vec![
                format!("GET /repos/{REPO}/pulls?head=acme%3Atagpin%2Fdigests&state=open"),
                format!("POST /repos/{REPO}/issues/1/comments"),
                format!("PATCH /repos/{REPO}/pulls/1"),
            ],
        ])
    );
    assert!(setup.github.open_pulls(REPO).is_empty());
    let comments = setup.github.comments(REPO, 1);
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].starts_with("Closed by tagpin: every image reference is pinned"),
        "{comments:?}"
    );

    // 5. And once closed, nothing: one more run reads and stops.
    let fifth = setup.run(&["pr"]);
    fifth.assert_code(0);
    assert_eq!(
        fifth.stdout, "nothing to pin on main; no pull request\n",
        "{fifth}"
    );
    assert_eq!(
        setup.calls(),
        concat(&[
            preamble(),
            vec![format!(
                "GET /repos/{REPO}/pulls?head=acme%3Atagpin%2Fdigests&state=open"
            )],
        ])
    );
}

#[test]
fn a_lost_answer_to_opening_the_pull_request_does_not_open_two() {
    let setup = Setup::new();
    setup
        .github
        .inject(Fault::after("POST", &format!("/repos/{REPO}/pulls"), 502));
    let run = setup.run(&["pr", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["outcome"], "opened", "{run}");
    assert_eq!(run.json()["number"], 1);
    assert_eq!(setup.github.pulls(REPO).len(), 1);
    let calls = setup.calls();
    let tail: Vec<&str> = calls[calls.len() - 2..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            format!("POST /repos/{REPO}/pulls").as_str(),
            format!("GET /repos/{REPO}/pulls?head=acme%3Atagpin%2Fdigests&state=open").as_str(),
        ]
    );
    // The next run finds it and keeps it.
    let again = setup.run(&["pr"]);
    again.assert_code(0);
    assert!(
        again.stdout.starts_with("pull request #1 is up to date"),
        "{again}"
    );
    assert_eq!(setup.github.pulls(REPO).len(), 1);
}

#[test]
fn the_token_never_appears_in_the_output() {
    let setup = Setup::new();
    for (args, log) in [
        (&["pr", "-vv"][..], None),
        (&["pr", "-v", "--format", "json"][..], Some("trace")),
        (&["pr", "--dry-run", "-vv"][..], Some("debug")),
    ] {
        let mut command = setup.command(args);
        if let Some(filter) = log {
            command.env("RUST_LOG", filter);
        }
        let run = setup.context.run_command(&mut command);
        run.assert_code(0);
        assert!(
            !run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN),
            "{run}"
        );
        assert!(
            !run.stdout.contains("CANARY") && !run.stderr.contains("CANARY"),
            "{run}"
        );
    }
    // The tracing output is there: the canary is looked for where the requests are logged.
    let mut command = setup.command(&["pr", "-vv"]);
    let traced = setup.context.run_command(command.env("RUST_LOG", "trace"));
    assert!(traced.stderr.contains("GitHub request"), "{traced}");

    // A rejected token: the error names the URL and GitHub's message, not the token.
    let strict = Setup::with(
        Options {
            mount: String::new(),
            token: Some("ghp_another".to_owned()),
        },
        &[],
    );
    let mut command = strict.command(&["pr", "-vv"]);
    let run = strict.context.run_command(command.env("RUST_LOG", "trace"));
    run.assert_code(2);
    assert!(run.stderr.contains("401"), "{run}");
    assert!(run.stderr.contains("Bad credentials"), "{run}");
    assert!(
        !run.stderr.contains(TOKEN) && !run.stdout.contains(TOKEN),
        "{run}"
    );
}

#[test]
fn a_checkout_behind_or_ahead_of_the_base_is_refused() {
    let setup = Setup::new();
    let local = setup.head();
    let remote =
        setup
            .github
            .push_commit(REPO, "main", &[("README.md", b"# app, edited\n", "100644")]);
    let run = setup.run(&["pr"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains(&format!(
            "error: the checkout's HEAD ({local}) is not the head of `main` in {REPO} ({remote})"
        )),
        "{run}"
    );
    assert_eq!(setup.calls(), preamble());
    assert!(setup.github.open_pulls(REPO).is_empty());
}

#[test]
fn a_push_to_the_base_while_pr_runs_is_not_reverted() {
    let setup = Setup::new();
    let local = setup.head();
    // Someone changes a file `pr` rewrites, right after `pr` checked the checkout against the
    // base head: building the checkout's files on their commit would undo their change.
    let theirs = "FROM alpine:3.21\nRUN true\n";
    setup.github.push_after(PushAfter {
        method: "GET".to_owned(),
        path_prefix: format!("/repos/{REPO}/git/ref/heads/main"),
        nth: 1,
        repo: REPO.to_owned(),
        branch: "main".to_owned(),
        files: vec![(
            "Dockerfile".to_owned(),
            theirs.as_bytes().to_vec(),
            "100644".to_owned(),
        )],
    });
    let run = setup.run(&["pr"]);
    run.assert_code(2);
    let remote = setup.github.branch_head(REPO, "main").unwrap();
    assert_ne!(remote, local);
    assert!(
        run.stderr.contains(&format!(
            "error: the base branch `main` moved from {local} to {remote} while tagpin ran; \
             nothing was pushed; run it again on a fresh checkout"
        )),
        "{run}"
    );
    assert_eq!(
        setup.calls(),
        concat(&[preamble(), survey(false), check_base()])
    );
    assert!(setup.github.branch_head(REPO, BRANCH).is_none());
    assert!(setup.github.pulls(REPO).is_empty());
    assert_eq!(setup.remote("main")["Dockerfile"], theirs.as_bytes());
}

#[test]
fn files_changed_since_head_are_refused() {
    let setup = Setup::new();
    setup
        .context
        .write("Dockerfile", "FROM alpine:3.20\nRUN false\n");
    let run = setup.run(&["pr"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("this file would be changed but its contents differ from HEAD (Dockerfile)"),
        "{run}"
    );
    assert!(setup.calls().iter().all(|call| call.starts_with("GET ")));
}

#[test]
fn dry_run_calls_no_write_endpoint() {
    let setup = Setup::new();
    let run = setup.run(&["pr", "--dry-run", "--label", "deps", "--title", "Digests"]);
    run.assert_code(0);
    let calls = setup.calls();
    assert_eq!(calls, concat(&[preamble(), survey(false), check_base()]));
    assert!(setup.github.branch_head(REPO, BRANCH).is_none());
    assert!(setup.github.pulls(REPO).is_empty());
    for needle in [
        "dry run: acme/app from tagpin/digests into main at ",
        "(no pull request is open); would be: opened",
        "files:\n  Dockerfile\n  deploy/app.yaml\n  scripts/run.sh\n",
        "commit message:\n  Digests\n",
        "title: Digests\n",
        "  | file | image | tag | digest |",
        "requests:\n  POST /repos/acme/app/git/blobs  (blob for Dockerfile)\n",
        "  POST /repos/acme/app/git/refs  (create refs/heads/tagpin/digests)\n",
        "  POST /repos/acme/app/pulls  (open a pull request into main)\n",
        "  POST /repos/acme/app/issues/{number}/labels  (add labels deps)\n",
    ] {
        assert!(run.stdout.contains(needle), "{needle}\n{run}");
    }

    // With the pull request open and nothing to pin, the dry run says it would close it.
    setup.run(&["pr"]).assert_code(0);
    setup.land_pinned_on_base();
    setup.calls();
    let run = setup.run(&["pr", "--dry-run", "--format", "json"]);
    run.assert_code(0);
    let doc = run.json();
    assert_eq!(doc["outcome"], "closed", "{run}");
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["number"], 1);
    assert_eq!(doc["requests"].as_array().unwrap().len(), 2, "{run}");
    assert!(setup.calls().iter().all(|call| call.starts_with("GET ")));
    assert_eq!(setup.github.open_pulls(REPO).len(), 1);
}

#[test]
fn github_enterprise_base_path_works() {
    let setup = Setup::with(
        Options {
            mount: "/api/v3".to_owned(),
            token: Some(TOKEN.to_owned()),
        },
        &[],
    );
    assert!(setup.github.url().ends_with("/api/v3"));
    let run = setup.run(&["pr", "--base", "main"]);
    run.assert_code(0);
    assert!(run.stdout.starts_with("opened pull request #1: "), "{run}");
    let calls = setup.calls();
    assert!(
        calls.iter().all(|call| call.contains(" /api/v3/repos/")),
        "{calls:?}"
    );
    // With --base, the default branch is not asked for.
    assert_eq!(
        calls[0],
        format!("GET /api/v3/repos/{REPO}/git/ref/heads/main")
    );
    assert_eq!(setup.github.open_pulls(REPO).len(), 1);
}

#[test]
fn unresolved_references_are_listed_and_the_rest_is_proposed() {
    let setup = Setup::with(
        Options::default(),
        &[("deploy/job.yaml", "image: ghcr.io/acme/missing:1\n")],
    );
    let run = setup.run(&["pr", "--format", "json"]);
    run.assert_code(1);
    let doc = run.json();
    assert_eq!(doc["outcome"], "opened", "{run}");
    assert_eq!(doc["changed_files"], serde_json::json!(CHANGED));
    assert_eq!(doc["pin"]["unresolved"].as_array().unwrap().len(), 1);
    assert!(
        run.stderr.contains(
            "error: deploy/job.yaml:1:8: cannot resolve ghcr.io/acme/missing:1 (not-found)"
        ),
        "{run}"
    );
    let body = setup.github.open_pulls(REPO)[0].body.clone().unwrap();
    assert!(
        body.contains("### Not resolved")
            && body.contains("- `deploy/job.yaml:1` `ghcr.io/acme/missing:1` (not-found)"),
        "{body}"
    );
}

#[test]
fn details_put_the_build_day_in_the_pull_request_body() {
    let setup = Setup::new();
    let run = setup.run(&["pr", "--dry-run", "--details"]);
    run.assert_code(0);
    let day = &tagpin_testkit::CREATED[..10];
    // Each first pin is a single-platform image: its config was read with its manifest.
    for needle in [
        "| `deploy/app.yaml:10` | `nginx` | `1.27` | (none) → `sha256:".to_owned(),
        format!("` (linux/amd64 built {day}) |"),
        "<summary>Build times</summary>".to_owned(),
        "| `linux/amd64` | `sha256:".to_owned(),
        format!("` | `{}` |", tagpin_testkit::CREATED),
    ] {
        assert!(run.stdout.contains(&needle), "{needle}\n{run}");
    }
    // Without it, the body has no times.
    let plain = setup.run(&["pr", "--dry-run"]);
    plain.assert_code(0);
    assert!(!plain.stdout.contains("Build times"), "{plain}");
    assert!(!plain.stdout.contains(" built "), "{plain}");
}
