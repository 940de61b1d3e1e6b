//! Table tests per scanner: edge cases as (input, expected findings) rows.

use std::path::Path;

use crate::{EditSite, FileKind, Status, Warning, scan};

type Found = Vec<(usize, usize, Status, String)>;

/// `(line, column, status, text)` of every finding.
fn found(kind: FileKind, text: &str) -> Vec<(usize, usize, Status, String)> {
    scan(Path::new("t"), kind, text)
        .unwrap()
        .into_iter()
        .map(|f| (f.line, f.column, f.status, f.text))
        .collect()
}

fn one(
    line: usize,
    column: usize,
    status: Status,
    text: &str,
) -> Vec<(usize, usize, Status, String)> {
    vec![(line, column, status, text.to_owned())]
}

#[test]
fn yaml_table() {
    use Status::{DigestOnly, Floating, Ignored, Pinned, Templated};
    let digest = format!("sha256:{}", "1".repeat(64));
    let cases: Vec<(&str, String, Found)> = vec![
        (
            "plain",
            "image: nginx:1.27\n".into(),
            one(1, 8, Floating, "nginx:1.27"),
        ),
        (
            "no tag",
            "image: nginx".into(),
            one(1, 8, Floating, "nginx"),
        ),
        (
            "single quotes",
            "a:\n  image: 'nginx:1'\n".into(),
            one(2, 11, Floating, "nginx:1"),
        ),
        (
            "pinned",
            format!("image: \"n:1@{digest}\"\n"),
            one(1, 9, Pinned, &format!("n:1@{digest}")),
        ),
        (
            "digest only",
            format!("image: n@{digest}\n"),
            one(1, 8, DigestOnly, &format!("n@{digest}")),
        ),
        (
            "templated",
            "image: ${IMG}\n".into(),
            one(1, 8, Templated, "${IMG}"),
        ),
        (
            "ignored",
            "image: n:1  # tagpin:ignore\n".into(),
            one(1, 8, Ignored, "n:1"),
        ),
        (
            "comment",
            "# image: n:1\nx: 1 # image: m:1\n".into(),
            vec![],
        ),
        (
            "block scalar",
            "data: |\n  image: n:1\nimage: m:2\n".into(),
            one(3, 8, Floating, "m:2"),
        ),
        (
            "folded",
            "data: >-\n  image: n:1\n\n  more\n".into(),
            vec![],
        ),
        (
            "schema",
            "properties:\n  image:\n    type: string\n  x: {image: {type: string}}\n".into(),
            vec![],
        ),
        (
            "name part",
            "a:\n  image: piraeus-server\n  version: v1\n".into(),
            vec![],
        ),
        ("keyword", "image: null\nimage2: true\n".into(), vec![]),
        ("empty", "image:\nimage: \"\"\n".into(), vec![]),
        (
            "alias",
            "a: &x n:1\nimage: *x\nb:\n  image: &y m:1\n".into(),
            vec![
                (1, 7, Floating, "n:1".into()),
                (4, 13, Floating, "m:1".into()),
            ],
        ),
        (
            "flow",
            "- {name: a, image: \"n:1\"}\n".into(),
            one(1, 21, Floating, "n:1"),
        ),
        (
            "multi-line flow",
            "x: {\n  image: n:1,\n  name: a\n}\n".into(),
            one(2, 10, Floating, "n:1"),
        ),
        (
            "documents",
            "image: a:1\n---\nimage: b:1\n...\n".into(),
            vec![
                (1, 8, Floating, "a:1".into()),
                (3, 8, Floating, "b:1".into()),
            ],
        ),
        (
            "unicode column",
            "é: 1\nx: {é: 1, image: n:1}\n".into(),
            one(2, 18, Floating, "n:1"),
        ),
        (
            "split latest",
            "img:\n  image:\n    repository: n\n    tag: latest\n".into(),
            one(3, 17, Floating, "n:latest"),
        ),
        (
            "split empty tag",
            "image:\n  repository: n\n  tag: \"\"\n".into(),
            one(2, 15, Templated, "n"),
        ),
        (
            "an operator's related images",
            "containers:\n- name: m\n  image: op:1\n  env:\n  - name: RELATED_IMAGE_DB\n    value: \"db:2\"\n  - name: DB_IMAGE\n    value: db:3\n  - {name: RELATED_IMAGE_X, value: ''}\n".into(),
            vec![
                (3, 10, Floating, "op:1".into()),
                (6, 13, Floating, "db:2".into()),
            ],
        ),
        (
            "related images outside a container",
            "env:\n- name: RELATED_IMAGE_DB\n  value: db:2\n".into(),
            vec![],
        ),
    ];
    for (name, text, expected) in cases {
        assert_eq!(found(FileKind::Yaml, &text), expected, "{name}: {text:?}");
    }
}

#[test]
fn yaml_sites_and_lint() {
    let text = "image:\n  repository: n\n  tag: v1\n  digest: ''\n";
    let findings = scan(Path::new("v"), FileKind::Yaml, text).unwrap();
    assert_eq!(
        findings[0].site,
        EditSite::SplitDigest {
            span: 44..44,
            bare: false
        }
    );
    let text = "image:\n  repository: n\n  tag: v1\n";
    let findings = scan(Path::new("v"), FileKind::Yaml, text).unwrap();
    assert_eq!(
        findings[0].site,
        EditSite::SplitTag {
            span: 30..32,
            tag: "v1".into()
        }
    );
    let lint = |text: &str| {
        let findings = scan(Path::new("p"), FileKind::Yaml, text).unwrap();
        assert_eq!(findings.len(), 1, "{text:?}");
        findings[0].warnings.clone()
    };
    let latest = [Warning::LatestPullsAlways];
    assert_eq!(lint("containers:\n- image: nginx\n"), latest);
    assert_eq!(lint("initContainers:\n  - image: n:latest\n"), latest);
    assert_eq!(
        lint("containers:\n- image: n:latest\n  imagePullPolicy: Always\n"),
        []
    );
    assert_eq!(lint("containers:\n- image: n:1\n"), []);
    assert_eq!(lint("other:\n- image: nginx\n"), []);
    // Every container list of Kubernetes and the common CRDs: pods, Tekton, Argo Workflows;
    // each also with a pull policy, which clears the warning.
    for text in [
        "spec:\n  ephemeralContainers:\n  - name: debug\n    image: busybox\n",
        "apiVersion: tekton.dev/v1\nkind: Task\nspec:\n  steps:\n  - name: build\n    image: golang:latest\n",
        "spec:\n  sidecars:\n  - name: dind\n    image: docker\n",
        "apiVersion: tekton.dev/v1\nkind: Task\nspec:\n  stepTemplate:\n    image: alpine\n",
        "templates:\n- name: main\n  container:\n    image: alpine:latest\n",
        "templates:\n- name: s\n  script:\n    image: python\n    source: print(1)\n",
    ] {
        assert_eq!(lint(text), latest, "{text:?}");
        let (head, tail) = text.split_at(text.find("image:").unwrap());
        let indent = &head[head.rfind('\n').unwrap() + 1..];
        let policy = format!("{head}imagePullPolicy: IfNotPresent\n{indent}{tail}");
        assert_eq!(lint(&policy), [], "{policy:?}");
    }
    assert_eq!(
        lint("spec:\n  steps:\n  - name: build\n    image: golang:1.22\n"),
        []
    );
    // A CI pipeline's steps (Drone's, Woodpecker's: no `apiVersion`) run images kubelet never
    // sees: no warning, and no `imagePullPolicy` to add.
    assert_eq!(
        lint("kind: pipeline\ntype: kubernetes\nsteps:\n- name: publish\n  image: plugins/ecr\n"),
        []
    );
    assert_eq!(lint("steps:\n  - name: t\n    image: golang:latest\n"), []);
    // Woodpecker keys its steps and services by name: an image with no tag there is `latest`,
    // written as such, with no lint either.
    for text in [
        "steps:\n  release:\n    image: akkoma/releaser\n",
        "services:\n  db:\n    image: postgres\n",
    ] {
        assert_eq!(lint(text), [], "{text:?}");
        let findings = scan(Path::new("p"), FileKind::Yaml, text).unwrap();
        assert_eq!(findings[0].site, EditSite::Inline, "{text:?}");
    }
    // A Tekton `StepAction`'s image is what the steps that use it run.
    let step_action = "apiVersion: tekton.dev/v1beta1\nkind: StepAction\nmetadata:\n  name: s\nspec:\n  image: mirror.gcr.io/ubuntu\n";
    assert_eq!(lint(step_action), []);
    let findings = scan(Path::new("p"), FileKind::Yaml, step_action).unwrap();
    assert_eq!(findings[0].site, EditSite::Inline);
    let nested = scan(
        Path::new("p"),
        FileKind::Yaml,
        "a:\n  steps:\n    s:\n      image: nginx\n",
    )
    .unwrap();
    assert!(matches!(nested[0].site, EditSite::Unsupported { .. }));
    // A `container:` or `script:` key outside an Argo template is not known to be a container.
    assert_eq!(lint("app:\n  container:\n    image: alpine\n"), []);
    assert_eq!(lint("script:\n  image: alpine\n"), []);
    assert_eq!(
        lint(&format!(
            "containers:\n- image: n@sha256:{}\n",
            "1".repeat(64)
        )),
        []
    );
}

#[test]
fn latest_containers_offer_a_pull_policy_insertion() {
    // (file, kind, the text with the insertion applied, or None where it is refused)
    let cases: &[(&str, FileKind, Option<&str>)] = &[
        (
            "spec:\n  containers:\n    - name: a\n      image: n:latest  # app\n    - name: b\n      image: m:1\n",
            FileKind::Yaml,
            Some(
                "spec:\n  containers:\n    - name: a\n      image: n:latest  # app\n      imagePullPolicy: IfNotPresent\n    - name: b\n      image: m:1\n",
            ),
        ),
        (
            "containers:\r\n- image: nginx\r\n  name: web\r\n",
            FileKind::Yaml,
            Some(
                "containers:\r\n- image: nginx\r\n  imagePullPolicy: IfNotPresent\r\n  name: web\r\n",
            ),
        ),
        (
            "containers: [{name: a, image: busybox}]\n",
            FileKind::Yaml,
            Some("containers: [{name: a, image: busybox, imagePullPolicy: IfNotPresent}]\n"),
        ),
        (
            "{\"containers\": [{\"image\": \"n:latest\"}]}\n",
            FileKind::Yaml,
            Some(
                "{\"containers\": [{\"image\": \"n:latest\", \"imagePullPolicy\": \"IfNotPresent\"}]}\n",
            ),
        ),
        // After the image line: a block scalar later in the container is left as it is.
        (
            "containers:\n- image: 'n:latest'\n  args: |\n    x\n",
            FileKind::Yaml,
            Some(
                "containers:\n- image: 'n:latest'\n  imagePullPolicy: IfNotPresent\n  args: |\n    x\n",
            ),
        ),
        // A Helm template: in the image's own branch, whatever follows.
        (
            "containers:\n{{- if .Values.a }}\n- image: n:latest\n  {{- if .Values.x }}\n  args: [x]\n  {{- end }}\n{{- end }}\n",
            FileKind::HelmTemplate,
            Some(
                "containers:\n{{- if .Values.a }}\n- image: n:latest\n  imagePullPolicy: IfNotPresent\n  {{- if .Values.x }}\n  args: [x]\n  {{- end }}\n{{- end }}\n",
            ),
        ),
        // An action on the image line: refused.
        (
            "containers:\n- image: n:latest # {{ .Values.note }}\n",
            FileKind::HelmTemplate,
            None,
        ),
        // A flow mapping over several lines: refused.
        (
            "containers:\n- {name: a,\n   image: n:latest}\n",
            FileKind::Yaml,
            None,
        ),
        // An anchored container would gain the key wherever it is used.
        (
            "containers:\n- &c\n  image: n:latest\n- *c\n",
            FileKind::Yaml,
            None,
        ),
    ];
    for (text, kind, expected) in cases {
        let findings = scan(Path::new("templates/p.yaml"), *kind, text).unwrap();
        let finding = findings
            .iter()
            .find(|f| f.warnings.contains(&Warning::LatestPullsAlways))
            .unwrap_or_else(|| panic!("no warned finding in {text:?}: {findings:?}"));
        let applied = finding
            .pull_policy()
            .as_ref()
            .map(|edit| crate::apply_edits(text, std::slice::from_ref(edit)).unwrap());
        assert_eq!(applied.as_deref(), *expected, "{text:?}");
    }
    // No warning, no insertion.
    let findings = scan(
        Path::new("p"),
        FileKind::Yaml,
        "containers:\n- image: n:1\n",
    )
    .unwrap();
    assert_eq!(findings[0].pull_policy(), None);
}

