//! A simulated GitHub Actions runner for `action.yml`'s composite steps, and a loopback file
//! server standing in for the release downloads.
//!
//! What it does the way the runner does (actions/runner, for a composite action):
//!
//! - inputs: the `inputs` context only, each given value or else its `default` (itself an
//!   expression, `${{ github.token }}`); an undeclared input is an error. Composite actions get
//!   no `INPUT_*` variables (actions/runner#665), so none are set: a script that relied on them
//!   would fail here as on GitHub.
//! - `${{ }}` expressions are substituted in `env:` and `with:` values and in the outputs'
//!   `value:`, and `if:` conditions are evaluated (with the implicit `success() &&`). A `run:`
//!   script holding `${{` is refused outright: the runner would splice the value into the
//!   script's text, which is the injection the action avoids.
//! - each `shell: bash` step runs as `bash --noprofile --norc -eo pipefail <file>` in
//!   `GITHUB_WORKSPACE`, with `GITHUB_OUTPUT`, `GITHUB_ENV`, `GITHUB_PATH` and
//!   `GITHUB_STEP_SUMMARY` files of its own (outputs and env read back in both the `name=value`
//!   and the `name<<DELIMITER` forms), `RUNNER_OS`, `RUNNER_ARCH`, `RUNNER_TEMP`, `HOME`,
//!   `GITHUB_ACTION_PATH`, `GITHUB_ACTION_REPOSITORY`, `GITHUB_ACTION_REF`, `CI=true`, and from
//!   the outer environment nothing but `PATH`.
//! - a failing step stops the action; later steps are skipped.
//! - `uses: actions/cache@…` restores `path` from a store kept by the [`Runner`] across runs
//!   (keyed, like the real one, by `key` and `path`): on an exact `key` match `cache-hit` is
//!   true; else each line of `restore-keys` in turn is a prefix, the newest entry saved
//!   under a matching key (for the same path) is restored and `cache-hit` is false; after a
//!   job that succeeded, `path` is saved under `key` when there was no exact match. Any
//!   other `uses:` is an error.
//! - `github.run_id` counts the runs of a [`Runner`] (1, 2, …); `github.run_attempt` is 1.
//!
//! Each run gets a fresh `HOME` (the same path each time, emptied, as on a new hosted runner)
//! and a fresh `RUNNER_TEMP`; only the cache store carries over.

mod expressions;
mod server;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use yaml_serde::Value as Yaml;

use expressions::{Contexts, StepState, substitute};
pub use server::FileServer;

/// `action.yml`, as far as the runner reads it.
pub struct Action {
    /// `(name, default)` in declaration order.
    inputs: Vec<(String, Option<String>)>,
    /// `(name, value expression)`.
    outputs: Vec<(String, String)>,
    pub steps: Vec<Step>,
}

pub struct Step {
    pub id: Option<String>,
    pub name: String,
    condition: Option<String>,
    kind: StepKind,
}

enum StepKind {
    Run {
        script: String,
        env: Vec<(String, String)>,
    },
    Uses {
        action: String,
        with: Vec<(String, String)>,
    },
}

fn scalar(value: &Yaml) -> String {
    match value {
        Yaml::String(text) => text.clone(),
        Yaml::Bool(flag) => flag.to_string(),
        Yaml::Number(number) => number.to_string(),
        Yaml::Null => String::new(),
        other => panic!("not a scalar: {other:?}"),
    }
}

fn pairs(value: Option<&Yaml>) -> Vec<(String, String)> {
    value
        .and_then(Yaml::as_mapping)
        .map(|mapping| {
            mapping
                .iter()
                .map(|(key, value)| (scalar(key), scalar(value)))
                .collect()
        })
        .unwrap_or_default()
}

