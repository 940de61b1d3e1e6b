//! `cargo bench --bench scan`: `tagpin scan` against `grep` over a generated chart monorepo.
//!
//! Generates 10,000 files (about 50 MB) shaped like a monorepo of Helm charts — per chart a
//! `Chart.yaml`, a large `values.yaml`, many templates of which few hold an image, plus some
//! Dockerfiles and shell scripts — in a temporary directory, and syncs it to disk. Then, on a
//! warm cache (two warm-up runs of each), it times
//! `tagpin scan DIR --format json >/dev/null` (the bench profile: release with line tables)
//! and `grep -rEn 'image:|FROM ' DIR >/dev/null` alternately, several times each, and reports
//! the medians with the middle half of each side's runs, the middle half of the run-by-run
//! ratio, and tagpin's peak memory (max RSS from `/usr/bin/time -f %M` when it exists).
//! Both run on at most 2 cores (`taskset -c 0,1` when it exists).
//!
//! Targets: tagpin within 1.5x of grep's wall time (issue 9; issue 2 asked for 2x), peak memory
//! under 100 MB. This is a measurement, not a test: it reports and always exits 0.
//! Environment: `TAGPIN_BENCH_RUNS` (repetitions, default 7), `TAGPIN_BENCH_KEEP=1` keeps the
//! tree and prints its path, `TAGPIN_BENCH_READ_MAPS=1` makes the templates read their values'
//! image maps.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHARTS: usize = 400;
/// Files per chart: Chart.yaml, values.yaml, 20 templates, 1 Dockerfile, 2 scripts.
const TEMPLATES_PER_CHART: usize = 20;
const DIGEST: &str = "sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72";

/// A tiny deterministic generator, so every run measures the same tree.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next()).unwrap() % n
    }
}

const REGISTRIES: &[&str] = &[
    "",
    "docker.io/",
    "quay.io/acme/",
    "ghcr.io/acme/",
    "registry.k8s.io/",
];
const NAMES: &[&str] = &[
    "nginx", "redis", "postgres", "busybox", "envoy", "api", "worker", "exporter",
];

fn image(rng: &mut Lcg) -> String {
    let name = format!(
        "{}{}",
        REGISTRIES[rng.below(REGISTRIES.len())],
        NAMES[rng.below(NAMES.len())]
    );
    match rng.below(4) {
        0 => format!("{name}:latest"),
        1 => format!("{name}:1.{}.{}@{DIGEST}", rng.below(30), rng.below(10)),
        _ => format!("{name}:{}.{}", rng.below(9) + 1, rng.below(30)),
    }
}

fn values(rng: &mut Lcg, chart: usize) -> String {
    let mut text = format!("# Default values for chart-{chart}.\nreplicaCount: 1\n");
    for component in 0..12 {
        let _ = write!(
            text,
            "component{component}:\n  enabled: true\n  image:\n    repository: {}\n    tag: \"v{}.{}\"\n    pullPolicy: IfNotPresent\n  sidecar:\n    image: {}\n",
            NAMES[rng.below(NAMES.len())],
            rng.below(5),
            rng.below(20),
            image(rng),
        );
        for key in 0..30 {
            let _ = write!(
                text,
                "  # The setting number {key}: tune it for larger clusters, see the docs.\n  setting{key}: {{ limit: {}, request: \"{}Mi\", labels: [a, b, c] }}\n",
                rng.below(1000),
                rng.below(4096)
            );
        }
    }
    text
}

/// Whether the templates read their values' image maps (`TAGPIN_BENCH_READ_MAPS=1`): the
/// generated values hold `componentN.image`, which the default templates never read (they read
/// `.Values.image`), so the static chart reading passes their lines over.
fn templates_read_maps() -> bool {
    std::env::var_os("TAGPIN_BENCH_READ_MAPS").is_some()
}

