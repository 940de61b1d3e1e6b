//! A chart's dependencies that its `Chart.yaml` declares but its `charts/` directory does not
//! hold (`helm dependency build` was not run, as in most chart repositories), found in the
//! repository instead, so that the chart can be rendered and its values proven:
//!
//! - a `file://` dependency is the directory it names, when that is inside the repository
//!   (what `helm dependency build` would copy);
//! - any other (`oci://`, `https://`, a repository alias) is a chart beside this one with the
//!   dependency's name and a version its constraint allows: a chart repository publishes its
//!   library charts from the same tree (bitnami/charts' `common`).
//!
//! A dependency found neither way is left missing: Helm then says what it lacks. Helm renders a
//! staged copy of the chart with the found dependencies in its `charts/`; tagpin's own reading
//! reads their templates as it reads vendored ones.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// How deep dependencies of dependencies are followed (a cycle of siblings stops here).
const MAX_DEPTH: usize = 8;

/// The largest chart tree staged for Helm; a larger one is rendered as it is.
const MAX_STAGED_BYTES: u64 = 64 << 20;

/// A declared dependency missing from `charts/` and found in the repository.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Found {
    pub name: String,
    pub dir: PathBuf,
}

/// The dependencies of the chart at `chart` (with its parsed `Chart.yaml`, `meta`) that
/// `charts/` does not hold, found in the repository; and whether any is in neither.
pub(super) fn found_and_any_missing(chart: &Path, meta: &Value) -> (Vec<Found>, bool) {
    let resolved = resolve(chart, meta);
    (resolved.found, !resolved.missing.is_empty())
}

/// A chart's declared dependencies that `charts/` does not hold: those the repository
/// provides, and the names of the others.
struct Resolved {
    found: Vec<Found>,
    missing: Vec<String>,
    /// The keys of the values each missing one reads: its `alias`, else its name.
    missing_keys: Vec<String>,
}

fn resolve(chart: &Path, meta: &Value) -> Resolved {
    let mut resolved = Resolved {
        found: Vec::new(),
        missing: Vec::new(),
        missing_keys: Vec::new(),
    };
    let declared = meta.get("dependencies").and_then(Value::as_array);
    for dependency in declared.into_iter().flatten() {
        let field = |key: &str| dependency.get(key).and_then(Value::as_str);
        let Some(name) = field("name") else { continue };
        if vendored(chart, name) {
            continue;
        }
        let version = field("version").unwrap_or("*");
        let dir = match field("repository").and_then(|r| r.strip_prefix("file://")) {
            Some(path) => inside_repository(chart, &chart.join(path)),
            None => beside(chart, name, version),
        };
        if let Some(dir) = dir {
            resolved.found.push(Found {
                name: name.to_owned(),
                dir,
            });
        } else {
            resolved.missing.push(name.to_owned());
            let key = field("alias").unwrap_or(name);
            resolved.missing_keys.push(key.to_owned());
        }
    }
    resolved
}

/// Whether `charts/` holds the chart `name`: a directory whose `Chart.yaml` names it, or an
/// archive named `<name>-<version>.tgz`.
fn vendored(chart: &Path, name: &str) -> bool {
    std::fs::read_dir(chart.join("charts"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let archive = file_name
                .strip_suffix(".tgz")
                .and_then(|stem| stem.strip_prefix(name))
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()));
            archive || chart_name(&entry.path()).as_deref() == Some(name)
        })
}

/// The `name` of the chart at `dir`, read from its `Chart.yaml`.
fn chart_name(dir: &Path) -> Option<String> {
    let meta = read_meta(dir)?;
    meta.get("name").and_then(Value::as_str).map(str::to_owned)
}

fn read_meta(dir: &Path) -> Option<Value> {
    chart_yaml(dir).ok()
}

