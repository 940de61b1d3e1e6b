//! Throughput of `scan` per file kind, on generated chart-like text (no criterion):
//! `cargo bench -p tagpin-formats --bench scan`. Prints MB/s for each kind.
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use tagpin_formats::{FileKind, scan};

const TARGET_BYTES: usize = 8 << 20;

fn values(i: usize) -> String {
    format!(
        "# Default values for chart-{i}.\nreplicaCount: 1\nimage:\n  repository: ghcr.io/acme/app-{i}\n  \
         tag: \"1.{i}.0\"\n  pullPolicy: IfNotPresent\nresources:\n  limits:\n    cpu: 100m\n    \
         memory: 128Mi\nservice:\n  type: ClusterIP\n  port: 80\nnodeSelector: {{}}\ntolerations: []\n\
         sidecar:\n  image: {{repository: quay.io/acme/sidecar, tag: v{i}}}\n"
    )
}

fn template(i: usize) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{{{ include \"c.fullname\" . }}}}\n  \
         labels:\n    {{{{- include \"c.labels\" . | nindent 4 }}}}\nspec:\n  replicas: {{{{ .Values.replicaCount }}}}\n  \
         template:\n    spec:\n      containers:\n        - name: app\n          image: \"{{{{ .Values.image.repository }}}}:{{{{ .Values.image.tag }}}}\"\n          \
         {{{{- if .Values.x }}}}\n          args: [\"--v={i}\"]\n          {{{{- end }}}}\n        - name: proxy\n          \
         image: quay.io/acme/proxy:{i}.0\n          ports:\n            - containerPort: 8080\n          \
         resources:\n            {{{{- toYaml .Values.resources | nindent 12 }}}}\n"
    )
}

fn manifest(i: usize) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  config: |\n    image: x\n    \
         key: value\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p-{i}\nspec:\n  containers:\n  - name: a\n    \
         image: registry.example.com/team/a:{i}\n    env:\n    - name: A\n      value: \"b\"\n"
    )
}

fn dockerfile(i: usize) -> String {
    format!(
        "# syntax=docker/dockerfile:1\nFROM golang:1.{i} AS build\nWORKDIR /src\nCOPY . .\nRUN --mount=type=cache,target=/c \\\n    \
         go build -o /app .\nFROM gcr.io/distroless/static:nonroot\nCOPY --from=build /app /app\nENTRYPOINT [\"/app\"]\n"
    )
}

fn shell(i: usize) -> String {
    format!(
        "#!/bin/sh\nset -e\necho building {i}\nkind create cluster --image=kindest/node:v1.{i}.0\n\
         for f in a b c; do\n  echo $f\ndone\nkubectl apply -f deploy.yaml\n"
    )
}

fn bench(name: &str, kind: FileKind, make: fn(usize) -> String) {
    let mut files = Vec::new();
    let mut bytes = 0;
    while bytes < TARGET_BYTES {
        // About 5 kB per file, like the CLI benchmark's tree (50 MB over 10,000 files).
        let first = files.len() * 16;
        let text: String = (first..first + 16).map(make).collect::<Vec<_>>().join("\n");
        bytes += text.len();
        files.push(text);
    }
    let path = Path::new("bench");
    let mut best = f64::MAX;
    let mut findings = 0;
    for _ in 0..5 {
        let start = Instant::now();
        findings = 0;
        for text in &files {
            findings += black_box(scan(path, kind, black_box(text)).unwrap()).len();
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    #[expect(clippy::cast_precision_loss, reason = "a rate")]
    let megabytes = bytes as f64 / 1e6;
    let rate = megabytes / best;
    println!(
        "{name:<14} {rate:>8.0} MB/s  ({} files, {megabytes:.1} MB, {findings} findings)",
        files.len(),
    );
}

fn main() {
    bench("values", FileKind::Yaml, values);
    bench("helm-template", FileKind::HelmTemplate, template);
    bench("manifests", FileKind::Yaml, manifest);
    bench("dockerfile", FileKind::Dockerfile, dockerfile);
    bench("shell", FileKind::Shell, shell);
}
