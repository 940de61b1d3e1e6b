//! What a compose file says of the Dockerfiles its services build, which no reading of the
//! Dockerfile alone tells:
//!
//! - A name its `build.additional_contexts` gives (`base: service:base`, `alpine:
//!   docker-image://alpine:3.19`) is what that service's Dockerfile reads by that name in a
//!   `FROM`, `COPY --from` or `RUN --mount=…,from=`: `BuildKit` looks such a name up among the
//!   named contexts before any registry (in its familiar form, without a `:latest`). Written
//!   with a digest, the name would match no context: the build would pull the registry's
//!   `base`, or the registry's latest `alpine` instead of the context's 3.19.
//! - An image another service of the file builds (`image:` beside `build:`) is, in the
//!   Dockerfiles of the file's services, the build compose has just made (Docker's "use
//!   another service's image as the base image"): a digest would freeze it to whatever the
//!   registry holds under that name, or to nothing.
//!
//! Both are `local` there: no registry is asked for them. So is, in a shell script or a
//! Makefile of the run, an image a compose service builds (`docker compose build`, then
//! `docker run ghcr.io/acme/app:1.0` to test it): a digest would run the registry's image in
//! place of the build. In a GitHub workflow or a GitLab pipeline, such an image is `local`
//! when the file itself runs a compose command that builds (`docker compose build`, `up`,
//! `run`, `create`): its later steps and jobs run the build, or what the pipeline pushed of it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;
use tagpin_formats::{FileKind, Status};
use tagpin_reference::{ImageReference, TagKey};

use crate::commands::ScannedFile;
use crate::read::Identity;

/// A compose file larger than this is not read again here.
const MAX_SIZE: u64 = 4 << 20;

/// The compose files met on a walk (with or without findings of their own).
#[derive(Debug, Default)]
pub struct ComposeFiles {
    found: Mutex<Vec<PathBuf>>,
}

/// What a Dockerfile's compose files say of the names it reads.
#[derive(Default)]
struct Local {
    /// Its service's named contexts.
    contexts: HashSet<TagKey>,
    /// The images its compose file's services build.
    built: HashSet<TagKey>,
}

impl ComposeFiles {
    /// Notes `path` when it is a compose file. Most files are not: the lock is taken only for
    /// those that are.
    pub fn note(&self, path: &Path, kind: FileKind) {
        if kind == FileKind::Compose {
            self.found
                .lock()
                .expect("no panics while holding the lock")
                .push(path.to_path_buf());
        }
    }

    /// Marks `local` the Dockerfile references in `files` that read a named context or an
    /// image another service builds (see the module's docs).
    pub fn mark(self, files: &mut [ScannedFile]) {
        let found = self
            .found
            .into_inner()
            .expect("no panics while holding the lock");
        let mut by_dockerfile: HashMap<Identity, Local> = HashMap::new();
        let mut built = HashSet::new();
        for path in &found {
            if let Some(document) = crate::read::yaml_document(path, MAX_SIZE) {
                built.extend(learn(path, &document, &mut by_dockerfile));
            }
        }
        if built.is_empty() && by_dockerfile.is_empty() {
            return;
        }
        for file in files.iter_mut() {
            let local = file.identity.and_then(|id| by_dockerfile.get(&id));
            // Asked of a pipeline once, when one of its images is built.
            let mut builds_with_compose = None;
            for finding in &mut file.findings {
                if !matches!(finding.status, Status::Floating | Status::Pinned) {
                    continue;
                }
                let Some(reference) = &finding.reference else {
                    continue;
                };
                // A script that runs what `docker compose build` made: the build, as a
                // Dockerfile's `FROM` of a sibling's image is.
                let reads = match finding.kind {
                    FileKind::Dockerfile => local.is_some_and(|local| local.reads(reference)),
                    FileKind::Shell => built.contains(&reference.tag_key()),
                    // A pipeline that runs compose: its steps' images are its builds too.
                    FileKind::Workflow | FileKind::GitlabCi => {
                        built.contains(&reference.tag_key())
                            && *builds_with_compose
                                .get_or_insert_with(|| runs_compose_build(&file.path))
                    }
                    _ => false,
                };
                if reads {
                    finding.status = Status::Local;
                }
            }
        }
    }
}

/// A pipeline file larger than this is not read again here.
const MAX_PIPELINE_SIZE: u64 = 1 << 20;

/// Whether the pipeline file at `path` runs a compose command that builds its services'
/// images (`docker compose build`, `docker-compose up`, `compose run` and `compose create`
/// build an image that is missing), so that its later steps run the builds.
fn runs_compose_build(path: &Path) -> bool {
    crate::read::text_up_to(path, MAX_PIPELINE_SIZE)
        .is_some_and(|text| text.lines().any(builds_with_compose))
}

/// Whether a command `line` runs compose with a command that builds.
fn builds_with_compose(line: &str) -> bool {
    // Each command of the line on its own (`&&`, `||`, `;`, `|`, `&` end one).
    line.split([';', '|', '&']).any(|command| {
        let mut words = command
            .split_whitespace()
            .skip_while(|word| !matches!(*word, "compose" | "docker-compose" | "podman-compose"));
        words.next().is_some()
            && words.any(|word| matches!(word, "build" | "up" | "run" | "create"))
    })
}

impl Local {
    fn reads(&self, reference: &ImageReference) -> bool {
        let key = reference.tag_key();
        // A name with a digest is no context's name.
        (reference.digest().is_none() && self.contexts.contains(&key)) || self.built.contains(&key)
    }
}