/// The `Chart.yaml` of the chart at `dir` (an empty one is an empty map), or why it cannot be
/// read.
pub(super) fn chart_yaml(dir: &Path) -> Result<Value, String> {
    chart_yaml_and_text(dir).map(|(meta, _)| meta)
}

/// [`chart_yaml`], and the file's text (for what else is read from it).
pub(super) fn chart_yaml_and_text(dir: &Path) -> Result<(Value, String), String> {
    let path = dir.join("Chart.yaml");
    let text = std::fs::read_to_string(&path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    if text.trim().is_empty() {
        return Ok((Value::Object(serde_json::Map::new()), text));
    }
    let meta = match tagpin_formats::chart::plain_document(&path, &text) {
        Some(meta) => meta,
        None => yaml_serde::from_str(&text)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))?,
    };
    Ok((meta, text))
}

/// The repository root above `chart`: the nearest directory with a `.git`.
fn repository_root(chart: &Path) -> Option<PathBuf> {
    let chart = chart.canonicalize().ok()?;
    chart
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_owned)
}

/// `dir`, when it is a chart inside the repository that holds `chart`.
fn inside_repository(chart: &Path, dir: &Path) -> Option<PathBuf> {
    let root = repository_root(chart)?;
    let dir = dir.canonicalize().ok()?;
    (dir.starts_with(&root) && dir.join("Chart.yaml").is_file()).then_some(dir)
}

/// A chart named `name` in the directory holding `chart`, at a version `constraint` allows.
fn beside(chart: &Path, name: &str, constraint: &str) -> Option<PathBuf> {
    let chart = chart.canonicalize().ok()?;
    let root = repository_root(&chart)?;
    let parent = chart.parent().filter(|parent| parent.starts_with(&root))?;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(parent)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|dir| *dir != chart)
        .collect();
    entries.sort();
    entries.into_iter().find(|dir| {
        name_and_version(dir).is_some_and(|(found, version)| {
            found == name && tagpin_formats::chart::satisfies(&version, constraint)
        })
    })
}

/// The `name` and `version` of the chart at `dir`, from its `Chart.yaml`, read once per run:
/// in a repository of N charts that all depend on one library beside them, each values file
/// looks the library up among all N, which would read N² files.
fn name_and_version(dir: &Path) -> Option<(String, String)> {
    type Known = std::collections::HashMap<PathBuf, Option<(String, String)>>;
    static KNOWN: std::sync::LazyLock<std::sync::Mutex<Known>> =
        std::sync::LazyLock::new(Default::default);
    let known = KNOWN
        .lock()
        .expect("no panics holding the lock")
        .get(dir)
        .cloned();
    if let Some(read) = known {
        return read;
    }
    let read = read_meta(dir).and_then(|meta| {
        let field = |key: &str| meta.get(key).and_then(Value::as_str).map(str::to_owned);
        Some((field("name")?, field("version")?))
    });
    KNOWN
        .lock()
        .expect("no panics holding the lock")
        .insert(dir.to_owned(), read.clone());
    read
}

/// A chart as Helm renders it: the chart itself, or a copy whose `charts/` holds the
/// dependencies found in the repository (removed when this is dropped).
#[derive(Debug)]
pub(super) struct Staged {
    path: PathBuf,
    _copy: Option<tempfile::TempDir>,
    /// The dependencies neither vendored nor found, which the copy's `Chart.yaml` leaves out
    /// (Helm refuses to render a chart that lacks a declared dependency, even a disabled one).
    pub dropped: Vec<String>,
    /// The top-level keys of the chart's values that the dropped dependencies of the chart
    /// itself read (their aliases, else their names): what Helm's renderings never show.
    pub dropped_keys: Vec<String>,
}