#[test]
fn latest_values_maps_offer_their_pull_policy() {
    // (values, the text with the edit applied, or None where there is none)
    let cases: &[(&str, Option<&str>)] = &[
        (
            "image:\n  repository: acme/app\n  tag: latest\n  pullPolicy: Always # why\n",
            Some(
                "image:\n  repository: acme/app\n  tag: latest\n  pullPolicy: IfNotPresent # why\n",
            ),
        ),
        (
            "image:\r\n  repository: acme/app\r\n  tag: \"latest\"\r\n  pullPolicy: \"\"\r\n",
            Some(
                "image:\r\n  repository: acme/app\r\n  tag: \"latest\"\r\n  pullPolicy: \"IfNotPresent\"\r\n",
            ),
        ),
        (
            "web:\n  image: {repository: acme/app, tag: latest, imagePullPolicy: 'Always'}\n",
            Some(
                "web:\n  image: {repository: acme/app, tag: latest, imagePullPolicy: 'IfNotPresent'}\n",
            ),
        ),
        // Already not Always, another tag, no policy key, a value used elsewhere too.
        (
            "image:\n  repository: a\n  tag: latest\n  pullPolicy: IfNotPresent\n",
            None,
        ),
        (
            "image:\n  repository: a\n  tag: latest\n  pullPolicy: Never\n",
            None,
        ),
        (
            "image:\n  repository: a\n  tag: \"1.2\"\n  pullPolicy: Always\n",
            None,
        ),
        ("image:\n  repository: a\n  tag: latest\n", None),
        (
            "image:\n  repository: a\n  tag: latest\n  pullPolicy: &p Always\nother: *p\n",
            None,
        ),
        (
            "image:\n  repository: a\n  tag: latest\n  pullPolicy:\n",
            None,
        ),
    ];
    for (text, expected) in cases {
        let findings = scan(Path::new("chart/values.yaml"), FileKind::Yaml, text).unwrap();
        assert_eq!(findings.len(), 1, "{text:?}: {findings:?}");
        let applied = findings[0]
            .pull_policy()
            .map(|edit| crate::apply_edits(text, std::slice::from_ref(edit)).unwrap());
        assert_eq!(applied.as_deref(), *expected, "{text:?}");
    }
}

#[test]
fn compose_and_workflow_table() {
    use Status::{Floating, Ignored, Local, Templated};
    // A service Watchtower updates (its label as a mapping or a list) is left to it.
    assert_eq!(
        found(
            FileKind::Compose,
            "services:\n  a:\n    image: n:1\n    labels:\n      com.centurylinklabs.watchtower.enable: \"true\"\n  b:\n    image: m:1\n    labels:\n      - com.centurylinklabs.watchtower.enable=true\n  c:\n    image: o:1\n    labels: [com.centurylinklabs.watchtower.enable=false]\n"
        ),
        vec![
            (3, 12, Ignored, "n:1".into()),
            (7, 12, Ignored, "m:1".into()),
            (11, 12, Floating, "o:1".into())
        ]
    );
    assert_eq!(
        found(
            FileKind::Compose,
            "services:\n  a:\n    image: n:1\n    build: .\n  b:\n    image: m:1\nother:\n  image: x:1\n"
        ),
        vec![
            (3, 12, Local, "n:1".into()),
            (6, 12, Floating, "m:1".into())
        ]
    );
    assert_eq!(
        found(
            FileKind::Workflow,
            "jobs:\n  a:\n    container: n:1\n    steps:\n      - uses: docker://m:1\n      - uses: actions/checkout@v4\n  b:\n    container:\n      image: ${{ x }}\n"
        ),
        vec![
            (3, 16, Floating, "n:1".into()),
            (5, 24, Floating, "m:1".into()),
            (9, 14, Templated, "${{ x }}".into())
        ]
    );
    assert_eq!(
        found(
            FileKind::Workflow,
            "runs:\n  using: docker\n  image: Dockerfile\n"
        ),
        vec![]
    );
    // The `image` input of an action that runs it; not that of any other action.
    assert_eq!(
        found(
            FileKind::Workflow,
            "jobs:\n  a:\n    steps:\n      - uses: addnab/docker-run-action@v3\n        with:\n          image: grafana/k6:0.49\n          run: k6 run\n      - uses: docker/setup-qemu-action@v3\n        with: {image: 'tonistiigi/binfmt:qemu-v8.1.5'}\n      - uses: redhat-actions/buildah-build@v2\n        with:\n          image: my-app:1\n      - uses: addnab/docker-run-action@v3\n        with:\n          image: ${{ env.IMAGE }}\n"
        ),
        vec![
            (6, 18, Floating, "grafana/k6:0.49".into()),
            (9, 24, Floating, "tonistiigi/binfmt:qemu-v8.1.5".into()),
            (15, 18, Templated, "${{ env.IMAGE }}".into())
        ]
    );
    // A job's image as a matrix value: each value listed, and each `include` entry's.
    assert_eq!(
        found(
            FileKind::Workflow,
            "jobs:\n  t:\n    name: test on ${{ matrix.image }}\n    strategy:\n      matrix:\n        image: [\"debian:12\", ubuntu:22.04]\n        go: [\"1.22\"]\n        include:\n          - image: fedora:39\n    container: ${{ matrix.image }}\n    services:\n      db:\n        image: ${{matrix.db}}\n"
        ),
        vec![
            (6, 18, Floating, "debian:12".into()),
            (6, 30, Floating, "ubuntu:22.04".into()),
            (9, 20, Floating, "fedora:39".into()),
            (10, 16, Templated, "${{ matrix.image }}".into()),
            (13, 16, Templated, "${{matrix.db}}".into()),
        ]
    );
    // Used elsewhere (a condition): reported, not written.
    let findings = scan(
        Path::new("t"),
        FileKind::Workflow,
        "jobs:\n  t:\n    name: t on ${{ matrix.os }}\n    strategy:\n      matrix:\n        image: [debian:12]\n    container:\n      image: ${{ matrix.image }}\n    steps:\n      - if: matrix.image == 'debian:12'\n        run: make\n",
    )
    .unwrap();
    assert!(
        matches!(&findings[0].site, EditSite::Unsupported { reason } if reason.starts_with("the job uses `matrix.image` elsewhere")),
        "{findings:?}"
    );
    // A job whose name reads no matrix value (or that has none) is named by GitHub with all
    // of them: reported, not written.
    for name in ["", "    name: Tests\n"] {
        let text = format!(
            "jobs:\n  t:\n{name}    strategy:\n      matrix:\n        image: [debian:12]\n    container: ${{{{ matrix.image }}}}\n"
        );
        let findings = scan(Path::new("t"), FileKind::Workflow, &text).unwrap();
        assert!(
            matches!(&findings[0].site, EditSite::Unsupported { reason } if reason.starts_with("GitHub names the job's checks with its matrix values")),
            "{findings:?}"
        );
    }
    // Read by the job's name (its check's name): reported, not written; a step's name is
    // another use as before, and a job that names no matrix value is written.
    for (job_name, unwritable) in [
        ("test on ${{ matrix.image }}", true),
        ("test (${{matrix.image}})", true),
        ("test on ${{ matrix.image_arch }}", false),
        ("test", false),
    ] {
        let text = format!(
            "jobs:\n  t:\n    name: {job_name}\n    strategy:\n      matrix:\n        image: [debian:12]\n    container: ${{{{ matrix.image }}}}\n"
        );
        let findings = scan(Path::new("t"), FileKind::Workflow, &text).unwrap();
        let unsupported = matches!(
            &findings[0].site,
            EditSite::Unsupported { reason } if reason.starts_with("the job's name reads `matrix.image`")
        );
        assert_eq!(unsupported, unwritable, "{job_name}: {findings:?}");
    }
    // With no tag, another input may complete it: reported, not written.
    let findings = scan(
        Path::new("t"),
        FileKind::Workflow,
        "jobs:\n  a:\n    steps:\n      - uses: tj-actions/docker-run@v2\n        with:\n          image: alpine\n          name: a\n",
    )
    .unwrap();
    assert!(
        matches!(&findings[0].site, EditSite::Unsupported { reason } if reason.starts_with("no tag or digest")),
        "{findings:?}"
    );
}

