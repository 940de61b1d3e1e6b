//! Kubernetes manifests and plain YAML: a scalar under an `image` key (or one ending in
//! `Image`, such as `kubectlImage`) that parses as a reference, and the pull-policy lint for
//! containers whose tag is `latest`.
//!
//! Not references: schema definitions (a mapping under `properties`) and examples (under
//! `example` or `examples`, as an API description writes them), an `image` scalar beside the
//! keys of a split spec (`repository`, `registry`, `tag`, `version`, `digest`), which names
//! only part of the image (see [`super::helm_values`]), a virtual machine's image (`vmImage`,
//! `osx_image`, `machine: {image: …}`, Cirrus CI's `gce_instance: {image: …}`), and a file (a
//! picture or a disk: `image: assets/logo.png`), the `image` of a Concourse task (the name of
//! an artifact the plan fetched), and every image key of a document that names repositories
//! rather than images to pull (Flux's `ImageRepository`, kbld's `Config`). An image a build
//! makes (a Skaffold artifact, a build's `output`, an image beside `build:`, an `OpenFaaS`
//! function's) is `local`, as is every other use of it in the file, and Kubebuilder's
//! placeholder `controller:latest`.
//!
//! A reference with no tag and no digest (`image: quay.io/ceph/daemon`) is written
//! (`:latest@sha256:…`) only in a pod's containers (or a Tekton step, an Argo template's
//! container): anywhere else another field may complete it (a `tag`, `version`, `hub` or
//! registry key beside it, as Ansible roles, `IstioOperator` and Prometheus' resources do), and
//! a digest would replace what that field gives. It is reported, not written.
//!
//! In a container, the `value` of a `RELATED_IMAGE_*` environment variable is a reference (OLM's
//! convention for the images an operator deploys).
//!
//! A pre-commit hook of `language: docker_image` runs the image its `entry` starts with
//! (`entry: hadolint/hadolint:v2.12.0 hadolint`): that first word is a reference.

use tagpin_reference::ImageReference;

use std::sync::LazyLock;

use super::walk::Words;
use super::{Map, Out, Rules, Seg, helm_values, tekton};
use crate::common::Found;
use crate::{Status, Warning};

/// The rules for the `yaml` and `helm-template` kinds: Kubernetes objects and Helm values.
pub(crate) struct KubernetesAndHelm;

impl Rules for KubernetesAndHelm {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        if flux_image_overrides(map, out) || argo_kustomize_images(map, out) {
            return;
        }
        if map.path.is_empty() {
            ko_base_image_overrides(map, out);
        }
        // Split maps have a `repository` or an `image`; most mappings have neither.
        let interesting = map
            .entries
            .iter()
            .any(|e| is_image_key(e.key) || e.key == "repository");
        if !interesting {
            // A pre-commit hook's keys (`entry`, `language: docker_image`) hold neither.
            if map
                .scalar("language")
                .is_some_and(|language| language.value == "docker_image")
            {
                hook_image(map, out);
            }
            return;
        }
        if map.parent() == Some("properties") || in_schema(map) {
            // A schema (CRD openAPIV3Schema, JSON schema): property definitions and their
            // `default:` and `example:` values, not images anything runs.
            return;
        }
        if out.kubernetes && matches!(map.path, [.., Seg::Key("volumes"), Seg::Item(_)]) {
            image_volume(map, out);
            return;
        }
        if out.role == Role::Policy && in_policy_check(map) {
            // A Kyverno rule's check: an image there is a pattern matched against the images
            // pods name as written (`validate.pattern`), or the image whose signatures to
            // verify (`verifyImages`); a digest would make it match other pods, or none.
            return;
        }
        if out.role == Role::NamesNoImages || map.has("task") {
            // A document that names repositories, not images (Flux scans `spec.image` for
            // tags), and a Concourse plan's task, whose `image` is an artifact's name.
            return;
        }
        let isolation = matches!(
            map.path,
            [
                ..,
                Seg::Key("isolation"),
                Seg::Key("tart" | "vetu" | "parallels")
            ]
        );
        if isolation
            || map
                .parent()
                .is_some_and(|parent| parent == "machine" || parent.ends_with("_instance"))
        {
            // A virtual machine's image (CircleCI's `machine: {image: ubuntu-2204:2024.01.1}`
            // executor, a cluster API machine's, Cirrus CI's `gce_instance`, `macos_instance`,
            // and a persistent worker's Tart, Vetu or Parallels isolation), which no container
            // runtime pulls.
            return;
        }
        let before = out.candidates.len();
        helm_values::split_map(map, out);
        helm_values::name_and_tag_maps(map, out);
        credentialed_images(map, out);
        if let Some(values) = out.chart_values.as_ref().filter(|v| v.contains(map.path)) {
            let reason = values.reason();
            for candidate in &mut out.candidates[before..] {
                candidate.found.unproven = Some(reason.clone());
                candidate.found.pull_policy = None;
            }
        }
        images(map, out);
        if is_container(map.path) {
            related_image_env(map, out);
            if out.kubernetes {
                image_flags(map, out);
            }
        }
    }

    fn words(&self) -> Option<&'static Words> {
        // What `mapping` looks for: an image key (`image`, `*Image`) or a `repository`. A
        // key's value differs from its source only through escapes (`"im\x61ge"`).
        static WORDS: LazyLock<Words> = LazyLock::new(|| Words::new(&["mage", "repository", "\\"]));
        Some(&WORDS)
    }
}

