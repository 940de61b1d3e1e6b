//! The decision table and the proof, on renderings written out by hand as Helm prints them.

use std::fmt::Write as _;
use std::path::Path;

use tagpin_reference::Digest;

use super::*;
use crate::{EditSite, FileKind, Status, scan};

const VALUES: &str = "\
image:
  registry: docker.io
  repository: bitnami/nginx
  tag: 1.29.1
  digest: \"\"
metrics:
  enabled: false
  image:
    repository: bitnami/exporter
    tag: \"\"
sidecar:
  image: quay.io/acme/side:1.0
proxy:
  image:
    repository: envoyproxy/envoy
    tag: v1.31.0
labelled:
  image:
    repository: acme/app
    tag: \"2.0\"
    digest: \"\"
";

/// One document per image, under `source`, each a container list with the given images,
/// plus extra lines.
fn rendering(images: &[&str], extra: &str) -> Rendered {
    let mut out = String::new();
    for (i, image) in images.iter().enumerate() {
        write!(
            out,
            "---\n# Source: c/templates/d{i}.yaml\nspec:\n  containers:\n  - name: c{i}\n    image: {image}\n"
        )
        .unwrap();
    }
    out.push_str(extra);
    Rendered::parse(&out)
}

fn digest_hex(i: usize) -> String {
    sentinel::digest_hex(i)
}

fn renderings() -> Renderings {
    let h0 = digest_hex(0);
    Renderings {
        sentinels: rendering(
            &[
                &format!("tpsg0z.invalid/tpsr0z@sha256:{h0}"),
                "tpsr1z:1.29.1",
                "tpsr2z:99.0.0-tpst2z",
                "tpsr3z:99.0.0-tpst3z",
                "tpsr4z:99.0.0-tpst4z",
            ],
            "---\n# Source: c/templates/cr.yaml\nkind: App\nspec:\n  version: 99.0.0-tpst4z\n",
        ),
        names: rendering(
            &[
                "docker.io/tpsr0z:1.29.1",
                "tpsr1z:1.29.1",
                "tpsr2z:1.0",
                "tpsr3z:v1.31.0",
                "tpsr4z:2.0",
            ],
            "",
        ),
        undigested: rendering(
            &[
                "docker.io/bitnami/nginx:1.29.1",
                "bitnami/exporter:1.29.1",
                "quay.io/acme/side:1.0",
                "envoyproxy/envoy:v1.31.0",
                "acme/app:2.0",
            ],
            "",
        ),
    }
}

#[test]
fn candidates_are_every_image_map_and_string_with_their_paths() {
    let images = values_images(Path::new("values.yaml"), VALUES).unwrap();
    let paths: Vec<String> = images.candidates.iter().map(Candidate::dotted).collect();
    assert_eq!(
        paths,
        [
            "image",
            "metrics.image",
            "sidecar.image",
            "proxy.image",
            "labelled.image"
        ]
    );
    assert_eq!(images.disabled, [vec!["metrics".to_owned()]]);
    let sentinels: serde_json::Value = overrides(&images, Render::Sentinels);
    assert_eq!(sentinels["metrics"]["enabled"], true);
    assert_eq!(sentinels["image"]["repository"], "tpsr0z");
    assert_eq!(sentinels["image"]["registry"], "tpsg0z.invalid");
    assert_eq!(
        sentinels["image"]["digest"],
        format!("sha256:{}", digest_hex(0))
    );
    assert_eq!(sentinels["sidecar"]["image"], "tpsr2z:99.0.0-tpst2z");
    // The metrics map's tag is empty: it is given a sentinel all the same.
    assert_eq!(sentinels["metrics"]["image"]["tag"], "99.0.0-tpst1z");
    let names: serde_json::Value = overrides(&images, Render::Names);
    assert_eq!(names["image"]["digest"], "");
    assert_eq!(names["sidecar"]["image"], "tpsr2z:1.0");
}

