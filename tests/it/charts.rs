//! Chart-aware values end to end: fixture charts shaped like real idioms (Bitnami's image
//! helper, prometheus-community's `sha`, ingress-nginx's `registry`/`image`/`digest`, an
//! `appVersion` default with a `v` prefix, a vendored subchart, a tag that is also a label or a
//! custom resource's `version:`), pinned against the test registry and proven with real Helm.

use std::collections::BTreeMap;
use std::path::Path;

use crate::context::TestContext;
use crate::pin::{assert_tree, bless, copy_tree, fixture_dir, golden, tree};
use crate::registry::{Flavour, Registry};

/// The images the charts render and tagpin may pin. The ones it must leave alone (a tag that
/// feeds a label or a `version:`, a chart that does not render, values without their chart)
/// are not pushed: looking them up would fail the run.
const IMAGES: &[&str] = &[
    "docker.io/bitnami/nginx:1.29.1-debian-12-r0",
    "docker.io/bitnami/nginx-exporter:1.4.2-debian-12-r9",
    "quay.io/prometheus/node-exporter:v1.8.2",
    "registry.k8s.io/ingress-nginx/controller:v1.11.2",
    "ghcr.io/acme/sub:1.0",
    "ghcr.io/acme/sub:0.9",
    "ghcr.io/acme/sidecar:1.2",
];

const REGISTRIES: [&str; 4] = ["docker.io", "quay.io", "registry.k8s.io", "ghcr.io"];

struct Setup {
    context: TestContext,
    registry: Registry,
}

impl Setup {
    fn new() -> Self {
        let context = TestContext::new();
        copy_tree(&fixture_dir("charts"), context.root());
        let mut registry = Registry::start();
        for key in IMAGES {
            registry.push(key, Flavour::Image);
        }
        Self { context, registry }
    }

    fn run(&self, args: &[&str], helm: bool) -> crate::context::Run {
        let mut all: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
        all.extend(self.registry.mirror_args(REGISTRIES));
        if helm {
            all.extend(crate::helm::args());
        }
        self.context.run(all)
    }

    fn digest(&self, key: &str) -> &str {
        &self.registry.pushed()[key]
    }
}

/// What Helm renders for the chart at `chart`, by the shim the tests use.
fn render(chart: &Path) -> String {
    let output = std::process::Command::new(crate::helm::command())
        .args(["template", "t"])
        .arg(chart)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// `(path, line, reason)` of every reference `pin` left unwritten.
fn unsupported(doc: &serde_json::Value) -> Vec<(String, u64, String)> {
    doc["unsupported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["path"].as_str().unwrap().to_owned(),
                u["line"].as_u64().unwrap(),
                u["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn charts_are_pinned_where_a_rendering_proves_it_and_nowhere_else() {
    let setup = Setup::new();
    let root = setup.context.root().to_owned();
    let original = tree(&root);

    let dry = setup.run(&["pin", ".", "--format", "json"], true);
    dry.assert_code(0);
    let doc = dry.json();
    let left = unsupported(&doc);
    let reason = |path: &str| -> &str {
        &left
            .iter()
            .find(|(p, _, _)| p == path)
            .unwrap_or_else(|| panic!("{path} is not reported: {left:?}"))
            .2
    };
    assert!(
        reason("label-tag/values.yaml").contains(
            "the tag also feeds `app.kubernetes.io/version: \"…\"` in label-tag/templates/deployment.yaml"
        ),
        "{left:?}"
    );
    assert!(
        reason("cr-version/values.yaml")
            .contains("the tag also feeds `version: …` in cr-version/templates/prometheus.yaml"),
        "{left:?}"
    );
    assert!(
        reason("needs-dependency/values.yaml")
            .starts_with("not proven: with Helm the chart does not render"),
        "{left:?}"
    );
    assert!(
        reason("env/prod-values.yaml")
            .contains("the chart these values are for is not in this repository"),
        "{left:?}"
    );
    // The subchart's default, whose repository and tag the wrapper's values set: never what
    // the wrapper deploys.
    assert!(
        reason("umbrella/charts/sub/values.yaml")
            .contains("the parent chart `umbrella` sets `sub.image.repository`, `sub.image.tag`"),
        "{left:?}"
    );
    assert_eq!(left.len(), 5, "{left:?}");
    assert_eq!(doc["unresolved"], serde_json::json!([]), "{dry}");
    assert_eq!(tree(&root), original, "a dry run wrote");

    let write = setup.run(&["pin", ".", "--write"], true);
    write.assert_code(0);
    bless(&root, "charts.expected", setup.registry.pushed());
    let golden = golden("charts.expected", setup.registry.pushed());
    assert_tree(&root, &golden);

    // What each chart renders now: the pinned references, in the form its template builds.
    for (chart, key, line) in [
        (
            "bitnami-style",
            "docker.io/bitnami/nginx:1.29.1-debian-12-r0",
            "image: docker.io/bitnami/nginx@{}\n",
        ),
        (
            "prometheus-sha",
            "quay.io/prometheus/node-exporter:v1.8.2",
            "image: \"quay.io/prometheus/node-exporter:v1.8.2@{}\"\n",
        ),
        (
            "ingress-style",
            "registry.k8s.io/ingress-nginx/controller:v1.11.2",
            "image: \"registry.k8s.io/ingress-nginx/controller:v1.11.2@{}\"\n",
        ),
        (
            "umbrella",
            "ghcr.io/acme/sub:1.0",
            "image: \"ghcr.io/acme/sub:1.0@{}\"\n",
        ),
    ] {
        let rendered = render(&root.join(chart));
        let line = line.replace("{}", setup.digest(key));
        assert!(rendered.contains(&line), "{chart}: {line}\n{rendered}");
    }
    let exporter = setup.digest("docker.io/bitnami/nginx-exporter:1.4.2-debian-12-r9");
    // The metrics container is off by default; with it on, it is pinned too.
    let values = std::fs::read_to_string(root.join("bitnami-style/values.yaml")).unwrap();
    assert!(
        values.contains(&format!("    digest: \"{exporter}\"\n")),
        "{values}"
    );

    // Every map is pinned now, or reported: a second run changes nothing.
    let again = setup.run(&["pin", ".", "--write"], true);
    again.assert_code(0);
    assert!(again.stderr.contains("pinned 0, refreshed 0"), "{again}");
    assert_tree(&root, &golden);
}

#[test]
fn without_helm_only_what_the_templates_show_is_written_and_it_is_what_helm_proves() {
    let setup = Setup::new();
    let root = setup.context.root().to_owned();
    let original = tree(&root);
    let run = setup.run(&["pin", ".", "--write", "--format", "json"], false);
    run.assert_code(0);
    let doc = run.json();
    // The Bitnami-style maps passed in a `dict` to the chart's helper, the ingress-nginx-style
    // map read as `.` of a `with` block over lines, the string written whole, the subchart whose template line reads its map directly, and the
    // prometheus-style chart whose named template (included with `.`, a `$tag` variable, an
    // `if` over lines) the static reading evaluates whole.
    let edits: Vec<(&str, u64)> = doc["edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        edits,
        [
            ("bitnami-style/values.yaml", 8),
            ("bitnami-style/values.yaml", 17),
            ("env/prod-values.yaml", 6),
            ("ingress-style/values.yaml", 5),
            ("prometheus-sha/values.yaml", 3),
        ],
        "{run}"
    );
    let left = unsupported(&doc);
    for (path, reason) in [
        (
            "needs-dependency/values.yaml",
            "cannot be evaluated (no template named `common.images.image`)",
        ),
        (
            "umbrella/values.yaml",
            "the values under `sub` feed a subchart",
        ),
        (
            "umbrella/charts/sub/values.yaml",
            "the parent chart `umbrella` sets `sub.image.repository`",
        ),
        (
            "label-tag/values.yaml",
            "the tag also feeds `app.kubernetes.io/version",
        ),
    ] {
        assert!(
            left.iter().any(|(p, _, r)| p == path && r.contains(reason)),
            "{path}: {reason}\n{left:?}"
        );
    }
    // Every file is as it was or as the Helm-proven golden has it: no edit Helm would refuse.
    let golden = golden("charts.expected", setup.registry.pushed());
    let after = tree(&root);
    for path in [
        "prometheus-sha/values.yaml",
        "bitnami-style/values.yaml",
        "ingress-style/values.yaml",
    ] {
        assert_eq!(
            after[path], golden[path],
            "{path}: the static reading writes what Helm proves"
        );
    }
    for (path, bytes) in &after {
        assert!(
            *bytes == original[path] || *bytes == golden[path],
            "{path} is neither as it was nor as Helm proves it:\n{}",
            String::from_utf8_lossy(bytes)
        );
    }
}

/// The Bitnami charts of `../shared/corpus/bitnami` (see its SOURCE.md): `vendored`, with
/// their dependencies in each chart's `charts/` as `helm dependency build` puts them; or else
/// as their repository holds them, `common` (and `wordpress`'s `mariadb` and `memcached`) a
/// chart beside the others, in a Git work tree.
fn bitnami_corpus(into: &Path, vendored: bool) -> bool {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/bitnami/bitnami");
    if !corpus.join("common/Chart.yaml").is_file() {
        // Straight to the process's stderr, past the test harness's capture, so it shows.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "SKIPPED: the Bitnami corpus is not at {}\n",
                corpus.display()
            )
            .as_bytes(),
        );
        return false;
    }
    copy_tree(&corpus, into);
    if vendored {
        for entry in std::fs::read_dir(into).unwrap() {
            let chart = entry.unwrap().path();
            if chart.join("Chart.yaml").is_file() && !chart.ends_with("common") {
                copy_tree(&corpus.join("common"), &chart.join("charts/common"));
            }
        }
    } else {
        std::fs::create_dir(into.join(".git")).unwrap();
    }
    true
}

/// Vendors into `chart` the charts its `Chart.yaml` depends on, from the directory beside it,
/// and theirs into them: what `helm dependency build` would fetch.
fn vendor_from_beside(chart: &Path, beside: &Path) {
    let meta: serde_json::Value =
        yaml_serde::from_str(&std::fs::read_to_string(chart.join("Chart.yaml")).unwrap()).unwrap();
    for dependency in meta["dependencies"].as_array().into_iter().flatten() {
        let name = dependency["name"].as_str().unwrap();
        let into = chart.join("charts").join(name);
        if !into.exists() {
            copy_tree(&beside.join(name), &into);
            vendor_from_beside(&into, beside);
        }
    }
}

#[test]
fn every_bitnami_values_edit_renders_as_the_pushed_digest() {
    bitnami_values_edits_render_as_pushed(true);
}

/// In bitnami/charts, no chart vendors `common`: it is the chart beside them, which Helm
/// renders them with once staged, so their values are pinned as when it is vendored.
#[test]
fn bitnami_charts_as_their_repository_holds_them_are_rendered_with_the_charts_beside_them() {
    bitnami_values_edits_render_as_pushed(false);
}

fn bitnami_values_edits_render_as_pushed(vendored: bool) {
    let context = TestContext::new();
    let root = context.root().to_owned();
    if !bitnami_corpus(&root, vendored) {
        return;
    }
    let helm = crate::helm::args();
    let scan = context.run(["scan", ".", "--format", "json", &helm[0], &helm[1]]);
    scan.assert_code(0);
    let doc = scan.json();
    assert_eq!(doc["errors"], serde_json::json!([]), "{scan}");
    // Push every image tagpin will look up, as `registry/repository:tag`.
    let mut registry = Registry::start();
    let mut registries = std::collections::BTreeSet::new();
    for reference in doc["references"].as_array().unwrap() {
        if reference["status"] != "floating" || reference.get("unwritable").is_some() {
            continue;
        }
        let key = format!(
            "{}/{}:{}",
            reference["registry"].as_str().unwrap(),
            reference["repository"].as_str().unwrap(),
            reference["tag"].as_str().unwrap()
        );
        if !registry.pushed().contains_key(&key) {
            registry.push(&key, Flavour::Image);
        }
        registries.insert(reference["registry"].as_str().unwrap().to_owned());
    }
    assert!(registry.pushed().len() >= 10, "{:?}", registry.pushed());
    let original = tree(&root);

    let mut args: Vec<String> = ["pin", ".", "--write", "--format", "json"]
        .map(str::to_owned)
        .into();
    args.extend(registry.mirror_args(registries.iter().map(String::as_str)));
    args.extend(helm.clone());
    let pin = context.run(&args);
    pin.assert_code(0);
    let doc = pin.json();
    assert_eq!(doc["unresolved"], serde_json::json!([]), "{pin}");
    let edits = doc["edits"].as_array().unwrap();
    let values_edits: Vec<&serde_json::Value> = edits
        .iter()
        .filter(|e| e["path"].as_str().unwrap().ends_with("values.yaml"))
        .collect();
    assert!(values_edits.len() >= 15, "{pin}");

    // Each values edit renders, with real Helm, as `name:tag@digest` or, where Bitnami's
    // helper drops the tag once a digest is set, `name@digest`; the digest is the one pushed.
    let mut renders = BTreeMap::new();
    let rendered_tree = tempfile::tempdir().unwrap();
    let charts = if vendored {
        root.clone()
    } else {
        copy_tree(&root, rendered_tree.path());
        for entry in std::fs::read_dir(rendered_tree.path()).unwrap() {
            let chart = entry.unwrap().path();
            if chart.join("Chart.yaml").is_file() {
                vendor_from_beside(&chart, rendered_tree.path());
            }
        }
        rendered_tree.path().to_owned()
    };
    for edit in &values_edits {
        let path = edit["path"].as_str().unwrap();
        let chart = path.split('/').next().unwrap().to_owned();
        let rendered = renders
            .entry(chart.clone())
            .or_insert_with(|| render_enabled(&charts.join(&chart)));
        let (image, tag) = (
            edit["image"].as_str().unwrap(),
            edit["tag"].as_str().unwrap(),
        );
        let digest = edit["new_digest"].as_str().unwrap();
        assert_eq!(
            registry.pushed()[&format!("{image}:{tag}")],
            digest,
            "{edit}"
        );
        let with_tag = format!("{image}:{tag}@{digest}");
        let without_tag = format!("{image}@{digest}");
        assert!(
            rendered.contains(&with_tag) || rendered.contains(&without_tag),
            "{path}: {with_tag} is not rendered:\n{rendered}"
        );
    }

    // No byte changes outside the edits: every changed line holds a new digest.
    let after = tree(&root);
    let digests: Vec<&str> = edits
        .iter()
        .map(|e| e["new_digest"].as_str().unwrap())
        .collect();
    for (path, bytes) in &original {
        let (old, new) = (
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&after[path]),
        );
        let (old_lines, new_lines): (Vec<&str>, Vec<&str>) = (
            old.split_inclusive('\n').collect(),
            new.split_inclusive('\n').collect(),
        );
        assert_eq!(old_lines.len(), new_lines.len(), "{path}");
        for (old_line, new_line) in old_lines.iter().zip(&new_lines) {
            if old_line != new_line {
                assert!(
                    digests.iter().any(|d| new_line.contains(d)),
                    "{path}: `{old_line}` became `{new_line}`"
                );
            }
        }
    }

    // Every map left alone is reported with the reason.
    let again = context.run(["scan", ".", "--format", "json", &helm[0], &helm[1]]);
    for reference in again.json()["references"].as_array().unwrap() {
        let path = reference["path"].as_str().unwrap();
        if reference["status"] == "floating" && path.ends_with("values.yaml") {
            assert!(reference.get("unwritable").is_some(), "{reference}");
        }
    }
}

