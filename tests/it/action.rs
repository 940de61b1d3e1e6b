//! The GitHub Action's own steps, run: `action.yml`'s composite steps executed with bash by the
//! simulated runner (`runner.rs`), a loopback file server standing in for the release download
//! (files made by `scripts/release`, as the release workflow makes them), and the fake GitHub API
//! with the real registry for `pr` (the `pr.rs` setting).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, OnceLock};

use crate::context::TestContext;
use crate::pr::{CHANGED, REPO, Setup, TOKEN};
use crate::runner::{Action, FileServer, Outcome, Runner};

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The commit the served release says it was built from (its `COMMIT` file).
const RELEASE_COMMIT: &str = "5eed0123456789abcdef0123456789abcdef5eed";
const DOWNLOAD_STEP: &str = "Download and verify the tagpin release";
const BUILD_STEP: &str = "Build tagpin from the action's source";

/// The release target of this machine, as action.yml maps a Linux runner onto it.
fn host_target() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x86_64-unknown-linux-musl",
        "aarch64" => "aarch64-unknown-linux-musl",
        other => panic!("no tagpin release target for a {other} machine"),
    }
}

fn archive_name() -> String {
    format!("tagpin-{}.tar.gz", host_target())
}

/// Release `v{VERSION}`'s files: this build's `tagpin` packed by `scripts/release archive` (for
/// the host's target; the other targets' names hold the same bytes), `COMMIT` and
/// `SHA256SUMS`, built once per test run.
struct Release {
    files: BTreeMap<String, Arc<Vec<u8>>>,
    /// The archive's SHA-256, as SHA256SUMS lists it.
    sha256: String,
}

fn script(args: &[&str]) -> Command {
    let mut command = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/release"));
    command.args(args);
    command
}

#[track_caller]
fn check(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn release() -> &'static Release {
    static RELEASE: OnceLock<Release> = OnceLock::new();
    RELEASE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        check(
            script(&["archive", host_target(), env!("CARGO_BIN_EXE_tagpin"), out])
                .env("TAGPIN_RELEASE_GZIP_LEVEL", "1"),
        );
        let targets = check(&mut script(&["targets"]));
        assert!(targets.lines().any(|t| t == host_target()), "{targets}");
        for target in targets.lines().filter(|t| *t != host_target()) {
            std::fs::hard_link(
                dir.path().join(archive_name()),
                dir.path().join(format!("tagpin-{target}.tar.gz")),
            )
            .unwrap();
        }
        check(&mut script(&["commit", RELEASE_COMMIT, out]));
        let sums = check(&mut script(&["checksums", out]));
        let sha256 = sums
            .lines()
            .find_map(|line| line.strip_suffix(&format!("  {}", archive_name())))
            .unwrap_or_else(|| panic!("SHA256SUMS lists no {}:\n{sums}", archive_name()))
            .to_owned();
        let files = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                (
                    entry.file_name().into_string().unwrap(),
                    Arc::new(std::fs::read(entry.path()).unwrap()),
                )
            })
            .collect();
        Release { files, sha256 }
    })
}

/// Where the server keeps release `v{VERSION}`: the path of GitHub's download URLs.
fn release_path(file: &str) -> String {
    format!("/tagpin/tagpin/releases/download/v{VERSION}/{file}")
}

impl Release {
    fn serve(&self, server: &FileServer) {
        for (name, bytes) in &self.files {
            server.put(&release_path(name), bytes.clone());
        }
    }
}

/// The `download-url` input pointing at `server`.
fn download_url(server: &FileServer) -> String {
    format!("{}/tagpin/tagpin/releases/download", server.url())
}

fn get(file: &str) -> String {
    format!("GET {}", release_path(file))
}

/// `sha256sum` of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), bytes).unwrap();
    let out = check(Command::new("sha256sum").arg(file.path()));
    out.split_whitespace().next().unwrap().to_owned()
}