/// A chart that joins the digest whenever its switch says so (Cilium's `useDigest: true`) or
/// always (`{{ .repository }}:{{ .tag }}@{{ .digest }}`) renders a lone `@` where tagpin's
/// renderings empty the digest: the image is what comes before it, and the digest key is
/// refreshed as given.
#[test]
fn an_image_whose_digest_is_always_joined_is_decided() {
    let values = "image:\n  repository: quay.io/cilium/cilium\n  tag: v1.15.1\n  digest: \"sha256:351d6685dc6f6ffbcd5451043167cfa8842c6decf80d8c8e426a417c73fb56d4\"\n  useDigest: true\n";
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let h0 = digest_hex(0);
    let quoted = |image: &str| format!("\"{image}\"");
    let renderings = Renderings {
        sentinels: rendering(&[&quoted(&format!("tpsr0z:99.0.0-tpst0z@sha256:{h0}"))], ""),
        names: rendering(&[&quoted("tpsr0z:v1.15.1@")], ""),
        undigested: rendering(&[&quoted("quay.io/cilium/cilium:v1.15.1@")], ""),
    };
    let decisions = decide(&images, &renderings, None);
    assert!(
        matches!(decisions[0].site, EditSite::SplitDigest { .. }),
        "{:?}",
        decisions[0].site
    );
    assert_eq!(
        decisions[0].rendered.as_ref().unwrap().as_written(),
        "quay.io/cilium/cilium:v1.15.1@sha256:351d6685dc6f6ffbcd5451043167cfa8842c6decf80d8c8e426a417c73fb56d4"
    );
}

#[test]
fn each_shape_gets_the_edit_the_chart_renders() {
    let images = values_images(Path::new("values.yaml"), VALUES).unwrap();
    let decisions = decide(&images, &renderings(), Some("1.29.1"));
    let sites: Vec<&EditSite> = decisions.iter().map(|d| &d.site).collect();
    // Bitnami: the digest key renders as given, and the tag is dropped.
    assert!(
        matches!(sites[0], EditSite::SplitDigest { bare: false, .. }),
        "{:?}",
        sites[0]
    );
    assert!(decisions[0].drops_tag);
    assert_eq!(
        decisions[0].rendered.as_ref().unwrap().as_written(),
        "docker.io/bitnami/nginx:1.29.1"
    );
    // The tag comes from appVersion and there is no digest key.
    assert_eq!(decisions[1].tag_source, TagSource::AppVersion);
    let EditSite::Unsupported { reason } = sites[1] else {
        panic!("{:?}", sites[1])
    };
    assert_eq!(
        reason,
        "the tag comes from the chart's appVersion (`1.29.1`), and the map has no digest key"
    );
    assert_eq!(sites[2], &EditSite::Inline);
    assert_eq!(
        decisions[2].rendered.as_ref().unwrap().as_written(),
        "quay.io/acme/side:1.0"
    );
    assert!(matches!(sites[3], EditSite::SplitTag { tag, .. } if tag == "v1.31.0"));
    let EditSite::Unsupported { reason } = sites[4] else {
        panic!("{:?}", sites[4])
    };
    assert_eq!(
        reason,
        "the tag also feeds `version: …` in c/templates/cr.yaml, which is not an image, and \
         the chart does not render this map's digest key"
    );
    // Only that refusal is for another use of the value: another reading of the chart takes
    // an edit back on it.
    let other_uses: Vec<bool> = decisions.iter().map(|d| d.other_use).collect();
    assert_eq!(other_uses, [false, false, false, false, true]);
}

#[test]
fn a_template_that_adds_the_sha256_prefix_gets_bare_hex() {
    let values = "image:\n  repository: acme/app\n  tag: \"1.0\"\n  sha: \"\"\n";
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let h = digest_hex(0);
    let renderings = Renderings {
        sentinels: rendering(&[&format!("tpsr0z:99.0.0-tpst0z@sha256:sha256:{h}")], ""),
        names: rendering(&["tpsr0z:1.0"], ""),
        undigested: rendering(&["acme/app:1.0"], ""),
    };
    let decisions = decide(&images, &renderings, None);
    assert!(matches!(
        decisions[0].site,
        EditSite::SplitDigest { bare: true, .. }
    ));
    assert!(!decisions[0].drops_tag);
    // Applied to the values' findings, the digest goes in as hex.
    let mut findings = scan(Path::new("values.yaml"), FileKind::Yaml, values).unwrap();
    apply(&mut findings, &decisions);
    let digest = Digest::parse(&format!("sha256:{}", "ab".repeat(32))).unwrap();
    let edit = findings[0].edit(&digest).unwrap();
    assert_eq!(edit.replacement, "ab".repeat(32));
    assert_eq!(&values[edit.span], "");
}

