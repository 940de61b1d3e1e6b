use std::path::Path;

/// The kinds of file tagpin reads, decided from the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    /// YAML: Kubernetes manifests, Helm values, Kustomize/Flux/Tekton resources.
    Yaml,
    /// Docker Compose files: `services.*.image`, except beside `build:`.
    Compose,
    /// GitHub workflows and `action.yml`.
    Workflow,
    /// GitLab CI: `.gitlab-ci.yml` and `*.gitlab-ci.yml`.
    GitlabCi,
    /// Kustomize: `kustomization.yaml`, `kustomization.yml`, `Kustomization`.
    Kustomize,
    /// Dev containers: `.devcontainer/devcontainer.json` (also one folder deeper) and
    /// `.devcontainer.json`, JSON with comments.
    Devcontainer,
    /// Helm templates: YAML with `{{ … }}` actions, under a chart's `templates/`.
    HelmTemplate,
    /// Dockerfile and Containerfile.
    Dockerfile,
    /// Shell scripts and Makefiles.
    Shell,
    /// A file the config's `custom` entries name, read with their patterns
    /// ([`crate::scan_custom`]); never detected from a path alone.
    Custom,
}

/// Whether one of `path`'s components is `name` (a plain name: no separator, not `.`).
fn has_component(path: &Path, name: &str) -> bool {
    // By bytes where the separator is `/`: every file walked asks this up to four times, and
    // taking its path apart into components each time was 2% of a scan.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        path.as_os_str()
            .as_bytes()
            .split(|&b| b == b'/')
            .any(|part| part == name.as_bytes())
    }
    #[cfg(not(unix))]
    {
        path.components().any(|c| c.as_os_str() == name)
    }
}

impl FileKind {
    /// The kind of the file at `path`, or `None` when tagpin does not read such files.
    pub fn detect(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?;
        let lower = name.to_ascii_lowercase();
        let extension = lower.rsplit_once('.').map(|(_, ext)| ext);
        let parent = path.parent();
        let in_dir = |dir: &str| parent.is_some_and(|parent| has_component(parent, dir));

        if lower == "dockerfile"
            || lower == "containerfile"
            || lower.starts_with("dockerfile.")
            || lower.starts_with("containerfile.")
            || lower.ends_with(".dockerfile")
            || lower.ends_with(".containerfile")
        {
            return Some(Self::Dockerfile);
        }
        if lower == "makefile"
            || lower == "gnumakefile"
            || matches!(extension, Some("sh" | "bash" | "mk"))
        {
            return Some(Self::Shell);
        }
        if name == ".devcontainer.json" || (name == "devcontainer.json" && in_dir(".devcontainer"))
        {
            return Some(Self::Devcontainer);
        }
        if matches!(
            name,
            "kustomization.yaml" | "kustomization.yml" | "Kustomization"
        ) {
            return Some(Self::Kustomize);
        }
        let is_yaml = matches!(extension, Some("yaml" | "yml"));
        let is_template_helper = in_dir("templates") && extension == Some("tpl");
        if !is_yaml && !is_template_helper {
            return None;
        }
        // Before `templates/`: GitLab keeps its CI templates there (`Go.gitlab-ci.yml`).
        if lower.ends_with(".gitlab-ci.yml") || lower.ends_with(".gitlab-ci.yaml") {
            return Some(Self::GitlabCi);
        }
        if in_dir("templates") {
            return Some(Self::HelmTemplate);
        }
        if lower == "action.yml"
            || lower == "action.yaml"
            || (in_dir("workflows") && in_dir(".github"))
        {
            return Some(Self::Workflow);
        }
        if lower.starts_with("docker-compose")
            || lower.starts_with("compose.")
            || lower.starts_with("compose-")
        {
            return Some(Self::Compose);
        }
        Some(Self::Yaml)
    }

    /// The name used in JSON and text output.
    pub fn name(self) -> &'static str {
        match self {
            Self::Yaml => "yaml",
            Self::Compose => "compose",
            Self::Workflow => "workflow",
            Self::GitlabCi => "gitlab-ci",
            Self::Kustomize => "kustomize",
            Self::Devcontainer => "devcontainer",
            Self::HelmTemplate => "helm-template",
            Self::Dockerfile => "dockerfile",
            Self::Shell => "shell",
            Self::Custom => "custom",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_is_found_as_components_find_it() {
        let paths = [
            "/r/charts/app/templates",
            "templates",
            "./templates",
            "a//templates/",
            "a/./templates/.",
            "a/templatesx",
            "xtemplates/b",
            "/",
            "",
            ".github/workflows",
            "a/.github/x/workflows",
        ];
        for path in paths {
            for name in ["templates", ".github", "workflows", ".devcontainer"] {
                let path = Path::new(path);
                let by_components = path.components().any(|c| c.as_os_str() == name);
                assert_eq!(
                    has_component(path, name),
                    by_components,
                    "{name} in {path:?}"
                );
            }
        }
    }
}