/// A well-formed archive whose `tagpin` touches `marker` when run: what a tampered download or
/// cache would hold.
fn tampered_archive(marker: &Path) -> Arc<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let tagpin = dir.path().join("tagpin");
    std::fs::write(
        &tagpin,
        format!("#!/bin/sh\ntouch '{}'\necho tampered\n", marker.display()),
    )
    .unwrap();
    check(Command::new("chmod").arg("755").arg(&tagpin));
    let archive = dir.path().join("tampered.tar.gz");
    check(
        Command::new("tar")
            .arg("-czf")
            .arg(&archive)
            .arg("-C")
            .arg(dir.path())
            .arg("tagpin"),
    );
    Arc::new(std::fs::read(&archive).unwrap())
}

/// A runner for `pr` against the setting's fake GitHub, with the canary token.
fn pr_runner(setup: &Setup) -> Runner {
    let mut runner = Runner::new(setup.context.root());
    TOKEN.clone_into(&mut runner.token);
    runner.env = vec![
        ("GITHUB_API_URL".to_owned(), setup.github.url()),
        ("GITHUB_REPOSITORY".to_owned(), REPO.to_owned()),
        (
            "GITHUB_SERVER_URL".to_owned(),
            "https://github.com".to_owned(),
        ),
    ];
    runner
}