#[test]
fn a_map_the_chart_does_not_render_is_left_with_the_reason() {
    let images = values_images(
        Path::new("values.yaml"),
        "image:\n  repository: a\n  tag: b\n",
    )
    .unwrap();
    let empty = Renderings::default();
    let decisions = decide(&images, &empty, None);
    assert!(
        matches!(&decisions[0].site, EditSite::Unsupported { reason } if reason.starts_with("the chart's templates do not render"))
    );
}

#[test]
fn apply_rewrites_the_findings_of_the_values_file() {
    let images = values_images(Path::new("values.yaml"), VALUES).unwrap();
    let decisions = decide(&images, &renderings(), Some("1.29.1"));
    let mut findings = scan(Path::new("values.yaml"), FileKind::Yaml, VALUES).unwrap();
    apply(&mut findings, &decisions);
    let metrics = findings.iter().find(|f| f.line == 9).unwrap();
    assert_eq!(metrics.text, "bitnami/exporter:1.29.1");
    assert_eq!(metrics.status, Status::Floating);
    assert_eq!(metrics.tag_source, Some(TagSource::AppVersion));
    let sidecar = findings.iter().find(|f| f.line == 12).unwrap();
    assert_eq!(sidecar.site, EditSite::Inline);
    assert_eq!(
        sidecar.lookup().unwrap().as_written(),
        "quay.io/acme/side:1.0"
    );
}

fn digest() -> Digest {
    Digest::parse(&format!("sha256:{}", "7".repeat(64))).unwrap()
}

#[test]
fn the_proof_accepts_only_the_pinned_images() {
    let before = rendering(&["docker.io/bitnami/nginx:1.29.1", "acme/app:2.0"], "");
    let d = digest();
    let after = rendering(
        &[&format!("docker.io/bitnami/nginx@{d}"), "acme/app:2.0"],
        "",
    );
    let expected = [Expected {
        name: "docker.io/bitnami/nginx".to_owned(),
        tag: None,
        digest: d.clone(),
        required: true,
        pull_policy: false,
    }];
    assert_eq!(prove(&before, &before, &after, &expected), Ok(()));
    // A label that changed too.
    let labelled = rendering(
        &[&format!("docker.io/bitnami/nginx@{d}"), "acme/app:2.0"],
        "---\n# Source: c/templates/x.yaml\nmetadata:\n  labels:\n    version: new\n",
    );
    let before_labelled = rendering(
        &["docker.io/bitnami/nginx:1.29.1", "acme/app:2.0"],
        "---\n# Source: c/templates/x.yaml\nmetadata:\n  labels:\n    version: old\n",
    );
    assert_eq!(
        prove(&before_labelled, &before_labelled, &labelled, &expected),
        Err("the rendering also changes `version: …` in c/templates/x.yaml".to_owned())
    );
    // A line the chart renders differently each time (a generated password) is not the edit's.
    let secret = |password: &str, image: &str| {
        rendering(
            &[image, "acme/app:2.0"],
            &format!("---\n# Source: c/templates/secret.yaml\ndata:\n  password: {password}\n"),
        )
    };
    let pinned = format!("docker.io/bitnami/nginx@{d}");
    assert_eq!(
        prove(
            &secret("YWJj", "docker.io/bitnami/nginx:1.29.1"),
            &secret("ZGVm", "docker.io/bitnami/nginx:1.29.1"),
            &secret("Z2hp", &pinned),
            &expected
        ),
        Ok(())
    );
    // Without the second rendering, it is a change, and its value is not shown.
    let same = secret("YWJj", "docker.io/bitnami/nginx:1.29.1");
    assert_eq!(
        prove(&same, &same, &secret("Z2hp", &pinned), &expected),
        Err("the rendering also changes `password: …` in c/templates/secret.yaml".to_owned())
    );
    // The digest in a form the registry does not serve (`sha256:sha256:`) is not the pin.
    let doubled = rendering(
        &[
            &format!("docker.io/bitnami/nginx@sha256:{d}"),
            "acme/app:2.0",
        ],
        "",
    );
    let wrong = [Expected {
        tag: Some("1.29.1".to_owned()),
        ..expected[0].clone()
    }];
    assert!(prove(&before, &before, &doubled, &wrong).is_err());
    // An expected pin that does not show.
    assert_eq!(
        prove(&before, &before, &before, &expected),
        Err(format!(
            "the rendering does not show `docker.io/bitnami/nginx@{d}`"
        ))
    );
    // One the chart may leave out need not show.
    let optional = [Expected {
        required: false,
        ..expected[0].clone()
    }];
    assert_eq!(prove(&before, &before, &before, &optional), Ok(()));
}