/// Everything the chart at `chart` renders: with its defaults, and with each top-level
/// section that has `enabled: false` turned on in its own rendering (one may need values of
/// its own, and then does not render), Bitnami's check of modified images off.
fn render_enabled(chart: &Path) -> String {
    let text = std::fs::read_to_string(chart.join("values.yaml")).unwrap();
    let mut sections = vec![None];
    let mut section = None;
    for line in text.lines() {
        if !line.starts_with([' ', '#']) && line.ends_with(':') {
            section = Some(line.trim_end_matches(':'));
        } else if line == "  enabled: false" {
            sections.push(section);
        }
    }
    let mut all = String::new();
    for section in sections {
        let mut flags = String::from("global:\n  security:\n    allowInsecureImages: true\n");
        if let Some(section) = section {
            flags.push_str(section);
            flags.push_str(":\n  enabled: true\n");
        }
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &flags).unwrap();
        let output = std::process::Command::new(crate::helm::command())
            .args(["template", "t"])
            .arg(chart)
            .arg("--values")
            .arg(file.path())
            .output()
            .unwrap();
        if output.status.success() {
            all.push_str(&String::from_utf8(output.stdout).unwrap());
        }
    }
    all
}

#[test]
fn crlf_values_are_pinned_like_lf_ones() {
    let setup = Setup::new();
    let root = setup.context.root().to_owned();
    // Every values file with CRLF line ends (templates stay LF, as Helm reads either).
    let crlf = |text: &str| text.replace("\r\n", "\n").replace('\n', "\r\n");
    for (path, bytes) in tree(&root) {
        if path.ends_with("values.yaml") {
            std::fs::write(root.join(&path), crlf(&String::from_utf8(bytes).unwrap())).unwrap();
        }
    }
    let write = setup.run(&["pin", ".", "--write"], true);
    write.assert_code(0);
    for (path, bytes) in golden("charts.expected", setup.registry.pushed()) {
        let text = String::from_utf8(bytes).unwrap();
        let want = if path.ends_with("values.yaml") {
            crlf(&text)
        } else {
            text
        };
        let got = String::from_utf8(std::fs::read(root.join(&path)).unwrap()).unwrap();
        assert_eq!(got, want, "{path}");
    }
}

/// The arguments of `tagpin <args>` against `registry` for ghcr.io, with real Helm, or with
/// tagpin's own reading of the templates (`--helm none`).
fn pin_args(args: &[&str], registry: &Registry, helm: bool) -> Vec<String> {
    let mut all: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    all.extend(registry.mirror_args(["ghcr.io"]));
    if helm {
        all.extend(crate::helm::args());
    } else {
        all.extend(["--helm".to_owned(), "none".to_owned()]);
    }
    all
}

/// Two charts whose values give `latest` with `pullPolicy: Always`: one passes the value to its
/// container's `imagePullPolicy`, one writes `Always` itself.
fn pull_policy_charts(context: &TestContext, crlf: bool) {
    let values = "image:\n  repository: ghcr.io/acme/app\n  tag: latest\n  pullPolicy: Always\n";
    let template = |policy: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{{{ .Release.Name }}}}\n\
             spec:\n  template:\n    spec:\n      containers:\n        - name: app\n          \
             image: \"{{{{ .Values.image.repository }}}}:{{{{ .Values.image.tag }}}}\"\n          \
             imagePullPolicy: {policy}\n"
        )
    };
    let passes = template("{{ .Values.image.pullPolicy }}");
    let fixed = template("Always");
    context.write_all(
        &[
            (
                "passes/Chart.yaml",
                "apiVersion: v2\nname: passes\nversion: 1.0.0\n",
            ),
            ("passes/values.yaml", values),
            ("passes/templates/deployment.yaml", &passes),
            (
                "fixed/Chart.yaml",
                "apiVersion: v2\nname: fixed\nversion: 1.0.0\n",
            ),
            ("fixed/values.yaml", values),
            ("fixed/templates/deployment.yaml", &fixed),
        ],
        crlf,
    );
}

#[test]
fn latest_pull_policy_sets_a_values_map_s_pull_policy_only_where_the_chart_passes_it_on() {
    for (helm, crlf) in [(true, false), (true, true), (false, false)] {
        let context = TestContext::new();
        pull_policy_charts(&context, crlf);
        let mut registry = Registry::start();
        registry.push("ghcr.io/acme/app:latest", Flavour::Image);
        let digest = registry.pushed()["ghcr.io/acme/app:latest"].clone();
        let args = pin_args(
            &[
                "pin",
                ".",
                "--write",
                "--latest",
                "pull-policy",
                "--format",
                "json",
            ],
            &registry,
            helm,
        );
        let run = context.run(args);
        run.assert_code(0);
        let doc = run.json();
        let newline = if crlf { "\r\n" } else { "\n" };
        let values = |policy: &str| {
            format!(
                "image:\n  repository: ghcr.io/acme/app\n  tag: latest@{digest}\n  pullPolicy: \
                 {policy}\n"
            )
            .replace('\n', newline)
        };
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        // Without Helm, tagpin's own reading shows each template line alone: it cannot prove
        // which container a policy feeds, so only the digests are written.
        let passed_on = if helm { "IfNotPresent" } else { "Always" };
        assert_eq!(
            read("passes/values.yaml"),
            values(passed_on),
            "helm {helm}\n{run}"
        );
        assert_eq!(
            read("fixed/values.yaml"),
            values("Always"),
            "helm {helm}\n{run}"
        );
        let added: Vec<(&str, bool)> = doc["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["path"].as_str().unwrap(), e["pull_policy_added"] == true))
            .collect();
        assert_eq!(
            added,
            [("fixed/values.yaml", false), ("passes/values.yaml", helm)],
            "{run}"
        );
        if helm {
            let rendered = render(&context.path("passes"));
            assert!(
                rendered.contains("imagePullPolicy: IfNotPresent"),
                "{rendered}"
            );
        }
    }
}

/// Charts of the repository that a `HelmRelease` (from a `GitRepository`) and an Argo CD
/// `Application` (a source `path`) configure, beside values for charts that are not here.
fn embedded_values_tree(context: &TestContext, crlf: bool) {
    let deployment = |image: &str, labels: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{{{ .Release.Name }}}}\n\
             {labels}spec:\n  template:\n    spec:\n      containers:\n        - name: app\n          \
             image: \"{image}\"\n"
        )
    };
    let plain = deployment(
        "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}",
        "",
    );
    let digest = deployment(
        "{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ with .Values.image.digest }}@{{ . }}{{ end }}",
        "",
    );
    let label = deployment(
        "{{ .Values.image.repository }}:{{ .Values.image.tag }}",
        "  labels:\n    app.kubernetes.io/version: {{ .Values.image.tag | quote }}\n",
    );
    let release = |name: &str, chart: &str, values: &str| {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n\
             spec:\n  chart:\n    spec:\n      chart: {chart}\n      sourceRef:\n        kind: \
             GitRepository\n        name: flux-system\n  values:\n{values}"
        )
    };
    let app_values = "    image:\n      repository: ghcr.io/acme/app\n      tag: \"1.2\" # app\n";
    let label_values = "    image:\n      repository: ghcr.io/acme/app\n      tag: \"1.2\"\n";
    let releases = format!(
        "{}---\n{}---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  \
         name: redis\nspec:\n  chart:\n    spec: {{chart: redis, version: 19.6.4, sourceRef: \
         {{kind: HelmRepository, name: bitnami}}}}\n  values:\n    image:\n      repository: \
         ghcr.io/acme/app\n      tag: \"1.2\"\n",
        release("app", "./charts/app", app_values),
        release("label", "./charts/label", label_values),
    );
    let application = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: \
                       digest\nspec:\n  source:\n    repoURL: https://git.example/deploy.git\n    \
                       path: charts/digest\n    helm:\n      valuesObject:\n        image:\n          \
                       repository: ghcr.io/acme/app\n          tag: \"1.2\"\n          digest: \"\"\n";
    let chart =
        |name: &str| format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\nappVersion: \"1.2\"\n");
    context.write_all(
        &[
            ("charts/app/Chart.yaml", &chart("app")),
            (
                "charts/app/values.yaml",
                "image:\n  repository: example/app\n  tag: \"\"\n",
            ),
            ("charts/app/templates/deployment.yaml", &plain),
            ("charts/digest/Chart.yaml", &chart("digest")),
            ("charts/digest/templates/deployment.yaml", &digest),
            ("charts/label/Chart.yaml", &chart("label")),
            ("charts/label/templates/deployment.yaml", &label),
            ("clusters/prod/releases.yaml", &releases),
            ("clusters/prod/digest.yaml", application),
        ],
        crlf,
    );
    std::fs::create_dir_all(context.path(".git")).unwrap();
}

/// Values in a `HelmRelease` or an `Application` whose chart is in the repository are decided
/// and proven by that chart, as its values files are; values for a chart from a chart
/// repository, and a tag the chart also prints as a label, are left with the reason.
#[test]
fn embedded_values_are_pinned_when_their_chart_in_the_repository_proves_it() {
    for (helm, crlf) in [(true, false), (true, true), (false, false)] {
        let context = TestContext::new();
        embedded_values_tree(&context, crlf);
        let mut registry = Registry::start();
        registry.push("ghcr.io/acme/app:1.2", Flavour::Image);
        let digest = registry.pushed()["ghcr.io/acme/app:1.2"].clone();
        let args = pin_args(
            &["pin", "clusters", "--write", "--format", "json"],
            &registry,
            helm,
        );
        let before = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        let (releases, application) = (
            before("clusters/prod/releases.yaml"),
            before("clusters/prod/digest.yaml"),
        );
        let run = context.run(&args);
        run.assert_code(0);
        let doc = run.json();
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        // The tag takes the digest; the chart with a `digest` key takes it there; the
        // labelled tag and the redis chart's map stay.
        let want_releases = releases.replacen(
            "tag: \"1.2\" # app",
            &format!("tag: \"1.2@{digest}\" # app"),
            1,
        );
        let want_application =
            application.replace("digest: \"\"", &format!("digest: \"{digest}\""));
        assert_eq!(
            read("clusters/prod/releases.yaml"),
            want_releases,
            "helm {helm}\n{run}"
        );
        assert_eq!(
            read("clusters/prod/digest.yaml"),
            want_application,
            "helm {helm}\n{run}"
        );
        let reasons: Vec<&str> = doc["unsupported"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["reason"].as_str().unwrap())
            .collect();
        assert_eq!(reasons.len(), 2, "helm {helm}\n{run}");
        assert!(
            reasons
                .iter()
                .any(|r| r.contains("app.kubernetes.io/version")
                    || r.contains("label")
                    || r.contains("elsewhere")),
            "helm {helm}\n{run}"
        );
        assert!(
            reasons
                .iter()
                .any(|r| r.contains("chart `redis 19.6.4` is not in this repository")),
            "helm {helm}\n{run}"
        );
        if helm {
            // What Argo CD renders with the edited valuesObject: the reference, pinned.
            let values = context.path("edited-values.yaml");
            let edited = format!(
                "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n  digest: \"{digest}\"\n"
            );
            std::fs::write(&values, edited).unwrap();
            let output = std::process::Command::new(crate::helm::command())
                .args(["template", "digest"])
                .arg(context.path("charts/digest"))
                .arg("-f")
                .arg(&values)
                .output()
                .unwrap();
            let rendered = String::from_utf8_lossy(&output.stdout);
            assert!(
                rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
                "{rendered}"
            );
        }
    }
}