impl Action {
    pub fn load(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).unwrap();
        let doc: Yaml = yaml_serde::from_str(&text).unwrap();
        let runs = &doc["runs"];
        assert_eq!(
            runs["using"].as_str(),
            Some("composite"),
            "not a composite action"
        );
        let inputs = doc["inputs"]
            .as_mapping()
            .map(|mapping| {
                mapping
                    .iter()
                    .map(|(name, spec)| (scalar(name), spec.get("default").map(scalar)))
                    .collect()
            })
            .unwrap_or_default();
        let outputs = doc["outputs"]
            .as_mapping()
            .map(|mapping| {
                mapping
                    .iter()
                    .map(|(name, spec)| (scalar(name), scalar(&spec["value"])))
                    .collect()
            })
            .unwrap_or_default();
        let steps = runs["steps"]
            .as_sequence()
            .expect("runs.steps")
            .iter()
            .map(|step| {
                let kind = if let Some(script) = step.get("run") {
                    assert_eq!(
                        step["shell"].as_str(),
                        Some("bash"),
                        "a composite run step needs `shell: bash`"
                    );
                    StepKind::Run {
                        script: scalar(script),
                        env: pairs(step.get("env")),
                    }
                } else {
                    StepKind::Uses {
                        action: scalar(&step["uses"]),
                        with: pairs(step.get("with")),
                    }
                };
                Step {
                    id: step.get("id").map(scalar),
                    name: step.get("name").map(scalar).unwrap_or_default(),
                    condition: step.get("if").map(scalar),
                    kind,
                }
            })
            .collect();
        Self {
            inputs,
            outputs,
            steps,
        }
    }

    /// The repository's own `action.yml`.
    pub fn this_repository() -> Self {
        Self::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml"))
    }

    /// Every `run:` script, in order.
    pub fn scripts(&self) -> impl Iterator<Item = &str> {
        self.steps.iter().filter_map(|step| match &step.kind {
            StepKind::Run { script, .. } => Some(script.as_str()),
            StepKind::Uses { .. } => None,
        })
    }
}

/// The runner's settings: the machine and the `github` context the action sees.
pub struct Runner {
    /// `github.action_path`: the action's source.
    pub action_path: PathBuf,
    /// `github.action_repository`, `github.action_ref`.
    pub action_repository: String,
    pub action_ref: String,
    /// `github.token`.
    pub token: String,
    /// `RUNNER_OS`, `RUNNER_ARCH`.
    pub os: String,
    pub arch: String,
    /// `GITHUB_WORKSPACE`: the checkout.
    pub workspace: PathBuf,
    /// More job environment (`GITHUB_REPOSITORY`, `GITHUB_API_URL`, …).
    pub env: Vec<(String, String)>,
    /// Stop after the step with this id (to look at a decision without acting on it).
    pub stop_after: Option<String>,
    machine: tempfile::TempDir,
    /// The runs so far: `github.run_id` of the next one, less one.
    runs: std::sync::atomic::AtomicU64,
}

/// One step of a run.
#[derive(Debug, Default)]
pub struct StepRun {
    pub id: Option<String>,
    pub name: String,
    /// False when its `if:` was false or an earlier step failed.
    pub ran: bool,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub outputs: BTreeMap<String, String>,
}

/// What a run of the action gave.
pub struct Outcome {
    pub steps: Vec<StepRun>,
    /// The action's outputs.
    pub outputs: BTreeMap<String, String>,
    /// The name of the step that failed.
    pub failed: Option<String>,
    /// `RUNNER_TEMP` of the run, kept for inspection.
    pub temp: tempfile::TempDir,
}

impl Outcome {
    /// The step with `id`, or named `name`.
    #[track_caller]
    pub fn step(&self, id_or_name: &str) -> &StepRun {
        self.steps
            .iter()
            .find(|s| s.id.as_deref() == Some(id_or_name) || s.name == id_or_name)
            .unwrap_or_else(|| panic!("no step {id_or_name}:\n{self}"))
    }

    /// The output `name` of the step `id`.
    #[track_caller]
    pub fn output(&self, id: &str, name: &str) -> &str {
        self.step(id).outputs.get(name).map_or("", String::as_str)
    }

    /// Everything every step printed.
    pub fn log(&self) -> String {
        self.to_string()
    }

    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        assert!(self.failed.is_none(), "the action failed:\n{self}");
        self
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for step in &self.steps {
            writeln!(
                f,
                "=== {} ({}): {}",
                step.name,
                step.id.as_deref().unwrap_or("-"),
                if step.ran {
                    format!("exit {}", step.code)
                } else {
                    "skipped".to_owned()
                }
            )?;
            if !step.stdout.is_empty() {
                write!(f, "--- stdout\n{}", step.stdout)?;
            }
            if !step.stderr.is_empty() {
                write!(f, "--- stderr\n{}", step.stderr)?;
            }
            if !step.outputs.is_empty() {
                writeln!(f, "--- outputs {:?}", step.outputs)?;
            }
        }
        write!(f, "=== outputs {:?}", self.outputs)
    }
}