/// Flux's image overrides, the entries of a Kustomize `images:` list that Flux hands to
/// Kustomize: a `Kustomization`'s `spec.images`, a `HelmRelease` post-renderer's
/// `kustomize.images`. Read as a `kustomization.yaml`'s are, from the mapping that holds the
/// list (whose source holds the word the walk looks for; an entry's may not). Whether `map`
/// is that mapping.
fn flux_image_overrides(map: &Map<'_, '_>, out: &mut Out<'_>) -> bool {
    let holds = match out.role {
        Role::FluxKustomization => matches!(map.path, [Seg::Key("spec")]),
        Role::FluxHelmRelease => matches!(
            map.path,
            [
                Seg::Key("spec"),
                Seg::Key("postRenderers"),
                Seg::Item(_),
                Seg::Key("kustomize")
            ]
        ),
        _ => false,
    };
    let Some(images) = map.get("images").filter(|_| holds) else {
        return false;
    };
    let mut entries = Vec::new();
    for (index, item) in map.doc.items(images).iter().enumerate() {
        entries.clear();
        map.doc.entries_into(item, &mut entries);
        let mut path = map.path.to_vec();
        path.extend([Seg::Key("images"), Seg::Item(index)]);
        let entry = Map {
            doc: map.doc,
            at: item,
            path: &path,
            entries: &entries,
            shared: map.shared,
        };
        super::kustomize::image_entry(&entry, out);
    }
    true
}

/// Argo CD's image overrides, a source's `kustomize.images` (an `Application`'s, or the
/// template's of an `ApplicationSet`): strings Argo CD hands to `kustomize edit set image`.
/// Whether `map` is the `kustomize` mapping that holds them.
///
/// - `name=new:tag` (or `name=new`) sets the image named `name` to `new:tag`: the reference is
///   what follows the `=`, pinned there (`name=new:tag@sha256:…`, which every Kustomize reads
///   as that image by digest).
/// - `name:tag` sets the tag of the images named `name`: reported, not written. Kustomize 5
///   reads `name:tag@sha256:…` as the tag and digest of `name`, but Kustomize 4 (Argo CD
///   before 2.7) reads it all as the name, and the override then matches no image.
/// - `name@sha256:…` is pinned; a bare `name` is no override (Kustomize refuses it).
fn argo_kustomize_images(map: &Map<'_, '_>, out: &mut Out<'_>) -> bool {
    let holds = out.role == Role::ArgoApplication
        && matches!(
            map.path,
            [.., Seg::Key("source"), Seg::Key("kustomize")]
                | [.., Seg::Key("sources"), Seg::Item(_), Seg::Key("kustomize")]
        );
    let Some(images) = map.get("images").filter(|_| holds) else {
        return false;
    };
    for item in map.doc.items(images) {
        let Some(scalar) = map.doc.scalar(&item) else {
            continue;
        };
        let written = out.text.get(scalar.span.clone()).unwrap_or_default();
        match written.matches('=').count() {
            0 => {
                let last = written.rsplit('/').next().unwrap_or(written);
                if !last.contains(':') && !written.contains('@') {
                    // A bare name overrides nothing: Kustomize refuses it.
                    continue;
                }
                let Some(candidate) = out.inline(&scalar, "") else {
                    continue;
                };
                let reference = candidate.found.reference.as_ref();
                if reference.is_some_and(|r| r.tag().is_some() && r.digest().is_none()) {
                    candidate.found.site = crate::EditSite::Unsupported {
                        reason: ARGO_TAG_OVERRIDE.to_owned(),
                    };
                }
            }
            1 => {
                let name_end = written.find('=').map_or(0, |at| at + 1);
                out.inline(&scalar, &written[..name_end]);
            }
            _ => {}
        }
    }
    true
}