fn outputs(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

#[track_caller]
fn assert_no_token(run: &Outcome) {
    let log = run.log();
    assert!(!log.contains(TOKEN) && !log.contains("CANARY"), "{log}");
}

#[test]
fn the_action_installs_its_release_and_sets_outputs_when_opened_unchanged_and_closed() {
    let setup = Setup::new();
    let server = FileServer::start();
    let release = release();
    release.serve(&server);
    let action = Action::this_repository();
    let mut runner = pr_runner(&setup);
    // `uses: tagpin/tagpin@<the release's commit>`: the default version is that release.
    RELEASE_COMMIT.clone_into(&mut runner.action_ref);
    let args = setup
        .registry
        .mirror_args(["docker.io", "ghcr.io"])
        .join(" ");
    let download = download_url(&server);
    let inputs = [
        ("labels", "dependencies"),
        ("args", args.as_str()),
        ("download-url", download.as_str()),
    ];
    let changed = serde_json::to_string(&CHANGED).unwrap();
    let url = setup.pull_url(1);

    // 1. Installed from the release (COMMIT names this ref), verified, run: a pull request.
    let first = runner.run(&action, &inputs);
    first.assert_success();
    assert_eq!(first.output("prepare", "mode"), "release", "{first}");
    assert_eq!(
        first.output("prepare", "url"),
        format!("{download}/v{VERSION}/{}", archive_name())
    );
    assert_eq!(first.output("prepare", "sha256"), release.sha256);
    assert_eq!(first.output("cache", "cache-hit"), "false");
    assert!(first.step(DOWNLOAD_STEP).ran, "{first}");
    assert!(!first.step(BUILD_STEP).ran, "{first}");
    assert_eq!(
        server.take_requests(),
        [get("COMMIT"), get("SHA256SUMS"), get(&archive_name())]
    );
    // What ran is the binary from the archive, unpacked under RUNNER_TEMP.
    let bin = first.output("prepare", "bin");
    assert!(Path::new(bin).starts_with(first.temp.path()), "{bin}");
    assert_eq!(
        std::fs::read(bin).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_tagpin")).unwrap()
    );
    assert!(
        first.step(DOWNLOAD_STEP).stdout.contains("tagpin 0."),
        "{first}"
    );
    assert_eq!(
        first.outputs,
        outputs(&[
            ("changed-files", &changed),
            ("outcome", "opened"),
            ("pull-request", "1"),
            ("pull-request-url", &url),
        ]),
        "{first}"
    );
    assert_eq!(setup.github.open_pulls(REPO)[0].labels, ["dependencies"]);
    assert_no_token(&first);

    // 2. A new job: the archive comes from the cache, is checked again, and the pull request
    //    is kept as it is.
    let second = runner.run(&action, &inputs);
    second.assert_success();
    assert_eq!(second.output("cache", "cache-hit"), "true", "{second}");
    assert!(
        second
            .step(DOWNLOAD_STEP)
            .stdout
            .contains("the cached archive matches SHA256SUMS"),
        "{second}"
    );
    assert_eq!(server.take_requests(), [get("COMMIT"), get("SHA256SUMS")]);
    assert_eq!(
        second.outputs,
        outputs(&[
            ("changed-files", &changed),
            ("outcome", "unchanged"),
            ("pull-request", "1"),
            ("pull-request-url", &url),
        ]),
        "{second}"
    );

    // 3. The digests landed on the base branch: the pull request is closed.
    setup.land_pinned_on_base();
    let third = runner.run(&action, &inputs);
    third.assert_success();
    assert_eq!(
        third.outputs,
        outputs(&[
            ("changed-files", "[]"),
            ("outcome", "closed"),
            ("pull-request", "1"),
            ("pull-request-url", ""),
        ]),
        "{third}"
    );
    assert!(setup.github.open_pulls(REPO).is_empty());
    assert_no_token(&third);
}

#[test]
fn a_download_that_does_not_match_sha256sums_is_refused_and_never_run() {
    let context = TestContext::new();
    context.write("Dockerfile", "FROM alpine:3.20\n");
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("tampered-tagpin-ran");
    let tampered = tampered_archive(&marker);
    let server = FileServer::start();
    let release = release();
    release.serve(&server);
    // The archive is replaced; SHA256SUMS still lists the released one.
    server.put(&release_path(&archive_name()), tampered.clone());
    let action = Action::this_repository();
    let mut runner = Runner::new(context.root());
    runner.action_ref = format!("v{VERSION}");
    let download = download_url(&server);
    let inputs = [("command", "scan"), ("download-url", download.as_str())];

    let refused = runner.run(&action, &inputs);
    assert_eq!(refused.failed.as_deref(), Some(DOWNLOAD_STEP), "{refused}");
    let step = refused.step(DOWNLOAD_STEP);
    assert_eq!(step.code, 2);
    let url = format!("{download}/v{VERSION}/{}", archive_name());
    assert!(
        step.stdout.contains(&format!(
            "::error title=tagpin::checksum mismatch for {url}: SHA256SUMS says {}, the \
             download is {}; refusing to install it",
            release.sha256,
            sha256(&tampered)
        )),
        "{refused}"
    );
    assert!(!refused.step("run").ran, "{refused}");
    assert!(!marker.exists(), "the tampered binary ran");
    let bin = refused.output("prepare", "bin");
    let archive = refused.output("prepare", "archive");
    assert!(!Path::new(bin).exists(), "{bin} was installed");
    assert!(!Path::new(archive).exists() && !Path::new(&format!("{archive}.part")).exists());
    assert_eq!(
        refused.outputs,
        outputs(&[
            ("changed-files", ""),
            ("outcome", ""),
            ("pull-request", ""),
            ("pull-request-url", ""),
        ])
    );
    let (key, root) = (
        refused.output("prepare", "key").to_owned(),
        refused.output("prepare", "root").to_owned(),
    );
    assert!(
        runner.cache_entry(&key, &root).is_none(),
        "a failed job saved its cache"
    );

    // With the real archive served, it installs and runs, and the cache keeps the archive.
    server.put(
        &release_path(&archive_name()),
        release.files[&archive_name()].clone(),
    );
    let installed = runner.run(&action, &inputs);
    installed.assert_success();
    assert!(
        installed.step("run").stdout.contains("Dockerfile:1:6"),
        "{installed}"
    );
    let entry = runner
        .cache_entry(&key, &root)
        .expect("the archive was cached");

    // A tampered cache is not trusted either: the archive is downloaded again and checked.
    std::fs::write(entry.join(archive_name()), tampered.as_slice()).unwrap();
    server.take_requests();
    let again = runner.run(&action, &inputs);
    again.assert_success();
    assert_eq!(again.output("cache", "cache-hit"), "true");
    assert_eq!(
        server.take_requests(),
        [get("SHA256SUMS"), get(&archive_name())]
    );
    assert!(!marker.exists(), "the tampered binary ran");
    assert!(
        again.step("run").stdout.contains("Dockerfile:1:6"),
        "{again}"
    );
}

#[test]
fn inputs_with_shell_metacharacters_cannot_inject_code() {
    let setup = Setup::new();
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("injected");
    let m = marker.display();
    let action = Action::this_repository();
    // No `${{ }}` in any script: the runner splices nothing into their text.
    for script in action.scripts() {
        assert!(!script.contains("${{"), "{script}");
    }
    let mut runner = pr_runner(&setup);
    "main".clone_into(&mut runner.action_ref);
    let args = setup
        .registry
        .mirror_args(["docker.io", "ghcr.io"])
        .join(" ");
    let title = format!("Digests $(touch {m}) `touch {m}` '; touch {m}; ' \"; touch {m}; \"");
    let labels = format!("deps $(touch {m}), x';touch {m};'");

    // Through tagpin pr: the values arrive as they were written.
    let run = runner.run(
        &action,
        &[
            ("binary", env!("CARGO_BIN_EXE_tagpin")),
            ("title", &title),
            ("labels", &labels),
            ("args", &args),
        ],
    );
    run.assert_success();
    assert_eq!(run.outputs["outcome"], "opened", "{run}");
    let pull = &setup.github.open_pulls(REPO)[0];
    assert_eq!(pull.title, title);
    assert_eq!(
        pull.labels,
        [format!("deps $(touch {m})"), format!("x';touch {m};'")]
    );
    assert!(!marker.exists(), "an input ran as code:\n{run}");

    // Refused before anything runs.
    runner.stop_after = None;
    for (inputs, message) in [
        (
            vec![("version", format!("{VERSION}; touch {m}"))],
            "version must be X.Y.Z, vX.Y.Z or 'source'".to_owned(),
        ),
        (
            vec![("binary", "tagpin\nmode=source".to_owned())],
            "the bin of tagpin spans several lines".to_owned(),
        ),
        (
            vec![
                ("version", VERSION.to_owned()),
                ("download-url", format!("http://127.0.0.1:1/$(touch {m})")),
            ],
            format!("could not download http://127.0.0.1:1/$(touch {m})/v{VERSION}/SHA256SUMS"),
        ),
        (
            vec![
                ("binary", env!("CARGO_BIN_EXE_tagpin").to_owned()),
                ("command", format!("scan; touch {m}")),
            ],
            format!("unknown command 'scan; touch {m}'"),
        ),
    ] {
        let given: Vec<(&str, &str)> = inputs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let run = runner.run(&action, &given);
        assert!(run.failed.is_some(), "{run}");
        assert!(run.log().contains(&message), "{message}\n{run}");
        assert!(!marker.exists(), "an input ran as code:\n{run}");
    }
}

/// Where tagpin would come from: the outputs of the `prepare` step alone (nothing is
/// downloaded but `COMMIT` and `SHA256SUMS`, nothing built).
#[test]
fn the_version_is_the_release_the_actions_ref_names() {
    struct Case<'a> {
        os: &'a str,
        action_ref: &'a str,
        inputs: Vec<(&'a str, &'a str)>,
        mode: Result<&'a str, &'a str>,
        requests: Vec<String>,
    }

    let context = TestContext::new();
    let server = FileServer::start();
    release().serve(&server);
    let action = Action::this_repository();
    let download = download_url(&server);
    let release_url = format!("{download}/v{VERSION}/{}", archive_name());
    let other_sha = "0123456789abcdef0123456789abcdef01234567";
    let v = format!("v{VERSION}");

    let cases = [
        // A release tag: that release, no COMMIT needed.
        Case {
            os: "Linux",
            action_ref: &v,
            inputs: vec![],
            mode: Ok("release"),
            requests: vec![get("SHA256SUMS")],
        },
        // The commit a release was built from.
        Case {
            os: "Linux",
            action_ref: RELEASE_COMMIT,
            inputs: vec![],
            mode: Ok("release"),
            requests: vec![get("COMMIT"), get("SHA256SUMS")],
        },
        // Another commit (between releases): built from source.
        Case {
            os: "Linux",
            action_ref: other_sha,
            inputs: vec![],
            mode: Ok("source"),
            requests: vec![get("COMMIT")],
        },
        // A branch, or the local action (`uses: ./`, no ref).
        Case {
            os: "Linux",
            action_ref: "main",
            inputs: vec![],
            mode: Ok("source"),
            requests: vec![],
        },
        Case {
            os: "Linux",
            action_ref: "",
            inputs: vec![],
            mode: Ok("source"),
            requests: vec![],
        },
        // Asked for explicitly, with or without the v.
        Case {
            os: "Linux",
            action_ref: "main",
            inputs: vec![("version", &v)],
            mode: Ok("release"),
            requests: vec![get("SHA256SUMS")],
        },
        Case {
            os: "Linux",
            action_ref: other_sha,
            inputs: vec![("version", VERSION)],
            mode: Ok("release"),
            requests: vec![get("SHA256SUMS")],
        },
        Case {
            os: "Linux",
            action_ref: &v,
            inputs: vec![("version", "source")],
            mode: Ok("source"),
            requests: vec![],
        },
        Case {
            os: "Linux",
            action_ref: &v,
            inputs: vec![("binary", "/opt/tagpin")],
            mode: Ok("binary"),
            requests: vec![],
        },
        // No release binary for the runner: the source build, unless a version was asked for.
        Case {
            os: "Windows",
            action_ref: &v,
            inputs: vec![],
            mode: Ok("source"),
            requests: vec![],
        },
        Case {
            os: "Windows",
            action_ref: "main",
            inputs: vec![("version", VERSION)],
            mode: Err("no tagpin release is built for Windows/"),
            requests: vec![],
        },
        // No such release.
        Case {
            os: "Linux",
            action_ref: "main",
            inputs: vec![("version", "9.9.9")],
            mode: Err("could not download"),
            requests: vec!["GET /tagpin/tagpin/releases/download/v9.9.9/SHA256SUMS".to_owned()],
        },
        // Plain HTTP is for loopback only.
        Case {
            os: "Linux",
            action_ref: "main",
            inputs: vec![
                ("version", VERSION),
                ("download-url", "http://releases.example/tagpin"),
            ],
            mode: Err("download-url must be an https:// URL (http:// only on loopback)"),
            requests: vec![],
        },
    ];
    for case in cases {
        let mut runner = Runner::new(context.root());
        case.os.clone_into(&mut runner.os);
        case.action_ref.clone_into(&mut runner.action_ref);
        runner.stop_after = Some("prepare".to_owned());
        let mut inputs = case.inputs.clone();
        if !inputs.iter().any(|(name, _)| *name == "download-url") {
            inputs.push(("download-url", download.as_str()));
        }
        let run = runner.run(&action, &inputs);
        let label = format!("{} {:?} {:?}", case.os, case.action_ref, case.inputs);
        match case.mode {
            Ok(mode) => {
                run.assert_success();
                assert_eq!(run.output("prepare", "mode"), mode, "{label}\n{run}");
                if mode == "release" {
                    assert_eq!(run.output("prepare", "url"), release_url, "{label}");
                    assert_eq!(run.output("prepare", "sha256"), release().sha256);
                }
            }
            Err(message) => {
                assert_eq!(
                    run.failed.as_deref(),
                    Some(run.steps[0].name.as_str()),
                    "{label}\n{run}"
                );
                assert!(
                    run.step("prepare").stdout.contains(message),
                    "{label}: {message}\n{run}"
                );
            }
        }
        assert_eq!(server.take_requests(), case.requests, "{label}\n{run}");
    }

    // A SHA256SUMS without a line for this runner's archive: refused.
    let sums = String::from_utf8(release().files["SHA256SUMS"].to_vec()).unwrap();
    let mut without = String::new();
    for line in sums.lines().filter(|line| !line.ends_with(&archive_name())) {
        without.push_str(line);
        without.push('\n');
    }
    server.put(&release_path("SHA256SUMS"), Arc::new(without.into_bytes()));
    let mut runner = Runner::new(context.root());
    runner.action_ref = v.clone();
    let run = runner.run(&action, &[("download-url", download.as_str())]);
    assert_eq!(
        run.failed.as_deref(),
        Some(run.steps[0].name.as_str()),
        "{run}"
    );
    assert!(
        run.step("prepare").stdout.contains(&format!(
            "SHA256SUMS lists no sha256 for {}",
            archive_name()
        )),
        "{run}"
    );
}