impl Runner {
    /// A Linux runner of this machine's architecture, the action's source being this
    /// repository.
    pub fn new(workspace: &Path) -> Self {
        let arch = match std::env::consts::ARCH {
            "x86_64" => "X64",
            "aarch64" => "ARM64",
            other => panic!("the simulated runner knows x86_64 and aarch64 machines, not {other}"),
        };
        assert_eq!(
            std::env::consts::OS,
            "linux",
            "the simulated runner is a Linux runner"
        );
        Self {
            action_path: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            action_repository: "tagpin/tagpin".to_owned(),
            action_ref: String::new(),
            token: String::new(),
            os: "Linux".to_owned(),
            arch: arch.to_owned(),
            workspace: workspace.to_owned(),
            env: Vec::new(),
            stop_after: None,
            machine: tempfile::tempdir().unwrap(),
            runs: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn home(&self) -> PathBuf {
        self.machine.path().join("home")
    }

    fn cache_store(&self) -> PathBuf {
        self.machine.path().join("cache")
    }

    /// The store's entries, oldest first, as `key\tpath` lines: for `restore-keys`, which
    /// take the newest match.
    fn cache_log(&self) -> PathBuf {
        self.machine.path().join("cache-saved")
    }

    /// Saves `path` under `key`, after the entries saved before.
    fn save_cache(&self, key: &str, path: &str) {
        copy_tree(
            Path::new(path),
            &self.cache_store().join(cache_name(key, path)),
        );
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.cache_log())
            .unwrap();
        std::io::Write::write_all(&mut log, format!("{key}\t{path}\n").as_bytes()).unwrap();
    }

    /// The key of the newest entry for `path` whose key starts with `prefix`.
    fn newest_cache(&self, prefix: &str, path: &str) -> Option<String> {
        let log = std::fs::read_to_string(self.cache_log()).unwrap_or_default();
        log.lines()
            .rev()
            .filter_map(|line| line.split_once('\t'))
            .find(|(key, saved)| *saved == path && key.starts_with(prefix))
            .map(|(key, _)| key.to_owned())
    }

    /// Where the store keeps the entry saved for `key` (and `path`), if any.
    pub fn cache_entry(&self, key: &str, path: &str) -> Option<PathBuf> {
        let entry = self.cache_store().join(cache_name(key, path));
        entry.exists().then_some(entry)
    }

    /// Runs every step of `action` with `inputs` (name, value).
    pub fn run(&self, action: &Action, inputs: &[(&str, &str)]) -> Outcome {
        let home = self.home();
        if home.exists() {
            std::fs::remove_dir_all(&home).unwrap();
        }
        std::fs::create_dir_all(&home).unwrap();
        let temp = tempfile::tempdir().unwrap();
        let run_id = self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;

        let mut contexts = Contexts {
            inputs: BTreeMap::new(),
            github: BTreeMap::from([
                ("action_path", self.action_path.display().to_string()),
                ("action_repository", self.action_repository.clone()),
                ("action_ref", self.action_ref.clone()),
                ("token", self.token.clone()),
                ("workspace", self.workspace.display().to_string()),
                ("run_id", run_id.to_string()),
                ("run_attempt", "1".to_owned()),
            ]),
            runner: BTreeMap::from([
                ("os", self.os.clone()),
                ("arch", self.arch.clone()),
                ("temp", temp.path().display().to_string()),
            ]),
            steps: BTreeMap::new(),
            failed: false,
            declared: &action.inputs,
        };
        for (index, (name, _)) in inputs.iter().enumerate() {
            assert!(
                action.inputs.iter().any(|(declared, _)| declared == name),
                "`{name}` is not an input of action.yml"
            );
            assert!(
                inputs[..index].iter().all(|(given, _)| given != name),
                "`{name}` given twice (a `with:` mapping has each key once)"
            );
        }
        for (name, default) in &action.inputs {
            let value = match inputs.iter().find(|(given, _)| given == name) {
                Some((_, value)) => (*value).to_owned(),
                None => substitute(default.as_deref().unwrap_or(""), &contexts),
            };
            contexts.inputs.insert(name.clone(), value);
        }

        let mut base = vec![
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".to_owned(), home.display().to_string()),
            ("CI".to_owned(), "true".to_owned()),
            ("GITHUB_ACTIONS".to_owned(), "true".to_owned()),
            ("RUNNER_OS".to_owned(), self.os.clone()),
            ("RUNNER_ARCH".to_owned(), self.arch.clone()),
            ("RUNNER_TEMP".to_owned(), temp.path().display().to_string()),
            (
                "GITHUB_WORKSPACE".to_owned(),
                self.workspace.display().to_string(),
            ),
            (
                "GITHUB_ACTION_PATH".to_owned(),
                self.action_path.display().to_string(),
            ),
            (
                "GITHUB_ACTION_REPOSITORY".to_owned(),
                self.action_repository.clone(),
            ),
            ("GITHUB_ACTION_REF".to_owned(), self.action_ref.clone()),
        ];
        base.extend(self.env.iter().cloned());
        let mut job = Job {
            base,
            env: Vec::new(),
            path: Vec::new(),
            saves: Vec::new(),
            temp: temp.path().to_owned(),
        };
        let mut steps = Vec::new();
        let mut failed = None;

        for (index, step) in action.steps.iter().enumerate() {
            let mut run = StepRun {
                id: step.id.clone(),
                name: step.name.clone(),
                ..StepRun::default()
            };
            let wanted = match step.condition.as_deref() {
                None => !contexts.failed,
                Some(condition) => expressions::condition(condition, &contexts),
            };
            if wanted {
                run.ran = true;
                match &step.kind {
                    StepKind::Run { script, env } => {
                        assert!(
                            !script.contains("${{"),
                            "step `{}`: a `${{{{ }}}}` in a run: script is spliced into its text by the runner; pass it through env:",
                            step.name
                        );
                        let env = env
                            .iter()
                            .map(|(key, value)| (key.clone(), substitute(value, &contexts)))
                            .collect();
                        self.run_script(&mut job, index, script, env, &mut run);
                    }
                    StepKind::Uses { action: uses, with } => {
                        assert!(
                            uses.starts_with("actions/cache@"),
                            "the simulated runner knows actions/cache, not {uses}"
                        );
                        let with = with
                            .iter()
                            .map(|(key, value)| (key.clone(), substitute(value, &contexts)))
                            .collect();
                        self.restore_cache(&mut job, &with, &mut run);
                    }
                }
            }
            let outcome = match (run.ran, run.code) {
                (false, _) => "skipped",
                (true, 0) => "success",
                (true, _) => "failure",
            };
            if outcome == "failure" {
                contexts.failed = true;
                failed = Some(step.name.clone());
            }
            if let Some(id) = &step.id {
                contexts.steps.insert(
                    id.clone(),
                    StepState {
                        outputs: run.outputs.clone(),
                        outcome,
                    },
                );
            }
            steps.push(run);
            if step.id.is_some() && step.id == self.stop_after {
                break;
            }
        }

        // actions/cache's post step: save what was missed, after a job that succeeded.
        if failed.is_none() {
            for (key, path) in job.saves {
                if Path::new(&path).exists() {
                    self.save_cache(&key, &path);
                }
            }
        }

        let outputs = action
            .outputs
            .iter()
            .map(|(name, value)| (name.clone(), substitute(value, &contexts)))
            .collect();
        Outcome {
            steps,
            outputs,
            failed,
            temp,
        }
    }

    /// Runs one `run:` script as the runner does, filling `run` in.
    fn run_script(
        &self,
        job: &mut Job,
        index: usize,
        script: &str,
        env: Vec<(String, String)>,
        run: &mut StepRun,
    ) {
        let files = StepFiles::new(&job.temp, index);
        let script_path = job.temp.join(format!("step-{index}.sh"));
        std::fs::write(&script_path, script).unwrap();
        let mut path = job.path.clone();
        path.push(std::env::var("PATH").unwrap_or_default());
        let output = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script_path)
            .current_dir(&self.workspace)
            .env_clear()
            .envs(job.base.iter().cloned())
            .envs(job.env.iter().cloned())
            .env("PATH", path.join(":"))
            .envs(env)
            .envs(files.vars())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        run.code = output.status.code().unwrap_or(-1);
        run.stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        run.stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        run.outputs = read_commands(&files.output);
        job.env.extend(read_commands(&files.env));
        let added = std::fs::read_to_string(&files.path).unwrap_or_default();
        job.path
            .splice(0..0, added.lines().rev().map(str::to_owned));
    }

