//! The scripts of other CI systems' pipelines, read as shell scripts (as a workflow's `run` and
//! a GitLab job's `script` are): `CircleCI`'s `run` steps (`run: …`, or its `command`),
//! Bitbucket Pipelines' `script` and `after-script` lines, Azure Pipelines' `bash` steps, and
//! Drone's and Woodpecker's `commands`. Their images are found as in any YAML.
//!
//! A pipeline that names Windows anywhere in its document (a Windows executor, `runs-on:
//! windows`, `os: windows`) has none of its scripts read: there they run in PowerShell or
//! cmd, whose quoting and line continuation are not a POSIX shell's. Nor is an Azure `script`
//! step, which runs in cmd on Windows agents; its `bash` steps always run in bash.
//!
//! The file kind stays [`crate::FileKind::Yaml`]: the pipeline is told by its path. Azure
//! Pipelines' own image fields are read as well (see `azure`).

use std::path::Path;

use super::kubernetes::KubernetesAndHelm;
use super::{Map, Out, Rules, Seg, Words};

/// A CI system whose pipeline files are YAML of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CiScripts {
    CircleCi,
    Bitbucket,
    Azure,
    /// Drone's and Woodpecker's `commands`.
    Commands,
}

impl CiScripts {
    /// The CI system whose pipeline the YAML file at `path` is, told by its name and folder.
    pub(crate) fn of(path: &Path) -> Option<Self> {
        let (parent, name) = crate::kind::parent_and_name(path)?;
        let folder = parent
            .and_then(crate::kind::parent_and_name)
            .map(|(_, folder)| folder);
        let yaml = Path::new(name)
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("yml") || ext.eq_ignore_ascii_case("yaml"));
        match (folder, name) {
            (Some(".circleci"), _) if yaml => Some(Self::CircleCi),
            (_, "bitbucket-pipelines.yml" | "bitbucket-pipelines.yaml") => Some(Self::Bitbucket),
            (Some(".azure-pipelines" | ".azuredevops"), _) if yaml => Some(Self::Azure),
            (_, name) if yaml && name.starts_with("azure-pipelines") => Some(Self::Azure),
            (_, ".drone.yml" | ".drone.yaml") => Some(Self::Commands),
            _ => None,
        }
    }
}

impl Rules for CiScripts {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        if *self == Self::Azure {
            if super::azure::in_variables(map.path) {
                return;
            }
            super::azure::job_images(map, out);
        }
        // An orb's job or command (`docker/publish: {image: myorg/app, tag: latest}`): what the
        // orb does with an image and a tag (build it, push it, pull it) is the orb's.
        let orb_image_and_tag = *self == Self::CircleCi
            && map.parent().is_some_and(|key| key.contains('/'))
            && map.has("tag");
        if !orb_image_and_tag {
            KubernetesAndHelm.mapping(map, out);
        }
        if out.names_windows() {
            return;
        }
        match self {
            Self::CircleCi => {
                if let Some(run) = map.get("run") {
                    let command = map.doc.value_of(run, "command");
                    let script = command.as_ref().unwrap_or(run);
                    let shell = map.doc.value_of(run, "shell");
                    let posix = shell
                        .and_then(|at| map.doc.scalar(&at))
                        .is_none_or(|shell| super::is_posix_shell(shell.value));
                    if let Some(script) = map.doc.scalar(script).filter(|_| posix) {
                        out.script(&script);
                    }
                }
            }
            Self::Bitbucket if map.parent() == Some("step") => {
                lines(map, &["script", "after-script"], out);
            }
            Self::Azure if matches!(map.path, [.., Seg::Key("steps"), Seg::Item(_)]) => {
                if let Some(script) = map.scalar("bash") {
                    out.script(&script);
                }
            }
            Self::Commands if matches!(map.path, [.., Seg::Key("steps" | "pipeline"), _]) => {
                lines(map, &["commands"], out);
            }
            Self::Bitbucket | Self::Azure | Self::Commands => {}
        }
    }

    /// Every mapping may hold a script, whatever its words.
    fn words(&self) -> Option<&'static Words> {
        None
    }
}

/// Each line of the lists at `keys` of `map`, read as a script.
fn lines(map: &Map<'_, '_>, keys: &[&str], out: &mut Out<'_>) {
    for key in keys {
        let Some(list) = map.get(key) else {
            continue;
        };
        for item in map.doc.items(list) {
            if let Some(line) = map.doc.scalar(&item) {
                out.script(&line);
            }
        }
    }
}