/// Chart shapes met in public charts: a `digest:` key left null (fluent-bit), an image map
/// under a key that does not say image (podinfo's `redis:`), a `semverCompare` on the tag
/// (prometheus-node-exporter), and a template that writes more after the tag.
fn chart_idioms(context: &TestContext) {
    let pod = |image: &str, more: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{{{ .Release.Name }}}}\nspec:\n  \
             containers:\n    - name: app\n      image: \"{image}\"\n{more}"
        )
    };
    let chart =
        |name: &str| format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\nappVersion: \"1.2\"\n");
    let null_digest = pod(
        "{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ with .Values.image.digest }}@{{ . }}{{ end }}",
        "",
    );
    let redis = pod("{{ .Values.redis.repository }}:{{ .Values.redis.tag }}", "");
    let semver = pod(
        "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{ with .Values.image.digest }}@{{ . }}{{ end }}",
        "      {{- if semverCompare \">=1.0.0-0\" (.Values.image.tag | default .Chart.AppVersion) }}\n      args: [--new]\n      {{- end }}\n",
    );
    let suffix = pod(
        "{{ .Values.image.repository }}:{{ .Values.image.tag }}-alpine",
        "",
    );
    context.write_all(
        &[
            ("null-digest/Chart.yaml", &chart("null-digest")),
            (
                "null-digest/values.yaml",
                "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n  digest:\n",
            ),
            ("null-digest/templates/pod.yaml", &null_digest),
            ("redis/Chart.yaml", &chart("redis")),
            (
                "redis/values.yaml",
                "redis:\n  enabled: false\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n",
            ),
            (
                "redis/templates/pod.yaml",
                &format!("{{{{- if .Values.redis.enabled }}}}\n{redis}{{{{- end }}}}\n"),
            ),
            ("semver/Chart.yaml", &chart("semver")),
            (
                "semver/values.yaml",
                "image:\n  repository: ghcr.io/acme/app\n  tag: \"\"\n  digest: \"\"\n",
            ),
            ("semver/templates/pod.yaml", &semver),
            ("suffix/Chart.yaml", &chart("suffix")),
            (
                "suffix/values.yaml",
                "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n",
            ),
            ("suffix/templates/pod.yaml", &suffix),
        ],
        false,
    );
}

#[test]
fn chart_idioms_of_public_charts_are_pinned_as_helm_renders_them() {
    let context = TestContext::new();
    chart_idioms(&context);
    let mut registry = Registry::start();
    registry.push("ghcr.io/acme/app:1.2", Flavour::Image);
    let digest = registry.pushed()["ghcr.io/acme/app:1.2"].clone();
    let args = pin_args(
        &["pin", ".", "--write", "--format", "json"],
        &registry,
        true,
    );
    let run = context.run(&args);
    run.assert_code(0);
    let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
    assert_eq!(
        read("null-digest/values.yaml"),
        format!("image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n  digest: \"{digest}\"\n"),
        "{run}"
    );
    assert_eq!(
        read("redis/values.yaml"),
        format!(
            "redis:\n  enabled: false\n  repository: ghcr.io/acme/app\n  tag: \"1.2@{digest}\"\n"
        ),
        "{run}"
    );
    assert_eq!(
        read("semver/values.yaml"),
        format!("image:\n  repository: ghcr.io/acme/app\n  tag: \"\"\n  digest: \"{digest}\"\n"),
        "{run}"
    );
    assert_eq!(
        read("suffix/values.yaml"),
        "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n",
        "{run}"
    );
    let doc = run.json();
    let reasons: Vec<&str> = doc["unsupported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["reason"].as_str().unwrap())
        .collect();
    assert!(
        matches!(reasons[..], [reason] if reason.contains("writes `-alpine` after this map's tag")),
        "{run}"
    );
    // What Helm renders from the edited values: each reference pinned, in its chart's form.
    for chart in ["null-digest", "semver"] {
        let rendered = render(&context.path(chart));
        assert!(
            rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
            "{chart}: {rendered}"
        );
    }
}

/// A map whose image shows only in the branch another map's `enabled` flag switches off
/// (traefik's `oci_meta`): found with the chart's own flags, pinned, and proven there; and
/// `check` counts a map whose tag only the chart knows as floating.
#[test]
fn a_map_another_flag_hides_is_decided_and_proven_with_the_chart_s_own_flags() {
    let context = TestContext::new();
    let template = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  \
                    containers:\n    - name: app\n      {{- if .Values.alt.enabled }}\n      \
                    image: {{ printf \"%s:%s\" .Values.alt.image.repository .Values.alt.image.tag }}\n      \
                    {{- else }}\n      image: {{ printf \"%s:%s\" .Values.image.repository .Values.image.tag }}\n      \
                    {{- end }}\n";
    let values = "image: {repository: ghcr.io/acme/app, tag: \"1.2\"}\nalt:\n  enabled: false\n  \
                  image: {repository: ghcr.io/acme/alt, tag: \"1.2\"}\n";
    context.write_all(
        &[
            ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n"),
            ("c/values.yaml", values),
            ("c/templates/pod.yaml", template),
        ],
        false,
    );
    let mut registry = Registry::start();
    registry.push("ghcr.io/acme/app:1.2", Flavour::Image);
    registry.push("ghcr.io/acme/alt:1.2", Flavour::Image);
    let pushed = registry.pushed();
    let (app, alt) = (
        &pushed["ghcr.io/acme/app:1.2"],
        &pushed["ghcr.io/acme/alt:1.2"],
    );
    let args = pin_args(&["pin", ".", "--write"], &registry, true);
    let run = context.run(&args);
    run.assert_code(0);
    let got = std::fs::read_to_string(context.path("c/values.yaml")).unwrap();
    assert_eq!(
        got,
        values
            .replacen("tag: \"1.2\"}", &format!("tag: \"1.2@{app}\"}}"), 1)
            .replace("alt, tag: \"1.2\"}", &format!("alt, tag: \"1.2@{alt}\"}}")),
        "{run}"
    );
    assert!(render(&context.path("c")).contains(&format!("image: ghcr.io/acme/app:1.2@{app}")));
}

/// A split map whose tag only its chart knows (empty, or from `appVersion`) is floating for
/// `check`, with the reason, when no rendering shows it: not passed over as templated.
#[test]
fn check_counts_a_split_map_with_an_unknown_tag_as_floating() {
    let context = TestContext::new();
    context.write(
        "app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec:\n  source:\n    chart: vcluster\n    \
         targetRevision: 0.21.0\n    helm:\n      valuesObject:\n        image: {registry: ghcr.io, \
         repository: loft-sh/vcluster, tag: \"\"}\n",
    );
    context.write(
        "chart/Chart.yaml",
        "apiVersion: v2\nname: chart\nversion: 1.0.0\nappVersion: \"1.2\"\n",
    );
    context.write(
        "chart/values.yaml",
        "image:\n  repository: ghcr.io/acme/app\n  tag: \"\"\n",
    );
    context.write(
        "chart/templates/pod.yaml",
        "image: \"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{ .Values.x | b64enc }}\"\n",
    );
    let run = context.run(["check", ".", "--helm", "none", "--format", "json"]);
    run.assert_code(1);
    let scan = context
        .run(["scan", ".", "--helm", "none", "--format", "json"])
        .json();
    let rows: Vec<(String, String, bool)> = scan["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "yaml")
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
                r["unwritable"].is_string() && r.get("tag_source").is_none(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("app.yaml".to_owned(), "floating".to_owned(), true),
            ("chart/values.yaml".to_owned(), "floating".to_owned(), true),
        ],
        "{scan}"
    );
}

/// An overlay values file that sets only a map's tag (`values-prod.yaml`: `image: {tag: …}`)
/// decides that image: it is reported there and pinned there, with Helm and without.
#[test]
fn an_overlay_that_sets_only_the_tag_is_pinned_in_the_overlay() {
    for helm in [true, false] {
        let context = TestContext::new();
        context.write_all(
            &[
                ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\nappVersion: \"1.0\"\n"),
                ("c/values.yaml", "image:\n  repository: ghcr.io/acme/app\n  tag: \"\"\nreplicas: 1\n"),
                ("c/values-prod.yaml", "image:\n  tag: \"1.2\" # prod\nreplicas: 3\n"),
                (
                    "c/templates/pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n      \
                     image: \"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}\"\n",
                ),
            ],
            false,
        );
        let mut registry = Registry::start();
        registry.push("ghcr.io/acme/app:1.2", Flavour::Image);
        let digest = registry.pushed()["ghcr.io/acme/app:1.2"].clone();
        let args = pin_args(&["pin", ".", "--write"], &registry, helm);
        let run = context.run(&args);
        run.assert_code(0);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(
            read("c/values-prod.yaml"),
            format!("image:\n  tag: \"1.2@{digest}\" # prod\nreplicas: 3\n"),
            "helm {helm}\n{run}"
        );
        // The chart's own map takes its tag from appVersion and has no digest key: left.
        assert_eq!(
            read("c/values.yaml"),
            "image:\n  repository: ghcr.io/acme/app\n  tag: \"\"\nreplicas: 1\n"
        );
    }
}

/// The chart's own map, whose tag another values file of the chart overrides (node-exporter
/// with a `values-prod.yaml`): a digest key written in values.yaml would be joined to the
/// overlay's tag when the chart is rendered with it, so it is not written; the overlay's own
/// tag is pinned in the overlay.
#[test]
fn a_map_another_values_file_of_the_chart_overrides_is_not_written() {
    for helm in [true, false] {
        let context = TestContext::new();
        context.write_all(
            &[
                ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\nappVersion: \"1.0\"\n"),
                (
                    "c/values.yaml",
                    "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.1\"\n  digest: \"\"\n",
                ),
                ("c/values-prod.yaml", "image:\n  tag: \"1.2\"\n"),
                (
                    "c/templates/pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n      \
                     image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ with .Values.image.digest }}@{{ . }}{{ end }}\"\n",
                ),
            ],
            false,
        );
        let mut registry = Registry::start();
        registry.push("ghcr.io/acme/app:1.1", Flavour::Image);
        registry.push("ghcr.io/acme/app:1.2", Flavour::Image);
        let args = pin_args(
            &["pin", ".", "--write", "--format", "json"],
            &registry,
            helm,
        );
        let run = context.run(&args);
        run.assert_code(0);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(
            read("c/values.yaml"),
            "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.1\"\n  digest: \"\"\n",
            "helm {helm}\n{run}"
        );
        let left = unsupported(&run.json());
        assert!(
            left.iter().any(|(path, _, reason)| path == "c/values.yaml"
                && reason.contains("`values-prod.yaml` of the same chart sets `image.tag`")),
            "helm {helm}: {left:?}"
        );
    }
}

/// Shapes where a key-name edit would break the chart, refused with and without Helm: a
/// string the template writes more after (`{{ .image }}:{{ .suffix }}`), and a tag that a
/// values string rendered with `tpl` also prints as a label.
#[test]
fn strings_with_more_after_them_and_tags_tpl_prints_are_left_alone() {
    let context = TestContext::new();
    let pod = |image: &str, labels: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n{labels}spec:\n  containers:\n    - name: a\n      \
             image: \"{image}\"\n"
        )
    };
    let chart = |name: &str| format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n");
    let es_values = "image: \"ghcr.io/acme/app\"\nsuffix: \"1.2\"\n";
    let tpl_values = "image: {repository: ghcr.io/acme/app, tag: \"1.2\"}\nextraLabels: |\n  version: \"{{ .Values.image.tag }}\"\n";
    context.write_all(
        &[
            ("es/Chart.yaml", &chart("es")),
            ("es/values.yaml", es_values),
            (
                "es/templates/pod.yaml",
                &pod("{{ .Values.image }}:{{ .Values.suffix }}", ""),
            ),
            ("tpl/Chart.yaml", &chart("tpl")),
            ("tpl/values.yaml", tpl_values),
            (
                "tpl/templates/pod.yaml",
                &pod(
                    "{{ .Values.image.repository }}:{{ .Values.image.tag }}",
                    "  labels:\n    {{- tpl .Values.extraLabels . | nindent 4 }}\n",
                ),
            ),
        ],
        false,
    );
    let mut registry = Registry::start();
    registry.push("ghcr.io/acme/app:1.2", Flavour::Image);
    registry.push("ghcr.io/acme/app:latest", Flavour::Image);
    for helm in [true, false] {
        let args = pin_args(
            &["pin", ".", "--write", "--format", "json"],
            &registry,
            helm,
        );
        let run = context.run(&args);
        run.assert_code(0);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(read("es/values.yaml"), es_values, "helm {helm}\n{run}");
        assert_eq!(read("tpl/values.yaml"), tpl_values, "helm {helm}\n{run}");
        assert_eq!(
            run.json()["unsupported"].as_array().unwrap().len(),
            2,
            "helm {helm}\n{run}"
        );
    }
}

