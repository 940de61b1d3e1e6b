//! Running `helm template`: the renderer the chart-aware rules learn from and prove with.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One rendering may take this long; a chart that hangs Helm is reported, not waited for.
const RENDER_TIMEOUT: Duration = Duration::from_secs(120);

/// The Helm program found for the command the settings name.
#[derive(Clone, Debug)]
pub struct Helm {
    program: PathBuf,
}

impl Helm {
    /// The program `command` names: a path (with a `/`) that exists, or a name found on
    /// `PATH`. `None` when there is none: charts are then not rendered.
    pub fn find(command: &str) -> Option<Self> {
        let candidate = Path::new(command);
        if command.contains(std::path::MAIN_SEPARATOR) || command.contains('/') {
            return candidate.is_file().then(|| Self {
                program: candidate.to_owned(),
            });
        }
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(command))
            .find(|path| path.is_file())
            .map(|program| Self { program })
    }

    /// Renders the chart at `chart` with the values files `values` and then `overrides` (a
    /// YAML or JSON document) on top, as `helm template` prints it. The error is what Helm
    /// said, on one line.
    pub fn render(
        &self,
        chart: &Path,
        values: &[&Path],
        overrides: &str,
    ) -> Result<String, String> {
        let dir = tempfile::tempdir()
            .map_err(|error| format!("cannot create a temporary directory: {error}"))?;
        let overrides_file = dir.path().join("overrides.json");
        std::fs::write(&overrides_file, overrides)
            .map_err(|error| format!("cannot write the render values: {error}"))?;
        let mut command = Command::new(&self.program);
        command
            .args(["template", "tagpin"])
            .arg(chart)
            .args(["--namespace", "default"]);
        for file in values.iter().copied().chain([overrides_file.as_path()]) {
            command.arg("--values").arg(file);
        }
        run(&mut command)
    }
}

/// Runs `command` to completion (or [`RENDER_TIMEOUT`]) and returns its stdout.
fn run(command: &mut Command) -> Result<String, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot run Helm: {error}"))?;
    // Read both pipes while the child runs: a rendering larger than a pipe's buffer would
    // otherwise block it forever.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut text = Vec::new();
        stdout.read_to_end(&mut text).map(|_| text)
    });
    let err = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > RENDER_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "Helm did not finish within {} seconds",
                    RENDER_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(error) => return Err(format!("cannot wait for Helm: {error}")),
        }
    };
    let stdout = out.join().ok().and_then(Result::ok).unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        return Err(one_line(&String::from_utf8_lossy(&stderr)));
    }
    String::from_utf8(stdout).map_err(|_| "Helm printed text that is not UTF-8".to_owned())
}

/// Helm's message, on one line and not too long to read in a report.
fn one_line(stderr: &str) -> String {
    let message = stderr
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let message = message.strip_prefix("Error: ").unwrap_or(&message);
    if message.is_empty() {
        return "Helm failed and said nothing".to_owned();
    }
    match message.char_indices().nth(300) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helm_errors_are_one_short_line() {
        assert_eq!(
            one_line("Error: execution error at (c/templates/a.yaml:3:4):\n  required value\n"),
            "execution error at (c/templates/a.yaml:3:4): required value"
        );
        assert_eq!(one_line(""), "Helm failed and said nothing");
        assert_eq!(one_line(&"x".repeat(400)).chars().count(), 301);
    }

    #[test]
    fn a_missing_program_is_no_renderer() {
        assert!(Helm::find("/nonexistent/helm").is_none());
        assert!(Helm::find("tagpin-no-such-helm-program").is_none());
    }
}