fn template(rng: &mut Lcg, chart: usize, index: usize) -> String {
    let mut text = format!(
        "{{{{- if .Values.component{index}.enabled }}}}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ include \"chart-{chart}.fullname\" . }}}}-{index}\n  labels:\n    {{{{- include \"chart-{chart}.labels\" . | nindent 4 }}}}\ndata:\n"
    );
    for key in 0..60 {
        let _ = writeln!(
            text,
            "  key{key}: {{{{ .Values.setting{key} | default \"{}\" | quote }}}}",
            rng.below(100_000)
        );
    }
    if index.is_multiple_of(5) {
        let map = if templates_read_maps() {
            format!("component{index}.image")
        } else {
            "image".to_owned()
        };
        let _ = write!(
            text,
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{index}\nspec:\n  template:\n    spec:\n      containers:\n        - name: main\n          image: \"{{{{ .Values.{map}.repository }}}}:{{{{ .Values.{map}.tag }}}}\"\n        - name: helper\n          image: {}\n",
            image(rng)
        );
    }
    text.push_str("{{- end }}\n");
    text
}

fn dockerfile(rng: &mut Lcg) -> String {
    let mut text = format!(
        "# syntax=docker/dockerfile:1\nFROM {} AS build\nWORKDIR /src\n",
        image(rng)
    );
    for step in 0..40 {
        let _ = writeln!(
            text,
            "RUN echo step {step} && make -C /src target-{step} >/dev/null"
        );
    }
    let _ = write!(
        text,
        "FROM {}\nCOPY --from=build /src/out /app\n",
        image(rng)
    );
    text
}

fn script(rng: &mut Lcg) -> String {
    let mut text = String::from("#!/usr/bin/env bash\nset -euo pipefail\n");
    for step in 0..50 {
        let _ = writeln!(
            text,
            "echo \"step {step}\" && kubectl get pods -n ns-{} -o wide",
            rng.below(50)
        );
    }
    let _ = writeln!(text, "kubectl run debug --image={} --rm -it", image(rng));
    text
}

fn generate(root: &Path) -> (usize, u64) {
    let mut rng = Lcg(42);
    let (mut files, mut bytes) = (0, 0);
    let mut write = |path: PathBuf, text: String| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        bytes += text.len() as u64;
        files += 1;
        std::fs::write(path, text).unwrap();
    };
    for chart in 0..CHARTS {
        let dir = root.join(format!("charts/chart-{chart:03}"));
        write(
            dir.join("Chart.yaml"),
            format!("apiVersion: v2\nname: chart-{chart}\nversion: 0.1.{chart}\n"),
        );
        write(dir.join("values.yaml"), values(&mut rng, chart));
        for index in 0..TEMPLATES_PER_CHART {
            write(
                dir.join(format!("templates/part-{index:02}.yaml")),
                template(&mut rng, chart, index),
            );
        }
        write(dir.join("images/Dockerfile"), dockerfile(&mut rng));
        write(dir.join("hack/build.sh"), script(&mut rng));
        write(dir.join("hack/release.sh"), script(&mut rng));
    }
    (files, bytes)
}

fn two_cores(program: &str) -> Command {
    if Path::new("/usr/bin/taskset").exists() {
        let mut command = Command::new("/usr/bin/taskset");
        command.args(["-c", "0,1", program]);
        command
    } else {
        Command::new(program)
    }
}

/// Runs `command` with stdout to /dev/null; returns the wall time.
fn time(command: &mut Command) -> Duration {
    let start = Instant::now();
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let elapsed = start.elapsed();
    // grep exits 1 when nothing matches; anything else is a broken run.
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "{command:?}: {status}"
    );
    elapsed
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The first and third quartiles of `values` (the middle half lies between them).
fn middle_half(mut values: Vec<f64>) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let last = values.len() - 1;
    (values[last / 4], values[last * 3 / 4])
}