/// Without Helm: a string read whole by its image line is its value, pinned; a map that text
/// rendered with `tpl` also reads is still reported (floating, with why), and not written.
#[test]
fn without_helm_a_string_read_whole_is_pinned_and_a_map_tpl_reads_is_reported() {
    let context = TestContext::new();
    let values = "image: ghcr.io/acme/app:1.2\nside: {repository: ghcr.io/acme/side, tag: \"1.2\"}\nextra: \"{{ .Values.side.tag }}\"\n";
    context.write_all(
        &[
            ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n"),
            ("c/values.yaml", values),
            (
                "c/templates/pod.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  annotations:\n    extra: {{ tpl .Values.extra . | quote }}\nspec:\n  containers:\n    - name: a\n      image: {{ .Values.image }}\n    - name: b\n      image: \"{{ .Values.side.repository }}:{{ .Values.side.tag }}\"\n",
            ),
        ],
        false,
    );
    let mut registry = Registry::start();
    registry.push("ghcr.io/acme/app:1.2", Flavour::Image);
    registry.push("ghcr.io/acme/side:1.2", Flavour::Image);
    let digest = registry.pushed()["ghcr.io/acme/app:1.2"].clone();
    let run = context.run(pin_args(
        &["pin", ".", "--write", "--format", "json"],
        &registry,
        false,
    ));
    run.assert_code(0);
    let got = std::fs::read_to_string(context.path("c/values.yaml")).unwrap();
    assert_eq!(
        got,
        values.replace("app:1.2\n", &format!("app:1.2@{digest}\n")),
        "{run}"
    );
    let doc = run.json();
    let reason = doc["unsupported"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("renders text with `tpl`"), "{run}");
    let check = context.run(["check", ".", "--helm", "none"]);
    check.assert_code(1);
    assert!(
        check.stdout.contains("ghcr.io/acme/side:1.2")
            || check.stderr.contains("ghcr.io/acme/side:1.2"),
        "{check}"
    );
}

/// A values string or repository the template renders with `tpl` (charts do, so a value may
/// name `{{ .Values.global.registry }}`): when the value holds no action, `tpl` renders it as
/// it is, so it is pinned with Helm and without, and Helm renders the pinned reference.
#[test]
fn a_value_rendered_with_tpl_and_holding_no_action_is_pinned_as_helm_renders_it() {
    let pod = |image: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n      \
             image: {image}\n"
        )
    };
    let whole = "image: ghcr.io/acme/app:1.2\n";
    let split = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    for helm in [false, true] {
        let context = TestContext::new();
        context.write_all(
            &[
                (
                    "whole/Chart.yaml",
                    "apiVersion: v2\nname: whole\nversion: 1.0.0\n",
                ),
                ("whole/values.yaml", whole),
                (
                    "whole/templates/pod.yaml",
                    &pod("{{ tpl .Values.image . | quote }}"),
                ),
                (
                    "split/Chart.yaml",
                    "apiVersion: v2\nname: split\nversion: 1.0.0\n",
                ),
                ("split/values.yaml", split),
                (
                    "split/templates/pod.yaml",
                    &pod("\"{{ tpl .Values.image.repository $ }}:{{ .Values.image.tag }}\""),
                ),
            ],
            false,
        );
        let (run, digest) = pin_app(&context, helm);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(
            read("whole/values.yaml"),
            whole.replace("1.2\n", &format!("1.2@{digest}\n")),
            "helm {helm}\n{run}"
        );
        assert_eq!(
            read("split/values.yaml"),
            split.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
            "helm {helm}\n{run}"
        );
        for chart in ["whole", "split"] {
            let rendered = render(&context.path(chart));
            assert!(
                rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
                "helm {helm}, {chart}: {rendered}"
            );
        }
    }
}

/// `if` blocks over lines whose condition reads the image map (a digest branch and a tag
/// branch; a condition on the tag being set; the map's own `enabled` flag, off, around the
/// whole file, podinfo's `redis:`): without Helm each line is evaluated inside its branch
/// (with the map's own flag on, as with Helm), so the map is pinned as Helm renders it; a
/// condition the edit would flip (`eq` on the tag) is refused, with Helm and without.
#[test]
fn if_blocks_over_lines_on_the_image_map_are_pinned_as_helm_renders_them() {
    let pod = |containers: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n{containers}"
        )
    };
    let digest_branch = pod(
        "      {{- if .Values.image.digest }}\n      image: \"{{ .Values.image.repository }}@{{ .Values.image.digest }}\"\n      {{- else }}\n      image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n      {{- end }}\n",
    );
    let tag_set = pod(
        "      {{- if .Values.image.tag }}\n      image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n      {{- else }}\n      image: \"{{ .Values.image.repository }}:{{ .Chart.AppVersion }}\"\n      {{- end }}\n",
    );
    let flips = pod(
        "      image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n      {{- if eq .Values.image.tag \"1.2\" }}\n      imagePullPolicy: Always\n      {{- end }}\n",
    );
    let digest_values = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n  digest: \"\"\n";
    let values = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    let flagged_values =
        "redis:\n  enabled: false\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    let flagged = format!(
        "{{{{- if .Values.redis.enabled }}}}\n{}{{{{- end }}}}\n",
        pod("      image: \"{{ .Values.redis.repository }}:{{ .Values.redis.tag }}\"\n")
    );
    let chart =
        |name: &str| format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\nappVersion: \"9.9\"\n");
    for helm in [false, true] {
        let context = TestContext::new();
        context.write_all(
            &[
                ("digest/Chart.yaml", &chart("digest")),
                ("digest/values.yaml", digest_values),
                ("digest/templates/pod.yaml", &digest_branch),
                ("tag/Chart.yaml", &chart("tag")),
                ("tag/values.yaml", values),
                ("tag/templates/pod.yaml", &tag_set),
                ("flips/Chart.yaml", &chart("flips")),
                ("flips/values.yaml", values),
                ("flips/templates/pod.yaml", &flips),
                ("flagged/Chart.yaml", &chart("flagged")),
                ("flagged/values.yaml", flagged_values),
                ("flagged/templates/pod.yaml", &flagged),
            ],
            false,
        );
        let (run, digest) = pin_app(&context, helm);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(
            read("digest/values.yaml"),
            digest_values.replace("digest: \"\"", &format!("digest: \"{digest}\"")),
            "helm {helm}\n{run}"
        );
        assert_eq!(
            read("tag/values.yaml"),
            values.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
            "helm {helm}\n{run}"
        );
        assert_eq!(read("flips/values.yaml"), values, "helm {helm}\n{run}");
        assert_eq!(
            read("flagged/values.yaml"),
            flagged_values.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
            "helm {helm}\n{run}"
        );
        let refused = unsupported(&run.json());
        assert!(
            matches!(&refused[..], [(path, 2, _)] if path == "flips/values.yaml"),
            "helm {helm}: {refused:?}\n{run}"
        );
        for (chart, image) in [
            ("digest", format!("ghcr.io/acme/app@{digest}")),
            ("tag", format!("ghcr.io/acme/app:1.2@{digest}")),
        ] {
            let rendered = render(&context.path(chart));
            assert!(
                rendered.contains(&format!("image: \"{image}\"")),
                "helm {helm}, {chart}: {rendered}"
            );
        }
    }
}

/// A helper that takes its map and a default tag in a `tuple` and reads them with `index`
/// (the shape cert-manager's charts share): pinned with Helm and without, where the values set
/// the tag; where they leave it to `appVersion`, reported both ways.
#[test]
fn a_map_passed_in_a_tuple_is_pinned_as_helm_renders_it() {
    let helper = "{{- define \"img\" -}}\n\
        {{- $fallback := index . 1 -}}\n\
        {{- with index . 0 -}}\n\
        {{- if .registry }}{{ .registry }}/{{ end }}{{ .repository -}}\n\
        {{- if .digest }}@{{ .digest }}{{ else }}:{{ .tag | default $fallback }}{{ end -}}\n\
        {{- end -}}\n\
        {{- end -}}\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n      \
               image: \"{{ template \"img\" (tuple .Values.image $.Chart.AppVersion) }}\"\n";
    let tagged = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    let untagged = "image:\n  repository: ghcr.io/acme/app\n";
    let chart =
        |name: &str| format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\nappVersion: \"1.2\"\n");
    for helm in [false, true] {
        let context = TestContext::new();
        context.write_all(
            &[
                ("tagged/Chart.yaml", &chart("tagged")),
                ("tagged/values.yaml", tagged),
                ("tagged/templates/_helpers.tpl", helper),
                ("tagged/templates/pod.yaml", pod),
                ("untagged/Chart.yaml", &chart("untagged")),
                ("untagged/values.yaml", untagged),
                ("untagged/templates/_helpers.tpl", helper),
                ("untagged/templates/pod.yaml", pod),
            ],
            false,
        );
        let (run, digest) = pin_app(&context, helm);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(
            read("tagged/values.yaml"),
            tagged.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
            "helm {helm}\n{run}"
        );
        assert_eq!(read("untagged/values.yaml"), untagged, "helm {helm}\n{run}");
        let refused = unsupported(&run.json());
        assert!(
            matches!(&refused[..], [(path, 2, reason)] if path == "untagged/values.yaml" && reason.contains("appVersion")),
            "helm {helm}: {refused:?}\n{run}"
        );
        let rendered = render(&context.path("tagged"));
        assert!(
            rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
            "helm {helm}: {rendered}"
        );
    }
}

/// A helper that checks its tag's type (`typeIs`, kyverno's guard), requires its repository
/// (`required`) and rewrites it (`replace`, `hasPrefix`, `contains`, `join`): evaluated without
/// Helm as Helm renders it, so the tag is pinned both ways and Helm renders the pinned
/// reference.
#[test]
fn a_helper_with_string_tests_is_pinned_as_helm_renders_it() {
    let helper = "{{- define \"img\" -}}\n\
        {{- $tag := .Values.image.tag -}}\n\
        {{- if not (typeIs \"string\" $tag) }}{{ fail \"the tag must be a string\" }}{{ end -}}\n\
        {{- $repo := replace \"docker.io/\" \"\" (required \"a repository\" .Values.image.repository) -}}\n\
        {{- if and (hasPrefix \"ghcr.io/\" $repo) (contains \"acme\" $repo) }}{{ $repo }}{{ else }}docker.io/{{ $repo }}{{ end }}:{{ join \"\" (list $tag) }}\n\
        {{- end -}}\n";
    let values = "image:\n  repository: docker.io/ghcr.io/acme/app\n  tag: \"1.2\"\n";
    for helm in [false, true] {
        let context = TestContext::new();
        context.write_all(
            &[
                ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n"),
                ("c/values.yaml", values),
                ("c/templates/_helpers.tpl", helper),
                (
                    "c/templates/pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n      image: {{ include \"img\" . | quote }}\n",
                ),
            ],
            false,
        );
        let (run, digest) = pin_app(&context, helm);
        let got = std::fs::read_to_string(context.path("c/values.yaml")).unwrap();
        assert_eq!(
            got,
            values.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
            "helm {helm}\n{run}"
        );
        let rendered = render(&context.path("c"));
        assert!(
            rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
            "helm {helm}: {rendered}"
        );
    }
}

/// An image line inside `range` that reads only from the root (`$.Values.image…`, or a helper
/// included with `$`): rendered once per round, the same each time, so it is pinned without
/// Helm as with Helm, and Helm renders the pinned reference in every round. Over an empty list
/// Helm renders nothing, and nothing is written; tagpin's own reading evaluates the line
/// whatever the list holds (a list empty by default is one a user fills in), and pins the
/// maps, which are only images.
#[test]
fn an_image_line_inside_range_that_reads_the_root_is_pinned_as_helm_renders_it() {
    let template = "{{- range $i, $w := .Values.workers }}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  \
                    name: {{ $w.name }}\nspec:\n  containers:\n    - name: w\n      \
                    image: \"{{ $.Values.image.repository }}:{{ $.Values.image.tag }}\"\n    - name: side\n      \
                    image: {{ include \"side\" $ | quote }}\n{{- end }}\n";
    let helper =
        "{{- define \"side\" -}}{{ .Values.side.repository }}:{{ .Values.side.tag }}{{- end -}}\n";
    let maps = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\nside:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    let values = format!("{maps}workers:\n  - name: a\n  - name: b\n");
    let empty = format!("{maps}workers: []\n");
    for helm in [false, true] {
        let context = TestContext::new();
        let mut files = Vec::new();
        for (name, values) in [("two", &values), ("none", &empty)] {
            files.push((
                format!("{name}/Chart.yaml"),
                format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n"),
            ));
            files.push((format!("{name}/values.yaml"), values.clone()));
            files.push((format!("{name}/templates/pods.yaml"), template.to_owned()));
            files.push((format!("{name}/templates/_helpers.tpl"), helper.to_owned()));
        }
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        context.write_all(&files, false);
        let (run, digest) = pin_app(&context, helm);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(
            read("two/values.yaml"),
            values.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
            "helm {helm}\n{run}"
        );
        let none = if helm {
            empty.clone()
        } else {
            empty.replace("\"1.2\"", &format!("\"1.2@{digest}\""))
        };
        assert_eq!(read("none/values.yaml"), none, "helm {helm}\n{run}");
        let rendered = render(&context.path("two"));
        assert_eq!(
            rendered
                .matches(&format!("ghcr.io/acme/app:1.2@{digest}\""))
                .count(),
            4,
            "helm {helm}: {rendered}"
        );
    }
}

/// `scan . --format json` of the tree of `context`, with Helm or without: its JSON.
fn scan_json(context: &TestContext, helm: bool) -> serde_json::Value {
    let mut args = vec![
        "scan".to_owned(),
        ".".to_owned(),
        "--format".to_owned(),
        "json".to_owned(),
    ];
    if helm {
        args.extend(crate::helm::args());
    } else {
        args.extend(["--helm".to_owned(), "none".to_owned()]);
    }
    context.run(&args).json()
}

