//! A compose build argument that names an image (`build.args.BASE_IMAGE: python:3.12`) is
//! the image the service's Dockerfile pulls only where that Dockerfile uses the argument as a
//! whole `FROM` image (`FROM ${BASE_IMAGE}`). Used any other way, a digest in the argument
//! breaks the build or changes something else: `FROM ${BASE_IMAGE}-slim` becomes
//! `python:3.12@sha256:…-slim`, which is no reference, and `RUN echo $BASE_IMAGE` sees the
//! digest too. So each such argument is written only once its Dockerfile is read and shows
//! nothing but whole `FROM` uses; otherwise it is reported with the reason.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tagpin_formats::{EditSite, FileKind, Status};

use crate::commands::ScannedFile;

/// A compose or Dockerfile larger than this is not read here.
const MAX_SIZE: u64 = 4 << 20;

/// One build argument of a service: its name, its value, and the Dockerfile it is passed to
/// (`None` when that is not a file of the repository: a Git context, an inline Dockerfile).
struct BuildArg {
    name: String,
    value: String,
    /// Where to read it, and how to name it (relative to the compose file).
    dockerfile: Option<(PathBuf, String)>,
}

/// Leaves unwritable, with the reason, the compose build arguments in `files` whose
/// Dockerfile does not use them as whole `FROM` images only.
pub fn check(files: &mut [ScannedFile]) {
    for file in files.iter_mut() {
        let writable = |finding: &tagpin_formats::Finding| {
            finding.kind == FileKind::Compose
                && matches!(finding.status, Status::Floating | Status::Pinned)
                && !matches!(finding.site, EditSite::Unsupported { .. })
        };
        if !file.findings.iter().any(writable) {
            continue;
        }
        // Read once: as JSON for the arguments, as text to tell an argument's line.
        let text = std::fs::metadata(&file.path)
            .ok()
            .filter(|metadata| metadata.len() <= MAX_SIZE)
            .and_then(|_| std::fs::read_to_string(&file.path).ok());
        let Some(text) = text else {
            continue;
        };
        let args = build_args(&file.path, &text);
        if args.is_empty() {
            continue;
        }
        for finding in file.findings.iter_mut().filter(|f| writable(f)) {
            // The arguments whose value this is, on its own line (an `image:` of the same
            // text elsewhere is no argument). Which service's it is, the JSON does not say:
            // every service passing the same argument must use it well.
            let reason = args
                .iter()
                .filter(|arg| {
                    arg.value == finding.text && names_before(&text, finding.span.start, &arg.name)
                })
                .find_map(refusal);
            if let Some(reason) = reason {
                finding.site = EditSite::Unsupported { reason };
            }
        }
    }
}

/// Whether the line of `text` up to `at` is `NAME:` or `- NAME=` (quotes and spaces aside):
/// the value at `at` is build argument `name`'s.
fn names_before(text: &str, at: usize, name: &str) -> bool {
    let Some(before) = text.get(..at) else {
        return false;
    };
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let line = line.trim_start().trim_start_matches("- ").trim_start();
    let line = line.trim_start_matches(['"', '\'']);
    let Some(rest) = line.strip_prefix(name) else {
        return false;
    };
    let rest = rest.trim_start_matches(['"', '\'']);
    rest.starts_with('=') || rest.starts_with(':')
}

/// Why `arg` is not written, or `None` when its Dockerfile uses it as whole `FROM` images only.
fn refusal(arg: &BuildArg) -> Option<String> {
    let name = &arg.name;
    let Some((path, shown)) = &arg.dockerfile else {
        return Some(format!(
            "not proven: the Dockerfile build argument {name} is passed to is not a file of \
             this repository, so how it uses the image is unknown"
        ));
    };
    let text = std::fs::metadata(path)
        .ok()
        .filter(|metadata| metadata.len() <= MAX_SIZE)
        .and_then(|_| std::fs::read_to_string(path).ok());
    let Some(text) = text else {
        return Some(format!(
            "not proven: the Dockerfile build argument {name} is passed to (`{shown}`) cannot be \
             read, so how it uses the image is unknown"
        ));
    };
    match other_use(&text, name) {
        Some(line) => Some(format!(
            "`{shown}` uses build argument {name} as more than a whole `FROM` image (line \
             {line}): a digest here would reach that use too"
        )),
        None if from_uses(&text, name) == 0 => Some(format!(
            "not proven: `{shown}` uses build argument {name} in no `FROM` line"
        )),
        None => None,
    }
}