    /// actions/cache's main step: restore `path` on an exact `key` hit (`cache-hit` true),
    /// else from the newest entry whose key starts with a `restore-keys` line, tried in order
    /// (`cache-hit` false), and note `key` for the post step.
    fn restore_cache(&self, job: &mut Job, with: &BTreeMap<String, String>, run: &mut StepRun) {
        let key = with.get("key").cloned().unwrap_or_default();
        let path = with.get("path").cloned().unwrap_or_default();
        assert!(
            !key.is_empty() && !path.is_empty() && !path.contains('\n'),
            "actions/cache needs one path and a key: {with:?}"
        );
        let known = ["key", "path", "restore-keys"];
        assert!(
            with.keys().all(|name| known.contains(&name.as_str())),
            "the simulated actions/cache knows {known:?}: {with:?}"
        );
        let entry = self.cache_store().join(cache_name(&key, &path));
        let hit = entry.exists();
        if hit {
            copy_tree(&entry, Path::new(&path));
        } else {
            let restore_keys = with.get("restore-keys").map_or("", String::as_str);
            let matched = restore_keys
                .lines()
                .map(str::trim)
                .filter(|prefix| !prefix.is_empty())
                .find_map(|prefix| self.newest_cache(prefix, &path));
            if let Some(matched) = matched {
                copy_tree(
                    &self.cache_store().join(cache_name(&matched, &path)),
                    Path::new(&path),
                );
            }
            job.saves.push((key, path));
        }
        run.outputs.insert("cache-hit".to_owned(), hit.to_string());
    }
}