/// `pin . --write` of the tree of `context`, against a registry that holds only
/// `ghcr.io/acme/app:1.2`, with Helm or without: the run (which succeeded) and that digest.
fn pin_app(context: &TestContext, helm: bool) -> (crate::context::Run, String) {
    let mut registry = Registry::start();
    registry.push("ghcr.io/acme/app:1.2", Flavour::Image);
    let digest = registry.pushed()["ghcr.io/acme/app:1.2"].clone();
    let run = context.run(pin_args(
        &["pin", ".", "--write", "--format", "json"],
        &registry,
        helm,
    ));
    run.assert_code(0);
    (run, digest)
}

/// A library chart that `Chart.yaml` names by `file://` but `charts/` does not hold (no
/// `helm dependency build`): its helper is read from where the path points, with Helm (on a
/// staged copy) and without, so the values are pinned both ways. Beside it, a dependency that
/// is neither vendored nor in the repository leaves its chart's map reported.
#[test]
fn a_file_dependency_left_unbuilt_is_read_from_the_repository() {
    for helm in [true, false] {
        let context = TestContext::new();
        std::fs::create_dir(context.path(".git")).unwrap();
        let values = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
        let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n      image: {{ include \"lib.image\" . }}\n";
        let helper = "{{- define \"lib.image\" -}}\n{{ printf \"%s:%s\" .Values.image.repository .Values.image.tag | quote }}\n{{- end -}}\n";
        context.write_all(
            &[
                (
                    "charts/app/Chart.yaml",
                    "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - name: lib\n    version: 0.x\n    repository: file://../../libs/lib\n",
                ),
                ("charts/app/values.yaml", values),
                ("charts/app/templates/pod.yaml", pod),
                (
                    "libs/lib/Chart.yaml",
                    "apiVersion: v2\nname: lib\nversion: 0.3.0\ntype: library\n",
                ),
                ("libs/lib/templates/_image.tpl", helper),
                (
                    "charts/other/Chart.yaml",
                    "apiVersion: v2\nname: other\nversion: 1.0.0\ndependencies:\n  - name: gone\n    version: 1.x\n    repository: oci://charts.example\n",
                ),
                ("charts/other/values.yaml", values),
                (
                    "charts/other/templates/pod.yaml",
                    &pod.replace("lib.image", "gone.image"),
                ),
            ],
            false,
        );
        let (run, digest) = pin_app(&context, helm);
        let got = std::fs::read_to_string(context.path("charts/app/values.yaml")).unwrap();
        assert!(
            got.contains(&format!("tag: \"1.2@{digest}\"")),
            "helm: {helm}\n{got}\n{run}"
        );
        assert!(
            !context.path("charts/app/charts").exists(),
            "the chart is staged elsewhere"
        );
        let doc = run.json();
        let left = unsupported(&doc);
        assert_eq!(left.len(), 1, "helm: {helm}\n{run}");
        assert_eq!(left[0].0, "charts/other/values.yaml", "{run}");
        assert_eq!(
            std::fs::read_to_string(context.path("charts/other/values.yaml")).unwrap(),
            values
        );
    }
}

/// Without Helm, a map passed in a `dict` to a helper (the shape of Bitnami's
/// `common.images.image`: registry default from `(.global).imageRegistry`, a digest that
/// replaces the tag) is read through the helper, pinned in the form it renders, and real Helm
/// renders the pinned reference. A map read through a root passed on (`.context.Values`) is
/// reported, not written.
#[test]
fn without_helm_a_map_passed_in_a_dict_to_a_helper_is_pinned_as_helm_renders_it() {
    let context = TestContext::new();
    let values = "global:\n  imageRegistry: \"\"\nimage:\n  registry: ghcr.io\n  repository: acme/app\n  tag: \"1.2\"\n  digest: \"\"\nsideImage:\n  repository: ghcr.io/acme/side\n  tag: \"1.2\"\n";
    let helpers = "{{- define \"c.image\" -}}\n\
        {{- $registry := default .imageRoot.registry ((.global).imageRegistry) -}}\n\
        {{- $separator := \":\" -}}\n\
        {{- $termination := .imageRoot.tag | toString -}}\n\
        {{- if .imageRoot.digest }}\n\
        {{- $separator = \"@\" -}}\n\
        {{- $termination = .imageRoot.digest | toString -}}\n\
        {{- end -}}\n\
        {{- printf \"%s/%s%s%s\" $registry .imageRoot.repository $separator $termination -}}\n\
        {{- end -}}\n\
        {{- define \"c.side\" -}}{{ .context.Values.sideImage.repository }}:{{ .context.Values.sideImage.tag }}{{- end -}}\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n      image: {{ include \"c.image\" (dict \"imageRoot\" .Values.image \"global\" .Values.global) }}\n    - name: b\n      image: {{ include \"c.side\" (dict \"context\" $) }}\n";
    context.write_all(
        &[
            ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n"),
            ("c/values.yaml", values),
            ("c/templates/_helpers.tpl", helpers),
            ("c/templates/pod.yaml", pod),
        ],
        false,
    );
    let (run, digest) = pin_app(&context, false);
    let got = std::fs::read_to_string(context.path("c/values.yaml")).unwrap();
    assert_eq!(
        got,
        values.replace("digest: \"\"", &format!("digest: \"{digest}\"")),
        "{run}"
    );
    let left = unsupported(&run.json());
    assert_eq!(left.len(), 1, "{run}");
    assert!(
        left[0].2.contains("read through a root passed on"),
        "{left:?}"
    );
    let rendered = render(&context.path("c"));
    assert!(
        rendered.contains(&format!("image: ghcr.io/acme/app@{digest}\n")),
        "{rendered}"
    );
}

/// Without Helm, a tag read into a variable at the top of a template (`{{- $tag := … }}`) is
/// followed to every later line that uses it: where the variable only builds the image, the
/// map is pinned as Helm renders it; where it also feeds a label, the map is reported.
#[test]
fn without_helm_a_tag_read_into_a_variable_is_followed_to_its_uses() {
    let context = TestContext::new();
    let values = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    let deployment = |label: &str| {
        format!(
            "{{{{- $tag := .Values.image.tag | default .Chart.AppVersion }}}}\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels:\n    app: x{label}\nspec:\n  containers:\n    - name: a\n      image: \"{{{{ .Values.image.repository }}}}:{{{{ $tag }}}}\"\n"
        )
    };
    let chart = "apiVersion: v2\nname: c\nversion: 1.0.0\nappVersion: 1.0.0\n";
    context.write_all(
        &[
            ("only-image/Chart.yaml", chart),
            ("only-image/values.yaml", values),
            ("only-image/templates/pod.yaml", &deployment("")),
            ("labelled/Chart.yaml", chart),
            ("labelled/values.yaml", values),
            (
                "labelled/templates/pod.yaml",
                &deployment("\n    version: {{ $tag | quote }}"),
            ),
        ],
        false,
    );
    let (run, digest) = pin_app(&context, false);
    let pinned = std::fs::read_to_string(context.path("only-image/values.yaml")).unwrap();
    assert_eq!(
        pinned,
        values.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
        "{run}"
    );
    assert!(
        render(&context.path("only-image"))
            .contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"\n")),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(context.path("labelled/values.yaml")).unwrap(),
        values
    );
    let left = unsupported(&run.json());
    assert_eq!(left.len(), 1, "{run}");
    assert!(left[0].2.contains("the tag also feeds"), "{left:?}");
}

/// A dependency that is neither vendored nor in the repository is left out of the chart Helm
/// renders (Helm refuses a chart that lacks one, even a disabled one): the chart's own maps
/// are pinned and proven, and a map under `global`, which the missing chart sees too, is
/// reported, as is a map under a missing dependency's alias, though the chart's own template
/// renders it as an image too (artifact-hub's `postgresql.image`): the dependency may print
/// its tag in a label. Without Helm, both are reported too.
#[test]
fn a_missing_dependency_is_left_out_and_global_maps_are_reported() {
    let values = "gone:\n  enabled: false\nimage:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\nglobal:\n  image:\n    repository: ghcr.io/acme/side\n    tag: \"1.2\"\ndb:\n  image:\n    repository: ghcr.io/acme/db\n    tag: \"1.2\"\n";
    for helm in [true, false] {
        let context = TestContext::new();
        std::fs::create_dir(context.path(".git")).unwrap();
        context.write_all(
            &[
                (
                    "c/Chart.yaml",
                    "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n  - name: gone\n    version: 1.x\n    repository: https://charts.example\n    condition: gone.enabled\n  - name: postgresql\n    alias: db\n    version: 1.x\n    repository: https://charts.example\n",
                ),
                ("c/values.yaml", values),
                (
                    "c/templates/pod.yaml",
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n    - name: a\n      image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n    - name: b\n      image: \"{{ .Values.global.image.repository }}:{{ .Values.global.image.tag }}\"\n    - name: c\n      image: \"{{ .Values.db.image.repository }}:{{ .Values.db.image.tag }}\"\n",
                ),
            ],
            false,
        );
        let (run, digest) = pin_app(&context, helm);
        assert_eq!(
            std::fs::read_to_string(context.path("c/values.yaml")).unwrap(),
            values.replacen("tag: \"1.2\"", &format!("tag: \"1.2@{digest}\""), 1),
            "helm {helm}\n{run}"
        );
        let left = unsupported(&run.json());
        assert_eq!(left.len(), 2, "helm {helm}\n{run}");
        let db = &left[1].2;
        if helm {
            assert!(
                left[0]
                    .2
                    .contains("the chart depends on `gone`, `postgresql`")
                    && left[0].2.contains("they see `global` too"),
                "{left:?}"
            );
            assert!(
                db.contains(
                    "`db` holds the values of a dependency of the chart that is in neither"
                ),
                "{left:?}"
            );
        } else {
            assert!(
                left[0]
                    .2
                    .contains("the values under `global` feed a subchart"),
                "{left:?}"
            );
            assert!(
                db.contains("the values under `db` feed a subchart"),
                "{left:?}"
            );
        }
    }
}

/// Pins the chart `app/` made of `helpers`, one template `pod` and `values`, with Helm or
/// without, and checks that every edit was written: the test's directory, the run and the
/// digest.
fn pin_helper_chart(
    helpers: &str,
    pod: &str,
    values: &str,
    helm: bool,
) -> (TestContext, crate::context::Run, String) {
    let context = TestContext::new();
    write_helper_chart(&context, "app", helpers, pod, values);
    let (run, digest) = pin_app(&context, helm);
    assert!(unsupported(&run.json()).is_empty(), "helm {helm}\n{run}");
    (context, run, digest)
}

/// Pins the chart of `helpers`, `pod` and `values` with Helm and without; each time the tag
/// `"1.2"` of `values` gets the digest and Helm renders the pinned chart with `image` (its
/// `DIGEST` replaced). The renderings, for what a test checks besides.
fn assert_pinned_as_helm_renders(
    helpers: &str,
    pod: &str,
    values: &str,
    image: &str,
) -> Vec<String> {
    let mut renderings = Vec::new();
    for helm in [false, true] {
        let (context, run, digest) = pin_helper_chart(helpers, pod, values, helm);
        assert_eq!(
            std::fs::read_to_string(context.path("app/values.yaml")).unwrap(),
            values.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
            "helm {helm}\n{run}"
        );
        let rendered = render(&context.path("app"));
        assert!(
            rendered.contains(&image.replace("DIGEST", &digest)),
            "helm {helm}: {rendered}"
        );
        renderings.push(rendered);
    }
    renderings
}

/// Writes the chart `dir` (named `app`, `appVersion` 9.9) of `values`, the named templates
/// `helpers` and the template `pod`.
fn write_helper_chart(context: &TestContext, dir: &str, helpers: &str, pod: &str, values: &str) {
    let at = |file: &str| format!("{dir}/{file}");
    context.write_all(
        &[
            (
                &at("Chart.yaml"),
                "apiVersion: v2\nname: app\nversion: 1.0.0\nappVersion: \"9.9\"\n",
            ),
            (&at("values.yaml"), values),
            (&at("templates/_helpers.tpl"), helpers),
            (&at("templates/pod.yaml"), pod),
        ],
        false,
    );
}

/// The shapes of real charts' pod helpers, read without Helm as Helm renders them: a name cut
/// by `trunc`, a pod spec included with `nindent`, pull secrets joined by `concat`, a digest
/// told by `substr` (flux2's image helper), a values key with a dot read by `index`, and the
/// keys of the image's parent map asked by `hasKey` (ingress-nginx's disruption budget). The
/// tag is pinned with Helm and without, and Helm renders the pinned reference.
#[test]
fn pod_helpers_with_string_and_list_functions_are_pinned_as_helm_renders_them() {
    let helpers = "{{- define \"app.fullname\" -}}\n\
        {{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix \"-\" -}}\n\
        {{- end -}}\n\
        {{- define \"app.image\" -}}\n\
        {{- if eq (substr 0 7 .tag) \"sha256:\" -}}\n\
        {{- printf \"%s@%s\" .repository .tag -}}\n\
        {{- else -}}\n\
        {{- printf \"%s:%s\" .repository .tag -}}\n\
        {{- end -}}\n\
        {{- end -}}\n\
        {{- define \"app.pod\" -}}\n\
        {{- range (concat .Values.global.imagePullSecrets .Values.imagePullSecrets) }}\n\
        imagePullSecrets: {{ . }}\n\
        {{- end }}\n\
        containers:\n\
        \x20 - name: {{ include \"app.fullname\" . }}\n\
        \x20   image: {{ include \"app.image\" .Values.controller.image | quote }}\n\
        {{- end -}}\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ include \"app.fullname\" . }}\n  \
               annotations:\n    data: {{ (index .Values \"app.ini\").data | quote }}\n\
               {{- if hasKey .Values.controller \"maxUnavailable\" }}\n    budget: max\n{{- end }}\n\
               spec:\n  {{- include \"app.pod\" . | nindent 2 }}\n";
    let values = "global:\n  imagePullSecrets: []\nimagePullSecrets: []\napp.ini:\n  data: d\n\
                  controller:\n  image:\n    repository: ghcr.io/acme/app\n    tag: \"1.2\"\n";
    assert_pinned_as_helm_renders(
        helpers,
        pod,
        values,
        "image: \"ghcr.io/acme/app:1.2@DIGEST\"",
    );
}