/// Adds what the compose file at `path` (its `document`) says of each Dockerfile it builds;
/// the images its services build.
fn learn(
    path: &Path,
    document: &Value,
    by_dockerfile: &mut HashMap<Identity, Local>,
) -> Vec<TagKey> {
    let Some(services) = document.get("services").and_then(Value::as_object) else {
        return Vec::new();
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let builds: Vec<(&Value, serde_json::Map<String, Value>)> = services
        .values()
        .filter_map(|service| Some((service, build_of(service)?)))
        .collect();
    let built: Vec<TagKey> = builds
        .iter()
        .filter_map(|(service, _)| service.get("image")?.as_str())
        .filter_map(key_of)
        .collect();
    for (_, build) in &builds {
        let Some((dockerfile, _)) = crate::compose_build_args::dockerfile_of(dir, build) else {
            continue;
        };
        let Some(identity) = crate::commands::identity(&dockerfile) else {
            continue;
        };
        let local = by_dockerfile.entry(identity).or_default();
        local.built.extend(built.iter().cloned());
        local
            .contexts
            .extend(context_names(build.get("additional_contexts")).filter_map(key_of));
    }
    built
}

/// A service's `build` as a mapping: `build: ./dir` is `{context: ./dir}`.
fn build_of(service: &Value) -> Option<serde_json::Map<String, Value>> {
    match service.get("build")? {
        Value::Object(build) => Some(build.clone()),
        Value::String(context) => Some(serde_json::Map::from_iter([(
            "context".to_owned(),
            Value::String(context.clone()),
        )])),
        _ => None,
    }
}

/// The names of `additional_contexts`, a mapping or a list of `name=value`.
fn context_names(contexts: Option<&Value>) -> Box<dyn Iterator<Item = &str> + '_> {
    match contexts {
        Some(Value::Object(map)) => Box::new(map.keys().map(String::as_str)),
        Some(Value::Array(items)) => Box::new(
            items
                .iter()
                .filter_map(|item| Some(item.as_str()?.split_once('=')?.0.trim())),
        ),
        _ => Box::new(std::iter::empty()),
    }
}

/// The name an image or a context is known by, normalised as `BuildKit` normalises a context's
/// name (`alpine` is `docker.io/library/alpine:latest`); `None` for what names no image.
fn key_of(name: &str) -> Option<TagKey> {
    ImageReference::parse(name)
        .ok()
        .map(|reference| reference.tag_key())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compose_command_that_builds_is_known() {
        for (line, expected) in [
            ("docker compose build", true),
            ("- docker-compose -f ci.yml up -d", true),
            ("podman-compose run --rm app true", true),
            ("docker compose create && docker compose start", true),
            ("docker compose push", false),
            ("docker compose down && docker build -t app .", false),
            ("docker compose pull; docker run app up", false),
            ("docker run --rm app:1 build", false),
        ] {
            assert_eq!(builds_with_compose(line), expected, "{line}");
        }
    }

    fn keys(names: &[&str]) -> HashSet<TagKey> {
        names.iter().filter_map(|name| key_of(name)).collect()
    }

    #[test]
    fn a_dockerfile_learns_its_contexts_and_its_siblings_builds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::create_dir_all(root.join("base")).unwrap();
        std::fs::write(root.join("app/Dockerfile"), "FROM base\n").unwrap();
        std::fs::write(root.join("base/Dockerfile"), "FROM alpine\n").unwrap();
        std::fs::write(root.join("Other.dockerfile"), "FROM alpine\n").unwrap();
        let compose = "services:\n  base:\n    build: ./base\n    image: ghcr.io/acme/base\n  \
                       app:\n    build:\n      context: app\n      additional_contexts:\n        \
                       - base=service:base\n        - alpine=docker-image://alpine:3.19\n  \
                       other:\n    build: {dockerfile: Other.dockerfile}\n  \
                       db:\n    image: postgres:16\n";
        let path = root.join("compose.yaml");
        let document = crate::read::yaml_document_of(&path, compose).unwrap();
        let mut learnt = HashMap::new();
        let built = learn(&path, &document, &mut learnt);
        assert_eq!(
            built,
            keys(&["ghcr.io/acme/base:latest"])
                .into_iter()
                .collect::<Vec<_>>()
        );
        assert_eq!(learnt.len(), 3);
        let of = |file: &str| &learnt[&crate::commands::identity(&root.join(file)).unwrap()];
        let app = of("app/Dockerfile");
        assert_eq!(app.contexts, keys(&["base", "alpine:latest"]));
        assert_eq!(app.built, keys(&["ghcr.io/acme/base:latest"]));
        assert!(of("base/Dockerfile").contexts.is_empty());
        assert!(of("Other.dockerfile").contexts.is_empty());
        let reads = |text: &str| app.reads(&ImageReference::parse(text).unwrap());
        assert!(reads("base"));
        assert!(reads("docker.io/library/alpine:latest"));
        assert!(reads(
            "ghcr.io/acme/base:latest@sha256:0000000000000000000000000000000000000000000000000000000000000000"
        ));
        assert!(!reads("alpine:3.19"), "another tag is no context's name");
        assert!(!reads(
            "alpine@sha256:0000000000000000000000000000000000000000000000000000000000000000"
        ));
        assert!(!reads("postgres:16"), "pulled, not built");
    }
}
