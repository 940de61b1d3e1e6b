//! Images a CI pipeline builds or pushes itself, and runs in a later job.
//!
//! A GitLab job builds and pushes `registry.gitlab.com/acme/proj/ci:latest` in its `script`,
//! and a later job runs in `image: registry.gitlab.com/acme/proj/ci:latest` (a GitHub workflow
//! does the same with `run:` steps). Read in GitLab CI files and workflows only: other YAML
//! (Azure Pipelines' `Docker@2` tasks name their image by a service connection) is not. That image is what the
//! pipeline makes: a digest pinned in the file would freeze the later job to the build before
//! the change, so such references are `local`, as a script's own builds are.
//!
//! The file's lines are read as shell commands, whatever YAML holds them (a list item, a block
//! scalar, a flow sequence): a line that runs `docker`, `podman`, `nerdctl` or `buildah` to
//! build (`-t`/`--tag`), tag (the new name) or push an image, or passes kaniko's
//! `--destination`, names what the pipeline makes.

use crate::Status;
use crate::common::Sink;

/// The container CLIs whose `build`, `tag` and `push` make an image.
const CLIS: [&str; 4] = ["docker", "podman", "nerdctl", "buildah"];

/// Makes `local` every finding of `sink` that names an image the file's commands build, tag
/// or push.
pub(crate) fn mark(sink: &mut Sink<'_>) {
    if sink.findings.is_empty() || !mentions_a_build(sink.text) {
        return;
    }
    let made: Vec<String> = sink.text.lines().flat_map(made_by_line).collect();
    if made.is_empty() {
        return;
    }
    for finding in &mut sink.findings {
        let floats = matches!(finding.status, Status::Floating | Status::Pinned);
        if floats && made.iter().any(|name| same_name(name, &finding.text)) {
            finding.status = Status::Local;
        }
    }
}

/// Whether `text` names a container CLI or kaniko's destination at all (most files do not).
fn mentions_a_build(text: &str) -> bool {
    CLIS.iter().any(|cli| text.contains(cli)) || text.contains("--destination")
}

/// The images one line's command makes: `docker build -t NAME`, `docker tag OLD NAME`,
/// `docker push NAME`, `buildah bud -t NAME`, `--destination NAME`.
fn made_by_line(line: &str) -> Vec<String> {
    let words: Vec<&str> = line
        .split([' ', '\t', '[', ']', ',', '"', '\''])
        .filter(|word| !word.is_empty())
        .collect();
    let mut made = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if let Some(name) = word.strip_prefix("--destination=") {
            made.push(name);
        } else if *word == "--destination" {
            made.extend(words.get(i + 1));
        }
        let cli = word.rsplit('/').next().unwrap_or(word);
        if !CLIS.contains(&cli) {
            continue;
        }
        let rest = &words[i + 1..];
        let rest = match rest {
            ["buildx" | "image", rest @ ..] => rest,
            _ => rest,
        };
        match rest {
            ["build" | "bud", options @ ..] => made.extend(tags(options)),
            ["tag", arguments @ ..] => {
                made.extend(arguments.iter().filter(|w| !w.starts_with('-')).nth(1));
            }
            ["push", arguments @ ..] => {
                made.extend(arguments.iter().find(|w| !w.starts_with('-')));
            }
            _ => {}
        }
    }
    made.into_iter()
        .filter(|name| !name.contains('$') && !name.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The names a build's options tag the image with (`-t app`, `--tag=app:dev`, `-tapp`).
fn tags<'w>(options: &[&'w str]) -> Vec<&'w str> {
    let mut names = Vec::new();
    let mut words = options.iter();
    while let Some(word) = words.next() {
        let name = match *word {
            "-t" | "--tag" => words.next().copied(),
            _ => word.strip_prefix("--tag=").or_else(|| {
                word.strip_prefix("-t")
                    .filter(|name| !name.is_empty() && !word.starts_with("--"))
            }),
        };
        names.extend(name);
    }
    names
}

/// Whether `used` names the image `made`: as written, or with the `:latest` a name without a
/// tag means.
fn same_name(made: &str, used: &str) -> bool {
    fn plain(name: &str) -> &str {
        name.strip_suffix(":latest").unwrap_or(name)
    }
    plain(made) == plain(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_s_command_names_what_it_makes() {
        for (line, made) in [
            (
                "    - docker build -t registry.gitlab.com/acme/ci:latest ci/",
                &["registry.gitlab.com/acme/ci:latest"][..],
            ),
            (
                "  - docker push registry.gitlab.com/acme/ci:latest",
                &["registry.gitlab.com/acme/ci:latest"],
            ),
            (
                "run: docker buildx build --push --tag=ghcr.io/a/b:1 .",
                &["ghcr.io/a/b:1"],
            ),
            (
                "script: [\"docker tag app:dev ghcr.io/a/app:1\"]",
                &["ghcr.io/a/app:1"],
            ),
            ("- buildah bud -tquay.io/a/b .", &["quay.io/a/b"]),
            (
                "- /kaniko/executor --context . --destination ghcr.io/a/k:1",
                &["ghcr.io/a/k:1"],
            ),
            ("- docker build -t $CI_REGISTRY_IMAGE:latest .", &[]),
            ("- docker run --rm alpine:3.20 echo built", &[]),
            ("- docker push", &[]),
            ("image: docker:24.0", &[]),
        ] {
            assert_eq!(made_by_line(line), made, "{line}");
        }
    }
}
