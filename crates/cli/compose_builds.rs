//! Compose services whose `build:` is in another file: the `image:` then names what
//! `docker compose build` makes, as it does beside a `build:` in the same file (which the
//! scanner reads), and is `local`.
//!
//! Two ways compose joins files:
//! - the override file it loads by default beside the main one (`docker-compose.yml` and
//!   `docker-compose.override.yml`, `compose.yaml` and `compose.override.yaml`): a service's
//!   `build:` in either one builds the `image:` either one names;
//! - `extends: {file: base.yml, service: app-base}`: a service takes the other file's service,
//!   its `build:` included (followed through further `extends`, a few steps at most).
//!
//! A file named with `-f` on the command line (`compose.prod.yaml`) is not known here.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tagpin_formats::{FileKind, Status};

use crate::commands::ScannedFile;

/// How many `extends` steps are followed.
const MAX_EXTENDS: usize = 4;

/// A compose file larger than this is not read again here.
const MAX_SIZE: u64 = 4 << 20;

/// Marks `local` every floating or pinned compose reference in `files` that a service built in
/// another compose file names.
pub fn mark_built(files: &mut [ScannedFile]) {
    for file in files.iter_mut() {
        let reads = |finding: &tagpin_formats::Finding| {
            finding.kind == FileKind::Compose
                && matches!(finding.status, Status::Floating | Status::Pinned)
        };
        if !file.findings.iter().any(reads) {
            continue;
        }
        let built = built_elsewhere(&file.path);
        if built.is_empty() {
            continue;
        }
        for finding in file.findings.iter_mut().filter(|f| reads(f)) {
            if built.contains(finding.text.as_str()) {
                finding.status = Status::Local;
            }
        }
    }
}

/// The `image:` texts of the services of the compose file at `path` that another file builds.
fn built_elsewhere(path: &Path) -> HashSet<String> {
    let mut images = HashSet::new();
    let Some(document) = read(path) else {
        return images;
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let partner_built: HashSet<String> = partners(path)
        .iter()
        .filter_map(|partner| read(partner))
        .flat_map(|partner| built_services(&partner))
        .collect();
    let Some(services) = document.get("services").and_then(Value::as_object) else {
        return images;
    };
    for (name, service) in services {
        let Some(image) = service.get("image").and_then(Value::as_str) else {
            continue;
        };
        if partner_built.contains(name) || extends_a_build(dir, service, MAX_EXTENDS) {
            images.insert(image.to_owned());
        }
    }
    images
}

/// The files compose loads together with the one at `path`: its override file, or the main
/// file of an override.
fn partners(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
        return Vec::new();
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let names: &[&str] = match name {
        "docker-compose.yml" | "docker-compose.yaml" => &[
            "docker-compose.override.yml",
            "docker-compose.override.yaml",
        ],
        "compose.yml" | "compose.yaml" => &["compose.override.yml", "compose.override.yaml"],
        "docker-compose.override.yml" | "docker-compose.override.yaml" => {
            &["docker-compose.yml", "docker-compose.yaml"]
        }
        "compose.override.yml" | "compose.override.yaml" => &["compose.yml", "compose.yaml"],
        _ => &[],
    };
    names
        .iter()
        .map(|name| dir.join(name))
        .filter(|path| path.is_file())
        .collect()
}

/// The services of `document` that have a `build:`.
fn built_services(document: &Value) -> Vec<String> {
    document
        .get("services")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, service)| service.get("build").is_some_and(|build| !build.is_null()))
        .map(|(name, _)| name.clone())
        .collect()
}

/// Whether `service` (of a file in `dir`) extends, through another file, a service with a
/// `build:`.
fn extends_a_build(dir: &Path, service: &Value, steps: usize) -> bool {
    if steps == 0 {
        return false;
    }
    let Some(extends) = service.get("extends") else {
        return false;
    };
    let Some(file) = extends.get("file").and_then(Value::as_str) else {
        // `extends: other` or one without a file: a service of the same file, which the
        // scanner reads.
        return false;
    };
    let Some(name) = extends.get("service").and_then(Value::as_str) else {
        return false;
    };
    let path = dir.join(file);
    let Some(base) = read(&path).and_then(|document| document.get("services")?.get(name).cloned())
    else {
        return false;
    };
    base.get("build").is_some_and(|build| !build.is_null())
        || extends_a_build(path.parent().unwrap_or(dir), &base, steps - 1)
}

/// The compose file at `path` as JSON, when it can be read as one.
fn read(path: &Path) -> Option<Value> {
    crate::read::yaml_document(path, MAX_SIZE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }

    #[test]
    fn a_service_built_by_the_override_file_or_an_extended_file_is_built_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            &[
                (
                    "docker-compose.yml",
                    "services:\n  web:\n    image: example/web:dev\n  db:\n    image: postgres:16\n  worker:\n    extends:\n      file: base.yml\n      service: app-base\n    image: example/worker:dev\n",
                ),
                (
                    "docker-compose.override.yml",
                    "services:\n  web:\n    build: .\n",
                ),
                (
                    "base.yml",
                    "services:\n  app-base:\n    extends: {file: deeper.yml, service: built}\n",
                ),
                (
                    "deeper.yml",
                    "services:\n  built:\n    build: {context: .}\n",
                ),
            ],
        );
        let built = built_elsewhere(&root.join("docker-compose.yml"));
        let mut built: Vec<&str> = built.iter().map(String::as_str).collect();
        built.sort_unstable();
        assert_eq!(built, ["example/web:dev", "example/worker:dev"]);
        // The override file's own images, built by the main file's services.
        write(
            root,
            &[
                ("compose.yaml", "services:\n  api:\n    build: ./api\n"),
                (
                    "compose.override.yaml",
                    "services:\n  api:\n    image: example/api:1\n  cache:\n    image: redis:7\n",
                ),
            ],
        );
        let built = built_elsewhere(&root.join("compose.override.yaml"));
        assert_eq!(built.into_iter().collect::<Vec<_>>(), ["example/api:1"]);
        // A cycle of extends ends; odd files give nothing.
        write(
            root,
            &[
                (
                    "a.yml",
                    "services:\n  s:\n    image: x/a:1\n    extends: {file: b.yml, service: s}\n",
                ),
                (
                    "b.yml",
                    "services:\n  s:\n    extends: {file: a.yml, service: s}\n",
                ),
                ("odd.yml", "services: [1, 2]\n"),
            ],
        );
        assert!(built_elsewhere(&root.join("a.yml")).is_empty());
        assert!(built_elsewhere(&root.join("odd.yml")).is_empty());
        assert!(built_elsewhere(&root.join("missing.yml")).is_empty());
    }
}