/// `manifest-cache` (the default): a second run of the action starts from the manifest cache
/// the first one saved (restored by the `restore-keys` prefix, since each run has its own key)
/// and reads every manifest from it; off, each run on a fresh runner fetches them again.
#[test]
fn two_runs_of_the_action_share_the_manifest_cache() {
    let setup = Setup::new();
    let action = Action::this_repository();
    let runner = pr_runner(&setup);
    let args = format!(
        "--details --format json {}",
        setup
            .registry
            .mirror_args(["docker.io", "ghcr.io"])
            .join(" ")
    );
    let inputs = [
        ("binary", env!("CARGO_BIN_EXE_tagpin")),
        ("command", "pin"),
        ("args", args.as_str()),
    ];
    // What tagpin said (`pin --format json` on the run step's stdout).
    let report = |run: &Outcome| -> serde_json::Value {
        serde_json::from_str(&run.step("run").stdout).unwrap_or_else(|e| panic!("{e}:\n{run}"))
    };
    let dir = |run: &Outcome| run.output("manifests", "dir").to_owned();

    let first = runner.run(&action, &inputs);
    first.assert_success();
    assert_eq!(
        first.output("manifest-cache", "cache-hit"),
        "false",
        "{first}"
    );
    let stats = &report(&first)["stats"];
    // Four single-platform first pins: each manifest and its config, fetched.
    assert_eq!(stats["requests"]["GET"]["200"], 8, "{first}");
    assert_eq!(stats["cache_hits"], 0);
    let saved = runner
        .cache_entry("tagpin-manifests-Linux-1-1", &dir(&first))
        .unwrap_or_else(|| panic!("nothing saved:\n{first}"));
    assert_eq!(
        std::fs::read_dir(saved.join("by-digest/sha256"))
            .unwrap()
            .count(),
        8
    );

    // A new job on a fresh runner: its own key misses, the prefix finds the first run's entry.
    let second = runner.run(&action, &inputs);
    second.assert_success();
    assert_eq!(second.output("manifest-cache", "cache-hit"), "false");
    assert_eq!(dir(&second), dir(&first));
    let stats = &report(&second)["stats"];
    assert_eq!(stats["cache_hits"], 8, "{second}");
    assert_eq!(stats["requests"].get("GET"), None, "{second}");
    assert_eq!(report(&second)["edits"], report(&first)["edits"]);
    // It saved an entry of its own, for the next run to start from.
    assert!(
        runner
            .cache_entry("tagpin-manifests-Linux-2-1", &dir(&second))
            .is_some()
    );

    // Off: no cache step runs, and tagpin's own directory starts empty on a fresh runner.
    let off = runner.run(
        &action,
        &[
            ("binary", env!("CARGO_BIN_EXE_tagpin")),
            ("command", "pin"),
            ("args", args.as_str()),
            ("manifest-cache", "false"),
        ],
    );
    off.assert_success();
    assert!(!off.step("manifest-cache").ran, "{off}");
    assert_eq!(report(&off)["stats"]["requests"]["GET"]["200"], 8, "{off}");
}