/// grafana's shapes, read without Helm as Helm renders them: a version label cut from the tag
/// by `mustRegexReplaceAllLiteral`, resources printed by `toYaml`, a variable set to `false`, a
/// condition asked with `has`, and the digest written bare into `sha` (the template adds
/// `@sha256:`). Pinned with Helm and without, and Helm renders the pinned reference.
#[test]
fn grafana_s_pod_helper_shapes_are_pinned_as_helm_renders_them() {
    let helpers = "{{- define \"app.version\" -}}\n\
        {{- mustRegexReplaceAllLiteral \"@sha.*\" .Values.image.tag \"\" | default .Chart.AppVersion | trunc 63 | quote -}}\n\
        {{- end -}}\n\
        {{- define \"app.pod\" -}}\n\
        {{- $found := false -}}\n\
        containers:\n\
        \x20 - name: app\n\
        \x20   image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ if .Values.image.sha }}@sha256:{{ .Values.image.sha }}{{ end }}\"\n\
        \x20   resources:\n\
        \x20     {{- toYaml .Values.resources | nindent 6 }}\n\
        {{- if and (not $found) (has .Values.kind (list \"StatefulSet\" \"Deployment\")) }}\n\
        \x20   kind: {{ .Values.kind }}\n\
        {{- end }}\n\
        {{- end -}}\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n  labels:\n    \
               app.kubernetes.io/version: {{ include \"app.version\" . }}\n\
               spec:\n  {{- include \"app.pod\" . | nindent 2 }}\n";
    let values = "kind: Deployment\nresources:\n  limits: {cpu: 100m, memory: 128Mi}\n  requests: {}\n\
                  image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n  sha: \"\"\n";
    for helm in [false, true] {
        let (context, run, digest) = pin_helper_chart(helpers, pod, values, helm);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        let hex = digest.strip_prefix("sha256:").unwrap();
        assert_eq!(
            read("app/values.yaml"),
            values.replace("sha: \"\"", &format!("sha: \"{hex}\"")),
            "helm {helm}\n{run}"
        );
        let rendered = render(&context.path("app"));
        assert!(
            rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
            "helm {helm}: {rendered}"
        );
    }
}

/// A pod helper that adds an init container only when another feature is on too (grafana's
/// `initChownData` needs `persistence.enabled`): with every `enabled` flag of the values on,
/// the map shows, and it is pinned with Helm and without, proven in that setting.
#[test]
fn a_container_another_feature_gates_is_pinned_with_every_flag_on() {
    let helpers = "{{- define \"app.pod\" -}}\n\
        containers:\n\
        \x20 - name: app\n\
        \x20   image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n\
        {{- if and .Values.persistence.enabled .Values.initChown.enabled }}\n\
        initContainers:\n\
        \x20 - name: chown\n\
        \x20   image: \"{{ .Values.initChown.image.repository }}:{{ .Values.initChown.image.tag }}\"\n\
        {{- end }}\n\
        {{- end -}}\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  {{- include \"app.pod\" . | nindent 2 }}\n";
    let values = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\npersistence:\n  enabled: false\n\
                  initChown:\n  enabled: false\n  image:\n    repository: ghcr.io/acme/app\n    tag: \"1.2\"\n";
    for helm in [false, true] {
        let (context, run, digest) = pin_helper_chart(helpers, pod, values, helm);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(
            read("app/values.yaml"),
            values.replace("\"1.2\"", &format!("\"1.2@{digest}\"")),
            "helm {helm}\n{run}"
        );
    }
}

/// flux2's controllers: `{image, tag}` maps under keys that do not say image, each rendered by
/// a file wrapped in `{{- if .Values.ctl.create }}` that holds blocks of its own. The wrapping
/// condition reads none of the image's parts, so it does not stop the reading without Helm;
/// the tag is pinned both ways, and Helm renders the pinned reference.
#[test]
fn a_file_wrapped_in_a_condition_on_another_key_of_the_map_is_pinned() {
    let helpers = "{{- define \"template.image\" -}}\n\
        {{- if eq (substr 0 7 .tag) \"sha256:\" -}}\n\
        {{- printf \"%s@%s\" .image .tag -}}\n\
        {{- else -}}\n\
        {{- printf \"%s:%s\" .image .tag -}}\n\
        {{- end -}}\n\
        {{- end -}}\n";
    let pod = "{{- if .Values.ctl.create }}\napiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n\
               {{- with .Values.ctl.labels }}\n  labels:\n{{ toYaml . | indent 4 }}\n{{- end }}\n\
               spec:\n  containers:\n    - name: app\n      image: {{ template \"template.image\" .Values.ctl }}\n\
               {{- end }}\n";
    let values =
        "ctl:\n  create: true\n  image: ghcr.io/acme/app\n  tag: \"1.2\"\n  labels:\n    team: a\n";
    assert_pinned_as_helm_renders(helpers, pod, values, "image: ghcr.io/acme/app:1.2@DIGEST");
}

/// ingress-nginx checks its tag with `semverCompare` and `fail`s below a version. A digest
/// written into the tag (`v1.2.0@sha256:…`) is no version Helm reads: its rendering fails, and
/// the edit is refused, with Helm and without (where the check is evaluated, and a line that
/// evaluates with the original values but not with the edited ones fails the proof). With a
/// `digest` key beside the tag, the tag stays and the digest is pinned both ways.
#[test]
fn a_tag_checked_by_semver_compare_is_not_given_the_digest() {
    let helpers = "{{- define \"app.checkTag\" -}}\n\
        {{- if not (semverCompare \">=1.0.0-0\" .Values.image.tag) -}}\n\
        {{- fail \"the tag must be 1.0.0 or later\" -}}\n\
        {{- end -}}\n\
        {{- end -}}\n";
    let pod = "{{- include \"app.checkTag\" . -}}\napiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n\
               spec:\n  containers:\n    - name: app\n      image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ with .Values.image.digest }}@{{ . }}{{ end }}\"\n";
    let tagged = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    let digested = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n  digest: \"\"\n";
    for helm in [false, true] {
        let context = TestContext::new();
        write_helper_chart(&context, "tagged", helpers, pod, tagged);
        write_helper_chart(&context, "digested", helpers, pod, digested);
        let (run, digest) = pin_app(&context, helm);
        let read = |path: &str| std::fs::read_to_string(context.path(path)).unwrap();
        assert_eq!(read("tagged/values.yaml"), tagged, "helm {helm}\n{run}");
        assert_eq!(
            read("digested/values.yaml"),
            digested.replace("digest: \"\"", &format!("digest: \"{digest}\"")),
            "helm {helm}\n{run}"
        );
        let refused = unsupported(&run.json());
        assert!(
            matches!(&refused[..], [(path, 2, reason)] if path == "tagged/values.yaml" && reason.contains("semverCompare")),
            "helm {helm}: {refused:?}\n{run}"
        );
        let rendered = render(&context.path("digested"));
        assert!(
            rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
            "helm {helm}: {rendered}"
        );
    }
}

/// Two maps of one values file, one of whose tags the chart also passes in an argument
/// (Longhorn's manager, `--manager-image repo:tag`): that one is refused with its own reason,
/// and the other, which only its container reads, is still pinned. Proven together, the
/// first's failure refused both, with the first's reason.
#[test]
fn one_unprovable_map_does_not_keep_another_from_being_pinned() {
    let values = "manager:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\nui:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: manager\n      image: \"{{ .Values.manager.repository }}:{{ .Values.manager.tag }}\"\n      args: [\"--manager-image\", \"{{ .Values.manager.repository }}:{{ .Values.manager.tag }}\"]\n    - name: ui\n      image: \"{{ .Values.ui.repository }}:{{ .Values.ui.tag }}\"\n";
    for helm in [false, true] {
        let context = TestContext::new();
        write_helper_chart(&context, "app", "", pod, values);
        let (run, digest) = pin_app(&context, helm);
        let written = std::fs::read_to_string(context.path("app/values.yaml")).unwrap();
        assert_eq!(
            written,
            values.replacen(
                "ui:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"",
                &format!("ui:\n  repository: ghcr.io/acme/app\n  tag: \"1.2@{digest}\""),
                1
            ),
            "helm {helm}\n{run}"
        );
        let refused = unsupported(&run.json());
        assert!(
            matches!(&refused[..], [(path, 2, reason)] if path == "app/values.yaml" && reason.contains("args")),
            "helm {helm}: {refused:?}\n{run}"
        );
        let rendered = render(&context.path("app"));
        assert!(
            rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
            "helm {helm}: {rendered}"
        );
    }
}

/// A key whose value is null in the chart's own values (podinfo's empty `resources.limits`):
/// Helm drops it from a chart's own values but keeps it from a `--values` file, so the proof
/// renders the chart as it will be once edited, its values.yaml replaced, and the tag is
/// pinned with Helm as without it.
#[test]
fn a_null_in_the_chart_s_own_values_does_not_fail_the_proof() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: app\n\
               \x20     image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n\
               \x20     resources:\n{{ toYaml .Values.resources | indent 8 }}\n";
    let values = "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n\
                  resources:\n  limits:\n  requests:\n    cpu: 1m\n";
    let renderings =
        assert_pinned_as_helm_renders("", pod, values, "image: \"ghcr.io/acme/app:1.2@DIGEST\"");
    for rendered in renderings {
        assert!(!rendered.contains("limits"), "{rendered}");
    }
}

/// A map of a name and its tag under a key that does not say image (`{image, tag}`, as
/// grafana's testFramework and redis-ha's exporter write it): the key-name rules report it,
/// and the chart's rendering proves the edit, with Helm and without.
#[test]
fn an_image_name_with_its_tag_beside_it_is_pinned_as_helm_renders_it() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: app\n\
               \x20     image: \"{{ .Values.exporter.image }}:{{ .Values.exporter.tag }}\"\n";
    let values = "exporter:\n  image: ghcr.io/acme/app\n  tag: \"1.2\"\n";
    assert_pinned_as_helm_renders("", pod, values, "image: \"ghcr.io/acme/app:1.2@DIGEST\"");
}

/// Linkerd's `image: {name, version}`: reported as the reference its parts make, and pinned
/// in its `version`, with Helm and without.
#[test]
fn a_name_and_version_map_is_pinned_as_helm_renders_it() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: app\n\
               \x20     image: {{ .Values.image.name -}}:{{- .Values.image.version }}\n\
               \x20     imagePullPolicy: {{ .Values.image.pullPolicy }}\n";
    let values =
        "image:\n  name: \"ghcr.io/acme/app\"\n  version: \"1.2\"\n  pullPolicy: IfNotPresent\n";
    assert_pinned_as_helm_renders("", pod, values, "image: ghcr.io/acme/app:1.2@DIGEST");
}

/// A whole reference under `repository`, with no tag beside it (meshery's adapters), rendered
/// whole as the image: a string, pinned in place, with Helm and without.
#[test]
fn a_whole_reference_under_repository_is_pinned_as_helm_renders_it() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: app\n\
               \x20     image: \"{{ .Values.image.repository }}\"\n";
    let values = "image:\n  repository: ghcr.io/acme/app:1.2\n  pullPolicy: Always\n";
    for helm in [false, true] {
        let (context, run, digest) = pin_helper_chart("", pod, values, helm);
        assert_eq!(
            std::fs::read_to_string(context.path("app/values.yaml")).unwrap(),
            values.replace("app:1.2", &format!("app:1.2@{digest}")),
            "helm {helm}\n{run}"
        );
        let rendered = render(&context.path("app"));
        assert!(
            rendered.contains(&format!("image: \"ghcr.io/acme/app:1.2@{digest}\"")),
            "{rendered}"
        );
    }
}

/// Telepresence's `image: {registry, name, tag}`, read in a `with` block: reported as the
/// reference its parts make, and pinned in its `tag`, with Helm and without.
#[test]
fn a_registry_name_and_tag_map_is_pinned_as_helm_renders_it() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: app\n\
               \x20     {{- with .Values.image }}\n\
               \x20     image: \"{{ .registry }}/{{ .name }}:{{ .tag | default $.Chart.AppVersion }}\"\n\
               \x20     imagePullPolicy: {{ .pullPolicy }}\n\
               \x20     {{- end }}\n";
    let values = "image:\n  registry: ghcr.io/acme\n  name: app\n  pullPolicy: IfNotPresent\n  tag: \"1.2\"\n";
    assert_pinned_as_helm_renders("", pod, values, "image: \"ghcr.io/acme/app:1.2@DIGEST\"");
}