/// Why an Argo CD `kustomize.images` entry without `=` is not written.
const ARGO_TAG_OVERRIDE: &str = "an Argo CD Kustomize image override without `=` (`name:tag`): \
     Kustomize 4 (Argo CD before 2.7) reads a digest written after it as part of the name, and \
     the override would match no image; written as `name=name:tag`, it is pinned";

/// ko's `.ko.yaml` `baseImageOverrides` (an import path to the base image ko builds it on),
/// beside its `defaultBaseImage`, which the image keys find: each value is pulled as a base.
fn ko_base_image_overrides(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let Some(overrides) = map.get("baseImageOverrides") else {
        return;
    };
    let mut entries = Vec::new();
    map.doc.entries_into(overrides, &mut entries);
    for entry in &entries {
        if let Some(image) = map.doc.scalar(&entry.value) {
            out.inline(&image, "");
        }
    }
}

/// An image volume's `reference` (`volumes: [{name, image: {reference, pullPolicy}}]`,
/// Kubernetes 1.31): kubelet pulls it as it pulls a container's image, and mounts its files.
fn image_volume(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let reference = map
        .get("image")
        .and_then(|image| map.doc.value_of(image, "reference"))
        .and_then(|reference| map.doc.scalar(&reference));
    if let Some(reference) = reference {
        out.inline(&reference, "");
    }
}

/// The `value`s of a container's `RELATED_IMAGE_*` environment variables: by OLM's convention,
/// the images an operator deploys (`quay.io/3scale/apicast:2.14`), which disconnected installs
/// mirror, and need, by digest. Only in a container whose source holds an image key: the walk
/// looks for no other word.
fn related_image_env(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let Some(env) = map.get("env") else {
        return;
    };
    let mut entries = Vec::new();
    for item in map.doc.items(env) {
        entries.clear();
        map.doc.entries_into(&item, &mut entries);
        let scalar = |key: &str| {
            entries
                .iter()
                .find(|e| e.key == key)
                .and_then(|e| map.doc.scalar(&e.value))
        };
        let related = scalar("name").is_some_and(|name| name.value.starts_with("RELATED_IMAGE_"));
        let Some(value) = scalar("value").filter(|_| related) else {
            continue;
        };
        if !out.has_candidate_at(&value.span) {
            out.inline(&value, "");
        }
    }
}

/// A container's flags that name an image its program runs or deploys
/// (`--acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:v1.13.0`,
/// `--config-reloader-image=…`): the reference is written whole after the `=`, and pinned
/// there. Only a `--*-image` flag with a value that has a tag or a digest is read: a bare
/// `--image` names what `kubectl run` pulls but also what `func deploy` builds and pushes, a
/// bare name may be one the program completes, and a flag that names where an image goes
/// ([`names_a_destination`]) or a base the program completes (`--*-base-image`) is no image to
/// pull.
fn image_flags(map: &Map<'_, '_>, out: &mut Out<'_>) {
    for key in ["command", "args"] {
        let Some(list) = map.get(key) else {
            continue;
        };
        for item in map.doc.items(list) {
            let Some(scalar) = map.doc.scalar(&item) else {
                continue;
            };
            let written = out.text.get(scalar.span.clone()).unwrap_or_default();
            let Some((flag, value)) = written
                .strip_prefix("--")
                .and_then(|rest| rest.split_once('='))
            else {
                continue;
            };
            let Some(stem) = flag.strip_suffix("-image").filter(|stem| !stem.is_empty()) else {
                continue;
            };
            let final_part = value.rsplit('/').next().unwrap_or(value);
            let versioned = final_part.contains(':') || value.contains('@');
            if !is_image_key(flag)
                || names_a_destination(stem)
                || !versioned
                || out.has_candidate_at(&scalar.span)
            {
                continue;
            }
            out.inline(&scalar, &written[..written.len() - value.len()]);
        }
    }
}