impl Staged {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `chart` ready for Helm. A chart with nothing to add, or one that cannot be copied, is
/// rendered as it is.
pub(super) fn stage(chart: &Path) -> Staged {
    let as_it_is = || Staged {
        path: chart.to_owned(),
        _copy: None,
        dropped: Vec::new(),
        dropped_keys: Vec::new(),
    };
    let Some(meta) = read_meta(chart) else {
        return as_it_is();
    };
    let resolved = resolve(chart, &meta);
    if resolved.found.is_empty() && resolved.missing.is_empty() {
        return as_it_is();
    }
    let Ok(copy) = tempfile::tempdir() else {
        return as_it_is();
    };
    let name = chart.file_name().unwrap_or_else(|| "chart".as_ref());
    let path = copy.path().join(name);
    let mut budget = MAX_STAGED_BYTES;
    let mut dropped = Vec::new();
    let dropped_keys = resolved.missing_keys.clone();
    let copied =
        copy_with_dependencies(chart, &path, (meta, resolved), &mut budget, &mut dropped, 0);
    match copied {
        Ok(()) => Staged {
            path,
            _copy: Some(copy),
            dropped,
            dropped_keys,
        },
        Err(_) => as_it_is(),
    }
}

/// Copies the chart at `from` (its `Chart.yaml` read, and its dependencies resolved) to `to`:
/// those found go into `to/charts/` (each with its own), and those missing, also added to
/// `dropped`, are left out of the copy's `Chart.yaml`.
fn copy_with_dependencies(
    from: &Path,
    to: &Path,
    (meta, resolved): (Value, Resolved),
    budget: &mut u64,
    dropped: &mut Vec<String>,
    depth: usize,
) -> std::io::Result<()> {
    copy_tree(from, to, budget)?;
    if !resolved.missing.is_empty() {
        leave_out(to, meta, &resolved.missing)?;
        dropped.extend(resolved.missing);
    }
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    for dependency in resolved.found {
        let into = to.join("charts").join(&dependency.name);
        if into.exists() {
            continue;
        }
        let Some(meta) = read_meta(&dependency.dir) else {
            continue;
        };
        let theirs = resolve(&dependency.dir, &meta);
        copy_with_dependencies(
            &dependency.dir,
            &into,
            (meta, theirs),
            budget,
            dropped,
            depth + 1,
        )?;
    }
    Ok(())
}

/// Writes the copy's `Chart.yaml` without the dependencies named `missing`, and drops its
/// `Chart.lock`, which would list them.
fn leave_out(copy: &Path, mut meta: Value, missing: &[String]) -> std::io::Result<()> {
    if let Some(declared) = meta.get_mut("dependencies").and_then(Value::as_array_mut) {
        declared.retain(|dependency| {
            !dependency
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|name| missing.iter().any(|m| m == name))
        });
    }
    let text = yaml_serde::to_string(&meta).map_err(std::io::Error::other)?;
    std::fs::write(copy.join("Chart.yaml"), text)?;
    match std::fs::remove_file(copy.join("Chart.lock")) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// Copies the chart (or the staged copy of it) at `from` to `to`, within the staging budget:
/// the chart as it will be once its values file is edited, when `to/values.yaml` is written.
pub(super) fn copy_chart(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut budget = MAX_STAGED_BYTES;
    copy_tree(from, to, &mut budget)
}

/// Copies the regular files and directories under `from` (not `.git`, not symbolic links).
fn copy_tree(from: &Path, to: &Path, budget: &mut u64) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() && entry.file_name() != ".git" {
            copy_tree(&entry.path(), &target, budget)?;
        } else if kind.is_file() {
            let size = entry.metadata()?.len();
            *budget = budget
                .checked_sub(size)
                .ok_or_else(|| std::io::Error::other("the chart is too large to stage for Helm"))?;
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Chart.yaml` is read by tagpin's own reader when it types every value as `yaml_serde`
    /// would: then both readings agree, on hand-written cases and on the corpus's charts.
    #[test]
    fn a_chart_yaml_reads_as_yaml_serde_reads_it() {
        use std::io::Write as _;
        let mut texts: Vec<(String, String)> = [
            "apiVersion: v2\nname: app\nversion: 0.1.0\nappVersion: \"1.16.0\"\n",
            "name: app\r\nversion: 1.0.0\r\ndependencies:\r\n  - name: db\r\n    version: 1.x.x\r\n    repository: oci://r/c\r\n    tags: [a]\r\n",
            "name: 'app'\nversion: \"2\"\nkubeVersion: '>=1.22'\nannotations:\n  images: |\n    - name: a\n      image: r/a:1\n",
            "name: app\nversion: 1\ndeprecated: true\nmaintainers: [{name: me, email: a@b}]\n",
            "name: app\nappVersion: 1.16\n",
            "name: app\nenabled: on\n",
        ]
        .iter()
        .map(|text| ("table".to_owned(), (*text).to_owned()))
        .collect();
        let corpus =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/bitnami/bitnami");
        match std::fs::read_dir(&corpus) {
            Ok(charts) => texts.extend(charts.flatten().filter_map(|chart| {
                let path = chart.path().join("Chart.yaml");
                Some((
                    path.display().to_string(),
                    std::fs::read_to_string(path).ok()?,
                ))
            })),
            Err(_) => {
                // Past the harness's capture, so it shows.
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED the corpus's charts: none at {}",
                    corpus.display()
                );
            }
        }
        let mut own = 0;
        for (name, text) in &texts {
            let expected: Value = yaml_serde::from_str(text).unwrap();
            if let Some(read) = tagpin_formats::chart::plain_document(Path::new("Chart.yaml"), text)
            {
                assert_eq!(read, expected, "{name}: {text}");
                own += 1;
            }
        }
        // All but the two with values YAML 1.1 reads otherwise (a float, `on`).
        assert_eq!(own, texts.len() - 2, "{texts:?}");
    }

    /// A Git work tree at `root` (created) holding `files`.
    fn repository(root: &Path, files: &[(&str, &str)]) {
        std::fs::create_dir_all(root.join(".git")).unwrap();
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn found_at(chart: &Path) -> Vec<Found> {
        found_and_any_missing(chart, &read_meta(chart).unwrap()).0
    }

    #[test]
    fn each_chart_beside_is_read_once_per_run() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        let app = "name: app\nversion: 1.0.0\ndependencies:\n\
                   - {name: common, version: 2.x.x, repository: https://charts.example}\n";
        repository(
            root,
            &[
                ("charts/app/Chart.yaml", app),
                ("charts/web/Chart.yaml", app),
                ("charts/base/Chart.yaml", "name: common\nversion: 2.1.0\n"),
            ],
        );
        let app = root.join("charts/app");
        let beside_app = beside(&app, "common", "2.x.x").unwrap();
        assert!(
            beside_app.ends_with("charts/base"),
            "{}",
            beside_app.display()
        );
        // What the first lookup read stands for the rest of the run.
        std::fs::write(root.join("charts/base/Chart.yaml"), "name: other\n").unwrap();
        let beside_web = beside(&root.join("charts/web"), "common", "2.x.x");
        assert_eq!(beside_web, Some(beside_app));
    }

    #[test]
    fn missing_dependencies_are_found_beside_the_chart_or_at_their_file_path() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        let app = "name: app\nversion: 1.0.0\ndependencies:\n\
             - {name: common, version: 2.x.x, repository: oci://registry.example/charts}\n\
             - {name: lib, version: 0.1.0, repository: 'file://../../libs/lib'}\n\
             - {name: vendored, version: 1.x, repository: https://charts.example}\n\
             - {name: packed, version: 1.x, repository: https://charts.example}\n\
             - {name: elsewhere, version: 1.x, repository: https://charts.example}\n\
             - {name: old, version: '>=3', repository: https://charts.example}\n";
        repository(
            root,
            &[
                ("charts/app/Chart.yaml", app),
                (
                    "charts/app/charts/v/Chart.yaml",
                    "name: vendored\nversion: 1.2.0\n",
                ),
                ("charts/app/charts/packed-1.4.0.tgz", ""),
                (
                    "charts/common/Chart.yaml",
                    "name: common\nversion: 2.31.4\n",
                ),
                ("charts/old/Chart.yaml", "name: old\nversion: 2.0.0\n"),
                ("libs/lib/Chart.yaml", "name: lib\nversion: 0.1.0\n"),
            ],
        );
        let canonical = root.canonicalize().unwrap();
        let found: Vec<(String, PathBuf)> = found_at(&root.join("charts/app"))
            .into_iter()
            .map(|f| (f.name, f.dir.strip_prefix(&canonical).unwrap().to_owned()))
            .collect();
        assert_eq!(
            found,
            [
                ("common".to_owned(), PathBuf::from("charts/common")),
                ("lib".to_owned(), PathBuf::from("libs/lib")),
            ]
        );
    }

    #[test]
    fn a_file_dependency_outside_the_repository_is_not_followed() {
        let outer = tempfile::tempdir().unwrap();
        let app = "name: app\nversion: 1.0.0\ndependencies:\n\
                   - {name: lib, version: '*', repository: 'file://../../lib'}\n";
        repository(&outer.path().join("repo"), &[("app/Chart.yaml", app)]);
        std::fs::create_dir(outer.path().join("lib")).unwrap();
        std::fs::write(
            outer.path().join("lib/Chart.yaml"),
            "name: lib\nversion: 1.0.0\n",
        )
        .unwrap();
        assert_eq!(found_at(&outer.path().join("repo/app")), []);
    }

    #[test]
    fn a_staged_chart_holds_its_found_dependencies_and_theirs() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        repository(
            root,
            &[
                (
                    "app/Chart.yaml",
                    "name: app\nversion: 1.0.0\ndependencies:\n- {name: db, version: 1.x, repository: oci://x}\n",
                ),
                ("app/templates/a.yaml", "a: 1\n"),
                (
                    "db/Chart.yaml",
                    "name: db\nversion: 1.2.0\ndependencies:\n- {name: common, version: 2.x.x, repository: oci://x}\n",
                ),
                ("common/Chart.yaml", "name: common\nversion: 2.0.1\n"),
            ],
        );
        let staged = stage(&root.join("app"));
        let path = staged.path().to_owned();
        assert_ne!(path, root.join("app"));
        assert!(path.join("templates/a.yaml").is_file());
        assert!(path.join("charts/db/Chart.yaml").is_file());
        assert!(path.join("charts/db/charts/common/Chart.yaml").is_file());
        assert_eq!(staged.dropped, Vec::<String>::new());
        drop(staged);
        assert!(!path.exists(), "the copy is removed with the staged chart");
        // Nothing to add: the chart is rendered where it is.
        assert_eq!(stage(&root.join("common")).path(), root.join("common"));
    }

    #[test]
    fn a_dependency_the_repository_lacks_is_left_out_of_the_staged_chart() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        let app = "name: app\nversion: 1.0.0\ndependencies:\n\
                   - {name: gone, version: 1.x, repository: oci://x, condition: gone.enabled}\n\
                   - {name: lib, version: 1.x, repository: oci://x}\n";
        repository(
            root,
            &[
                ("app/Chart.yaml", app),
                ("app/Chart.lock", "dependencies: []\n"),
                ("lib/Chart.yaml", "name: lib\nversion: 1.0.0\n"),
            ],
        );
        let staged = stage(&root.join("app"));
        assert_eq!(staged.dropped, ["gone"]);
        let meta = read_meta(staged.path()).unwrap();
        let names: Vec<&str> = meta["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["lib"]);
        assert!(staged.path().join("charts/lib/Chart.yaml").is_file());
        assert!(!staged.path().join("Chart.lock").exists());
        // The repository's own files are as they were.
        assert_eq!(
            std::fs::read_to_string(root.join("app/Chart.yaml")).unwrap(),
            app
        );
    }
}
