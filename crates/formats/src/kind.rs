use std::path::Path;

/// The kinds of file tagpin reads, decided from the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    /// YAML: Kubernetes manifests, Helm values, Kustomize/Flux/Tekton resources.
    Yaml,
    /// Docker Compose files: `services.*.image`, except beside `build:`.
    Compose,
    /// GitHub workflows and `action.yml` (also Gitea's and Forgejo's workflows, which share
    /// GitHub's syntax).
    Workflow,
    /// GitLab CI: `.gitlab-ci.yml`, `*.gitlab-ci.yml`, and the YAML files of a
    /// `.gitlab-ci.d/` folder (the files a `.gitlab-ci.yml` includes, by a common convention).
    GitlabCi,
    /// Kustomize: `kustomization.yaml`, `kustomization.yml`, `Kustomization`.
    Kustomize,
    /// Google Cloud Build: `cloudbuild.yaml`, and YAML files whose name starts `cloudbuild`
    /// (`cloudbuild-release.yaml`).
    CloudBuild,
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

/// YAML files that configure something that runs no container, whose `image` keys name
/// something else: the build machines of `AppVeyor` and Travis CI (`image: Ubuntu2204`,
/// `osx_image: xcode15.4`), and a Dart package's `pubspec.yaml` (a splash screen's
/// `image: assets/logo.png`). tagpin does not read them.
const NO_CONTAINERS: [&str; 8] = [
    "appveyor.yml",
    ".appveyor.yml",
    "appveyor.yaml",
    ".appveyor.yaml",
    ".travis.yml",
    ".travis.yaml",
    "pubspec.yaml",
    "pubspec.yml",
];

/// Whether one of `path`'s components is `name` (a plain name: no separator, not `.`).
fn has_component(path: &Path, name: &str) -> bool {
    // By bytes where the separator is `/`: every file walked asks this up to four times, and
    // taking its path apart into components each time was 2% of a scan.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let bytes = path.as_os_str().as_bytes();
        let mut start = 0;
        for end in memchr::memchr_iter(b'/', bytes).chain([bytes.len()]) {
            if &bytes[start..end] == name.as_bytes() {
                return true;
            }
            start = end + 1;
        }
        false
    }
    #[cfg(not(unix))]
    {
        path.components().any(|c| c.as_os_str() == name)
    }
}

/// `path`'s parent and its file name, as `Path::parent` and `Path::file_name` give them (the
/// parent may keep a doubled separator or a `.` component that `Path::parent` would drop, which
/// no component test tells apart). By bytes where the separator is `/` and the name is a plain
/// one; anything else (a trailing separator, a `.` or `..` name) is left to `std`.
pub fn parent_and_name(path: &Path) -> Option<(Option<&Path>, &str)> {
    #[cfg(unix)]
    {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt as _;
        let bytes = path.as_os_str().as_bytes();
        let cut = memchr::memrchr(b'/', bytes);
        let name = &bytes[cut.map_or(0, |i| i + 1)..];
        if !matches!(name, b"" | b"." | b"..") {
            // A `/` at the start stays the parent's: `/a`'s parent is `/`.
            let parent = &bytes[..cut.map_or(0, |i| i.max(usize::from(i == 0)))];
            let name = std::str::from_utf8(name).ok()?;
            return Some((Some(Path::new(OsStr::from_bytes(parent))), name));
        }
    }
    Some((path.parent(), path.file_name()?.to_str()?))
}