/// Whether an image flag's name before `-image` says it is written to or completed, not pulled
/// (`--cache-image`, `--output-image`, `--target-image`, prometheus-operator's
/// `--thanos-default-base-image`).
fn names_a_destination(stem: &str) -> bool {
    const WORDS: [&str; 9] = [
        "base",
        "cache",
        "output",
        "target",
        "dest",
        "destination",
        "push",
        "publish",
        "export",
    ];
    let last = stem.rsplit(['-', '_']).next().unwrap_or(stem);
    WORDS.contains(&last)
}

/// An image key's value `{name: account/java:8u66, username: …, password: …}`: a private
/// image with the credentials to pull it (Bitbucket Pipelines; also `email`, or `aws` keys
/// for ECR). The `name` is a whole reference (no `tag` beside it completes it).
fn credentialed_images(map: &Map<'_, '_>, out: &mut Out<'_>) {
    const CREDENTIALS: [&str; 4] = ["username", "password", "email", "aws"];
    let mut entries = Vec::new();
    for entry in map.entries.iter().filter(|e| is_image_key(e.key)) {
        if !map.doc.is_mapping(&entry.value) {
            continue;
        }
        entries.clear();
        map.doc.entries_into(&entry.value, &mut entries);
        let has = |key: &str| entries.iter().any(|e| e.key == key);
        if !CREDENTIALS.iter().any(|key| has(key)) || has("tag") {
            continue;
        }
        let name = entries
            .iter()
            .find(|e| e.key == "name")
            .and_then(|e| map.doc.scalar(&e.value));
        let Some(name) = name else {
            continue;
        };
        if let Some(candidate) = out.inline(&name, "") {
            let untagged = candidate.is_untagged();
            if untagged && candidate.found.status == Status::Floating {
                candidate.found.site = crate::EditSite::Unsupported {
                    reason: UNTAGGED_OUTSIDE_CONTAINERS.to_owned(),
                };
            }
        }
    }
}

/// The image a pre-commit hook of `language: docker_image` runs: the first word of its
/// `entry`, after an `--entrypoint` and its value (`--entrypoint /bin/promtool
/// prom/prometheus:v2.53.0 check rules`, as pre-commit's docs write it); another option is
/// not followed.
fn hook_image(map: &Map<'_, '_>, out: &mut Out<'_>) {
    let Some(entry) = map.scalar("entry") else {
        return;
    };
    let Some(written) = out.text.get(entry.span.clone()) else {
        return;
    };
    let mut words = written
        .split([' ', '\t'])
        .scan(0, |at, word| {
            let start = *at;
            *at += word.len() + 1;
            Some((start, word))
        })
        .filter(|(_, word)| !word.is_empty());
    let mut image = words.next();
    if let Some((_, option)) = image.filter(|(_, w)| w.starts_with("--entrypoint")) {
        if option == "--entrypoint" {
            words.next();
        }
        image = words.next();
    }
    let Some((start, word)) = image.filter(|(_, w)| !w.starts_with('-')) else {
        return;
    };
    let (prefix, rest) = (
        written[..start].to_owned(),
        written[start + word.len()..].to_owned(),
    );
    out.inline_between(&entry, &prefix, &rest);
}

/// Why a reference with no tag and no digest outside a pod's containers is not written.
const UNTAGGED_OUTSIDE_CONTAINERS: &str = "no tag or digest is written, and outside a pod's \
     containers another field may complete this image (a `tag`, `version` or registry key \
     beside it) or the value may name something else: `:latest@sha256:…` is not written here";

/// What a document's `apiVersion` and `kind` make of the image keys under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Images where the key names say so.
    Plain,
    /// Repositories, not images to pull: Flux's `ImageRepository` (`spec.image` is scanned for
    /// tags), kbld's `Config` (its `overrides` match images by name, its `destinations` name
    /// where to push), and OLM's `CatalogSource` (a tag polled for new catalogs).
    NamesNoImages,
    /// A Kyverno policy (`kyverno.io/v1`, `policies.kyverno.io/v1alpha1`), whose rules'
    /// checks hold patterns of images.
    Policy,
    /// A Tekton `StepAction`, whose `spec.image` a step runs.
    StepAction,
    /// Flux's `Kustomization`, whose `spec.images` Kustomize applies.
    FluxKustomization,
    /// Flux's `HelmRelease`, whose post-renderers may hold Kustomize `images`.
    FluxHelmRelease,
    /// An Argo CD `Application` or `ApplicationSet`, whose sources' `kustomize.images` Argo CD
    /// hands to `kustomize edit set image`.
    ArgoApplication,
}