/// A `{registry, image, tag}` map under a key that does not say image (telepresence's
/// `hooks.curl`), in a chart whose reading without Helm cannot follow it (another template
/// reads `.Values` in a `with` block): reported with the reason, so `check` fails on it.
#[test]
fn a_registry_and_image_map_the_reading_cannot_follow_is_reported() {
    let context = TestContext::new();
    context.write_all(
        &[
            ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\nappVersion: 1.0.0\n"),
            (
                "c/values.yaml",
                "rbac:\n  only: false\nhooks:\n  curl:\n    registry: docker.io\n    image: curlimages/curl\n    tag: 8.1.1\n",
            ),
            (
                "c/templates/deployment.yaml",
                "{{- with .Values }}\n{{- if not (and .rbac .rbac.only) }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n{{- end }}\n{{- end }}\n",
            ),
            (
                "c/templates/job.yaml",
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      containers:\n        - name: curl\n          image: \"{{ .Values.hooks.curl.registry }}/{{ .Values.hooks.curl.image }}:{{ .Values.hooks.curl.tag }}\"\n",
            ),
        ],
        false,
    );
    let run = context.run(["check", ".", "--helm", "none"]);
    run.assert_code(1);
    assert!(
        run.stdout.contains(
            "c/values.yaml:6:12: floating image reference docker.io/curlimages/curl:8.1.1"
        ),
        "{run}"
    );
}

/// Elastic's charts (and the old `stable` ones) give the image as `image` and `imageTag` at the
/// values' root: reported as the reference they make, and pinned in `imageTag`, with Helm and
/// without.
#[test]
fn an_image_and_its_image_tag_at_the_values_root_are_pinned_as_helm_renders_them() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n    - name: app\n\
               \x20     image: \"{{ .Values.image }}:{{ .Values.imageTag }}\"\n\
               \x20     imagePullPolicy: \"{{ .Values.imagePullPolicy }}\"\n";
    let values = "replicas: 3\nimage: \"ghcr.io/acme/app\"\nimageTag: \"1.2\"\nimagePullPolicy: \"IfNotPresent\"\nclusterName: \"search\"\n";
    assert_pinned_as_helm_renders("", pod, values, "image: \"ghcr.io/acme/app:1.2@DIGEST\"");
}