#[test]
fn gitlab_ci_table() {
    use Status::{Floating, Templated};
    let cases = [
        // Top level (the deprecated global form), `default:`, a job, a hidden job.
        (
            "image: a:1\nservices: [b:1]\ndefault:\n  image: c:1\n.t:\n  image: {name: d:1}\njob:\n  services:\n  - name: e:1\n    alias: e\n  - f:1\n",
            vec![
                (1, 8, Floating, "a:1".into()),
                (2, 12, Floating, "b:1".into()),
                (4, 10, Floating, "c:1".into()),
                (6, 17, Floating, "d:1".into()),
                (9, 11, Floating, "e:1".into()),
                (11, 5, Floating, "f:1".into()),
            ],
        ),
        // Not jobs, not job keywords: variables, nested `image` keys, a script.
        (
            "variables:\n  image: a:1\njob:\n  variables:\n    image: b:1\n  script:\n  - 'image: c:1'\n  cache:\n    services: [d:1]\n",
            vec![],
        ),
        // The global image given by its `name` (kaniko's executor, with an entrypoint).
        (
            "image:\n  name: gcr.io/kaniko-project/executor:v1.14.0-debug\n  entrypoint: [\"\"]\nservices:\n  - name: b:1\n",
            vec![
                (
                    2,
                    9,
                    Floating,
                    "gcr.io/kaniko-project/executor:v1.14.0-debug".into(),
                ),
                (5, 11, Floating, "b:1".into()),
            ],
        ),
        (
            "job:\n  image: $CI_REGISTRY_IMAGE:$CI_COMMIT_SHA\n",
            one(2, 10, Templated, "$CI_REGISTRY_IMAGE:$CI_COMMIT_SHA"),
        ),
        // A merge key brings a hidden job's image in: one finding, at the anchor.
        (
            ".base: &base\n  image: a:1\njob:\n  <<: *base\n",
            one(2, 10, Floating, "a:1"),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(found(FileKind::GitlabCi, text), expected, "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(found(FileKind::GitlabCi, &crlf), expected, "{crlf:?}");
    }
}

/// Kustomize `images:` entries: each row's findings, and the file after pinning every editable
/// one with digest `1…`, then refreshing it with digest `2…`; also with CRLF.
#[test]
fn kustomize_images_table() {
    use Status::{DigestOnly, Floating, Pinned, Templated};
    use tagpin_reference::Digest;
    let first = Digest::parse(&format!("sha256:{}", "1".repeat(64))).unwrap();
    let second = Digest::parse(&format!("sha256:{}", "2".repeat(64))).unwrap();
    let pin = |text: &str, digest: &Digest| {
        let findings = scan(Path::new("kustomization.yaml"), FileKind::Kustomize, text).unwrap();
        let edits: Vec<_> = findings.iter().filter_map(|f| f.edit(digest)).collect();
        crate::apply_edits(text, &edits).unwrap()
    };
    // (text, findings, pinned with `D` standing for the digest; `None`: nothing written)
    let cases: Vec<(&str, Found, Option<&str>)> = vec![
        (
            "images:\n- name: nginx\n  newTag: \"1.27\" # web\n- name: redis\n  newName: ghcr.io/acme/redis\n  newTag: 7.4\nresources: [deploy.yaml]\n",
            vec![
                (2, 9, Floating, "nginx:1.27".into()),
                (5, 12, Floating, "ghcr.io/acme/redis:7.4".into()),
            ],
            Some(
                "images:\n- name: nginx\n  newTag: \"1.27\" # web\n  digest: D\n- name: redis\n  newName: ghcr.io/acme/redis\n  newTag: 7.4\n  digest: D\nresources: [deploy.yaml]\n",
            ),
        ),
        (
            "images:\n  - {name: nginx, newTag: \"1.27\"}\n",
            one(2, 12, Floating, "nginx:1.27"),
            Some("images:\n  - {name: nginx, newTag: \"1.27\", digest: D}\n"),
        ),
        (
            "{\"images\": [{\"name\": \"nginx\", \"newTag\": \"1.27\"}]}\n",
            one(1, 23, Floating, "nginx:1.27"),
            Some(
                "{\"images\": [{\"name\": \"nginx\", \"newTag\": \"1.27\", \"digest\": \"D\"}]}\n",
            ),
        ),
        // A digest already there is refreshed in place; so is one written in newTag.
        (
            "images:\n- name: nginx\n  newTag: 1.27\n  digest: \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"\n",
            one(
                2,
                9,
                Pinned,
                "nginx:1.27@sha256:0000000000000000000000000000000000000000000000000000000000000000",
            ),
            Some("images:\n- name: nginx\n  newTag: 1.27\n  digest: \"D\"\n"),
        ),
        (
            "images:\n- name: nginx\n  newTag: 1.27@sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
            one(
                2,
                9,
                Pinned,
                "nginx:1.27@sha256:0000000000000000000000000000000000000000000000000000000000000000",
            ),
            Some("images:\n- name: nginx\n  newTag: 1.27@D\n"),
        ),
        // Not written: digest alone, no tag (the resources' tag applies), tagSuffix, a name
        // with a tag, an aliased entry, an entry ending in a block scalar.
        (
            "images:\n- name: nginx\n  digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
            one(
                2,
                9,
                DigestOnly,
                "nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000",
            ),
            None,
        ),
        (
            "images:\n- name: nginx\n  newName: ghcr.io/acme/nginx\n",
            one(3, 12, Templated, "ghcr.io/acme/nginx"),
            None,
        ),
        (
            "images:\n- name: nginx\n  newTag: \"1\"\n  tagSuffix: -debug\n",
            one(2, 9, Floating, "nginx:1"),
            None,
        ),
        (
            "images:\n- name: nginx\n  newName: nginx:1.27\n  newTag: \"1\"\n",
            vec![],
            None,
        ),
        (
            "base: &b\n  name: nginx\n  newTag: \"1\"\nimages:\n- *b\n",
            one(2, 9, Floating, "nginx:1"),
            None,
        ),
        (
            "images:\n- name: nginx\n  newTag: \"1\"\n  note: |\n    text\n",
            one(2, 9, Floating, "nginx:1"),
            None,
        ),
        // The rest of the file is read by the Kubernetes rules.
        (
            "helmCharts:\n- name: web\n  valuesInline:\n    sidecar:\n      image: busybox:1.36\n",
            one(5, 14, Floating, "busybox:1.36"),
            Some(
                "helmCharts:\n- name: web\n  valuesInline:\n    sidecar:\n      image: busybox:1.36@D\n",
            ),
        ),
    ];
    for (text, expected, pinned) in cases {
        for crlf in [false, true] {
            let ending = |t: &str| {
                if crlf {
                    t.replace('\n', "\r\n")
                } else {
                    t.to_owned()
                }
            };
            let text = ending(text);
            assert_eq!(found(FileKind::Kustomize, &text), expected, "{text:?}");
            let once = pin(&text, &first);
            let written =
                pinned.map_or(text.clone(), |p| ending(p).replace('D', &first.to_string()));
            assert_eq!(once, written, "{text:?}");
            assert_eq!(
                pin(&once, &first),
                once,
                "{text:?}: a second pin changes nothing"
            );
            let refreshed = pin(&once, &second);
            assert_eq!(
                refreshed,
                once.replace(&first.to_string(), &second.to_string()),
                "{text:?}"
            );
        }
    }
}

/// Dev containers, read as JSON with comments and trailing commas: only the root object's
/// `"image"`; also with CRLF.
#[test]
fn devcontainer_table() {
    use Status::{Floating, Ignored};
    let cases: Vec<(&str, Found)> = vec![
        (
            "{\n  // base image\n  \"name\": \"dev\",\n  \"image\": \"mcr.microsoft.com/devcontainers/go:1.23\",\n}\n",
            one(4, 13, Floating, "mcr.microsoft.com/devcontainers/go:1.23"),
        ),
        (
            "/* a */ {\"features\": {\"ghcr.io/devcontainers/features/node:1\": {}}, /* \"image\": \"x:1\" */ \"image\" : \"n:1\"}",
            one(1, 101, Floating, "n:1"),
        ),
        (
            "{\"image\": \"n:1\", // tagpin:ignore\n\"x\": 1}\n",
            one(1, 12, Ignored, "n:1"),
        ),
        // Not the root's image: nested, in an array, a key's text, a string holding `//`.
        (
            "{\"customizations\": {\"image\": \"n:1\"}, \"a\": [\"image\", \"m:1\"], \"b\": \"// \\\"image\\\": \\\"k:1\\\"\"}\n",
            vec![],
        ),
        ("[{\"image\": \"n:1\"}]\n", vec![]),
        ("{\"image\": 1, \"x\": \"n:1\"}\n", vec![]),
        (
            "{\"image\": \"${localEnv:IMAGE}\"}\n",
            one(1, 12, Status::Templated, "${localEnv:IMAGE}"),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(found(FileKind::Devcontainer, text), expected, "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(found(FileKind::Devcontainer, &crlf), expected, "{crlf:?}");
    }
    // Escapes: reported, not written. Unterminated strings and comments: errors.
    let escaped = scan(
        Path::new("d"),
        FileKind::Devcontainer,
        "{\"image\": \"ghcr.io\\/a:1\"}",
    )
    .unwrap();
    assert_eq!(escaped.len(), 1);
    assert!(
        matches!(escaped[0].site, EditSite::Unsupported { .. }),
        "{escaped:?}"
    );
    for (text, line, column) in [
        ("{\"image\": \"n:1}\n", 1, 11),
        ("{\n\"image\": 1 /* x\n", 2, 12),
    ] {
        let error = scan(Path::new("d.json"), FileKind::Devcontainer, text).unwrap_err();
        assert!(
            matches!(error, crate::Error::Syntax { line: l, column: c, .. } if (l, c) == (line, column)),
            "{text:?}: {error}"
        );
    }
}

/// User-defined patterns: `ref`, or `name` with `tag`/`digest`; each row's findings with where
/// the digest goes, and the text after pinning; also with CRLF.
#[test]
fn custom_patterns_table() {
    use crate::{CustomPattern, CustomPatternError, scan_custom};
    use Status::{Floating, Ignored, Pinned, Templated};
    use tagpin_reference::Digest;
    let digest = Digest::parse(&format!("sha256:{}", "1".repeat(64))).unwrap();
    let old = format!("sha256:{}", "0".repeat(64));
    let row = |line, column, status, text: &str, site: &str| {
        (line, column, status, text.to_owned(), site.to_owned())
    };
    let cases: Vec<(&[&str], String, Vec<Sited>, String)> = vec![
        (
            &[r"^(?P<ref>\S+)"],
            "ghcr.io/a/b:v1\n\nquay.io/c/d:2 # tagpin:ignore\n".into(),
            vec![
                row(1, 1, Floating, "ghcr.io/a/b:v1", "inline"),
                row(3, 1, Ignored, "quay.io/c/d:2", "inline"),
            ],
            format!("ghcr.io/a/b:v1@{digest}\n\nquay.io/c/d:2 # tagpin:ignore\n"),
        ),
        (
            &[r"IMAGE=(?P<name>\S+) TAG=(?P<tag>\S+)"],
            "IMAGE=nginx TAG=1.27\n".into(),
            vec![row(1, 7, Floating, "nginx:1.27", "tag 1.27")],
            format!("IMAGE=nginx TAG=1.27@{digest}\n"),
        ),
        (
            &[r"(?P<name>[a-z./]+):(?P<tag>[\w.]+) digest=(?P<digest>\S*)"],
            format!("redis:7 digest={old}\nnginx:1 digest=\n"),
            vec![
                row(1, 1, Pinned, &format!("redis:7@{old}"), "digest"),
                row(2, 1, Floating, "nginx:1", "digest"),
            ],
            format!("redis:7 digest={digest}\nnginx:1 digest={digest}\n"),
        ),
        // Two patterns over the same text: one finding; no tag or digest group: not written.
        (
            &[r"^(?P<ref>\S+)$", r"(?P<ref>[a-z]+:[0-9]+)"],
            "a:1\n".into(),
            vec![row(1, 1, Floating, "a:1", "inline")],
            format!("a:1@{digest}\n"),
        ),
        (
            &[r"use (?P<name>\S+)"],
            "use alpine\n".into(),
            vec![row(
                1,
                5,
                Floating,
                "alpine",
                "no: the pattern matched no `tag` or `digest` group to write the digest into",
            )],
            "use alpine\n".into(),
        ),
        (
            &[r"^(?P<ref>.+)$"],
            "x: $IMAGE\n# tagpin:ignore\nnot a reference\n".into(),
            vec![row(1, 1, Templated, "x: $IMAGE", "inline")],
            "x: $IMAGE\n# tagpin:ignore\nnot a reference\n".into(),
        ),
    ];
    for (patterns, text, expected, pinned) in cases {
        let patterns: Vec<_> = patterns
            .iter()
            .map(|p| CustomPattern::new(p).unwrap())
            .collect();
        for crlf in [false, true] {
            let ending = |t: &str| {
                if crlf {
                    t.replace('\n', "\r\n")
                } else {
                    t.to_owned()
                }
            };
            let text = ending(&text);
            let findings = scan_custom(&text, &patterns);
            let got: Vec<Sited> = findings
                .iter()
                .map(|f| {
                    let site = match &f.site {
                        EditSite::Inline => "inline".to_owned(),
                        EditSite::SplitTag { tag, .. } => format!("tag {tag}"),
                        EditSite::SplitDigest { .. } => "digest".to_owned(),
                        EditSite::Unsupported { reason } => format!("no: {reason}"),
                        other @ EditSite::InsertKey { .. } => format!("{other:?}"),
                    };
                    (f.line, f.column, f.status, f.text.clone(), site)
                })
                .collect();
            assert_eq!(got, expected, "{text:?}");
            let edits: Vec<_> = findings.iter().filter_map(|f| f.edit(&digest)).collect();
            assert_eq!(
                crate::apply_edits(&text, &edits).unwrap(),
                ending(&pinned),
                "{text:?}"
            );
        }
    }
    // Refused patterns.
    assert!(matches!(
        CustomPattern::new("(?P<ref>"),
        Err(CustomPatternError::Regex(_))
    ));
    assert!(matches!(
        CustomPattern::new(r"\S+"),
        Err(CustomPatternError::NoGroup)
    ));
    assert!(matches!(
        CustomPattern::new("(?P<ref>a)(?P<name>b)"),
        Err(CustomPatternError::BothGroups)
    ));
}

/// Flux `HelmRelease` values and Argo CD `Application` `valuesObject`: literal references are
/// pinned, split maps given their key-name edit site and marked unproven (the binary leaves them
/// unwritten unless the user opts in); Flux `$imagepolicy` marker lines are ignored,
/// never written. Each row also with CRLF.
#[test]
fn chart_values_and_flux_markers() {
    use Status::{Floating, Ignored};
    let not_in_repo = |kind: &str, chart: &str| {
        format!(
            "unproven, tag: a split map in {kind}'s values configures {chart}, which tagpin \
             does not read here; the form of the digest (or whether a tag may carry one) \
             depends on the chart's templates, so it is not written (`unproven_values: \
             key-names` writes it by its key names)"
        )
    };
    let flux = "no: managed by Flux image automation (a `$imagepolicy` marker on its line): Flux \
                rewrites it, so tagpin leaves it alone";
    let row = |line, column, status, text: &str, site: &str| {
        (line, column, status, text.to_owned(), site.to_owned())
    };
    let release = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  chart:\n    spec:\n      chart: redis\n      version: 19.6.4\n  values:\n    image:\n      repository: bitnami/redis\n      tag: 7.2.5\n    metrics:\n      image: quay.io/oliver006/redis_exporter:v1.62.0\n";
    let application = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec:\n  source:\n    chart: web\n    targetRevision: 1.2.3\n    helm:\n      valuesObject:\n        image: {repository: ghcr.io/a/web, tag: v1}\n        sidecar:\n          image: busybox:1.36\n";
    let cases: Vec<(&str, Vec<Sited>)> = vec![
        (
            release,
            vec![
                row(
                    10,
                    19,
                    Floating,
                    "bitnami/redis:7.2.5",
                    &not_in_repo("a HelmRelease", "chart `redis 19.6.4`"),
                ),
                row(
                    13,
                    14,
                    Floating,
                    "quay.io/oliver006/redis_exporter:v1.62.0",
                    "inline",
                ),
            ],
        ),
        (
            application,
            vec![
                row(
                    9,
                    29,
                    Floating,
                    "ghcr.io/a/web:v1",
                    &not_in_repo("an Application", "chart `web 1.2.3`"),
                ),
                row(11, 18, Floating, "busybox:1.36", "inline"),
            ],
        ),
        // A `repository` with its `tag` under a key that does not say image (Flux's podinfo
        // example): found in chart values, unproven like the others.
        (
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  chart:\n    spec:\n      chart: podinfo\n      version: 6.x\n  values:\n    redis:\n      enabled: true\n      repository: public.ecr.aws/docker/library/redis\n      tag: 8.6.2\n",
            vec![row(
                11,
                19,
                Floating,
                "public.ecr.aws/docker/library/redis:8.6.2",
                &not_in_repo("a HelmRelease", "chart `podinfo 6.x`"),
            )],
        ),
        // Outside chart values such a map is nothing the key-name rules know.
        (
            "spec:\n  source:\n    repository: github.com/acme/app\n    tag: v1\n",
            vec![],
        ),
        // The same split map in a plain values file is written.
        // Outside a Kubernetes object, an image in parts is for whatever joins them to decide.
        (
            "image:\n  repository: bitnami/redis\n  tag: 7.2.5\n",
            vec![row(
                2,
                15,
                Floating,
                "bitnami/redis:7.2.5",
                &format!(
                    "unproven, tag: {}",
                    crate::rules::helm_values::PARTS_UNPROVEN
                ),
            )],
        ),
        (
            "apiVersion: acme.io/v1\nkind: App\nspec:\n  image:\n    repository: bitnami/redis\n    tag: 7.2.5\n",
            vec![row(5, 17, Floating, "bitnami/redis:7.2.5", "tag")],
        ),
        (
            "spec:\n  containers:\n  - image: ghcr.io/acme/app:v1.0.0 # {\"$imagepolicy\": \"flux-system:app\"}\n",
            vec![row(3, 12, Ignored, "ghcr.io/acme/app:v1.0.0", flux)],
        ),
        (
            "image:\n  repository: ghcr.io/acme/app\n  tag: v1.0.0 # {\"$imagepolicy\": \"flux-system:app:tag\"}\n",
            vec![row(2, 15, Ignored, "ghcr.io/acme/app:v1.0.0", flux)],
        ),
        // Only a marker in a comment counts.
        (
            "image: a:1\nnote: '{\"$imagepolicy\": \"x:y\"}'\n",
            vec![row(1, 8, Floating, "a:1", "inline")],
        ),
    ];
    let describe = |f: &crate::Finding| {
        let site = match &f.site {
            EditSite::Inline => "inline".to_owned(),
            EditSite::SplitTag { .. } => "tag".to_owned(),
            EditSite::Unsupported { reason } => format!("no: {reason}"),
            other => format!("{other:?}"),
        };
        match f.unproven() {
            Some(reason) => format!("unproven, {site}: {reason}"),
            None => site,
        }
    };
    for (text, expected) in cases {
        for input in [text.to_owned(), text.replace('\n', "\r\n")] {
            let got: Vec<Sited> = scan(Path::new("r.yaml"), FileKind::Yaml, &input)
                .unwrap()
                .iter()
                .map(|f| (f.line, f.column, f.status, f.text.clone(), describe(f)))
                .collect();
            assert_eq!(got, expected, "{input:?}");
        }
    }
    // A Kustomization's `helmCharts[*].valuesInline` configure a chart kustomize fetches: its
    // split maps are unproven as in a `HelmRelease`, also under a key that does not say image.
    for (text, expected) in [
        (
            "helmCharts:\n- name: redis\n  version: 18.0.0\n  valuesInline:\n    image:\n      registry: docker.io\n      repository: bitnami/redis\n      tag: 7.2.0\n",
            row(
                7,
                19,
                Floating,
                "docker.io/bitnami/redis:7.2.0",
                &not_in_repo("a Kustomization", "chart `redis 18.0.0`"),
            ),
        ),
        (
            "kind: Kustomization\nhelmCharts:\n- name: a\n- name: b\n  valuesInline:\n    cache:\n      repository: redis\n      tag: \"7\"\n",
            row(
                7,
                19,
                Floating,
                "redis:7",
                &not_in_repo("a Kustomization", "its chart"),
            ),
        ),
    ] {
        for input in [text.to_owned(), text.replace('\n', "\r\n")] {
            let got: Vec<Sited> =
                scan(Path::new("kustomization.yaml"), FileKind::Kustomize, &input)
                    .unwrap()
                    .iter()
                    .map(|f| (f.line, f.column, f.status, f.text.clone(), describe(f)))
                    .collect();
            assert_eq!(got, std::slice::from_ref(&expected), "{input:?}");
        }
    }
    // A Kustomize newTag with a marker (Flux's setter) is not written either.
    let kustomize = "images:\n- name: app\n  newTag: v1 # {\"$imagepolicy\": \"ns:app:tag\"}\n";
    let found = scan(
        Path::new("kustomization.yaml"),
        FileKind::Kustomize,
        kustomize,
    )
    .unwrap();
    assert_eq!(found[0].status, Ignored);
    assert_eq!(
        found[0]
            .edit(&tagpin_reference::Digest::parse(&format!("sha256:{}", "1".repeat(64))).unwrap()),
        None
    );
}

#[test]
fn file_kinds_are_detected_from_the_path() {
    let cases = [
        (".gitlab-ci.yml", Some(FileKind::GitlabCi)),
        (
            "overlays/prod/kustomization.yaml",
            Some(FileKind::Kustomize),
        ),
        ("kustomization.yml", Some(FileKind::Kustomize)),
        ("base/Kustomization", Some(FileKind::Kustomize)),
        ("kustomization", None),
        (
            ".devcontainer/devcontainer.json",
            Some(FileKind::Devcontainer),
        ),
        (
            ".devcontainer/python/devcontainer.json",
            Some(FileKind::Devcontainer),
        ),
        ("app/.devcontainer.json", Some(FileKind::Devcontainer)),
        ("devcontainer.json", None),
        ("ci/deploy.gitlab-ci.yml", Some(FileKind::GitlabCi)),
        ("templates/Go.gitlab-ci.yml", Some(FileKind::GitlabCi)),
        ("gitlab-ci.yml", Some(FileKind::Yaml)),
        ("chart/templates/a.yaml", Some(FileKind::HelmTemplate)),
        (".github/workflows/ci.yml", Some(FileKind::Workflow)),
        ("compose.yaml", Some(FileKind::Compose)),
        ("Dockerfile.dev", Some(FileKind::Dockerfile)),
        ("Dockerfile-dev", Some(FileKind::Dockerfile)),
        ("docker/Containerfile_prod", Some(FileKind::Dockerfile)),
        ("docs/dockerfile-guide.md", None),
        ("build.sh", Some(FileKind::Shell)),
        ("README.md", None),
    ];
    for (path, kind) in cases {
        assert_eq!(FileKind::detect(Path::new(path)), kind, "{path}");
    }
}

#[test]
fn helm_template_table() {
    use Status::{Floating, Templated};
    let cases = [
        (
            "image: {{ .Values.image }}\n",
            one(1, 8, Templated, "{{ .Values.image }}"),
        ),
        (
            "{{- if .x }}\nimage: a:1\n{{- else }}\nimage: b:1\n{{- end }}\n",
            vec![
                (2, 8, Floating, "a:1".into()),
                (4, 8, Floating, "b:1".into()),
            ],
        ),
        (
            "x:\n  {{- include \"l\" . | nindent 2 }}\n  image: \"{{ .R }}/a:1\"\n",
            one(3, 11, Templated, "{{ .R }}/a:1"),
        ),
        (
            "a: \"unterminated {{ .x }}\nimage: n:1\n",
            one(2, 8, Floating, "n:1"),
        ),
        (
            "{{/* image: commented:1 */}}\nimage: n:1\n",
            one(2, 8, Floating, "n:1"),
        ),
        // An unbalanced quote does not pair with a quote on a line that is not its
        // continuation (indented no deeper than its key), nor on one where text follows it.
        (
            "a:\n  b: \"unbalanced\n  image: \"n:1\"\n",
            one(3, 11, Floating, "n:1"),
        ),
        (
            "a:\n  b: \"unbalanced\n    c: \"x\"\n  image: \"n:1\"\n",
            one(4, 11, Floating, "n:1"),
        ),
        ("a: {b: \"1}\nimage: \"n:1\"\n", one(2, 9, Floating, "n:1")),
        ("- \"\n- image: \"n:1\"\n", one(2, 11, Floating, "n:1")),
    ];
    for (text, expected) in cases {
        assert_eq!(found(FileKind::HelmTemplate, text), expected, "{text:?}");
    }
}

/// Reported from the CLI: `\"` inside an action inside a double-quoted scalar (not valid Go
/// template syntax, but found in real charts) made the masker read the action's end as a string
/// literal, mask the rest of the file, and return no references and no error.
#[test]
fn escaped_quotes_in_an_action_in_a_quoted_scalar_do_not_mask_the_rest_of_the_file() {
    use Status::{Floating, Templated};
    let text = "\
apiVersion: v1
kind: ConfigMap
data:
  key: \"{{ .Values.s | default \\\"7\\\" }}\"
  image: \"{{ .Values.s | default \\\"nginx:1\\\" }}\"
---
spec:
  containers:
    - name: a
      image: nginx:1.27
    - name: b
      image: \"{{ .Values.image }}\"
";
    assert_eq!(
        found(FileKind::HelmTemplate, text),
        vec![
            (
                5,
                11,
                Templated,
                r#"{{ .Values.s | default \"nginx:1\" }}"#.into()
            ),
            (10, 14, Floating, "nginx:1.27".into()),
            (12, 15, Templated, "{{ .Values.image }}".into()),
        ]
    );
}

#[test]
fn dockerfile_table() {
    use Status::{Floating, Ignored, Local, Templated};
    let cases = [
        ("FROM n:1\n", one(1, 6, Floating, "n:1")),
        (
            "from --platform=$P n:1 as b\nFROM b\n",
            vec![(1, 20, Floating, "n:1".into()), (2, 6, Local, "b".into())],
        ),
        ("FROM $BASE\n", one(1, 6, Templated, "$BASE")),
        ("FROM n:1\n# syntax=x:1\n", one(1, 6, Floating, "n:1")),
        ("FROM a\\\n  :1\n", vec![(1, 6, Floating, "a".into())]),
        (
            "COPY --from=1 a b\nCOPY --chown=1 --from=n:1 a b\n",
            vec![(1, 13, Local, "1".into()), (2, 23, Floating, "n:1".into())],
        ),
        (
            "RUN --mount=type=bind,from=n:1,target=/x true\n",
            one(1, 28, Floating, "n:1"),
        ),
        ("# tagpin:ignore\nFROM n:1\n", one(2, 6, Ignored, "n:1")),
        ("RUN <<EOF\nFROM n:1\nEOF\n", vec![]),
    ];
    for (text, expected) in cases {
        assert_eq!(found(FileKind::Dockerfile, text), expected, "{text:?}");
    }
}

/// `(line, column, status, text, where the digest goes)` of a finding.
/// `(line, column, status, text, where the digest goes)` of a finding.
pub(crate) type Sited = (usize, usize, Status, String, String);

/// [`Sited`] for every finding.
pub(crate) fn sites(kind: FileKind, text: &str) -> Vec<Sited> {
    scan(Path::new("t"), kind, text)
        .unwrap()
        .into_iter()
        .map(|f| {
            let site = match &f.site {
                EditSite::Inline => "inline".to_owned(),
                EditSite::SplitTag { span, .. } => format!("arg {}", &text[span.clone()]),
                EditSite::Unsupported { reason } => format!("no: {reason}"),
                other => format!("{other:?}"),
            };
            (f.line, f.column, f.status, f.text, site)
        })
        .collect()
}

/// ARG defaults used in image positions, by Docker's scoping rules: each row's findings with
/// where the digest would go, also with CRLF.
#[test]
fn dockerfile_arg_defaults() {
    use Status::{Floating, Ignored, Local, Pinned, Templated};
    let digest = format!("sha256:{}", "1".repeat(64));
    let row = |line, column, status, text: &str, site: &str| {
        (line, column, status, text.to_owned(), site.to_owned())
    };
    let cases: Vec<(String, Vec<Sited>)> = vec![
        // A whole reference: reported once, at the default, whatever uses it.
        (
            "ARG BASE=alpine:3.20\nFROM ${BASE}\nFROM $BASE AS b\n".into(),
            vec![row(1, 10, Floating, "alpine:3.20", "inline")],
        ),
        (
            "ARG BASE=\"alpine:3.20\"\nFROM ${BASE}\n".into(),
            vec![row(1, 11, Floating, "alpine:3.20", "inline")],
        ),
        (
            format!("ARG A=1 BASE=alpine:3.20@{digest}\nFROM ${{BASE}}\n"),
            vec![row(1, 14, Pinned, &format!("alpine:3.20@{digest}"), "inline")],
        ),
        // A tag: written into the default when that reference is its only use.
        (
            "ARG TAG=1.36\nFROM busybox:${TAG}\n".into(),
            vec![row(2, 6, Floating, "busybox:1.36", "arg 1.36")],
        ),
        // Made of several ARGs: a build that sets the others would still get this digest.
        (
            "ARG REPO=ghcr.io/a/b\nARG TAG=v1\nFROM ${REPO}:${TAG} AS x\n".into(),
            vec![row(
                3,
                6,
                Floating,
                "ghcr.io/a/b:v1",
                "no: the reference is made of several ARGs (REPO and TAG); a digest in TAG's \
                 default (line 2) would pin this image even when a build sets REPO to another \
                 value",
            )],
        ),
        (
            "ARG GO=1.24\nARG ALPINE=3.22\nFROM golang:${GO}-alpine${ALPINE} AS base\n".into(),
            vec![row(
                3,
                6,
                Floating,
                "golang:1.24-alpine3.22",
                "no: the reference is made of several ARGs (GO and ALPINE); a digest in \
                 ALPINE's default (line 2) would pin this image even when a build sets GO to \
                 another value",
            )],
        ),
        (
            "ARG TAG=v1\nFROM ghcr.io/a/${TAG}:${TAG}\n".into(),
            vec![row(
                2,
                6,
                Floating,
                "ghcr.io/a/v1:v1",
                "no: ARG TAG (line 1) is used more than once in this reference; a digest in its \
                 default would land in each place",
            )],
        ),
        // A global ARG a stage does not re-declare expands to nothing there: the label is
        // `version=` whatever the default holds.
        (
            "ARG TAG=1.36\nFROM busybox:${TAG}\nLABEL version=$TAG\n".into(),
            vec![row(2, 6, Floating, "busybox:1.36", "arg 1.36")],
        ),
        (
            "ARG TAG=1.36\nFROM busybox:${TAG}\nARG TAG\nLABEL version=$TAG\n".into(),
            vec![row(
                2,
                6,
                Floating,
                "busybox:1.36",
                "no: ARG TAG (line 1) is also used outside image references (LABEL on line 4); \
                 a digest in its default would change that use too",
            )],
        ),
        (
            "ARG TAG=1.36\nARG LABEL_TAG=v$TAG\nFROM busybox:${TAG}\n".into(),
            vec![row(
                3,
                6,
                Floating,
                "busybox:1.36",
                "no: ARG TAG (line 1) is also used outside image references (ARG on line 2); a \
                 digest in its default would change that use too",
            )],
        ),
        (
            "ARG TAG=1.36\nFROM busybox:${TAG}\nFROM busybox:${TAG}-musl\n".into(),
            vec![
                row(
                    2,
                    6,
                    Floating,
                    "busybox:1.36",
                    "no: ARG TAG (line 1) is used in 2 image references; its default is written \
                     only when one reference uses it",
                ),
                row(
                    3,
                    6,
                    Floating,
                    "busybox:1.36-musl",
                    "no: the reference does not end with an ARG: the digest would go into this \
                     line, and tagpin writes only ARG defaults here",
                ),
            ],
        ),
        (
            "ARG BASE=alpine\nFROM ${BASE}\nFROM ${BASE}:3.20\n".into(),
            vec![
                row(
                    2,
                    6,
                    Floating,
                    "alpine",
                    "no: ARG BASE (line 1) is also part of another image reference; a digest in \
                     its default would break that one",
                ),
                row(
                    3,
                    6,
                    Floating,
                    "alpine:3.20",
                    "no: the reference does not end with an ARG: the digest would go into this \
                     line, and tagpin writes only ARG defaults here",
                ),
            ],
        ),
        // Scoping: a stage's ARG is not seen by the next FROM; a global ARG is not seen in a
        // stage unless re-declared there, and then takes the global default.
        (
            "FROM a:1\nARG BASE=alpine:3.20\nFROM ${BASE}\n".into(),
            vec![
                row(1, 6, Floating, "a:1", "inline"),
                row(3, 6, Templated, "${BASE}", "inline"),
            ],
        ),
        (
            "ARG TOOLS=ghcr.io/t/tools:2\nFROM a:1\nCOPY --from=${TOOLS} /x /x\n".into(),
            vec![
                row(2, 6, Floating, "a:1", "inline"),
                row(3, 13, Templated, "${TOOLS}", "inline"),
            ],
        ),
        (
            "ARG TOOLS=ghcr.io/t/tools:2\nFROM a:1\nARG TOOLS\nCOPY --from=${TOOLS} /x /x\nRUN --mount=from=$TOOLS,target=/t true\n".into(),
            vec![
                row(1, 11, Floating, "ghcr.io/t/tools:2", "inline"),
                row(2, 6, Floating, "a:1", "inline"),
            ],
        ),
        (
            "ARG TOOLS=ghcr.io/t/tools:2\nFROM a:1\nARG TOOLS=ghcr.io/t/tools:3\nCOPY --from=${TOOLS} /x /x\nFROM ${TOOLS}\n".into(),
            vec![
                row(1, 11, Floating, "ghcr.io/t/tools:2", "inline"),
                row(2, 6, Floating, "a:1", "inline"),
                row(3, 11, Floating, "ghcr.io/t/tools:3", "inline"),
            ],
        ),
        // ENV wins over ARG in a stage; predefined and value-less ARGs, other expansions,
        // defaults that expand other ARGs: unresolved.
        (
            "FROM a:1\nARG T=x:1\nENV T=y:2\nCOPY --from=$T /a /b\n".into(),
            vec![
                row(1, 6, Floating, "a:1", "inline"),
                row(4, 13, Templated, "$T", "inline"),
            ],
        ),
        (
            "ARG TARGETARCH\nARG TAG=1\nFROM n-$TARGETARCH:1\nFROM n:${TAG:-2}\n".into(),
            vec![
                row(3, 6, Templated, "n-$TARGETARCH:1", "inline"),
                row(4, 6, Templated, "n:${TAG:-2}", "inline"),
            ],
        ),
        (
            "ARG R=ghcr.io\nARG BASE=${R}/a:1\nFROM ${BASE}\n".into(),
            vec![row(3, 6, Templated, "${BASE}", "inline")],
        ),
        // A default naming a stage is local; the ignore comment above the ARG or the use.
        (
            "FROM a:1 AS build\nARG SRC=build\nCOPY --from=${SRC} /a /b\n".into(),
            vec![
                row(1, 6, Floating, "a:1", "inline"),
                row(2, 9, Local, "build", "inline"),
            ],
        ),
        (
            "# tagpin:ignore\nARG BASE=alpine:3.20\nFROM ${BASE}\n".into(),
            vec![row(2, 10, Ignored, "alpine:3.20", "inline")],
        ),
        (
            "ARG TAG=1\n# tagpin:ignore\nFROM n:${TAG}\n".into(),
            vec![row(3, 6, Ignored, "n:1", "arg 1")],
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(sites(FileKind::Dockerfile, &text), expected, "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(sites(FileKind::Dockerfile, &crlf), expected, "{crlf:?}");
    }
}

/// Pinning an ARG tag appends the digest to the default; a second pin refreshes it.
#[test]
fn dockerfile_arg_tag_is_pinned_and_refreshed_in_the_arg_line() {
    use tagpin_reference::Digest;
    let one = Digest::parse(&format!("sha256:{}", "1".repeat(64))).unwrap();
    let two = Digest::parse(&format!("sha256:{}", "2".repeat(64))).unwrap();
    let pin = |text: &str, digest: &Digest| {
        let findings = scan(Path::new("Dockerfile"), FileKind::Dockerfile, text).unwrap();
        let edits: Vec<_> = findings.iter().filter_map(|f| f.edit(digest)).collect();
        crate::apply_edits(text, &edits).unwrap()
    };
    let text = "ARG TAG=\"1.36\"\nARG BASE=alpine\nFROM busybox:${TAG}\nFROM ${BASE}\n";
    let pinned = pin(text, &one);
    assert_eq!(
        pinned,
        format!(
            "ARG TAG=\"1.36@{one}\"\nARG BASE=alpine:latest@{one}\nFROM busybox:${{TAG}}\nFROM ${{BASE}}\n"
        )
    );
    assert_eq!(pin(&pinned, &one), pinned);
    assert_eq!(
        pin(&pinned, &two),
        format!(
            "ARG TAG=\"1.36@{two}\"\nARG BASE=alpine:latest@{two}\nFROM busybox:${{TAG}}\nFROM ${{BASE}}\n"
        )
    );
}

#[test]
fn dockerfile_literal_platforms_are_kept() {
    let text = "FROM --platform=linux/arm64 a:1 AS x\n\
                FROM --platform=$BUILDPLATFORM b:1\n\
                from --PLATFORM=linux/amd64 c:1\n\
                FROM --platform=\"linux/arm/v7\" d:1\n\
                FROM e:1\n\
                FROM --platform=linux/s390x x\n\
                COPY --from=f:1 / /\n";
    let platforms: Vec<(String, Option<String>)> = scan(Path::new("t"), FileKind::Dockerfile, text)
        .unwrap()
        .into_iter()
        .map(|f| (f.text.clone(), f.platform().map(ToOwned::to_owned)))
        .collect();
    let some = |p: &str| Some(p.to_owned());
    assert_eq!(
        platforms,
        [
            ("a:1".to_owned(), some("linux/arm64")),
            ("b:1".to_owned(), None),
            // Flags are case-sensitive in BuildKit: `--PLATFORM` is not the platform flag.
            ("c:1".to_owned(), None),
            ("d:1".to_owned(), some("linux/arm/v7")),
            ("e:1".to_owned(), None),
            ("x".to_owned(), some("linux/s390x")),
            ("f:1".to_owned(), None),
        ]
    );
}

#[test]
fn shell_table() {
    use Status::{Floating, Ignored};
    let cases = [
        (
            "kind create cluster --image=kindest/node:v1\n",
            one(1, 29, Floating, "kindest/node:v1"),
        ),
        ("kubectl run x --image 'n:1'\n", one(1, 24, Floating, "n:1")),
        ("kubectl run x --image=$IMG\n", vec![]),
        ("x --image=\"$R/n:1\"\n", vec![]),
        (
            "cat <<EOF\n  - image: n:1 # tagpin:ignore\nEOF\n",
            one(2, 12, Ignored, "n:1"),
        ),
        ("# image: n:1\n", vec![]),
        ("echo image: n:1\n", vec![]),
        ("--images=n:1\n", vec![]),
        // Heredocs: quoted and dashed words, an indented terminator (a recipe's), two in a
        // row; after the terminator, `image:` lines are commands again.
        (
            "kubectl apply -f - <<'YAML'\nspec:\n  image: n:1\nYAML\nimage: m:1\n",
            one(3, 10, Floating, "n:1"),
        ),
        (
            "\tcat <<-EOF > v.yaml\n\timage: n:1\n\tEOF\n\timage: m:1\n",
            one(2, 9, Floating, "n:1"),
        ),
        (
            "cat <<A <<\"B\"\nimage: a:1\nA\nimage: b:1\nB\nimage: c:1\n",
            vec![
                (2, 8, Floating, "a:1".into()),
                (4, 8, Floating, "b:1".into()),
            ],
        ),
        ("x=$((1<<2))\nimage: n:1\n", vec![]),
        ("cat <<<\"image: n:1\"\nimage: m:1\n", vec![]),
        // Echoed YAML lines, quoted.
        (
            "echo '  image: n:1' >> values.yaml\n",
            one(1, 16, Floating, "n:1"),
        ),
        (
            "\t@printf '%s\\n' x; printf 'image: n:1\\n' > v.yaml\n",
            one(1, 35, Floating, "n:1"),
        ),
        ("grep 'image: n:1' values.yaml\n", vec![]),
        // Printed to the log, or to a runner's summary, an echoed line is a message.
        ("echo 'image: n:1'\n", vec![]),
        ("echo 'image: n:1' && date > now.txt\n", vec![]),
        ("echo \"image: n:1\" >> \"$GITHUB_STEP_SUMMARY\"\n", vec![]),
        (
            "echo 'image: n:1' | kubectl apply -f -\n",
            one(1, 14, Floating, "n:1"),
        ),
        ("echo \"image: $IMG\"\n", vec![]),
        // Comments: a whole line, after a recipe prefix, after a command.
        ("\t@# kubectl run --image=busybox\n", vec![]),
        ("\t-# kubectl run --image=busybox\n", vec![]),
        ("kubectl get po # kubectl run --image=busybox\n", vec![]),
        ("kubectl run a#b --image=n:1\n", one(1, 25, Floating, "n:1")),
        (
            "kubectl run x --image='n:1' -l 'a#b' # --image=m:1\n",
            one(1, 24, Floating, "n:1"),
        ),
        // A virtual machine's image, or one the command builds: not a container image.
        (
            "gcloud compute instances create vm --image=debian-11-v20240110\n",
            vec![],
        ),
        (
            "gcloud --project p compute instances create vm \\\n  --image ubuntu-2204\n",
            vec![],
        ),
        ("sudo hcloud server create --image ubuntu-24.04\n", vec![]),
        ("az acr build -r reg --image app:v1 .\n", vec![]),
        ("az vm create -n vm --image Ubuntu2204\n", vec![]),
        (
            "flux create image repository app --image=ghcr.io/o/app\n",
            vec![],
        ),
        // Another command on the line, and a flag continued onto the next line, still count.
        (
            "az vm list; kubectl run x --image=n:1\n",
            one(1, 35, Floating, "n:1"),
        ),
        (
            "gcloud run deploy app \\\n  --image=gcr.io/p/app:1\n",
            one(2, 11, Floating, "gcr.io/p/app:1"),
        ),
        // Past `--`, the flags are the container program's.
        (
            "kubectl run x --image n:1 -- /bin/app --image=m:1\n",
            one(1, 23, Floating, "n:1"),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(found(FileKind::Shell, text), expected, "{text:?}");
    }
}

/// `docker|podman|nerdctl run|create|pull IMAGE` after their options, and `kubectl run NAME
/// --image IMAGE`: each row also with CRLF.
#[test]
fn shell_container_commands() {
    use Status::{Floating, Ignored, Local, Templated};
    let cases: Vec<(&str, Found)> = vec![
        (
            "docker run --rm -it nginx:1.27 sh\n",
            one(1, 21, Floating, "nginx:1.27"),
        ),
        // The image word expands a variable after a literal name: templated. A word that is
        // only a variable names nothing tagpin can tell.
        (
            "\tdocker run --rm -v $(PWD):/src golang:$(GOLANG_VERSION) go build\n",
            one(1, 33, Templated, "golang:$(GOLANG_VERSION)"),
        ),
        (
            "docker pull \"ghcr.io/$ORG/app:1\"\n",
            one(1, 14, Templated, "ghcr.io/$ORG/app:1"),
        ),
        (
            "docker run --rm $IMAGE\ndocker run ${REGISTRY}/app:1\n",
            vec![],
        ),
        (
            "docker pull alpine:3.20\n",
            one(1, 13, Floating, "alpine:3.20"),
        ),
        // Flags given a value with `=` (docker's `--sig-proxy`, podman's `--tls-verify`,
        // `--http-proxy`), and options podman and nerdctl add.
        (
            "docker run --sig-proxy=false --rm alpine:3.20 true\n",
            one(1, 35, Floating, "alpine:3.20"),
        ),
        (
            "podman run --tls-verify=false --systemd=always --http-proxy=false alpine:3.20\n",
            one(1, 67, Floating, "alpine:3.20"),
        ),
        (
            "nerdctl run --snapshotter stargz alpine:3.20\n",
            one(1, 34, Floating, "alpine:3.20"),
        ),
        // A backtick's command is part of the word around it, as `$(…)` is; what it runs is
        // read too.
        (
            "docker run --rm --env UID=`id -u` alpine:3.20 id\n",
            one(1, 35, Floating, "alpine:3.20"),
        ),
        (
            "docker run --mount type=bind,source=`pwd`,target=/src golang:1.22 make\n",
            one(1, 55, Floating, "golang:1.22"),
        ),
        (
            "echo `docker run --rm busybox:1.36 date`\n",
            one(1, 23, Floating, "busybox:1.36"),
        ),
        (
            "sudo -E podman create --name web -p 8080:80 -e A=1 \"quay.io/a/b:v1\"\n",
            one(1, 53, Floating, "quay.io/a/b:v1"),
        ),
        (
            "nerdctl --namespace k8s.io run -d --network=host -v/a:/b busybox:1.36 true\n",
            one(1, 58, Floating, "busybox:1.36"),
        ),
        (
            "docker container run -dp 80:80 redis:7\n",
            one(1, 32, Floating, "redis:7"),
        ),
        (
            "DOCKER_HOST=x docker image pull -q redis:7\n",
            one(1, 36, Floating, "redis:7"),
        ),
        (
            "set -e; docker run --rm a:1 && docker pull b:2 | cat\n",
            vec![
                (1, 25, Floating, "a:1".into()),
                (1, 44, Floating, "b:2".into()),
            ],
        ),
        (
            "out=$(docker run --rm a:1 cat /x)\n",
            one(1, 23, Floating, "a:1"),
        ),
        // A Makefile variable holding a command.
        (
            "DOCKER_YQ = docker run --rm -v $(PWD):/work -w /work mikefarah/yq:4\n",
            one(1, 54, Floating, "mikefarah/yq:4"),
        ),
        (
            "LINT ?= docker run --rm golangci/golangci-lint:v1.55 golangci-lint run\n",
            one(1, 25, Floating, "golangci/golangci-lint:v1.55"),
        ),
        // `$( … )` in an option's value is part of that word (a Makefile's `$(CURDIR)` too),
        // and a command of its own inside.
        (
            "docker run --rm -v $(shell pwd):/app -w /app golangci/golangci-lint:latest run\n",
            one(1, 46, Floating, "golangci/golangci-lint:latest"),
        ),
        (
            "\tdocker run -v $(CURDIR):/code --rm -w /code img:v1 run\n",
            one(1, 46, Floating, "img:v1"),
        ),
        (
            "x=$(echo \"$(docker run --rm a:1 true)\")\n",
            one(1, 29, Floating, "a:1"),
        ),
        (
            "docker run -v \"$(pwd)\":/w -e X=\"$(date +%s)\" b:2 \"$(cat f)\"\n",
            one(1, 46, Floating, "b:2"),
        ),
        // The CLI named by a variable that holds it by convention, not by any variable.
        (
            "\t$(CONTAINER_TOOL) run --rm -v $(PWD):/src busybox:1.36 true\n",
            one(1, 44, Floating, "busybox:1.36"),
        ),
        (
            "\"${CONTAINER_ENGINE:-docker}\" run --rm tianon/postgres-upgrade:9.6-to-14\n",
            one(1, 40, Floating, "tianon/postgres-upgrade:9.6-to-14"),
        ),
        (
            "sudo $DOCKER pull alpine:3.20\n",
            one(1, 19, Floating, "alpine:3.20"),
        ),
        ("$DOCKER_COMPOSE run web\n", vec![]),
        // An image the script builds, then runs, is what it built: `local`.
        (
            "docker build -t rust_builder .\ndocker run --rm rust_builder make\ndocker run alpine:3.20\n",
            vec![
                (2, 17, Local, "rust_builder".into()),
                (3, 12, Floating, "alpine:3.20".into()),
            ],
        ),
        (
            "${DOCKER} run app:dev\n${DOCKER} buildx build --tag=app:dev .\n",
            one(1, 15, Local, "app:dev"),
        ),
        ("${RUNNER} run web\n", vec![]),
        ("$(DOCKER_BUILD) run web\n", vec![]),
        // A recipe's prefix variable before the command, alone or glued to it; not before
        // another command.
        (
            "\t$(CMD_PREFIX) docker run --rm lint/md:v0.6.0 > /dev/null\n",
            one(1, 32, Floating, "lint/md:v0.6.0"),
        ),
        (
            "\t$(Q)docker run --rm koalaman/shellcheck:v0.9.0 x.sh\n",
            one(1, 22, Floating, "koalaman/shellcheck:v0.9.0"),
        ),
        ("\t$(Q)echo docker run a:1\n", vec![]),
        (
            "\t$(Q)$(DOCKER) run --rm b:2 true\n",
            one(1, 25, Floating, "b:2"),
        ),
        (
            "timeout -s KILL 300 docker run --rm c:3 true\n",
            one(1, 37, Floating, "c:3"),
        ),
        (
            "minikube image build -t acme/app:dev .\nkubectl run app --image=acme/app:dev\n",
            one(2, 25, Local, "acme/app:dev"),
        ),
        // What Cloud Build builds, the script then deploys: `local`.
        (
            "gcloud builds submit --tag gcr.io/p/app:latest .\ngcloud run deploy app --image gcr.io/p/app:latest\n",
            one(2, 31, Local, "gcr.io/p/app:latest"),
        ),
        ("\t$(PREFIX) make run a:1\n", vec![]),
        // Continued over lines; a recipe line; the ignore comment on the image's line.
        (
            "docker run \\\n  --rm \\\n  -e A=1 \\\n  golang:1.23 \\\n  go test ./...\n",
            one(4, 3, Floating, "golang:1.23"),
        ),
        (
            "\t@docker run --rm alpine:3.20 true\n",
            one(1, 19, Floating, "alpine:3.20"),
        ),
        (
            "docker pull a:1 # tagpin:ignore\n",
            one(1, 13, Ignored, "a:1"),
        ),
        (
            "if ! docker pull a:1; then exit 1; fi\n",
            one(1, 18, Floating, "a:1"),
        ),
        (
            "kubectl run web --image nginx:1.27\n",
            one(1, 25, Floating, "nginx:1.27"),
        ),
        // Not references: comments, heredocs, options tagpin does not know (is the next word
        // their value or the image?), all tags, variables, other subcommands and CLIs.
        ("# docker run nginx:1\n", vec![]),
        ("\t@# docker pull nginx:1\n", vec![]),
        ("echo hi # docker pull nginx:1\n", vec![]),
        ("docker run \\\n# --rm\n  nginx:1\n", vec![]),
        ("ssh h <<EOF\ndocker pull nginx:1\nEOF\n", vec![]),
        ("docker run --unknown-flag x nginx:1\n", vec![]),
        ("docker run -Z nginx:1\n", vec![]),
        ("docker --foo run nginx:1\n", vec![]),
        ("docker pull -a nginx\n", vec![]),
        ("docker pull --all-tags nginx\n", vec![]),
        ("docker run --rm $IMAGE\n", vec![]),
        ("docker run --rm $(IMAGE):$(TAG)\n", vec![]),
        ("X = echo docker run nginx:1\n", vec![]),
        ("X = Y docker run nginx:1\n", vec![]),
        ("docker run -v $(pwd:/a nginx:1\n", vec![]),
        (
            "echo $($($($($($($($($($(docker pull a:1))))))))))\n",
            vec![],
        ),
        ("docker push nginx:1\n", vec![]),
        ("docker build -t app:1 .\n", vec![]),
        ("mydocker run nginx:1\n", vec![]),
        ("echo docker run nginx:1\n", vec![]),
    ];
    for (text, expected) in cases {
        assert_eq!(found(FileKind::Shell, text), expected, "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(found(FileKind::Shell, &crlf), expected, "{crlf:?}");
    }
}

/// `kubectl set image RESOURCE CONTAINER=IMAGE …` (and `oc set image`): each pair's image,
/// after known options; an option's value (`-l app=web`) is no pair, an unknown option stops
/// the command, and a word that is no container name before its `=` is no pair.
#[test]
fn kubectl_set_image_pairs() {
    use Status::{Floating, Pinned};
    let digest = "sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72";
    let cases: Vec<(String, Found)> =
        vec![
        (
            "kubectl set image deployment/app app=ghcr.io/acme/app:1.2.3\n".into(),
            one(1, 38, Floating, "ghcr.io/acme/app:1.2.3"),
        ),
        (
            "kubectl -n prod set image deploy web nginx=nginx:1.27 sidecar=\"envoy:v1\" --record\n"
                .into(),
            vec![
                (1, 44, Floating, "nginx:1.27".into()),
                (1, 64, Floating, "envoy:v1".into()),
            ],
        ),
        (
            "sudo kubectl set image -l app=web deployments '*=busybox:1.36' \\\n  --namespace=ci\n"
                .into(),
            vec![],
        ),
        (
            "kubectl set image -l app=web deployments *=busybox:1.36 \\\n  --namespace=ci\n"
                .into(),
            one(1, 44, Floating, "busybox:1.36"),
        ),
        (
            format!("oc set image dc/api api=quay.io/a/api:2@{digest}\n"),
            one(1, 25, Pinned, &format!("quay.io/a/api:2@{digest}")),
        ),
        ("kubectl set image deploy/a a=$IMAGE:$TAG\n".into(), vec![]),
        ("kubectl set image --bogus deploy/a a=nginx:1\n".into(), vec![]),
        ("kubectl set image deploy/a App=nginx:1\n".into(), vec![]),
        ("kubectl set env deploy/a A=nginx:1\n".into(), vec![]),
        ("kubectl get pods -o jsonpath='{..image}'\n".into(), vec![]),
        ("echo kubectl set image deploy/a a=nginx:1\n".into(), vec![]),
    ];
    for (text, expected) in cases {
        assert_eq!(found(FileKind::Shell, &text), expected, "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(found(FileKind::Shell, &crlf), expected, "{crlf:?}");
    }
}

/// Images a script makes or that are never pulled are `local`; `--image` flags naming what a
/// command builds or pushes are not read.
#[test]
fn shell_images_made_here_or_never_pulled() {
    use Status::{Floating, Local};
    let cases: Vec<(&str, Found)> = vec![
        (
            "kind build node-image --image kindest/node:dev\nkind create cluster --image kindest/node:dev\n",
            one(2, 29, Local, "kindest/node:dev"),
        ),
        (
            "kind build node-image\nkind create cluster --image=kindest/node:latest\n",
            one(2, 29, Local, "kindest/node:latest"),
        ),
        (
            "kind create cluster --image=kindest/node:v1.31.0\n",
            one(1, 29, Floating, "kindest/node:v1.31.0"),
        ),
        (
            "./gradlew clean jib --image=registry.example.com/me/app:1.0\n",
            vec![],
        ),
        (
            "func deploy --image quay.io/me/fn:latest\nkn func build --image quay.io/me/fn:1\n",
            vec![],
        ),
        (
            "ibmcloud ce build create --name b --image us.icr.io/me/app:1\n",
            vec![],
        ),
        (
            "ibmcloud ce application create --name a --image us.icr.io/me/app:1\n",
            one(1, 49, Floating, "us.icr.io/me/app:1"),
        ),
        (
            "aws lightsail push-container-image --service-name s --label l --image myapp:latest\n",
            vec![],
        ),
        (
            "docker tag app:dev myapp:test\ndocker run --rm myapp:test\n",
            one(2, 17, Local, "myapp:test"),
        ),
        (
            "docker commit c1 snap:1\ndocker run snap:1\n",
            one(2, 12, Local, "snap:1"),
        ),
        (
            "buildah bud -t bud:dev .\npodman run bud:dev\n",
            one(2, 12, Local, "bud:dev"),
        ),
        (
            "pack build packed --builder paketobuildpacks/builder:base\ndocker run packed:latest\n",
            one(2, 12, Local, "packed:latest"),
        ),
        (
            "docker build -t built .\ndocker run built:latest\n",
            one(2, 12, Local, "built:latest"),
        ),
        (
            "podman build -t box .\npodman run -it localhost/box\n",
            one(2, 16, Local, "localhost/box"),
        ),
        (
            "podman run localhost/other:1\n",
            one(1, 12, Local, "localhost/other:1"),
        ),
        (
            "docker run --pull=never myorg/app:dev\ndocker run --pull never myorg/app:dev\ndocker run --pull=always nginx:1\n",
            vec![
                (1, 25, Local, "myorg/app:dev".into()),
                (2, 25, Local, "myorg/app:dev".into()),
                (3, 26, Floating, "nginx:1".into()),
            ],
        ),
        (
            "kubectl run x --image=myorg/app:dev --image-pull-policy=Never\n",
            one(1, 23, Local, "myorg/app:dev"),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(found(FileKind::Shell, text), expected, "{text:?}");
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(found(FileKind::Shell, &crlf), expected, "{crlf:?}");
    }
}

/// Make rules are not references: `image: image-nginx` is the target `image` and its
/// prerequisite (cozystack has 12 such lines), and `pin --write` used to rewrite them. In a
/// Makefile only a recipe's heredoc or echoed YAML line and `--image` flags are references.
#[test]
fn makefile_rules_are_not_references() {
    use Status::Floating;
    let text = "\
IMAGE ?= ghcr.io/acme/app
.PHONY: image
image: image-nginx
image-nginx: ## builds nginx
\tdocker build -t $(IMAGE):$(TAG) .
\t# kubectl run smoke --image=busybox
\t@# kubectl run smoke --image=busybox:1.36
\tkubectl run smoke --image=curlimages/curl:8.10.1 # then --image=n:2
\techo '    image: nginx:1.27' >> $@
images: image-a image-b
image-a:
\techo done
";
    assert_eq!(
        found(FileKind::Shell, text),
        vec![
            (8, 28, Floating, "curlimages/curl:8.10.1".to_owned()),
            (9, 19, Floating, "nginx:1.27".to_owned()),
        ]
    );
    assert_eq!(found(FileKind::Shell, &text.replace('\n', "\r\n")).len(), 2);
}

/// A YAML file that does not parse fails with its path, line and column (in characters, after
/// a BOM, the same with CRLF), for every YAML kind, instead of losing what follows silently.
/// The messages are the conformant reader's (saphyr-parser's).
#[test]
fn yaml_syntax_errors_carry_path_line_and_column() {
    use crate::Error;
    // (text, line, column)
    let cases = [
        ("a: \"unterminated\nimage: n:1\n", 1, 4),
        (
            "a: \"runs into the next document\n---\nimage: \"n:1\"\n",
            1,
            4,
        ),
        ("a:\n  b: \"x\" junk \"y\nimage: n:1\n", 2, 10),
        ("é: \"x\nimage: \"n:1\"\n", 1, 4),
        ("a: {image: n:1\n", 2, 1),
        ("a: {b: 1\nimage: n:1}\n", 2, 6),
        ("a: [x, \"y\" z]\nimage: n:1\n", 1, 12),
        ("a: {b: \"c\" d}\nimage: n:1\n", 1, 12),
        ("a: [x,\n---\nimage: n:1\n", 2, 1),
        ("a: [x}\nimage: n:1\n", 1, 6),
        ("image: b\n  c: d\n", 2, 4),
        ("a: *unknown\nimage: n:1\n", 1, 4),
        ("a: 1\n\tb: 2\nimage: n:1\n", 1, 4),
    ];
    let path = Path::new("charts/demo/values.yaml");
    let mut rendered_errors = Vec::new();
    for (text, line, column) in cases {
        for (variant, input) in [
            ("lf", text.to_owned()),
            ("crlf", text.replace('\n', "\r\n")),
            ("bom", format!("\u{feff}{text}")),
        ] {
            for kind in [FileKind::Yaml, FileKind::Compose, FileKind::Workflow] {
                let error = scan(path, kind, &input).unwrap_err();
                let rendered = error.to_string();
                let Error::Syntax {
                    path: error_path,
                    line: error_line,
                    column: error_column,
                    ..
                } = &error
                else {
                    panic!("{variant} {kind:?} {text:?}: {rendered}");
                };
                assert_eq!(
                    (error_path.as_path(), *error_line, *error_column),
                    (path, line, column),
                    "{variant} {kind:?} {text:?}: {rendered}"
                );
                if variant == "lf" && kind == FileKind::Yaml {
                    rendered_errors.push(rendered);
                }
            }
        }
        // Helm templates are read leniently: never an error.
        assert!(scan(Path::new("t.yaml"), FileKind::HelmTemplate, text).is_ok());
    }
    insta::assert_snapshot!(rendered_errors.join("\n"));
}

/// A block sequence entry (`- `) where a block mapping expects its next key fails ("did not
/// find expected key"); a sequence at its key's indentation, as that key's value, is valid.
/// `None` rows are valid YAML 1.2, `Some` rows fail at that line and column (saphyr-parser,
/// which agrees with libyaml on each row's verdict).
#[test]
fn sequence_entries_where_a_mapping_key_is_expected() {
    // (text, the error's line and column)
    let cases: &[(&str, Option<(usize, usize)>)] = &[
        ("a:\n- b\n- c\nimage: n:1\n", None),
        ("a:\n- b:\n  - c\nimage: n:1\n", None),
        ("- key:\n  - x\n- image: n:1\n", None),
        ("x:\n  - a:\n    - b\n  - image: n:1\n", None),
        ("a: &x\n- b\nimage: n:1\n", None),
        ("a: !!seq\n- b\nimage: n:1\n", None),
        ("a: # c\n- b\nimage: n:1\n", None),
        ("a:\n# c\n\n- b\nimage: n:1\n", None),
        ("a:\n  b:\n  - c\n  d: 2\nimage: n:1\n", None),
        ("a:\n  - b\n  - c\nd:\n- e\nimage: n:1\n", None),
        ("a: b\n  - c\nimage: n:1\n", None),
        ("- a\n  - b\n- image: n:1\n", None),
        ("- a\n- b\n", None),
        ("a: 1\n---\n- b\n---\nimage: n:1\n", None),
        ("a: [x, {b: c}]\nd:\n- [e, f]\n- {image: n:1}\n", None),
        ("a:\n  b: 1\n- c\nimage: n:1\n", Some((3, 3))),
        ("a: 1\n- b\nimage: n:1\n", Some((2, 3))),
        ("a: 'x'\n- b\nimage: n:1\n", Some((2, 3))),
        ("a:\n  - b\n- c\nimage: n:1\n", Some((3, 3))),
        ("a:\n  b:\n- x\nimage: n:1\n", Some((3, 3))),
        ("- key: v\n  - x\n- image: n:1\n", Some((2, 5))),
        ("x:\n  - a: 1\n    - b\n  - image: n:1\n", Some((3, 7))),
        ("a: |\n  t\n- b\nimage: n:1\n", Some((3, 3))),
        ("a: [x,\n  y]\n- b\nimage: n:1\n", Some((3, 3))),
        ("a:\n  plain\n- b\nimage: n:1\n", Some((3, 3))),
        ("a:\n  b: 1\n  - c\nimage: n:1\n", Some((3, 5))),
        ("a:\n  b: 1\n  c: 2\n  - \"\nimage: \"n:1\"\n", Some((4, 5))),
        ("a:\n- b\n---\nc: 1\n- d\nimage: n:1\n", Some((5, 3))),
    ];
    assert_valid_or_fails_at(cases);
}

/// A quoted scalar in a block value continues only on lines indented deeper than the block
/// that holds it: YAML 1.2's flow line prefix, the YAML test suite's QB6E. libyaml does not
/// check this, so a stray quote there pairs with one many lines later and hides the references
/// between; read conformantly, that fails where the scalar opened.
#[test]
fn quoted_scalars_continue_only_on_deeper_lines() {
    let cases: &[(&str, Option<(usize, usize)>)] = &[
        ("a: \"x\n  y\"\nimage: n:1\n", None),
        ("a: \"x\n y\"\nimage: n:1\n", None),
        ("a:\n  b: 'x\n\n   y'\nimage: n:1\n", None),
        ("a:\n  b: \"x\n\n   y\"\nimage: n:1\n", None),
        ("- \"x\n  y\"\n- image: n:1\n", None),
        ("\"x\ny\"\n---\nimage: n:1\n", None),
        // A top-level sequence's items sit at indentation 0, so 0 is deeper than the sequence.
        ("- \"x\ny\"\n- image: n:1\n", None),
        ("a: [\"x\ny\"]\nimage: n:1\n", Some((1, 5))),
        ("a: \"x\ny\"\nimage: n:1\n", Some((1, 4))),
        ("a: 'x\ny'\nimage: n:1\n", Some((1, 4))),
        ("a:\n  b: \"x\n  y\"\nimage: n:1\n", Some((2, 6))),
        ("- a: \"x\n  y\"\n- image: n:1\n", Some((1, 6))),
        (
            "w:\n  i:\n    t: 1\n  image: \"\n\ns:\n  image: n:1\nc:\n- \"\n  x: 1\n",
            Some((4, 10)),
        ),
    ];
    assert_valid_or_fails_at(cases);
}

fn assert_valid_or_fails_at(cases: &[(&str, Option<(usize, usize)>)]) {
    for &(text, expected) in cases {
        for kind in [FileKind::Yaml, FileKind::Compose, FileKind::Workflow] {
            let result = scan(Path::new("v.yaml"), kind, text);
            match (expected, result) {
                (None, Ok(findings)) => {
                    if kind == FileKind::Yaml {
                        let expected = usize::from(text.contains("image"));
                        assert_eq!(findings.len(), expected, "{text:?}");
                    }
                }
                (
                    Some((line, column)),
                    Err(crate::Error::Syntax {
                        line: l, column: c, ..
                    }),
                ) => {
                    assert_eq!((l, c), (line, column), "{kind:?} {text:?}");
                }
                (expected, result) => panic!("{kind:?} {text:?}: {expected:?} vs {result:?}"),
            }
        }
        // Helm templates are read leniently: never an error.
        assert!(scan(Path::new("t.yaml"), FileKind::HelmTemplate, text).is_ok());
    }
}

/// A chart's values file scanned with [`crate::scan_values`] gives what [`scan`] gives, and
/// the read it returns gives the chart reading what reading the file again would; a file
/// that cannot hold a reference is not read.
#[test]
fn values_files_are_scanned_and_read_once_for_the_chart() {
    let path = Path::new("chart/values.yaml");
    for text in [
        "image:\n  repository: nginx\n  tag: \"1.27\"\nsidecar:\n  image: busybox:1.36 # x\n",
        "image:\r\n  repository: nginx\r\n  tag: \"1.27\"\r\nsidecar: {image: busybox:1.36}\r\n",
    ] {
        let (findings, values) = crate::scan_values(path, text).unwrap();
        assert_eq!(findings, scan(path, FileKind::Yaml, text).unwrap());
        assert_eq!(findings.len(), 2, "{findings:#?}");
        let mut values = values.expect("read");
        assert_eq!(values.text(), text);
        assert_eq!(
            values.images().unwrap(),
            crate::chart::values_images(path, text).unwrap()
        );
    }
    // The image maps found on the scan's walk are those a walk of their own finds: flags,
    // aliases, escaped keys, a first document that is empty, several documents.
    for text in [
        "db:\n  enabled: false\n  image:\n    repository: postgres\n    tag: \"16\"\nx: {enabled: true}\n",
        "base: &b\n  image:\n    repository: nginx\n    tag: \"1\"\nother: *b\nmore:\n  <<: *b\n",
        "app:\n  \"im\\x61ge\": nginx:1\n  \"repo\\u0073itory\": x\nweb:\n  image: a:1\n",
        "---\n---\nimage:\n  repository: nginx\n",
        "image:\n  repository: nginx\n---\nsecond:\n  image: redis:7\n",
        "list:\n  - image: {repository: a, tag: b}\n  - name: c\n    image: d:1\n",
    ] {
        let (findings, values) = crate::scan_values(path, text).unwrap();
        assert_eq!(
            findings,
            scan(path, FileKind::Yaml, text).unwrap(),
            "{text:?}"
        );
        let mut values = values.expect("read");
        let expected = crate::chart::values_images(path, text).unwrap();
        assert_eq!(values.images().unwrap(), expected, "{text:?}");
        // Taken once; asked again, found again.
        assert_eq!(values.images().unwrap(), expected, "{text:?}");
    }
    let (findings, values) = crate::scan_values(path, "replicas: 1\n").unwrap();
    assert!(findings.is_empty() && values.is_none());
    assert!(crate::scan_values(path, "image: [\n").is_err());
}

/// What scanning a Helm template finds when every document of it is read.
fn helm_template_read_whole(text: &str) -> Vec<crate::Finding> {
    if !crate::may_hold_reference(FileKind::HelmTemplate, text.as_bytes()) {
        return Vec::new();
    }
    let path = Path::new("templates/t.yaml");
    let masked = crate::helm::mask(text);
    let tree = crate::yaml::read(path, &masked, crate::yaml::Mode::Lenient).unwrap();
    let mut sink = crate::common::Sink::new(text, FileKind::HelmTemplate);
    crate::rules::apply(&mut sink, &tree, &masked, path).unwrap();
    sink.finish()
}

/// A Helm template's documents that hold none of the rules' words are not read: it finds what
/// reading every document finds, on hand-written streams (markers with comments, tabs,
/// content on the marker's line, `---` in a block scalar, aliases) and on every template of
/// the corpus charts, each also with CRLF.
#[test]
fn a_template_finds_the_same_with_its_wordless_documents_passed_over() {
    let mut texts: Vec<String> = [
        "kind: ConfigMap\ndata:\n  a: {{ .Values.a }}\n---\nkind: Pod\nspec:\n  containers:\n    - image: nginx:1.25\n",
        "a: 1\n--- # next\nimage: redis:7\n...\nb: 2\n---\n  image: x:1\n",
        "a: 1\n---\tx\nimage: redis:7\n--- {a: b}\nimage: y:2\n",
        "s: |\n  ---\n  image: no:1\n---\nimage: yes:2\n",
        "base: &b\n  image: nginx:1\nuse: *b\n---\nplain: &p value\nref: *p\n",
        "{{- if .Values.x }}\n---\n{{- end }}\nimage: {{ .Values.image }}\n---\nimage: busybox\n",
        "\u{feff}---\na: 1\n---\n\"im\\x61ge\": nginx:1\n",
        "----\nimage: a:1\n---x\nimage: b:2\n",
        // Lines that look like markers but are not: what is before them stays in the document.
        "spec:\n  containers:\n    - name: a\n---\tx\n    - image: nginx:latest\n",
        "spec:\n  containers:\n    - name: a\n--- {a: b}\n    - image: nginx:latest\n",
        "spec:\n  containers:\n    - name: a\n---x\n    - image: nginx:latest\n",
        "spec:\n  containers:\n    - name: a\n ---\n    - image: nginx:latest\n",
        "spec:\n  containers:\n    - name: a\n--- \r\n    - image: nginx:latest\n",
        "spec:\n  containers:\n    - name: a\n--- #\tc\n    - image: nginx:latest\n",
    ]
    .iter()
    .map(|t| (*t).to_owned())
    .collect();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let mut stack = vec![corpus.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if FileKind::detect(&path) == Some(FileKind::HelmTemplate) {
                texts.extend(std::fs::read_to_string(&path).ok());
            }
        }
    }
    assert!(
        texts.len() > 100,
        "the corpus at {} gave {} texts",
        corpus.display(),
        texts.len()
    );
    for text in &texts {
        for text in [text.clone(), text.replace('\n', "\r\n")] {
            let path = Path::new("templates/t.yaml");
            assert_eq!(
                scan(path, FileKind::HelmTemplate, &text).unwrap(),
                helm_template_read_whole(&text),
                "{text:?}"
            );
        }
    }
}

/// A tag that is a placeholder a script fills in (`Dockerfile.in` completed by `sed`) is
/// `templated`, as `${GO_VERSION}` is: no registry holds it.
#[test]
fn placeholder_tags_are_templated() {
    let text = "FROM golang:GO_VERSION AS build\nFROM registry.k8s.io/pause:PAUSE_VERSION\nFROM alpine:3.20\n";
    let statuses: Vec<(usize, Status)> = found(FileKind::Dockerfile, text)
        .into_iter()
        .map(|(line, _, status, _)| (line, status))
        .collect();
    assert_eq!(
        statuses,
        [
            (1, Status::Templated),
            (2, Status::Templated),
            (3, Status::Floating)
        ]
    );
}

/// A YAML `image:` line in a heredoc (or echoed) shows nothing around it: without a tag or a
/// digest it is reported but not written (a `tag:` beside it may complete it), and a file
/// (`disk.qcow2`) is no reference.
#[test]
fn a_script_s_yaml_line_without_a_tag_is_not_written() {
    let text = "cat <<EOF > values.yaml\nimage: bitnami/nginx\ntag: 1.25\nsidecar:\n  image: envoy:v1\nvm:\n  image: my-vm-image.qcow2\nEOF\necho '  image: busybox' >> pod.yaml\n";
    let findings = scan(Path::new("gen.sh"), FileKind::Shell, text).unwrap();
    let shapes: Vec<(usize, &str, bool)> = findings
        .iter()
        .map(|f| {
            (
                f.line,
                f.text.as_str(),
                matches!(f.site, EditSite::Unsupported { .. }),
            )
        })
        .collect();
    assert_eq!(
        shapes,
        [
            (2, "bitnami/nginx", true),
            (5, "envoy:v1", false),
            (9, "busybox", true)
        ]
    );
}