/// Peak resident memory of tagpin in KiB, from `/usr/bin/time -f %M`.
fn peak_kib(tagpin: &str, dir: &Path) -> Option<u64> {
    if !Path::new("/usr/bin/time").exists() {
        return None;
    }
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M", tagpin, "scan"])
        .arg(dir)
        .args(["--format", "json"])
        .stdout(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

#[expect(clippy::cast_precision_loss, reason = "byte counts far below 2^52")]
fn main() {
    let tagpin = env!("CARGO_BIN_EXE_tagpin");
    let runs: usize = std::env::var("TAGPIN_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(7);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("monorepo");
    let started = Instant::now();
    let (files, bytes) = generate(&root);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "generated {files} files, {:.1} MB in {:.1?} at {}",
        bytes as f64 / 1e6,
        started.elapsed(),
        root.display()
    );

    let tagpin_command = || {
        let mut command = two_cores(tagpin);
        command.arg("scan").arg(&root).args(["--format", "json"]);
        command
    };
    let grep_command = || {
        let mut command = two_cores("grep");
        command.args(["-rEn", "image:|FROM "]).arg(&root);
        command
    };

    // Write the tree out first: flushing 50 MB of dirty pages during the runs would slow
    // whichever runs then. Then warm the cache, and check that the scan finds what it should.
    let _ = Command::new("sync").status();
    for _ in 0..2 {
        time(&mut grep_command());
        time(&mut tagpin_command());
    }
    let output = tagpin_command().stderr(Stdio::null()).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let references = doc["references"].as_array().map_or(0, Vec::len);
    let errors = doc["errors"].as_array().map_or(0, Vec::len);
    let _ = writeln!(out, "tagpin finds {references} references, {errors} errors");

    let (mut tagpin_times, mut grep_times) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        tagpin_times.push(time(&mut tagpin_command()));
        grep_times.push(time(&mut grep_command()));
    }
    // Each tagpin run against the grep run after it: a machine whose speed drifts moves both.
    let paired: Vec<f64> = tagpin_times
        .iter()
        .zip(&grep_times)
        .map(|(tagpin, grep)| tagpin.as_secs_f64() / grep.as_secs_f64())
        .collect();
    let millis =
        |times: &[Duration]| middle_half(times.iter().map(|t| t.as_secs_f64() * 1e3).collect());
    let ((tagpin_q1, tagpin_q3), (grep_q1, grep_q3)) = (millis(&tagpin_times), millis(&grep_times));
    let (paired_q1, paired_q3) = middle_half(paired);
    let (tagpin_median, grep_median) = (median(tagpin_times), median(grep_times));
    let ratio = tagpin_median.as_secs_f64() / grep_median.as_secs_f64();
    let _ = writeln!(out, "runs: {runs} each, alternating, warm cache, 2 cores");
    let _ = writeln!(
        out,
        "tagpin scan --format json: median {tagpin_median:.3?} (middle half {tagpin_q1:.1}-{tagpin_q3:.1} ms)"
    );
    let _ = writeln!(
        out,
        "grep -rEn 'image:|FROM ':  median {grep_median:.3?} (middle half {grep_q1:.1}-{grep_q3:.1} ms)"
    );
    let verdict = if ratio <= 1.5 { "within" } else { "MISSES" };
    let _ = writeln!(out, "ratio: {ratio:.2}x ({verdict} the 1.5x target)");
    let _ = writeln!(
        out,
        "ratio run by run: middle half {paired_q1:.2}x-{paired_q3:.2}x"
    );
    match peak_kib(tagpin, &root) {
        Some(kib) => {
            let mb = kib as f64 / 1024.0;
            let verdict = if mb < 100.0 { "within" } else { "MISSES" };
            let _ = writeln!(
                out,
                "tagpin peak memory: {mb:.1} MiB ({verdict} the 100 MB target)"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "tagpin peak memory: not measured (/usr/bin/time missing; apt-get install time)"
            );
        }
    }
    if std::env::var_os("TAGPIN_BENCH_KEEP").is_some() {
        let kept = dir.keep();
        let _ = writeln!(out, "kept {}", kept.display());
    }
}