/// A `repository` with its `tag` under a key that does not say image (podinfo's `redis`) is
/// reported where no chart can show what it makes: in a values file whose chart is not in the
/// repository, and in a `HelmRelease` for a chart from a chart repository; unwritable. So is
/// an image map in a YAML file no chart reads as its values (an overlay a deploy script gives
/// with `-f`, whose chart may print the tag in a label). A map
/// whose parts are templated is not reported, nor a pinned one (the chart may put a registry
/// before its name, where `check --online` would not find it).
#[test]
fn a_repository_and_tag_map_without_its_chart_is_reported_and_not_written() {
    let context = TestContext::new();
    context.write(
        "env/values.yaml",
        format!(
            "redis:\n  enabled: true\n  repository: public.ecr.aws/docker/library/redis\n  tag: 8.6.2\nsource:\n  repository: \"{{{{ .Values.repo }}}}\"\n  tag: v1\nkubeovn:\n  repository: kubeovn\n  tag: v1.15.10@sha256:{}\n",
            "7".repeat(64)
        ),
    );
    context.write(
        "flux/release.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: podinfo\nspec:\n  chart:\n    spec:\n      chart: podinfo\n      version: 6.x\n  values:\n    redis:\n      enabled: true\n      repository: public.ecr.aws/docker/library/redis\n      tag: 8.6.2\n",
    );
    context.write(
        "deploy/prod.yaml",
        "image:\n  repository: public.ecr.aws/docker/library/redis\n  tag: 8.6.2\n",
    );
    let scan = context
        .run(["scan", ".", "--helm", "none", "--format", "json"])
        .json();
    let redis = "public.ecr.aws/docker/library/redis:8.6.2";
    let floating = |path: &str, line| {
        (
            path.to_owned(),
            line,
            "floating".to_owned(),
            redis.to_owned(),
        )
    };
    assert_eq!(
        crate::context::summary(&scan),
        [
            floating("deploy/prod.yaml", 2),
            floating("env/values.yaml", 3),
            floating("flux/release.yaml", 13)
        ]
    );
    let unwritable = |path, line| {
        crate::context::reference(&scan, path, line)["unwritable"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        unwritable("env/values.yaml", 3)
            .contains("the chart these values are for is not in this repository"),
        "{scan}"
    );
    assert!(
        unwritable("flux/release.yaml", 13)
            .contains("chart `podinfo 6.x` is not in this repository"),
        "{scan}"
    );
    assert!(
        unwritable("deploy/prod.yaml", 2)
            .contains("no chart of this repository reads this file as its values"),
        "{scan}"
    );
}

/// A tag that a template behind another switch also writes into a label (a
/// `PersistentVolumeClaim` under `persistence.enabled: false`) is not written with Helm either:
/// Helm's renderings, with the chart's values, do not show that template, and turning the
/// switch on would put the digest into the label. With every `enabled` flag of the values on,
/// Helm shows it, whatever the template does to the tag (`$root.Values.image.tag`, which
/// tagpin's own reading does not follow); behind a switch of another name (`create`),
/// tagpin's own reading of the templates shows it. Either takes the edit back. The same tag
/// without the label is still pinned.
#[test]
fn with_helm_a_tag_a_switched_off_template_also_uses_is_not_written() {
    let labels = "{{- define \"m.labels\" -}}\napp.kubernetes.io/version: {{ .Values.image.tag | quote }}\n{{- end -}}\n";
    let root_labels = "{{- define \"m.labels\" -}}\n{{- $root := . -}}\napp.kubernetes.io/version: {{ $root.Values.image.tag | quote }}\n{{- end -}}\n";
    let every_flag =
        "(with every `enabled` flag of the values on, where the edit would change it too)";
    let other_values = "in a template Helm renders only with other values";
    // The switch, the labels helper, whether the claim has the labels, and how the reason ends.
    let cases = [
        ("enabled", labels, true, Some(every_flag)),
        ("enabled", root_labels, true, Some(every_flag)),
        ("create", labels, true, Some(other_values)),
        ("enabled", labels, false, None),
    ];
    for (switch, helpers, label, expected) in cases {
        let context = TestContext::new();
        let pvc = if label {
            format!(
                "{{{{- if .Values.persistence.{switch} }}}}\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  labels:\n    {{{{- include \"m.labels\" . | nindent 4 }}}}\n{{{{- end }}}}\n"
            )
        } else {
            format!(
                "{{{{- if .Values.persistence.{switch} }}}}\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n{{{{- end }}}}\n"
            )
        };
        let values = format!(
            "image:\n  repository: ghcr.io/acme/tempo\n  tag: \"2.5.0\"\npersistence:\n  {switch}: false\n"
        );
        context.write_all(
            &[
                ("m/Chart.yaml", "apiVersion: v2\nname: m\nversion: 1.0.0\nappVersion: \"2.5.0\"\n"),
                ("m/values.yaml", &values),
                ("m/templates/_helpers.tpl", helpers),
                (
                    "m/templates/deploy.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n",
                ),
                ("m/templates/pvc.yaml", &pvc),
            ],
            false,
        );
        let scan = scan_json(&context, true);
        let row = crate::context::reference(&scan, "m/values.yaml", 2);
        if let Some(ending) = expected {
            let reason = row["unwritable"]
                .as_str()
                .unwrap_or_else(|| panic!("{scan}"));
            assert!(
                reason.contains(
                    "the tag also feeds `app.kubernetes.io/version: \"…\"` in m/templates/pvc.yaml"
                ) && reason.contains(ending),
                "{switch}: {reason}"
            );
        } else {
            assert!(row.get("unwritable").is_none(), "{scan}");
        }
    }
}

/// A named template that writes the tag into a field only when a feature is on (an Argo
/// `Rollout` helper under `rollout.enabled: false` passing `version: {{ $.Values.image.tag }}`
/// to its analysis) is rendered once more with every `enabled` flag of the values on, with Helm
/// and without: the edit would change that field, and is not written. Without the field the
/// map is pinned.
#[test]
fn a_tag_a_named_template_uses_only_with_a_feature_on_is_not_written() {
    let helper = |version: &str| {
        format!(
            "{{{{- define \"common.rollout\" }}}}\n{{{{- if .Values.rollout.enabled }}}}\napiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: r\nspec:\n  {{{{- if .Values.rollout.analysis.enabled }}}}\n  args:\n    - name: version\n      value: {version}\n  {{{{- end }}}}\n{{{{- end }}}}\n{{{{- end }}}}\n"
        )
    };
    for (helm, uses) in [(false, true), (true, true), (false, false)] {
        let context = TestContext::new();
        let version = if uses {
            "{{ $.Values.image.tag }}"
        } else {
            "\"1\""
        };
        let helpers = helper(version);
        context.write_all(
            &[
                ("m/Chart.yaml", "apiVersion: v2\nname: m\nversion: 1.0.0\n"),
                (
                    "m/values.yaml",
                    "image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\nrollout:\n  enabled: false\n  analysis:\n    enabled: false\n",
                ),
                ("m/templates/_rollout.tpl", &helpers),
                ("m/templates/rollout.yaml", "{{- include \"common.rollout\" . }}\n"),
                (
                    "m/templates/deploy.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n",
                ),
            ],
            false,
        );
        let scan = scan_json(&context, helm);
        let row = crate::context::reference(&scan, "m/values.yaml", 2);
        if uses {
            let reason = row["unwritable"]
                .as_str()
                .unwrap_or_else(|| panic!("helm {helm}: {scan}"));
            assert!(
                reason.starts_with("the tag also feeds `value: …` in m/templates/rollout.yaml")
                    && reason.ends_with(
                        "(with every `enabled` flag of the values on, where the edit would \
                         change it too)"
                    ),
                "helm {helm}: {reason}"
            );
        } else {
            assert!(row.get("unwritable").is_none(), "helm {helm}: {scan}");
        }
    }
}

/// With Helm, a map tagpin's own reading cannot follow in a template file that none of Helm's
/// renderings show (a claim under `persistence.create: false` whose label reads
/// `$root.Values.image.tag`) is not written: no rendering says what the edit would change
/// there. Without that file the map is pinned.
#[test]
fn with_helm_a_map_read_unfollowably_in_a_file_helm_does_not_render_is_not_written() {
    for claim in [true, false] {
        let context = TestContext::new();
        let pvc = "{{- $root := . }}\n{{- if .Values.persistence.create }}\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  labels:\n    version: {{ $root.Values.image.tag | quote }}\n{{- end }}\n";
        let mut files = vec![
            ("m/Chart.yaml", "apiVersion: v2\nname: m\nversion: 1.0.0\n"),
            (
                "m/values.yaml",
                "image:\n  repository: ghcr.io/acme/tempo\n  tag: \"2.5.0\"\npersistence:\n  create: false\n",
            ),
            (
                "m/templates/deploy.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n",
            ),
        ];
        if claim {
            files.push(("m/templates/pvc.yaml", pvc));
        }
        context.write_all(&files, false);
        let scan = scan_json(&context, true);
        let row = crate::context::reference(&scan, "m/values.yaml", 2);
        if claim {
            let reason = row["unwritable"]
                .as_str()
                .unwrap_or_else(|| panic!("{scan}"));
            assert!(
                reason.starts_with(
                    "not proven: Helm renders m/templates/pvc.yaml only with other values, and \
                     tagpin's own reading of it does not follow the map"
                ),
                "{reason}"
            );
        } else {
            assert!(row.get("unwritable").is_none(), "{scan}");
        }
    }
}

/// A `repository` with its `tag` under a key that does not say image, read by a template that
/// tagpin's own reading cannot follow (another includes it whole by its path, as tempo's
/// recreate job does), is still reported, unwritable with the reason: `check` fails on it
/// instead of passing over an image it could not read. One the reading followed into no image
/// is not reported.
#[test]
fn without_helm_a_repository_and_tag_map_the_reading_cannot_follow_is_reported() {
    let context = TestContext::new();
    context.write_all(
        &[
            ("m/Chart.yaml", "apiVersion: v2\nname: m\nversion: 1.0.0\n"),
            (
                "m/values.yaml",
                "tempo:\n  repository: grafana/tempo\n  tag: \"2.5.0\"\nbackup:\n  repository: s3://bucket/x\n  tag: daily\nrecreate: false\n",
            ),
            (
                "m/templates/sts.yaml",
                "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: {{ .Values.tempo.repository }}:{{ .Values.tempo.tag }}\n",
            ),
            (
                "m/templates/job.yaml",
                "{{- if .Values.recreate -}}\n{{- $s := include (print $.Template.BasePath \"/sts.yaml\") . | fromYaml -}}\n{{- end -}}\n",
            ),
            (
                "m/templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  where: {{ .Values.backup.repository }}/{{ .Values.backup.tag }}\n",
            ),
        ],
        false,
    );
    let scan = context
        .run(["scan", ".", "--helm", "none", "--format", "json"])
        .json();
    let values: Vec<(u64, &str, &str)> = scan["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "m/values.yaml")
        .map(|r| {
            (
                r["line"].as_u64().unwrap(),
                r["text"].as_str().unwrap(),
                r["unwritable"].as_str().unwrap_or("WRITABLE"),
            )
        })
        .collect();
    assert_eq!(values.len(), 1, "{scan}");
    assert_eq!((values[0].0, values[0].1), (2, "grafana/tempo:2.5.0"));
    assert!(values[0].2.contains("includes that file whole"), "{scan}");
    context.run(["check", ".", "--helm", "none"]).assert_code(1);
}

/// The `JupyterHub` charts write their images as `{name, tag}` (`hub.image.name`): the map is
/// found under its image key and pinned as Helm renders it, with Helm and without.
#[test]
fn a_name_and_tag_map_is_pinned_as_helm_renders_it() {
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hub\nspec:\n  containers:\n    - name: hub\n      \
               image: {{ .Values.hub.image.name }}:{{ .Values.hub.image.tag }}\n";
    let values = "hub:\n  image:\n    name: ghcr.io/acme/app\n    tag: \"1.2\"\n    pullPolicy: IfNotPresent\n";
    assert_pinned_as_helm_renders("", pod, values, "image: ghcr.io/acme/app:1.2@DIGEST");
}

/// A tag the chart follows with more once a key beside it is set (`suffix: ""` in a helper's
/// `{{ .tag }}{{ .separator }}{{ .suffix }}`, `flavor: ""` in an inline `with`, `debug: false`
/// adding `-debug`) is not given the digest, with Helm and without: a user who sets the key
/// would get `tag@sha256:…-alpine`. A key beside the map that never follows the tag
/// (`pullSecret: ""`) leaves the map pinned.
#[test]
fn a_tag_followed_by_a_suffix_empty_by_default_is_not_written() {
    let suffix_helper = "{{- define \"m.tag\" -}}\n{{- if .Values.image.suffix -}}\n{{ .Values.image.tag }}{{ .Values.image.separator }}{{ .Values.image.suffix }}\n{{- else -}}\n{{ .Values.image.tag }}\n{{- end -}}\n{{- end -}}\n";
    // The values beside the map, the image field, and the key the reason names (none: pinned).
    let cases = [
        (
            "  separator: \"-\"\n  suffix: \"\"\n",
            "{{ .Values.image.repository }}:{{ include \"m.tag\" . }}",
            Some("`image.suffix`"),
        ),
        (
            "  flavor: ''\n",
            "\"{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ with .Values.image.flavor }}-{{ . }}{{ end }}\"",
            Some("`image.flavor`"),
        ),
        (
            "  debug: false\n",
            "{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ if .Values.image.debug }}-debug{{ end }}",
            Some("`image.debug`"),
        ),
        (
            "  pullSecret: \"\"\n",
            "{{ .Values.image.repository }}:{{ .Values.image.tag }}",
            None,
        ),
        // A chart that fails once a word changes: rendered again with only what is off on.
        (
            "  suffix: \"\"\n  os: linux\n",
            "{{ if ne .Values.image.os \"linux\" }}{{ fail \"linux only\" }}{{ end }}{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ with .Values.image.suffix }}-{{ . }}{{ end }}",
            Some("`image.suffix`"),
        ),
    ];
    for helm in [false, true] {
        for (beside, image, named) in cases {
            let context = TestContext::new();
            let values =
                format!("image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n{beside}");
            let deploy = format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: {image}\n"
            );
            context.write_all(
                &[
                    ("m/Chart.yaml", "apiVersion: v2\nname: m\nversion: 1.0.0\n"),
                    ("m/values.yaml", &values),
                    ("m/templates/_helpers.tpl", suffix_helper),
                    ("m/templates/deploy.yaml", &deploy),
                ],
                false,
            );
            let scan = scan_json(&context, helm);
            let row = crate::context::reference(&scan, "m/values.yaml", 2);
            match named {
                Some(key) => {
                    let reason = row["unwritable"]
                        .as_str()
                        .unwrap_or_else(|| panic!("helm {helm}, {beside}: {scan}"));
                    assert_eq!(
                        reason,
                        format!(
                            "the chart writes more after this map's tag in the image once {key} \
                             changes from its value here, so a digest appended to the tag would \
                             land inside the tag then, and the map has no digest key"
                        ),
                        "helm {helm}"
                    );
                }
                None => assert!(row.get("unwritable").is_none(), "helm {helm}: {scan}"),
            }
        }
    }
}

/// node-exporter's and vector's charts: the tag comes from `appVersion` and the digest key is
/// empty, but a key beside the map picks another image (`distroless`, `base`). A digest
/// written for the defaults would pull their image for a user who sets that key, so it is
/// not written. Gitea's `rootless` is found behind its `fullOverride` (which replaces the
/// whole image), and only it is named. Datadog's `tagSuffix` is ignored once a digest is set:
/// a user who sets it would silently get the image of the defaults. A key that changes
/// nothing in the image, or one with which the chart takes another digest key
/// (ingress-nginx's `chroot` and `digestChroot`), leaves the digest written.
#[test]
fn a_digest_key_beside_a_key_that_picks_another_image_is_not_written() {
    let variant = "{{- define \"m.image\" -}}\n{{- $tag := printf \"%s%s\" (default .Chart.AppVersion .Values.image.tag) (ternary \"-distroless\" \"\" (.Values.image.distroless | default false)) -}}\n{{- with .Values.image.base }}{{ $tag = printf \"%s-%s\" $tag . }}{{ end -}}\n{{- if .Values.image.digest -}}\n{{ printf \"%s/%s:%s@%s\" .Values.image.registry .Values.image.repository $tag .Values.image.digest }}\n{{- else -}}\n{{ printf \"%s/%s:%s\" .Values.image.registry .Values.image.repository $tag }}\n{{- end -}}\n{{- end -}}\n";
    let gitea = "{{- define \"m.image\" -}}\n{{- if .Values.image.fullOverride -}}\n{{ .Values.image.fullOverride }}\n{{- else -}}\n{{- $tag := default .Chart.AppVersion .Values.image.tag -}}\n{{- $rootless := ternary \"-rootless\" \"\" .Values.image.rootless -}}\n{{- $digest := \"\" -}}\n{{- with .Values.image.digest }}{{ $digest = printf \"@%s\" . }}{{ end -}}\n{{ printf \"%s/%s:%s%s%s\" .Values.image.registry .Values.image.repository $tag $rootless $digest }}\n{{- end -}}\n{{- end -}}\n";
    let chroot = "{{- define \"m.image\" -}}\n{{- $tag := default .Chart.AppVersion .Values.image.tag -}}\n{{- if .Values.image.chroot -}}\n{{ printf \"%s/%s-chroot:%s\" .Values.image.registry .Values.image.repository $tag }}{{ with .Values.image.digestChroot }}@{{ . }}{{ end }}\n{{- else -}}\n{{ printf \"%s/%s:%s\" .Values.image.registry .Values.image.repository $tag }}{{ with .Values.image.digest }}@{{ . }}{{ end }}\n{{- end -}}\n{{- end -}}\n";
    // Datadog's: the tag (and its suffix) dropped once a digest is set.
    let drops_tag = "{{- define \"m.image\" -}}\n{{- if .Values.image.digest -}}\n{{ .Values.image.registry }}/{{ .Values.image.repository }}@{{ .Values.image.digest }}\n{{- else -}}\n{{ .Values.image.registry }}/{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}{{ with .Values.image.tagSuffix }}-{{ . }}{{ end }}\n{{- end -}}\n{{- end -}}\n";
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: {{ include \"m.image\" . | quote }}\n";
    let write = |context: &TestContext, helper: &str, beside: &str| {
        let values = format!(
            "image:\n  registry: ghcr.io\n  repository: acme/app\n  tag: \"\"\n  digest: \"\"\n{beside}"
        );
        context.write_all(
            &[
                (
                    "m/Chart.yaml",
                    "apiVersion: v2\nname: m\nversion: 1.0.0\nappVersion: \"1.2\"\n",
                ),
                ("m/values.yaml", &values),
                ("m/templates/_helpers.tpl", helper),
                ("m/templates/deploy.yaml", deploy),
            ],
            false,
        );
    };
    // The helper, the keys beside the map, and the keys the reason names (none: written).
    let cases = [
        (variant, "  distroless: false\n", Some("`image.distroless`")),
        (variant, "  base: debian\n", Some("`image.base`")),
        (
            gitea,
            "  rootless: false\n  fullOverride: \"\"\n",
            Some("`image.rootless`"),
        ),
        (drops_tag, "  tagSuffix: \"\"\n", Some("`image.tagSuffix`")),
        (variant, "  debug: false\n", None),
        (
            chroot,
            "  chroot: false\n  digestChroot: \"\"\n  runAsNonRoot: true\n",
            None,
        ),
    ];
    for helm in [false, true] {
        for (helper, beside, named) in cases {
            let context = TestContext::new();
            write(&context, helper, beside);
            let Some(keys) = named else {
                let (_, digest) = pin_app(&context, helm);
                let values = std::fs::read_to_string(context.path("m/values.yaml")).unwrap();
                assert!(
                    values.contains(&format!("  digest: \"{digest}\"\n")),
                    "helm {helm}, {beside}: {values}"
                );
                continue;
            };
            let scan = scan_json(&context, helm);
            let row = crate::context::reference(&scan, "m/values.yaml", 3);
            assert_eq!(
                row["unwritable"].as_str(),
                Some(
                    format!(
                        "the chart writes another image for this map once {keys} changes from \
                         its value here, and the digest written in `image.digest` would pull \
                         the image of these values in its place"
                    )
                    .as_str()
                ),
                "helm {helm}, {beside}: {scan}"
            );
        }
    }
}

/// Datadog's image maps: `{name: agent, tag, digest, repository:}` under the chart's
/// `registry`, the `repository` left empty. The digest goes into `digest:`, with Helm and
/// without.
#[test]
fn a_name_and_tag_map_with_an_empty_repository_is_pinned() {
    let helper = "{{- define \"m.image\" -}}\n{{- if .image.digest -}}\n{{- if .image.repository -}}{{ .image.repository }}@{{ .image.digest }}{{- else -}}{{ .root.registry }}/{{ .image.name }}@{{ .image.digest }}{{- end -}}\n{{- else -}}\n{{- if .image.repository -}}{{ .image.repository }}:{{ .image.tag }}{{- else -}}{{ .root.registry }}/{{ .image.name }}:{{ .image.tag }}{{- end -}}\n{{- end -}}\n{{- end -}}\n";
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: {{ include \"m.image\" (dict \"root\" .Values \"image\" .Values.agents.image) | quote }}\n";
    let values = "registry: ghcr.io/acme\nagents:\n  image:\n    name: app\n    tag: \"1.2\"\n    digest: \"\"\n    repository:\n    pullPolicy: IfNotPresent\n";
    for helm in [false, true] {
        let context = TestContext::new();
        context.write_all(
            &[
                ("m/Chart.yaml", "apiVersion: v2\nname: m\nversion: 1.0.0\n"),
                ("m/values.yaml", values),
                ("m/templates/_helpers.tpl", helper),
                ("m/templates/deploy.yaml", deploy),
            ],
            false,
        );
        let (_, digest) = pin_app(&context, helm);
        let written = std::fs::read_to_string(context.path("m/values.yaml")).unwrap();
        assert_eq!(
            written,
            values.replace("digest: \"\"", &format!("digest: \"{digest}\"")),
            "helm {helm}"
        );
    }
}

/// A vendored subchart's image default that the parent's values set a part of (a mirror's
/// repository, another tag) is not what the parent deploys: reported with the parent's keys
/// and not written. A parent that sets only the pull policy leaves the default writable.
#[test]
fn a_subchart_default_the_parent_overrides_is_not_written() {
    let statefulset = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  template:\n    spec:\n      containers:\n        - name: db\n          image: \"{{ .Values.image.registry }}/{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n";
    let sub_values =
        "image:\n  registry: docker.io\n  repository: library/redis\n  tag: \"7.2.3\"\n";
    for (parent_values, overridden) in [
        (
            "redis:\n  image:\n    registry: quay.io\n    repository: opstree/redis\n",
            Some("`redis.image.registry`, `redis.image.repository`"),
        ),
        (
            "cache:\n  image:\n    tag: 7.2.4\n",
            Some("`cache.image.tag`"),
        ),
        ("redis:\n  image:\n    pullPolicy: Always\n", None),
    ] {
        let context = TestContext::new();
        let chart_yaml = "apiVersion: v2\nname: umbrella\nversion: 0.1.0\ndependencies:\n  - name: redis\n    version: 0.1.0\n";
        // The second case depends on the subchart under an alias.
        let chart_yaml = if parent_values.starts_with("cache") {
            format!("{chart_yaml}    alias: cache\n")
        } else {
            chart_yaml.to_owned()
        };
        context.write_all(
            &[
                ("Chart.yaml", &chart_yaml),
                ("values.yaml", parent_values),
                (
                    "charts/redis/Chart.yaml",
                    "apiVersion: v2\nname: redis\nversion: 0.1.0\n",
                ),
                ("charts/redis/values.yaml", sub_values),
                ("charts/redis/templates/statefulset.yaml", statefulset),
            ],
            false,
        );
        for helm in [false, true] {
            let doc = scan_json(&context, helm);
            let row = doc["references"]
                .as_array()
                .unwrap()
                .iter()
                .find(|row| row["path"] == "charts/redis/values.yaml")
                .unwrap_or_else(|| panic!("no row for the subchart's default: {doc}"));
            assert_eq!(row["status"], "floating", "{row}");
            let reason = row["unwritable"].as_str();
            match overridden {
                Some(keys) => {
                    let reason = reason.unwrap_or_else(|| panic!("helm {helm}: {row}"));
                    assert!(
                        reason.contains(&format!("the parent chart `umbrella` sets {keys}")),
                        "helm {helm}: {reason}"
                    );
                }
                None => assert!(reason.is_none(), "helm {helm}: {row}"),
            }
        }
    }
}