impl Role {
    pub(crate) fn of(api: Option<&str>, kind: Option<&str>) -> Self {
        let (Some(api), Some(kind)) = (api, kind) else {
            return Self::Plain;
        };
        if api.starts_with("image.toolkit.fluxcd.io/") && kind == "ImageRepository"
            || api.starts_with("kbld.k14s.io/")
            // OLM polls a catalog's tag for new content (`updateStrategy.registryPoll`), or
            // rewrites it from `olm.catalogImageTemplate`.
            || api.starts_with("operators.coreos.com/") && kind == "CatalogSource"
        {
            Self::NamesNoImages
        } else if api.starts_with("kyverno.io/") || api.starts_with("policies.kyverno.io/") {
            Self::Policy
        } else if api.starts_with("tekton.dev/") && kind == "StepAction" {
            Self::StepAction
        } else if api.starts_with("kustomize.toolkit.fluxcd.io/") && kind == "Kustomization" {
            Self::FluxKustomization
        } else if api.starts_with("helm.toolkit.fluxcd.io/") && kind == "HelmRelease" {
            Self::FluxHelmRelease
        } else if api.starts_with("argoproj.io/")
            && matches!(kind, "Application" | "ApplicationSet")
        {
            Self::ArgoApplication
        } else {
            Self::Plain
        }
    }
}

/// Whether `map` is inside a Kyverno rule's check (what it validates, verifies, matches or
/// excludes, its preconditions), not what it generates or patches in.
fn in_policy_check(map: &Map<'_, '_>) -> bool {
    map.path.iter().any(|seg| {
        matches!(
            seg,
            Seg::Key(
                "validate" | "verifyImages" | "validations" | "preconditions" | "match" | "exclude"
            )
        )
    })
}

/// The keys that, beside an `image` scalar, make it the name part of a split spec.
pub(crate) const SPLIT_KEYS: [&str; 5] = ["repository", "registry", "tag", "version", "digest"];

pub(crate) fn is_image_key(key: &str) -> bool {
    let stem = key
        .strip_suffix("_image")
        .or_else(|| key.strip_suffix("-image"))
        .or_else(|| key.strip_suffix("Image"));
    match stem {
        Some(stem) => !ends_with_word(stem, &SWITCH_WORDS) && !ends_with_word(stem, &MACHINE_WORDS),
        None => key.ends_with("image"),
    }
}

/// The words that, just before `Image`, name a virtual machine's or a disk's image, which no
/// container runtime pulls: Azure Pipelines' `pool: {vmImage: ubuntu-latest}`, a
/// `machineImage`, Travis CI's `osx_image: xcode15.4`, a node's `osImage`.
/// Home Assistant's `camera_image: camera.front_door` names a camera.
const MACHINE_WORDS: [&str; 9] = [
    "vm", "machine", "osx", "macos", "os", "disk", "boot", "ami", "camera",
];

/// The words that, just before `Image`, make a key a switch about images rather than an image:
/// Jenkins' `alwaysPullImage: true`, `skipImage`, `forcePushImage`.
const SWITCH_WORDS: [&str; 11] = [
    "always", "pull", "push", "skip", "force", "enable", "disable", "verify", "sign", "prune",
    "keep",
];

/// Whether the last word of the camel-case or snake-case `stem` (`alwaysPull`: `Pull`,
/// `always_pull`: `pull`) is one of `words`.
fn ends_with_word(stem: &str, words: &[&str]) -> bool {
    // An ASCII letter or separator: a boundary to slice at.
    let word = match stem.rfind(['_', '-']) {
        Some(separator) => &stem[separator + 1..],
        None => &stem[stem.rfind(|c: char| c.is_ascii_uppercase()).unwrap_or(0)..],
    };
    words.iter().any(|w| word.eq_ignore_ascii_case(w))
}

/// Whether `map` is inside a CRD's schema, or an example of an API description.
fn in_schema(map: &Map<'_, '_>) -> bool {
    map.path.iter().any(|seg| {
        matches!(
            seg,
            Seg::Key("openAPIV3Schema" | "openAPIV2Schema" | "example" | "examples")
        )
    })
}

/// The endings of files that an `image` key may name: pictures (a site's or an app's logo), disk
/// images and archives. None is a registry's image, which no one names so.
const FILE_ENDINGS: [&str; 21] = [
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".bmp", ".tif", ".tiff", ".avif",
    ".heic", ".qcow2", ".img", ".iso", ".vmdk", ".vhd", ".vhdx", ".tar", ".tgz", ".gz",
];