/// The first line of `text` that expands `name` other than as a whole `FROM` image.
fn other_use(text: &str, name: &str) -> Option<usize> {
    text.lines()
        .enumerate()
        .find(|(_, line)| mentions(line, name) > usize::from(is_whole_from(line, name)))
        .map(|(index, _)| index + 1)
}

/// How many lines of `text` are `FROM ${name}` (or `FROM $name`).
fn from_uses(text: &str, name: &str) -> usize {
    text.lines()
        .filter(|line| is_whole_from(line, name))
        .count()
}

/// Whether `line` is a `FROM` whose image is exactly `${name}` or `$name` (after options such
/// as `--platform`, before `AS stage`).
fn is_whole_from(line: &str, name: &str) -> bool {
    let mut words = line.split_whitespace();
    if !words
        .next()
        .is_some_and(|word| word.eq_ignore_ascii_case("from"))
    {
        return false;
    }
    let image = words.find(|word| !word.starts_with("--"));
    image.is_some_and(|image| image == format!("${{{name}}}") || image == format!("${name}"))
}

/// How many times `line` expands `name` (`$NAME`, `${NAME}`, `${NAME:-…}`).
fn mentions(line: &str, name: &str) -> usize {
    line.match_indices('$')
        .filter(|&(at, _)| {
            let rest = &line[at + 1..];
            let rest = rest.strip_prefix('{').unwrap_or(rest);
            rest.strip_prefix(name).is_some_and(|after| {
                !after
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
        })
        .count()
}

/// The build arguments of every service of the compose file at `path`, whose text is `text`.
fn build_args(path: &Path, text: &str) -> Vec<BuildArg> {
    let Some(document) = crate::read::yaml_document_of(path, text) else {
        return Vec::new();
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let services = document.get("services").and_then(Value::as_object);
    let mut args = Vec::new();
    for service in services.into_iter().flatten().map(|(_, service)| service) {
        let Some(build) = service.get("build").and_then(Value::as_object) else {
            continue;
        };
        let dockerfile = dockerfile_of(dir, build);
        for (name, value) in named_args(build.get("args")) {
            args.push(BuildArg {
                name,
                value,
                dockerfile: dockerfile.clone(),
            });
        }
    }
    args
}

/// The Dockerfile a service's `build` mapping names, when it is a file of the repository.
pub(crate) fn dockerfile_of(
    dir: &Path,
    build: &serde_json::Map<String, Value>,
) -> Option<(PathBuf, String)> {
    if build.contains_key("dockerfile_inline") {
        return None;
    }
    let context = build.get("context").and_then(Value::as_str).unwrap_or(".");
    // A Git repository or a URL: not here.
    if context.contains("://") || context.starts_with("git@") {
        return None;
    }
    let dockerfile = build
        .get("dockerfile")
        .and_then(Value::as_str)
        .unwrap_or("Dockerfile");
    let relative = Path::new(context).join(dockerfile);
    let shown = relative
        .strip_prefix(".")
        .unwrap_or(&relative)
        .to_string_lossy()
        .into_owned();
    Some((dir.join(&relative), shown))
}

/// `args:` as a mapping (`BASE_IMAGE: alpine:3.20`) or a list (`- BASE_IMAGE=alpine:3.20`).
fn named_args(args: Option<&Value>) -> Vec<(String, String)> {
    match args {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let (name, value) = item.as_str()?.split_once('=')?;
                Some((name.to_owned(), value.to_owned()))
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_from_uses_let_an_argument_be_written() {
        for (dockerfile, expected) in [
            ("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN true\n", None),
            (
                "ARG BASE_IMAGE=x\nFROM --platform=$BUILDPLATFORM $BASE_IMAGE AS build\n",
                None,
            ),
            (
                "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}-slim\n",
                Some("as more than a whole `FROM` image (line 2)"),
            ),
            (
                "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nARG BASE_IMAGE\nRUN echo ${BASE_IMAGE}\n",
                Some("(line 4)"),
            ),
            ("ARG BASE_IMAGE\nFROM alpine\n", Some("in no `FROM` line")),
            // Another argument whose name starts the same is another argument.
            (
                "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo $BASE_IMAGE_TAG\n",
                None,
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("Dockerfile");
            std::fs::write(&path, dockerfile).unwrap();
            let arg = BuildArg {
                name: "BASE_IMAGE".to_owned(),
                value: "alpine:3.20".to_owned(),
                dockerfile: Some((path, "Dockerfile".to_owned())),
            };
            let reason = refusal(&arg);
            match expected {
                None => assert_eq!(reason, None, "{dockerfile:?}"),
                Some(part) => assert!(
                    reason.as_deref().is_some_and(|r| r.contains(part)),
                    "{dockerfile:?}: {reason:?}"
                ),
            }
        }
    }
}