#[test]
fn the_proof_accepts_a_pull_policy_only_beside_its_pinned_image() {
    let d = digest();
    let pod = |web: &str, web_policy: &str, side_policy: &str| {
        Rendered::parse(&format!(
            "---\n# Source: c/templates/pod.yaml\nspec:\n  containers:\n  - name: web\n    \
             image: \"{web}\"\n    imagePullPolicy: {web_policy}\n  - imagePullPolicy: \
             {side_policy}\n    image: acme/side:latest\n"
        ))
    };
    let before = pod("acme/app:latest", "Always", "Always");
    let pinned = format!("acme/app:latest@{d}");
    let expected = |pull_policy| {
        [Expected {
            name: "acme/app".to_owned(),
            tag: Some("latest".to_owned()),
            digest: d.clone(),
            required: true,
            pull_policy,
        }]
    };
    let after = pod(&pinned, "IfNotPresent", "Always");
    assert_eq!(prove(&before, &before, &after, &expected(true)), Ok(()));
    // Not asked for: a change like any other.
    assert_eq!(
        prove(&before, &before, &after, &expected(false)),
        Err("the rendering also changes `imagePullPolicy: …` in c/templates/pod.yaml".to_owned())
    );
    // The other container's policy, whose image is not the pinned one.
    let other = pod(&pinned, "Always", "IfNotPresent");
    assert!(prove(&before, &before, &other, &expected(true)).is_err());
    // To anything but IfNotPresent.
    let never = pod(&pinned, "Never", "Always");
    assert!(prove(&before, &before, &never, &expected(true)).is_err());
    // Asked for, and the chart does not pass the value on.
    let unchanged = pod(&pinned, "Always", "Always");
    assert_eq!(
        prove(&before, &before, &unchanged, &expected(true)),
        Err("the rendering sets no `imagePullPolicy: IfNotPresent` beside `acme/app`".to_owned())
    );
}

/// The decisions for one map whose chart renders `sentinel`, `named` and `undigested`.
fn decide_one(values: &str, sentinel: &str, named: &str, undigested: &str) -> Vec<Decision> {
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let renderings = Renderings {
        sentinels: rendering(&[sentinel], ""),
        names: rendering(&[named], ""),
        undigested: rendering(&[undigested], ""),
    };
    decide(&images, &renderings, None)
}

#[test]
fn a_tag_the_chart_writes_more_after_takes_no_digest() {
    let decisions = decide_one(
        "image:\n  repository: acme/app\n  tag: \"1.0\"\n",
        "tpsr0z:99.0.0-tpst0z-alpine",
        "tpsr0z:1.0-alpine",
        "acme/app:1.0-alpine",
    );
    let EditSite::Unsupported { reason } = &decisions[0].site else {
        panic!("{:?}", decisions[0].site)
    };
    assert!(
        reason.starts_with("the chart writes `-alpine` after this map's tag"),
        "{reason}"
    );
    // A prefix (`v{{ .tag }}`) and the digest after the tag are no suffix.
    let decisions = decide_one(
        "image:\n  repository: acme/app\n  tag: \"1.0\"\n",
        "tpsr0z:v99.0.0-tpst0z",
        "tpsr0z:v1.0",
        "acme/app:v1.0",
    );
    assert!(matches!(decisions[0].site, EditSite::SplitTag { .. }));
}