/// Whether `value` names a file (`assets/logo.png`, `disk.qcow2`): it ends in one of
/// [`FILE_ENDINGS`], and has no tag and no digest after it.
pub(crate) fn names_a_file(value: &str) -> bool {
    let value = value.trim_matches(['"', '\'']);
    let last = value.rsplit('/').next().unwrap_or(value);
    !last.contains([':', '@'])
        && FILE_ENDINGS.iter().any(|ending| {
            last.len() > ending.len()
                && last.as_bytes()[last.len() - ending.len()..]
                    .eq_ignore_ascii_case(ending.as_bytes())
        })
}

/// Whether the `image` scalar of `map` names only part of a split spec. A `version` beside
/// an `image` that is a whole reference (a `/` or a `:` in it) is a custom resource's version
/// field (Prometheus, Alertmanager), not its tag.
fn names_a_part(map: &Map<'_, '_>, out: &Out<'_>) -> bool {
    if SPLIT_KEYS
        .iter()
        .filter(|key| **key != "version")
        .any(|key| map.has(key))
    {
        return true;
    }
    map.has("version")
        && map
            .scalar("image")
            .and_then(|image| out.text.get(image.span))
            .is_none_or(|image| !image.contains(['/', ':']))
}

/// The image of a gateway's container that Istio's injector fills in (`image: auto`).
const ISTIO_INJECTED: &str = "auto";

fn images(map: &Map<'_, '_>, out: &mut Out<'_>) {
    // Only an image key's scalar is read below: a chart's `image: {repository, tag}` leaves
    // its mapping nothing to read here, and the checks that follow need not be asked.
    let reads_a_scalar = map
        .entries
        .iter()
        .any(|e| is_image_key(e.key) && map.doc.scalar(&e.value).is_some());
    if !reads_a_scalar || names_a_part(map, out) {
        return;
    }
    let in_container_list = is_container(map.path);
    // Kubelet pulls it: a CI pipeline's steps are no pod's.
    let kubelet_pulls = in_container_list && (out.kubernetes || !is_step(map.path));
    // A step or service of a pipeline that keys them by name (Woodpecker's `steps.build`,
    // `services.db`): its image is pulled as written, `latest` when it has no tag.
    let named_step = !out.kubernetes
        && matches!(map.path, [Seg::Key("steps" | "services"), Seg::Key(_)])
        // A Tekton `StepAction`'s image, which the steps that use it run.
        || out.role == Role::StepAction && matches!(map.path, [Seg::Key("spec")]);
    // `imagePullPolicy: Never`: the image must be on the node already (loaded with `kind load`
    // or built there); it is never pulled, and a registry's digest would not name it.
    let built = names_what_is_built(map)
        || map
            .scalar("imagePullPolicy")
            .is_some_and(|policy| policy.value == "Never");
    for entry in map.entries {
        if !is_image_key(entry.key) {
            continue;
        }
        let Some(mut scalar) = map.doc.scalar(&entry.value) else {
            continue;
        };
        let mut written = out.text.get(scalar.span.clone()).unwrap_or_default();
        // A Tekton step's image given as a parameter: the reference is the parameter's default.
        let mut param_read_elsewhere = None;
        let param = tekton::param_name(written).filter(|_| out.kubernetes);
        if let Some(name) = param {
            let Some((default, elsewhere)) = tekton::param_default(map, out, name) else {
                continue;
            };
            if out.has_candidate_at(&default.span) {
                continue;
            }
            written = out.text.get(default.span.clone()).unwrap_or_default();
            scalar = default;
            param_read_elsewhere = elsewhere;
        }
        if names_a_base(entry.key, written) || names_a_file(written) || is_codebuild_image(written)
        {
            continue;
        }
        if in_container_list && written == ISTIO_INJECTED {
            // Istio's gateway injection: the injector replaces the literal `auto` with the
            // proxy's image when the pod is created; no registry holds an image named so.
            out.push(
                Found::templated(scalar.span.clone(), written),
                Some(scalar.at.clone()),
            );
            continue;
        }
        let managed = out.managed();
        let Some(candidate) = out.inline(&scalar, "") else {
            continue;
        };
        if built && candidate.found.status != Status::Templated {
            candidate.found.status = Status::Local;
            continue;
        }
        if let Some(reason) = managed
            && candidate.found.status != Status::Templated
        {
            candidate.found.status = Status::Ignored;
            candidate.found.site = crate::EditSite::Unsupported {
                reason: reason.to_owned(),
            };
            continue;
        }
        if let Some(reason) = param_read_elsewhere {
            candidate.found.site = crate::EditSite::Unsupported { reason };
            continue;
        }
        let untagged = candidate.is_untagged();
        if untagged
            && !in_container_list
            && !named_step
            && candidate.found.status == Status::Floating
        {
            candidate.found.site = crate::EditSite::Unsupported {
                reason: UNTAGGED_OUTSIDE_CONTAINERS.to_owned(),
            };
        }
        // A parameter's default is no container's line to add a policy after.
        let lint = kubelet_pulls
            && param.is_none()
            && entry.key == "image"
            && !map.has("imagePullPolicy")
            && candidate.found.reference.as_ref().is_some_and(pulls_always);
        if lint {
            candidate.found.warnings.push(Warning::LatestPullsAlways);
            let insertion = pull_policy_insertion(map, &scalar.span, out);
            out.last_candidate().found.pull_policy = insertion;
        }
    }
}

