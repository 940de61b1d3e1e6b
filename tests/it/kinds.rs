//! `tagpin pin --write` end to end for the places images live that issue 12 added (Dockerfile
//! ARG defaults, GitLab CI, shell container commands, Kustomize `images:`, dev containers, …), against the real registry: each file before and after, with LF and with
//! CRLF line endings, and a second run that changes nothing.

use crate::context::TestContext;
use crate::registry::{Flavour, Registry};

/// Every tag the files below resolve, normalised.
const IMAGES: &[&str] = &[
    "docker.io/library/alpine:3.20",
    "docker.io/library/busybox:1.36",
    "docker.io/library/postgres:16",
    "docker.io/library/redis:7",
];

/// `(path, before, after)`; in `after`, `<alpine:3.20>` stands for that tag's pushed digest.
const FILES: &[(&str, &str, &str)] = &[
    (
        "Dockerfile",
        "ARG BASE=alpine:3.20\nARG BUSYBOX=\"1.36\"\nFROM ${BASE} AS build\nFROM busybox:${BUSYBOX}\nCOPY --from=build /a /a\n",
        "ARG BASE=alpine:3.20@<alpine:3.20>\nARG BUSYBOX=\"1.36@<busybox:1.36>\"\nFROM ${BASE} AS build\nFROM busybox:${BUSYBOX}\nCOPY --from=build /a /a\n",
    ),
    (
        "ci/.gitlab-ci.yml",
        "default:\n  image: alpine:3.20 # base\ntest:\n  services:\n    - name: \"postgres:16\"\n      alias: db\n    - redis:7\n  script: [\"true\"]\n",
        "default:\n  image: alpine:3.20@<alpine:3.20> # base\ntest:\n  services:\n    - name: \"postgres:16@<postgres:16>\"\n      alias: db\n    - redis:7@<redis:7>\n  script: [\"true\"]\n",
    ),
    (
        "scripts/smoke.sh",
        "#!/bin/sh\n# docker pull redis:7 is a comment\ndocker run --rm \\\n  -e A=1 \\\n  busybox:1.36 true\nsudo podman pull 'redis:7'\n",
        "#!/bin/sh\n# docker pull redis:7 is a comment\ndocker run --rm \\\n  -e A=1 \\\n  busybox:1.36@<busybox:1.36> true\nsudo podman pull 'redis:7@<redis:7>'\n",
    ),
    (
        "deploy/kustomization.yaml",
        "resources: [app.yaml]\nimages:\n  - name: redis\n    newTag: \"7\" # cache\n  - {name: postgres, newTag: \"16\"}\n",
        "resources: [app.yaml]\nimages:\n  - name: redis\n    newTag: \"7\" # cache\n    digest: <redis:7>\n  - {name: postgres, newTag: \"16\", digest: <postgres:16>}\n",
    ),
    (
        ".devcontainer/devcontainer.json",
        "{\n\t// the toolbox\n\t\"image\": \"alpine:3.20\",\n\t\"features\": {},\n}\n",
        "{\n\t// the toolbox\n\t\"image\": \"alpine:3.20@<alpine:3.20>\",\n\t\"features\": {},\n}\n",
    ),
];

#[test]
fn every_new_kind_is_pinned_byte_exactly_and_idempotently() {
    let mut registry = Registry::start();
    for key in IMAGES {
        registry.push(key, Flavour::Image);
    }
    let mirrors = registry.mirror_args(["docker.io", "ghcr.io", "quay.io"]);
    for crlf in [false, true] {
        let context = TestContext::new();
        let ending = |text: &str| {
            if crlf {
                text.replace('\n', "\r\n")
            } else {
                text.to_owned()
            }
        };
        for (path, before, _) in FILES {
            context.write(path, ending(before));
        }
        let mut args = vec!["pin".to_owned(), ".".to_owned(), "--write".to_owned()];
        args.extend(mirrors.iter().cloned());
        context.run(&args).assert_code(0);
        for (path, _, after) in FILES {
            let mut expected = ending(after);
            for (key, digest) in registry.pushed() {
                let short = key.rsplit('/').next().unwrap();
                expected = expected.replace(&format!("<{short}>"), digest);
            }
            let got = std::fs::read_to_string(context.path(path)).unwrap();
            assert_eq!(got, expected, "{path} (crlf: {crlf})");
        }
        let again = context.run(&args);
        again.assert_code(0);
        assert!(again.stderr.contains("wrote 0 files"), "{again}");
    }
}