/// A map's name parts are parts, not variants: Strimzi's `name` (joined after the
/// repository) and Kyverno's `defaultRegistry` (the registry when `registry` is empty).
#[test]
fn name_parts_beside_a_map_are_not_switched() {
    let values = "image:\n  registry: quay.io\n  repository: strimzi\n  name: operator\n  tag: 0.22.1\n  debug: false\nkubectl:\n  registry: ~\n  defaultRegistry: registry.k8s.io\n  repository: kubectl\n  tag: '1.32.7'\n";
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let beside: Vec<Vec<&str>> = images
        .candidates
        .iter()
        .map(|c| c.beside.iter().map(|(key, _)| key.as_str()).collect())
        .collect();
    assert_eq!(beside, [vec!["debug"], vec![]]);
}

#[test]
fn keys_beside_a_map_that_may_pick_a_variant_are_switched() {
    let values = "image:\n  repository: acme/app\n  tag: \"1.0\"\n  digest: \"\"\n  pullSecret: \"\"\n  suffix: ''\n  debug: false\n  distroless: true\n  base: debian\n  pullPolicy: IfNotPresent\n  replicas: 2\n  note: \"two words\"\n  mode: \"true\"\n";
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let beside: Vec<(&str, Beside)> = images.candidates[0]
        .beside
        .iter()
        .map(|(key, beside)| (key.as_str(), *beside))
        .collect();
    assert_eq!(
        beside,
        [
            ("pullSecret", Beside::Empty),
            ("suffix", Beside::Empty),
            ("debug", Beside::False),
            ("distroless", Beside::True),
            ("base", Beside::Word)
        ]
    );
    let switched: serde_json::Value = overrides(&images, Render::Switched);
    assert_eq!(switched["image"]["suffix"], sentinel::switched(0, 1));
    assert_eq!(switched["image"]["debug"], true);
    assert_eq!(switched["image"]["distroless"], false);
    assert_eq!(switched["image"]["base"], sentinel::switched(0, 4));
    // The name sentinel, the tag as written, the digest empty, or its sentinel.
    assert_eq!(switched["image"]["repository"], "tpsr0z");
    assert_eq!(switched["image"]["digest"], "");
    assert!(switched["image"].get("tag").is_none());
    let digested = overrides(&images, Render::SwitchedDigested);
    assert_eq!(
        digested["image"]["digest"],
        format!("sha256:{}", digest_hex(0))
    );
    assert_eq!(digested["image"]["suffix"], switched["image"]["suffix"]);
    // A round changes one key.
    let one = overrides(&one_key(&images, &[0], 2), Render::Switched);
    assert_eq!(one["image"]["debug"], true);
    assert!(one["image"].get("suffix").is_none());
    assert!(
        overrides(&one_key(&images, &[], 2), Render::Switched)["image"]
            .get("debug")
            .is_none()
    );
    // The other renderings leave them as written.
    assert!(
        overrides(&images, Render::Sentinels)["image"]
            .get("suffix")
            .is_none()
    );
}

