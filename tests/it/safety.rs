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

/// A repository with `files` and a registry holding `nginx:1.27`; returns the context, the
/// registry, the `--mirror` flags and the digest.
fn with_nginx(files: &[(&str, &str)]) -> (TestContext, Registry, Vec<String>, String) {
    let context = TestContext::new();
    let mut registry = Registry::start();
    let digest = registry.push("docker.io/library/nginx:1.27", Flavour::Image);
    for (path, text) in files {
        context.write(path, text);
    }
    let mirrors = registry.mirror_args(["docker.io"]);
    (context, registry, mirrors, digest)
}

fn pin_write(context: &TestContext, root: &str, mirrors: &[String]) -> crate::context::Run {
    let mut args = vec!["pin".to_owned(), root.to_owned(), "--write".to_owned()];
    args.extend(mirrors.iter().cloned());
    context.run(&args)
}

/// `pin --write` used to replace one name of a hard-linked file (the rename split the link),
/// exit 0, and write again on the next run: such a file is refused, every run.
#[test]
fn a_hard_linked_file_is_refused() {
    use std::os::unix::fs::MetadataExt as _;
    let (context, _registry, mirrors, _) = with_nginx(&[("a.yaml", "image: nginx:1.27\n")]);
    std::fs::hard_link(context.path("a.yaml"), context.path("b.yaml")).unwrap();
    let inode = std::fs::metadata(context.path("a.yaml")).unwrap().ino();
    for _ in 0..2 {
        let run = pin_write(&context, ".", &mirrors);
        run.assert_code(1);
        assert!(
            run.stderr.contains(
                "error: a.yaml: not written: the file has 2 hard links, and replacing it would give the new text to this name only"
            ),
            "{run}"
        );
        for name in ["a.yaml", "b.yaml"] {
            let path = context.path(name);
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                "image: nginx:1.27\n"
            );
            assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode, "{name}");
        }
    }
}

/// A file or directory link leading outside the PATH used to be written through (`pr`
/// already refused): on a CI checkout the repository could steer writes at any file the
/// runner can write. The target is refused, naming the link and where it leads.
#[test]
fn a_link_out_of_the_tree_is_not_written_through() {
    let outside = tempfile::tempdir().unwrap();
    let outside = std::fs::canonicalize(outside.path()).unwrap();
    std::fs::write(outside.join("victim.yaml"), "image: nginx:1.27\n").unwrap();
    std::fs::create_dir(outside.join("dir")).unwrap();
    std::fs::write(outside.join("dir/values.yaml"), "image: nginx:1.27\n").unwrap();
    let (context, _registry, mirrors, digest) = with_nginx(&[
        ("repo/inside.yaml", "image: nginx:1.27\n"),
        ("repo/real.yaml", "image: nginx:1.27\n"),
    ]);
    context
        .symlink(outside.join("victim.yaml"), "repo/link.yaml")
        .symlink(outside.join("dir"), "repo/charts")
        .symlink("real.yaml", "repo/inner-link.yaml");
    let run = pin_write(&context, "repo", &mirrors);
    run.assert_code(1);
    let victim = outside.join("victim.yaml");
    assert!(
        run.stderr.contains(&format!(
            "error: link.yaml: not written: `repo/link.yaml` is a symbolic link to `{}`, and the file it leads to, `{}`, is outside the PATHs given",
            victim.display(),
            victim.display()
        )),
        "{run}"
    );
    assert!(
        run.stderr.contains(&format!(
            "error: charts/values.yaml: not written: `repo/charts` is a symbolic link to `{}`",
            outside.join("dir").display()
        )),
        "{run}"
    );
    for path in [victim, outside.join("dir/values.yaml")] {
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "image: nginx:1.27\n",
            "{}",
            path.display()
        );
    }
    // Inside the tree, links are followed as before.
    let pinned = format!("image: nginx:1.27@{digest}\n");
    assert_eq!(
        std::fs::read_to_string(context.path("repo/inside.yaml")).unwrap(),
        pinned
    );
    assert_eq!(
        std::fs::read_to_string(context.path("repo/real.yaml")).unwrap(),
        pinned
    );
}

/// Run as root on a file owned by another user, the rewritten file used to become root's
/// and lose its extended attributes: owner, group, mode and xattrs are kept.
#[test]
fn owner_mode_and_extended_attributes_are_kept() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let (context, _registry, mirrors, digest) = with_nginx(&[("a.yaml", "image: nginx:1.27\n")]);
    let path = context.path("a.yaml");
    let file = std::fs::File::open(&path).unwrap();
    if let Err(error) = rustix::fs::fsetxattr(
        &file,
        "user.tagpin-test",
        b"canary",
        rustix::fs::XattrFlags::empty(),
    ) {
        panic!(
            "this test needs user.* extended attributes in the temporary directory ({}): {error}",
            path.display()
        );
    }
    drop(file);
    std::os::unix::fs::chown(&path, Some(4321), Some(4322))
        .expect("this test runs as root (as CI does) to give the file to another user");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    pin_write(&context, ".", &mirrors).assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("image: nginx:1.27@{digest}\n")
    );
    let metadata = std::fs::metadata(&path).unwrap();
    assert_eq!((metadata.uid(), metadata.gid()), (4321, 4322));
    assert_eq!(metadata.permissions().mode() & 0o7777, 0o640);
    let mut value = [0_u8; 16];
    let length = rustix::fs::getxattr(&path, "user.tagpin-test", &mut value[..]).unwrap();
    assert_eq!(&value[..length], b"canary");
}