/// The edit that adds `imagePullPolicy: IfNotPresent` to the container `map`, whose `image`
/// value is at `image`. In a block mapping the new line goes right after the `image:` line,
/// at its key's indentation: in a Helm template it is then in whatever branch the image is.
/// In a one-line flow mapping it goes before the `}`. Refused (`None`) for a mapping reached
/// through an alias or anchored, an `image:` line that holds anything but the key, the value
/// and a comment, or a Helm action on the lines written to.
fn pull_policy_insertion(
    map: &Map<'_, '_>,
    image: &std::ops::Range<usize>,
    out: &Out<'_>,
) -> Option<crate::Edit> {
    if map.shared || !map.at.chain.is_empty() {
        return None;
    }
    let text = out.text;
    let line_start = text[..image.start].rfind('\n').map_or(0, |i| i + 1);
    let point = if let Some(column) = block_key_column(&text[line_start..image.start]) {
        let point = super::insert::block_point(text, line_start + column, image.end)?;
        // After the value: its closing quote, spaces, a comment; nothing else.
        let tail = text[image.end..point.at]
            .trim_start_matches(['"', '\''])
            .trim();
        if !(tail.is_empty() || tail.starts_with('#')) || out.masked(line_start..point.at) {
            return None;
        }
        point
    } else {
        let point = super::insert::entry_point(map, out.structure)?;
        let mapping = map.doc.tree.node(map.at.node).span;
        if point.lead.starts_with(['\r', '\n'])
            || out.masked(mapping.start as usize..mapping.end as usize)
        {
            return None;
        }
        point
    };
    Some(crate::Edit {
        span: point.at..point.at,
        replacement: point.entry("imagePullPolicy", "IfNotPresent"),
    })
}

/// Where the `image` key starts in `before`, the text of its line before the value, when the
/// line is only indentation, sequence dashes, the key and a quote (`    - image: "`), in ASCII.
fn block_key_column(before: &str) -> Option<usize> {
    if !before.is_ascii() {
        return None;
    }
    let mut rest = before.trim_start_matches(' ');
    while let Some(after) = rest.strip_prefix('-') {
        let trimmed = after.trim_start_matches(' ');
        if trimmed.len() == after.len() {
            return None;
        }
        rest = trimmed;
    }
    let key = ["image:", "\"image\":", "'image':"]
        .into_iter()
        .find(|key| rest.starts_with(key))?;
    // Spaces, then the value's opening quote when it is quoted.
    let gap = rest[key.len()..].trim_start_matches(' ');
    matches!(gap, "" | "'" | "\"").then_some(before.len() - rest.len())
}

/// Whether `value`, under `key`, is a name another field completes: a `baseImage` with no tag
/// and no digest. The `TiDB` operator builds `pd: {baseImage: pingcap/pd}` into
/// `pingcap/pd:<spec.version>`; a base image used whole names its tag.
fn names_a_base(key: &str, value: &str) -> bool {
    key.strip_suffix("Image")
        .is_some_and(|stem| ends_with_word(stem, &["base"]))
        && !value.contains(['@', '{', '$'])
        && !value.rsplit('/').next().unwrap_or(value).contains(':')
}