#[test]
fn a_tag_followed_by_a_key_beside_it_is_taken_back() {
    let values = "image:\n  repository: acme/app\n  tag: \"1.0\"\n  pullSecret: \"\"\n  suffix: ''\n  debug: false\n";
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let decide = || decide_one(values, "tpsr0z:99.0.0-tpst0z", "tpsr0z:1.0", "acme/app:1.0");
    let decisions = decide();
    assert!(needs_switched(&images, &decisions));
    let base = rendering(&["tpsr0z:1.0"], "");
    let cases = [
        (
            "tpsr0z:1.0-tpse0x1z",
            SwitchChange::Changed { extends: true },
        ),
        ("tpsr0z-debug:1.0", SwitchChange::Changed { extends: false }),
        ("tpsr0z:1.0", SwitchChange::Unchanged),
        // A key that shows elsewhere, not in the image.
        ("tpsr0z:1.0\n    env: tpse0x0z", SwitchChange::Unchanged),
        // A key that replaces the tag, or the whole image: the digest is not in it then.
        ("tpsr0z:2.0", SwitchChange::Unchanged),
        ("tpse0x0z:2.0", SwitchChange::Gone),
    ];
    for (line, expected) in cases {
        let changes = switch_changes(&images, &decisions, &base, &rendering(&[line], ""));
        assert_eq!(changes, [expected], "{line}");
    }
    // The reason names the keys whose change gave another image.
    let more = "the chart writes more after this map's tag in the image once";
    let another = "the chart writes another image for this map once";
    let named = [
        ((vec![1], true), format!("{more} `image.suffix` changes")),
        (
            (vec![1, 2], false),
            format!("{another} `image.suffix` or `image.debug` changes"),
        ),
    ];
    for (changed, expected) in named {
        let mut decisions = decide();
        take_back_switched(&images, &mut decisions, &[changed]);
        let EditSite::Unsupported { reason } = &decisions[0].site else {
            panic!("{:?}", decisions[0].site)
        };
        assert!(reason.starts_with(&expected), "{reason}");
    }
    let mut decisions = decide();
    take_back_switched(&images, &mut decisions, &[(vec![], false)]);
    assert!(matches!(decisions[0].site, EditSite::SplitTag { .. }));
}

#[test]
fn a_digest_key_beside_a_key_that_picks_another_image_is_taken_back() {
    // node-exporter: `{{ tag | default appVersion }}{{ ternary "-distroless" "" .distroless }}`.
    let values = "image:\n  registry: quay.io\n  repository: prometheus/node-exporter\n  tag: \"\"\n  digest: \"\"\n  distroless: true\n";
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let h0 = digest_hex(0);
    let other = "ab".repeat(32);
    let decide = || {
        decide_one(
            values,
            &format!("tpsg0z.invalid/tpsr0z:99.0.0-tpst0z-distroless@sha256:{h0}"),
            "quay.io/tpsr0z:v1.9.1-distroless",
            "quay.io/prometheus/node-exporter:v1.9.1-distroless",
        )
    };
    let decisions = decide();
    assert!(
        matches!(decisions[0].site, EditSite::SplitDigest { .. }),
        "{decisions:?}"
    );
    assert!(writes_a_digest_key(&decisions, 0));
    let names = rendering(&["quay.io/tpsr0z:v1.9.1-distroless"], "");
    let switched = rendering(&["quay.io/tpsr0z:v1.9.1"], "");
    assert_eq!(
        switch_changes(&images, &decisions, &names, &switched),
        [SwitchChange::Changed { extends: false }]
    );
    // Whether the changed image still pulls the digest key: it does, with or without the tag
    // (a chart that drops the tag once a digest is set ignores the key then, silently); not
    // where another digest key takes over (ingress-nginx's `digestChroot`).
    let cases = [
        (format!("quay.io/tpsr0z:v1.9.1@sha256:{h0}"), true),
        (format!("quay.io/tpsr0z@sha256:{h0}"), true),
        (
            format!("quay.io/tpsr0z-chroot:v1.9.1@sha256:{other}"),
            false,
        ),
        ("quay.io/tpsr0z-chroot:v1.9.1".to_owned(), false),
    ];
    for (line, pulls) in cases {
        assert_eq!(
            pulls_the_digest(0, &rendering(&[&line], "")),
            pulls,
            "{line}"
        );
    }
    let mut decisions = decide();
    take_back_switched(&images, &mut decisions, &[(vec![0], false)]);
    assert_eq!(
        decisions[0].site,
        EditSite::Unsupported {
            reason: "the chart writes another image for this map once `image.distroless` \
                     changes from its value here, and the digest written in `image.digest` \
                     would pull the image of these values in its place"
                .to_owned()
        }
    );
}