impl FileKind {
    /// The kind of the file at `path`, or `None` when tagpin does not read such files.
    pub fn detect(path: &Path) -> Option<Self> {
        let (parent, name) = parent_and_name(path)?;
        // Names compare without regard to ASCII case, as their ASCII-lowercased form would: the
        // walker asks this of every file, and a lowercased copy of each name was a measurable
        // share of it.
        let is = |word: &str| name.eq_ignore_ascii_case(word);
        let starts = |prefix: &str| {
            name.get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
        };
        let ends = |suffix: &str| {
            name.len() >= suffix.len()
                && name.as_bytes()[name.len() - suffix.len()..]
                    .eq_ignore_ascii_case(suffix.as_bytes())
        };
        let extension = name.rsplit_once('.').map(|(_, ext)| ext);
        let extension_is = |ext: &str| extension.is_some_and(|e| e.eq_ignore_ascii_case(ext));
        let in_dir = |dir: &str| parent.is_some_and(|parent| has_component(parent, dir));

        // `Dockerfile-dev`, `Dockerfile_prod`: a variant's name after a dash or an underscore,
        // with no extension (`dockerfile-guide.md` is not one).
        let variant = (starts("dockerfile-")
            || starts("dockerfile_")
            || starts("containerfile-")
            || starts("containerfile_"))
            && !name.contains('.');
        if is("dockerfile")
            || is("containerfile")
            || starts("dockerfile.")
            || starts("containerfile.")
            || ends(".dockerfile")
            || ends(".containerfile")
            || variant
        {
            return Some(Self::Dockerfile);
        }
        if is("makefile")
            || is("gnumakefile")
            || extension_is("sh")
            || extension_is("bash")
            || extension_is("mk")
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
        let is_yaml = extension_is("yaml") || extension_is("yml");
        let is_template_helper = extension_is("tpl") && in_dir("templates");
        if !is_yaml && !is_template_helper || NO_CONTAINERS.iter().any(|n| is(n)) {
            return None;
        }
        // Before `templates/`: GitLab keeps its CI templates there (`Go.gitlab-ci.yml`).
        if ends(".gitlab-ci.yml") || ends(".gitlab-ci.yaml") || is_yaml && in_dir(".gitlab-ci.d") {
            return Some(Self::GitlabCi);
        }
        if in_dir("templates") {
            return Some(Self::HelmTemplate);
        }
        if is_yaml && starts("cloudbuild") {
            return Some(Self::CloudBuild);
        }
        // The forge's directory is looked for only under a `workflows/`: every YAML file is
        // asked this.
        let forge = || in_dir(".github") || in_dir(".gitea") || in_dir(".forgejo");
        if is("action.yml") || is("action.yaml") || (in_dir("workflows") && forge()) {
            return Some(Self::Workflow);
        }
        if starts("docker-compose") || starts("compose.") || starts("compose-") {
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
            Self::CloudBuild => "cloud-build",
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

    /// [`FileKind::detect`] as it was written first: on a lowercased copy of the name, with
    /// `std`'s path splitting.
    fn detect_by_lowercased_copy(path: &Path) -> Option<FileKind> {
        let name = path.file_name()?.to_str()?;
        let lower = name.to_ascii_lowercase();
        let extension = lower.rsplit_once('.').map(|(_, ext)| ext);
        let parent = path.parent();
        let in_dir = |dir: &str| parent.is_some_and(|parent| has_component(parent, dir));
        let variant = [
            "dockerfile-",
            "dockerfile_",
            "containerfile-",
            "containerfile_",
        ]
        .iter()
        .any(|prefix| lower.starts_with(prefix))
            && !lower.contains('.');
        if lower == "dockerfile"
            || lower == "containerfile"
            || lower.starts_with("dockerfile.")
            || lower.starts_with("containerfile.")
            || lower.ends_with(".dockerfile")
            || lower.ends_with(".containerfile")
            || variant
        {
            return Some(FileKind::Dockerfile);
        }
        if lower == "makefile"
            || lower == "gnumakefile"
            || matches!(extension, Some("sh" | "bash" | "mk"))
        {
            return Some(FileKind::Shell);
        }
        if name == ".devcontainer.json" || (name == "devcontainer.json" && in_dir(".devcontainer"))
        {
            return Some(FileKind::Devcontainer);
        }
        if matches!(
            name,
            "kustomization.yaml" | "kustomization.yml" | "Kustomization"
        ) {
            return Some(FileKind::Kustomize);
        }
        let is_yaml = matches!(extension, Some("yaml" | "yml"));
        let is_template_helper = in_dir("templates") && extension == Some("tpl");
        if !is_yaml && !is_template_helper || NO_CONTAINERS.contains(&lower.as_str()) {
            return None;
        }
        if lower.ends_with(".gitlab-ci.yml")
            || lower.ends_with(".gitlab-ci.yaml")
            || is_yaml && in_dir(".gitlab-ci.d")
        {
            return Some(FileKind::GitlabCi);
        }
        if in_dir("templates") {
            return Some(FileKind::HelmTemplate);
        }
        if is_yaml && lower.starts_with("cloudbuild") {
            return Some(FileKind::CloudBuild);
        }
        let forge = in_dir(".github") || in_dir(".gitea") || in_dir(".forgejo");
        if lower == "action.yml" || lower == "action.yaml" || (in_dir("workflows") && forge) {
            return Some(FileKind::Workflow);
        }
        if lower.starts_with("docker-compose")
            || lower.starts_with("compose.")
            || lower.starts_with("compose-")
        {
            return Some(FileKind::Compose);
        }
        Some(FileKind::Yaml)
    }

    #[test]
    fn detect_agrees_with_the_lowercased_copy() {
        let dirs = [
            "",
            "/",
            "./",
            "a/",
            "/r/charts/app/templates/",
            "templates/",
            "a/templates/b/",
            ".github/workflows/",
            "x/.github/y/workflows/",
            ".devcontainer/",
            "a//templates//",
            "a/./templates/",
            "templatesx/",
            ".gitlab-ci.d/",
            "a/.gitlab-ci.d/templates/",
            ".gitea/workflows/",
            ".forgejo/workflows/",
            ".forgejo/",
            "ü/",
            "a/b/.",
            "a/b/..",
            "a/b/",
        ];
        let names = [
            "Dockerfile",
            "dockerfile",
            "DOCKERFILE.dev",
            "app.Dockerfile",
            "Dockerfile-dev",
            "dockerfile_prod",
            "Dockerfile-guide.md",
            "Containerfile",
            "containerfile.x",
            "x.containerFILE",
            "Makefile",
            "GNUmakefile",
            "build.sh",
            "run.BASH",
            "rules.mk",
            ".devcontainer.json",
            "devcontainer.json",
            "kustomization.yaml",
            "Kustomization",
            "KUSTOMIZATION.yaml",
            "values.yaml",
            "values.YML",
            "_helpers.tpl",
            "x.TPL",
            "deploy.yaml",
            ".gitlab-ci.yml",
            "Go.gitlab-CI.yaml",
            "action.yml",
            "Action.YAML",
            "ci.yml",
            "docker-compose.yml",
            "Compose.yaml",
            "compose-dev.yml",
            "composer.yaml",
            "appveyor.yml",
            ".AppVeyor.yaml",
            "cloudbuild.yaml",
            "CloudBuild-release.yml",
            "cloudbuild.json",
            ".travis.yml",
            "pubspec.yaml",
            "README.md",
            ".yaml",
            "a.",
            "",
            ".",
            "..",
            "ü.yaml",
            "tpl",
            "sh",
        ];
        for dir in dirs {
            for name in names {
                let path = format!("{dir}{name}");
                let path = Path::new(&path);
                assert_eq!(
                    FileKind::detect(path),
                    detect_by_lowercased_copy(path),
                    "{path:?}"
                );
            }
        }
    }

    #[test]
    fn configs_of_machines_are_not_read_and_gitlab_includes_are_gitlab_ci() {
        for (path, kind) in [
            ("appveyor.yml", None),
            ("ci/.appveyor.yml", None),
            (".travis.yml", None),
            ("app/pubspec.yaml", None),
            ("pubspec.yaml.bak", None),
            (".gitlab-ci.d/buildtest.yml", Some(FileKind::GitlabCi)),
            (
                ".gitlab-ci.d/container-template.yaml",
                Some(FileKind::GitlabCi),
            ),
            (".gitlab-ci.d/README.md", None),
            ("gitlab-ci.d/buildtest.yml", Some(FileKind::Yaml)),
            (".gitea/workflows/ci.yml", Some(FileKind::Workflow)),
            (".forgejo/workflows/release.yaml", Some(FileKind::Workflow)),
            (".forgejo/ci.yaml", Some(FileKind::Yaml)),
        ] {
            assert_eq!(FileKind::detect(Path::new(path)), kind, "{path}");
        }
    }

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