/// Whether `map` names the image a build makes, as compose's `image` beside `build:` does:
/// a Skaffold artifact (`build.artifacts[]`, and the artifacts one requires, `requires[]`),
/// a build's `output` (Strimzi's `spec.build.output`, Shipwright's `spec.output`), an image
/// beside `build:` (a compose file not named as one: a Swarm `docker-stack.yml`) or beside a
/// `dockerfile` (Garden's modules), `DevSpace`'s `images.<name>.image`, an `OpenFaaS`
/// function (`functions.<name>: {lang, handler, image}`, which `faas-cli build` tags), an
/// Okteto manifest's `build.<name>.image`, or a Kamal deploy file's `image`. That image is
/// pushed, not pulled: `local`.
fn names_what_is_built(map: &Map<'_, '_>) -> bool {
    let path = map.path;
    let artifact = match path {
        [before @ .., Seg::Key("artifacts"), Seg::Item(_)]
        | [
            before @ ..,
            Seg::Key("artifacts"),
            Seg::Item(_),
            Seg::Key("requires"),
            Seg::Item(_),
        ] => before.contains(&Seg::Key("build")),
        _ => false,
    };
    artifact
        || matches!(
            path,
            // DevSpace's `images.<name>.image`: what `devspace build` makes.
            [.., Seg::Key("output")] | [Seg::Key("build" | "images"), Seg::Key(_)]
        )
        || builds_beside(map)
        || map.has("lang") && map.has("handler")
        // Kamal's `config/deploy.yml`: the image `kamal build` makes (its accessories'
        // images are pulled).
        || path.is_empty() && map.has("service") && map.has("builder")
}

/// Whether `map` has a compose-style `build:` beside its image: a path (`build: .`), or a
/// mapping with a `context` or `dockerfile` (not Strimzi's `build: {output, plugins}`, whose
/// `spec.image` is still pulled).
fn builds_beside(map: &Map<'_, '_>) -> bool {
    // Garden's container module, DevSpace's and werf's images: the Dockerfile beside.
    if map.has("dockerfile") {
        return true;
    }
    let Some(build) = map.get("build") else {
        return false;
    };
    if map.doc.scalar(build).is_some() {
        return true;
    }
    let mut entries = Vec::new();
    map.doc.entries_into(build, &mut entries);
    entries
        .iter()
        .any(|e| matches!(e.key, "context" | "dockerfile"))
}

/// Whether `value` names one of AWS `CodeBuild`'s curated images (`aws/codebuild/standard:7.0`
/// in a `CloudFormation` `Environment`), which `CodeBuild` provides and no registry serves.
fn is_codebuild_image(value: &str) -> bool {
    value
        .trim_matches(['"', '\''])
        .starts_with("aws/codebuild/")
}

/// Whether the mapping at `path` is a container whose `image` kubelet pulls: an item of a pod's
/// `containers`, `initContainers` or `ephemeralContainers` (also an Argo Workflows template's
/// `initContainers` and `containerSet.containers`), of a Tekton task's `steps` or `sidecars`
/// (Argo's `sidecars` too), a Tekton `stepTemplate`, or an Argo Workflows template's
/// `container` or `script` (only under `templates[]`: a `container:` key elsewhere is not
/// known to be one).
fn is_container(path: &[Seg<'_>]) -> bool {
    matches!(
        path,
        [
            ..,
            Seg::Key(
                "containers" | "initContainers" | "ephemeralContainers" | "steps" | "sidecars"
            ),
            Seg::Item(_)
        ] | [.., Seg::Key("stepTemplate")]
            | [
                ..,
                Seg::Key("templates"),
                Seg::Item(_),
                Seg::Key("container" | "script")
            ]
    )
}

/// Whether `path` is a step's: Tekton's (a container, in a Kubernetes document) or a CI
/// system's (Drone's and Woodpecker's `steps`, which kubelet never sees).
fn is_step(path: &[Seg<'_>]) -> bool {
    matches!(
        path,
        [.., Seg::Key("steps"), Seg::Item(_)] | [.., Seg::Key("stepTemplate")]
    )
}

/// Whether kubelet defaults a container with this image to `imagePullPolicy: Always`: the tag
/// is `latest`, written (a digest does not clear it) or implied (no tag and no digest).
pub(super) fn pulls_always(reference: &ImageReference) -> bool {
    match reference.tag() {
        Some(tag) => tag == "latest",
        None => reference.digest().is_none(),
    }
}