#[test]
fn a_digest_key_without_a_value_gets_a_quoted_digest() {
    let h = digest_hex(0);
    let digest = Digest::parse(&format!("sha256:{}", "ab".repeat(32))).unwrap();
    for (values, want) in [
        (
            "image:\n  repository: acme/app\n  tag: \"1.0\"\n  digest:\n",
            "  digest: \"{d}\"\n",
        ),
        (
            "image:\n  repository: acme/app\n  tag: \"1.0\"\n  digest: # none\n",
            "  digest: \"{d}\" # none\n",
        ),
        (
            "image:\n  repository: acme/app\n  tag: \"1.0\"\n  digest: ~\n",
            "  digest: {d}\n",
        ),
        // In a flow mapping the reader's empty value is not where a value would go: the
        // digest goes to the tag.
        (
            "image: {repository: acme/app, tag: \"1.0\", digest: }\n",
            "tag: \"1.0@{d}\", digest: }\n",
        ),
    ] {
        for crlf in [false, true] {
            let values = if crlf {
                values.replace('\n', "\r\n")
            } else {
                values.to_owned()
            };
            let decisions = decide_one(
                &values,
                &format!("tpsr0z:99.0.0-tpst0z@sha256:{h}"),
                "tpsr0z:1.0",
                "acme/app:1.0",
            );
            let mut findings = scan(Path::new("values.yaml"), FileKind::Yaml, &values).unwrap();
            apply(&mut findings, &decisions);
            let edit = findings[0].edit(&digest).unwrap();
            let edited = crate::apply_edits(&values, &[edit]).unwrap();
            let want = want.replace("{d}", &digest.to_string());
            let want = if crlf {
                want.replace('\n', "\r\n")
            } else {
                want
            };
            assert!(
                edited.ends_with(&want),
                "{edited:?} should end with {want:?}"
            );
            assert!(crate::yaml::read(Path::new("v"), &edited, crate::yaml::Mode::Strict).is_ok());
        }
    }
}

#[test]
fn sentinels_never_show_in_a_reason() {
    let h = digest_hex(3);
    let line = format!("image: \"tpsg1z.invalid/tpsr12z:99.0.0-tpst7z@sha256:{h}\" tpsn4z");
    assert_eq!(
        sentinel::mask(&line),
        "image: \"….invalid/…:…@sha256:…\" …".replace("….invalid", "…")
    );
    assert!(sentinel::names_an_image(&line));
    assert!(!sentinel::names_an_image("version: 99.0.0-tpst7z tpsrz"));
}

#[test]
fn maps_under_other_keys_are_found_when_the_chart_renders_them() {
    let values = "redis:\n  enabled: true\n  repository: redis\n  tag: 7.0.7\nconfig:\n  repository: not-an-image\n";
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let renderings = Renderings {
        sentinels: rendering(&["tpsr0z:99.0.0-tpst0z"], ""),
        names: rendering(&["tpsr0z:7.0.7"], ""),
        undigested: rendering(&["redis:7.0.7"], ""),
    };
    let decisions = decide(&images, &renderings, None);
    let seen = scan(Path::new("values.yaml"), FileKind::Yaml, values).unwrap();
    assert!(seen.is_empty(), "{seen:?}");
    let mut findings = unseen_findings(values, &images, &decisions, &seen);
    // Only the map the chart renders as an image: `config` is not one.
    assert_eq!(findings.len(), 1, "{findings:?}");
    apply(&mut findings, &decisions);
    assert_eq!((findings[0].line, findings[0].column), (3, 15));
    assert_eq!(findings[0].status, Status::Floating);
    assert_eq!(findings[0].text, "redis:7.0.7");
    assert!(matches!(findings[0].site, EditSite::SplitTag { .. }));
    // An ignore comment on the map's lines is honoured.
    let ignored = values.replace("tag: 7.0.7", "tag: 7.0.7 # tagpin:ignore");
    let images = values_images(Path::new("values.yaml"), &ignored).unwrap();
    let findings = unseen_findings(&ignored, &images, &decisions, &[]);
    assert_eq!(findings[0].status, Status::Ignored);
}

