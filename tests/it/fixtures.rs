//! A small realistic repository: a Dockerfile, a Helm chart, a workflow under `.github`, a
//! compose file, a multi-document manifest and a shell script, plus files tagpin must not read.

pub const DIGEST_A: &str =
    "sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72";
pub const DIGEST_B: &str =
    "sha256:0f0b8a8e1c1f3ad0e7e2f58c6f8d6f3a14b0c7d1a9e4e3b0b6a1d2c3e4f5a6b7";

pub const DOCKERFILE: &str = "\
# syntax=docker/dockerfile:1.7
FROM --platform=$BUILDPLATFORM golang:1.22 AS build
WORKDIR /src
COPY . .
RUN go build -o /app ./cmd/app

FROM gcr.io/distroless/static:nonroot@sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72
COPY --from=build /app /app
ENTRYPOINT [\"/app\"]
";

pub const VALUES: &str = "\
# Default values for api.
replicaCount: 2
image:
  repository: ghcr.io/acme/api
  tag: \"1.4.2\"
  pullPolicy: IfNotPresent
sidecar:
  image: docker.io/library/busybox:1.36@sha256:0f0b8a8e1c1f3ad0e7e2f58c6f8d6f3a14b0c7d1a9e4e3b0b6a1d2c3e4f5a6b7
metrics:
  enabled: true
";

pub const DEPLOYMENT_TEMPLATE: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include \"api.fullname\" . }}
  labels:
    {{- include \"api.labels\" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicaCount }}
  template:
    spec:
      containers:
        - name: api
          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"
          imagePullPolicy: {{ .Values.image.pullPolicy }}
        {{- if .Values.metrics.enabled }}
        - name: metrics
          image: quay.io/prometheus/statsd-exporter:latest
        {{- end }}
      initContainers:
        - name: wait
          image: busybox
          imagePullPolicy: IfNotPresent
";

pub const WORKFLOW: &str = "\
name: ci
on:
  push:
    branches: [main]
jobs:
  test:
    runs-on: ubuntu-latest
    container: node:20-bookworm
    services:
      redis:
        image: redis:7
    steps:
      - uses: actions/checkout@v4
      - uses: docker://alpine:3.20
        with:
          args: echo hello
";

pub const COMPOSE: &str = "\
services:
  web:
    build: .
    image: acme/web:dev
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: example
";

pub const MANIFEST: &str = "\
apiVersion: v1
kind: Service
metadata:
  name: app
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
        - name: app
          image: 'registry.example.com:5000/team/app:2.0' # bumped by CI
        - name: proxy
          image: envoyproxy/envoy@sha256:0f0b8a8e1c1f3ad0e7e2f58c6f8d6f3a14b0c7d1a9e4e3b0b6a1d2c3e4f5a6b7
";

pub const SCRIPT: &str = "\
#!/usr/bin/env bash
set -euo pipefail
kubectl run debug --image=nicolaka/netshoot:v0.13 --rm -it
cat <<EOF | kubectl apply -f -
apiVersion: v1
kind: Pod
metadata:
  name: probe
spec:
  containers:
    - name: probe
      image: curlimages/curl:8.8.0
EOF
";

/// The repository: every file kind tagpin reads, and files it must not.
pub const REPO: &[(&str, &str)] = &[
    ("Dockerfile", DOCKERFILE),
    ("charts/api/values.yaml", VALUES),
    ("charts/api/templates/deployment.yaml", DEPLOYMENT_TEMPLATE),
    (".github/workflows/ci.yml", WORKFLOW),
    ("compose.yaml", COMPOSE),
    ("deploy/app.yaml", MANIFEST),
    ("scripts/deploy.sh", SCRIPT),
    // Not read: ignored by .gitignore, inside .git, or not a kind tagpin knows.
    (".gitignore", "build/\n"),
    ("build/generated.yaml", "image: ignored-by-gitignore:1\n"),
    (".git/manifest.yaml", "image: inside-dot-git:1\n"),
    ("README.md", "Run it:\n\n    image: from-readme:1\n"),
];

/// `(path, line, column, status, text)` of each reference [`REPO`] holds that is written in
/// one place (Helm values split maps are checked separately).
pub const EXPECTED: &[(&str, u64, u64, &str, &str)] = &[
    (
        ".github/workflows/ci.yml",
        8,
        16,
        "floating",
        "node:20-bookworm",
    ),
    (".github/workflows/ci.yml", 11, 16, "floating", "redis:7"),
    ("Dockerfile", 1, 10, "floating", "docker/dockerfile:1.7"),
    ("Dockerfile", 2, 32, "floating", "golang:1.22"),
    (
        "Dockerfile",
        7,
        6,
        "pinned",
        "gcr.io/distroless/static:nonroot@sha256:6a6ec938973e6583c5e1573f7d25beddc1852a6699a089116b2407e29a564a72",
    ),
    (
        "charts/api/templates/deployment.yaml",
        17,
        18,
        "floating",
        "quay.io/prometheus/statsd-exporter:latest",
    ),
    (
        "charts/api/templates/deployment.yaml",
        21,
        18,
        "floating",
        "busybox",
    ),
    (
        "charts/api/values.yaml",
        8,
        10,
        "pinned",
        "docker.io/library/busybox:1.36@sha256:0f0b8a8e1c1f3ad0e7e2f58c6f8d6f3a14b0c7d1a9e4e3b0b6a1d2c3e4f5a6b7",
    ),
    ("compose.yaml", 4, 12, "local", "acme/web:dev"),
    ("compose.yaml", 6, 12, "floating", "postgres:16"),
    (
        "deploy/app.yaml",
        15,
        19,
        "floating",
        "registry.example.com:5000/team/app:2.0",
    ),
    (
        "deploy/app.yaml",
        17,
        18,
        "digest-only",
        "envoyproxy/envoy@sha256:0f0b8a8e1c1f3ad0e7e2f58c6f8d6f3a14b0c7d1a9e4e3b0b6a1d2c3e4f5a6b7",
    ),
    (
        "scripts/deploy.sh",
        3,
        27,
        "floating",
        "nicolaka/netshoot:v0.13",
    ),
    (
        "scripts/deploy.sh",
        12,
        14,
        "floating",
        "curlimages/curl:8.8.0",
    ),
];