/// The state a job carries from step to step.
struct Job {
    /// The runner's environment for every step.
    base: Vec<(String, String)>,
    /// What steps added through `GITHUB_ENV` and `GITHUB_PATH`.
    env: Vec<(String, String)>,
    path: Vec<String>,
    /// actions/cache entries to save after the job: `(key, path)`.
    saves: Vec<(String, String)>,
    temp: PathBuf,
}

/// A cache entry's directory name: the key and the path, as actions/cache keys by both.
fn cache_name(key: &str, path: &str) -> String {
    let safe = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}--{}", safe(key), safe(path))
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -a {} {}",
        from.display(),
        to.display()
    );
}

/// The command files of one step.
struct StepFiles {
    output: PathBuf,
    env: PathBuf,
    path: PathBuf,
    summary: PathBuf,
}

impl StepFiles {
    fn new(temp: &Path, index: usize) -> Self {
        let dir = temp.join("_runner_file_commands");
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str| {
            let path = dir.join(format!("{name}_{index}"));
            std::fs::write(&path, "").unwrap();
            path
        };
        Self {
            output: file("set_output"),
            env: file("set_env"),
            path: file("add_path"),
            summary: file("step_summary"),
        }
    }

    fn vars(&self) -> [(&'static str, &Path); 4] {
        [
            ("GITHUB_OUTPUT", &self.output),
            ("GITHUB_ENV", &self.env),
            ("GITHUB_PATH", &self.path),
            ("GITHUB_STEP_SUMMARY", &self.summary),
        ]
    }
}

/// `name=value` lines and `name<<DELIMITER … DELIMITER` blocks, as the runner reads
/// `GITHUB_OUTPUT` and `GITHUB_ENV`.
fn read_commands(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut values = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        let heredoc = line.split_once("<<");
        let assignment = line.split_once('=');
        match (heredoc, assignment) {
            (Some((name, delimiter)), assignment)
                if assignment.is_none_or(|(before, _)| before.len() > name.len()) =>
            {
                let mut value = Vec::new();
                loop {
                    let next = lines
                        .next()
                        .unwrap_or_else(|| panic!("unterminated {name}<<{delimiter} in {text}"));
                    if next == delimiter {
                        break;
                    }
                    value.push(next);
                }
                values.insert(name.to_owned(), value.join("\n"));
            }
            (_, Some((name, value))) => {
                values.insert(name.to_owned(), value.to_owned());
            }
            _ => panic!("the runner rejects the command line {line:?} in {text}"),
        }
    }
    values
}