#[test]
fn an_overlay_that_sets_some_parts_of_a_map_is_a_candidate_at_its_tag() {
    let base = "image:\n  registry: docker.io\n  repository: acme/app\n  tag: \"\"\nsidecar:\n  enabled: false\n  image: {repository: acme/side, tag: \"1\"}\n";
    for crlf in [false, true] {
        let overlay = "image:\n  tag: v2 # prod\nsidecar:\n  image:\n    pullPolicy: Always\nother: {tag: x}\n";
        let overlay = if crlf {
            overlay.replace('\n', "\r\n")
        } else {
            overlay.to_owned()
        };
        let images = overlay_images(
            Path::new("values-prod.yaml"),
            &overlay,
            Path::new("values.yaml"),
            base,
        )
        .unwrap();
        // `sidecar.image` sets no tag or digest, and `other` is no map of the base.
        assert_eq!(images.candidates.len(), 1, "{images:?}");
        let candidate = &images.candidates[0];
        assert_eq!(candidate.path, ["image"]);
        assert_eq!(&overlay[candidate.span.clone()], "v2");
        let Shape::Split {
            name,
            registry,
            tag,
            ..
        } = &candidate.shape
        else {
            panic!("{candidate:?}")
        };
        assert_eq!(
            (name.text.as_str(), registry.as_ref().unwrap().text.as_str()),
            ("acme/app", "docker.io")
        );
        assert_eq!(tag.as_ref().unwrap().span, candidate.span);
        assert_eq!(images.disabled, [vec!["sidecar".to_owned()]]);
    }
}

/// A tag whose anchor an alias uses elsewhere (`appLabel: *ver`, a label in the chart) is not
/// written, whatever the renderings show: the edit would change that value too. Without the
/// alias, the same map takes the digest in its tag.
#[test]
fn an_anchored_tag_that_an_alias_uses_elsewhere_is_not_written() {
    let renderings = Renderings {
        sentinels: rendering(&["tpsr0z:99.0.0-tpst0z"], ""),
        names: rendering(&["tpsr0z:1.0"], ""),
        undigested: rendering(&["acme/app:1.0"], ""),
    };
    let decide_for = |values: &str| {
        let images = values_images(Path::new("values.yaml"), values).unwrap();
        decide(&images, &renderings, None).remove(0)
    };
    let alone = decide_for("image:\n  repository: acme/app\n  tag: &ver \"1.0\"\n");
    assert!(
        matches!(&alone.site, EditSite::SplitTag { tag, .. } if tag == "1.0"),
        "{:?}",
        alone.site
    );
    let aliased =
        decide_for("image:\n  repository: acme/app\n  tag: &ver \"1.0\"\nappLabel: *ver\n");
    assert_eq!(
        aliased.site,
        EditSite::Unsupported {
            reason: "anchor `&ver` (line 3) is also used at line 4; rewriting it would change \
                     every use"
                .to_owned()
        }
    );
    assert!(aliased.other_use);
}

#[test]
fn an_empty_tag_the_chart_builds_around_its_app_version_says_so() {
    // Jenkins: `{{ .Chart.AppVersion }}-{{ .Values.controller.image.tagLabel }}`.
    let values = "image:\n  repository: jenkins/jenkins\n  tag: \"\"\n  tagLabel: jdk17\n";
    let images = values_images(Path::new("values.yaml"), values).unwrap();
    let cases = [
        (
            "tpsr0z:2.452-jdk17",
            "2.452",
            "the tag comes from the chart's appVersion (`2.452`) and more the chart adds to it (the tag is `2.452-jdk17`), and the map has no digest key",
        ),
        (
            "tpsr0z:v1.31.0",
            "2.452",
            "the tag comes from outside this map (`v1.31.0`: another value, the chart, or the cluster's Kubernetes version), and the map has no digest key",
        ),
    ];
    for (named, app_version, expected) in cases {
        let renderings = Renderings {
            sentinels: rendering(&["tpsr0z:99.0.0-tpst0z-jdk17"], ""),
            names: rendering(&[named], ""),
            undigested: rendering(&[&named.replace("tpsr0z", "jenkins/jenkins")], ""),
        };
        let decisions = decide(&images, &renderings, Some(app_version));
        assert_eq!(
            decisions[0].site,
            EditSite::Unsupported {
                reason: expected.to_owned()
            },
            "{named}"
        );
    }
}