/// A read-only file (mode 0444) used to be replaced (root may rename over anything): it is
/// refused and left as it is.
#[test]
fn a_read_only_file_is_refused() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let (context, _registry, mirrors, _) = with_nginx(&[("a.yaml", "image: nginx:1.27\n")]);
    let path = context.path("a.yaml");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let inode = std::fs::metadata(&path).unwrap().ino();
    let run = pin_write(&context, ".", &mirrors);
    run.assert_code(1);
    assert!(
        run.stderr
            .contains("error: a.yaml: not written: the file is read-only (mode 0444)"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "image: nginx:1.27\n"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
}

/// Every `.tagpin-*.tmp` file under `dir`.
fn leftovers(dir: &std::path::Path) -> Vec<String> {
    crate::pin::tree(dir)
        .into_keys()
        .filter(|path| {
            let name = path.rsplit('/').next().unwrap();
            name.starts_with(".tagpin-")
                && std::path::Path::new(name)
                    .extension()
                    .is_some_and(|extension| extension == "tmp")
        })
        .collect()
}

/// Killed (SIGKILL) in the middle of a write, a run used to leave its `.tagpin-*.tmp` file
/// behind for good: the next run's write in that directory removes it (and only it).
#[test]
fn a_kill_in_the_middle_of_a_write_leaves_nothing_behind_the_next_run() {
    let (context, _registry, mirrors, digest) = with_nginx(&[
        ("a.yaml", "image: nginx:1.27\n"),
        (".tagpin-keep.txt", "not ours\n"),
    ]);
    let pause = tempfile::tempdir().unwrap();
    let marker = pause.path().join("paused");
    let mut args = vec!["pin".to_owned(), ".".to_owned(), "--write".to_owned()];
    args.extend(mirrors.iter().cloned());
    let mut child = context
        .command(&args)
        .env(tagpin::env::PAUSE_IN_WRITE, &marker)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "pin never reached its write");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        leftovers(context.root()).len(),
        1,
        "the temporary file exists"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(context.path("a.yaml")).unwrap(),
        "image: nginx:1.27\n",
        "killed before the rename: the old text"
    );
    assert_eq!(
        leftovers(context.root()).len(),
        1,
        "left behind by the kill"
    );

    pin_write(&context, ".", &mirrors).assert_code(0);
    assert_eq!(leftovers(context.root()), Vec::<String>::new());
    assert_eq!(
        std::fs::read_to_string(context.path("a.yaml")).unwrap(),
        format!("image: nginx:1.27@{digest}\n")
    );
    assert!(context.path(".tagpin-keep.txt").exists(), "not ours: kept");
}

/// `pin` could grow a file past the 10 MiB read limit, which `check` then refused: a rewrite
/// over the limit is not written (nor shown as a diff), and the file stays readable.
#[test]
fn a_rewrite_over_the_read_limit_is_not_written() {
    let limit = 10 * 1024 * 1024;
    let head = "image: nginx:1.27\n";
    let mut text = String::from(head);
    while text.len() < limit - 80 {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    text.truncate(limit - 10);
    text.push('\n');
    let (context, _registry, mirrors, _) = with_nginx(&[("big.yaml", &text)]);
    for write in [false, true] {
        let mut args = vec!["pin".to_owned(), ".".to_owned()];
        if write {
            args.push("--write".to_owned());
        }
        args.extend(mirrors.iter().cloned());
        let run = context.run(&args);
        run.assert_code(1);
        assert!(
            run.stderr
                .contains("error: big.yaml: not written: with the digests it would be"),
            "{run}"
        );
        assert!(run.stderr.contains("over the 10 MiB limit"), "{run}");
        assert_eq!(run.stdout, "", "no diff for a file that is not written");
    }
    assert!(std::fs::read_to_string(context.path("big.yaml")).unwrap() == text);
    context.run(["check", "."]).assert_code(1);
}

/// A Makefile's rules (`image: image-nginx`) used to be read as references, and `pin
/// --write` rewrote them; only the recipe's flag is pinned now.
#[test]
fn makefile_rules_are_left_alone() {
    let makefile = "image: image-nginx\n\nimage-nginx:\n\t# kubectl run x --image=nginx:1.27\n\tkubectl run x --image=nginx:1.27\n";
    let (context, _registry, mirrors, digest) = with_nginx(&[("Makefile", makefile)]);
    let run = pin_write(&context, ".", &mirrors);
    run.assert_code(0);
    assert!(
        run.stderr
            .contains("pinned 1, refreshed 0, unchanged 0, unresolved 0 (1 reference in 1 file)"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(context.path("Makefile")).unwrap(),
        makefile.replacen(
            "\tkubectl run x --image=nginx:1.27",
            &format!("\tkubectl run x --image=nginx:1.27@{digest}"),
            1
        )
    );
}
