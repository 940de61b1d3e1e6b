# tagpin's container image: `docker build -t tagpin .` then
#   docker run --rm -v "$PWD:/work" -w /work tagpin check .
#
# Every FROM is pinned as name:tag@sha256:<digest>, and tagpin keeps these digests fresh itself
# (.github/workflows/digests.yml). Where each digest was first taken from is noted above it;
# `tagpin check --online Dockerfile` tells whether a tag has moved since.
#
# Why glibc + distroless/cc rather than musl + distroless/static: the TLS stack (rustls with the
# aws-lc-rs provider, and ring) compiles C code. Against glibc that needs nothing beyond the
# builder image's gcc; a musl build would need musl-tools, a musl target for every platform and
# a cross C toolchain for aws-lc-sys, to save a few MB. distroless/cc-debian12 carries exactly
# what such a binary links at run time (glibc, libgcc_s) plus CA certificates, and is the same
# Debian 12 (glibc 2.36) as the bookworm builder, so the binary never needs a newer glibc than
# the runtime has. It needs no OpenSSL: TLS is rustls.

# Builder: Rust 1.95.0 on Debian 12 (the workspace needs >= 1.88; this is the toolchain CI and
# development use).
# Digest: docker.io/library/rust:1.95.0-bookworm (also served as rust:1.95-bookworm), as seen in
# a public BuildKit log (`FROM docker.io/library/rust:1.95-bookworm@sha256:6258907a…`, resolved
# from the registry at build time) and in several unrelated public Dockerfiles and scripts
# pinning `rust:1.95-bookworm` / `rust:1.95.0-bookworm` to this same digest (docs/pins.md).
FROM rust:1.95.0-bookworm@sha256:6258907abe69656e41cd992e0b705cdcfabcbbe3db374f92ed2d47121282d4a1 AS builder
WORKDIR /src
COPY . .
# Only the binary's package: the test harness crates (testkit, fake-github) are not built.
RUN cargo build --locked --release --package tagpin --bin tagpin \
 && install -m 0755 target/release/tagpin /usr/local/bin/tagpin

# Runtime: distroless, no shell, no package manager, running as nonroot (uid 65532).
# Digest: gcr.io/distroless/cc-debian12:nonroot, pinned to this same digest in at least four
# unrelated public Dockerfiles (the pdftract, meneerhenk, gvm-mock-server and fiducia-cli.rs
# projects; see docs/pins.md).
FROM gcr.io/distroless/cc-debian12:nonroot@sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f
LABEL org.opencontainers.image.title="tagpin" \
      org.opencontainers.image.description="Pin container image references to digests and keep them fresh" \
      org.opencontainers.image.source="https://github.com/tagpin/tagpin" \
      org.opencontainers.image.licenses="MIT OR Apache-2.0"
COPY --from=builder /usr/local/bin/tagpin /usr/local/bin/tagpin
USER nonroot:nonroot
WORKDIR /work
ENTRYPOINT ["tagpin"]
CMD ["--help"]
