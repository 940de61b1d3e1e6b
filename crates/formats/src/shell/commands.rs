//! Container CLI commands on a command line: `docker|podman|nerdctl run|create|pull IMAGE`
//! (also `container run`, `image pull`, …), after their options, on a logical line (continued
//! with `\`).
//!
//! The image is the first word after the options. Options are known by name: the ones that
//! take a value skip it (`-e X`, `--name x`, `-p8080:80`, `--env=X`), flags do not (`-it`,
//! `--rm`). An option tagpin does not know stops the command without a finding, since it
//! cannot tell whether the next word is its value or the image (precision first). So do
//! `pull -a`/`--all-tags` (the argument is a repository, not an image) and global options it
//! does not know (`docker --foo run …`).
//!
//! A `$( … )` is part of the word it is in (`-v $(pwd):/app`, a Makefile's `$(CURDIR)`), and
//! the commands inside it are read as a command line of their own (`out=$(docker run a:1)`),
//! up to [`MAX_SUBSTITUTION_DEPTH`] deep.
//!
//! A Makefile variable's value is read as a command line (`LINT := docker run … IMAGE`).
//!
//! The CLI may be named by a variable that holds it, a common way to let podman stand in for
//! docker: `$(CONTAINER_TOOL) run` (kubebuilder's Makefiles), `${DOCKER} run`,
//! `"$CONTAINER_ENGINE" pull`. Only the names in [`ENGINE_VARIABLES`] count: a variable named
//! otherwise may hold anything (`$DOCKER_COMPOSE run web` runs a service, not an image).
//!
//! Before the CLI's name, `sudo` (with `-E`, `-u user`, …), `env`, `exec`, `command`, `time`,
//! `nohup`, the keywords `if`, `then`, `else`, `elif`, `do`, `while`, `until`, `!`, variable
//! assignments (`DOCKER_HOST=… docker run`) and a recipe line's `@`, `-`,
//! `+` are skipped.

mod kubectl;

use super::{Token, mark_last_local, report, tokens};
use crate::common::{Found, Sink};

/// The container CLIs read.
pub(crate) const CLIS: [&str; 3] = ["docker", "podman", "nerdctl"];

/// The names of variables that hold one of [`CLIS`] by convention, compared without regard to
/// case.
const ENGINE_VARIABLES: [&str; 16] = [
    "DOCKER",
    "DOCKER_CMD",
    "DOCKER_BIN",
    "DOCKER_CLI",
    "PODMAN",
    "NERDCTL",
    "CONTAINER_TOOL",
    "CONTAINER_ENGINE",
    "CONTAINER_RUNTIME",
    "CONTAINER_CLI",
    "CONTAINER_CMD",
    "CONTAINER_BIN",
    "CONTAINER_COMMAND",
    "CONTAINER_EXE",
    "ENGINE",
    "OCI_BIN",
];

/// Whether `text` may hold a variable of [`ENGINE_VARIABLES`], in upper or lower case (a
/// cheap search before a line is taken apart).
pub(crate) fn may_name_an_engine(text: &[u8]) -> bool {
    // Built once: every logical line with a `$` is searched for them.
    static WORDS: std::sync::LazyLock<Vec<memchr::memmem::Finder<'static>>> =
        std::sync::LazyLock::new(|| {
            [
                "DOCKER",
                "PODMAN",
                "NERDCTL",
                "CONTAINER_",
                "ENGINE",
                "OCI_BIN",
            ]
            .into_iter()
            .flat_map(|word| [word.to_owned(), word.to_ascii_lowercase()])
            .map(|word| memchr::memmem::Finder::new(word.as_bytes()).into_owned())
            .collect()
        });
    WORDS.iter().any(|word| word.find(text).is_some())
}

/// Whether `word` expands a variable of [`ENGINE_VARIABLES`]: `$DOCKER`, `${DOCKER}`,
/// `${DOCKER:-docker}`, `$(CONTAINER_TOOL)` (make), quoted or not.
fn names_an_engine(word: &str) -> bool {
    let word = word.trim_matches('"');
    let Some(rest) = word.strip_prefix('$') else {
        return false;
    };
    let name = match rest.as_bytes().first() {
        Some(b'{') => rest[1..].strip_suffix('}').map(|inner| {
            inner
                .split_once([':', '-', '=', '+', '?'])
                .map_or(inner, |(name, _)| name)
        }),
        Some(b'(') => rest[1..].strip_suffix(')'),
        _ => Some(rest),
    };
    name.is_some_and(|name| {
        ENGINE_VARIABLES
            .iter()
            .any(|known| name.eq_ignore_ascii_case(known))
    })
}

/// Global options (before the subcommand) that take a value, and flags.
const GLOBAL_VALUES: &[&str] = &[
    "-H",
    "--host",
    "-c",
    "--context",
    "--config",
    "-l",
    "--log-level",
    "--tlscacert",
    "--tlscert",
    "--tlskey",
    "--connection",
    "--url",
    "--root",
    "--runroot",
    "-n",
    "--namespace",
    "--address",
    "--snapshotter",
];
const GLOBAL_FLAGS: &[&str] = &["-D", "--debug", "--tls", "--tlsverify", "--remote", "-r"];

/// `run` and `create` options that take a value (docker's, and podman's and nerdctl's common
/// ones).
const RUN_VALUES: &[&str] = &[
    "--add-host",
    "--annotation",
    "--arch",
    "--attach",
    "--authfile",
    "--blkio-weight",
    "--blkio-weight-device",
    "--cap-add",
    "--cap-drop",
    "--cgroup-parent",
    "--cgroupns",
    "--cidfile",
    "--cpu-period",
    "--cpu-quota",
    "--cpu-rt-period",
    "--cpu-rt-runtime",
    "--cpu-shares",
    "--cpus",
    "--cpuset-cpus",
    "--cpuset-mems",
    "--creds",
    "--detach-keys",
    "--device",
    "--device-cgroup-rule",
    "--device-read-bps",
    "--device-read-iops",
    "--device-write-bps",
    "--device-write-iops",
    "--dns",
    "--dns-option",
    "--dns-search",
    "--domainname",
    "--entrypoint",
    "--env",
    "--env-file",
    "--expose",
    "--gpus",
    "--group-add",
    "--health-cmd",
    "--health-interval",
    "--health-retries",
    "--health-start-interval",
    "--health-start-period",
    "--health-timeout",
    "--hostname",
    "--ip",
    "--ip6",
    "--ipc",
    "--isolation",
    "--kernel-memory",
    "--label",
    "--label-file",
    "--link",
    "--link-local-ip",
    "--log-driver",
    "--log-opt",
    "--mac-address",
    "--memory",
    "--memory-reservation",
    "--memory-swap",
    "--memory-swappiness",
    "--mount",
    "--name",
    "--net",
    "--net-alias",
    "--network",
    "--network-alias",
    "--oom-score-adj",
    "--os",
    "--pid",
    "--pids-limit",
    "--platform",
    "--pod",
    "--publish",
    "--pull",
    "--restart",
    "--runtime",
    "--secret",
    "--security-opt",
    "--shm-size",
    "--stop-signal",
    "--snapshotter",
    "--stop-timeout",
    "--storage-opt",
    "--sysctl",
    "--systemd",
    "--tmpfs",
    "--ulimit",
    "--user",
    "--userns",
    "--uts",
    "--volume",
    "--volume-driver",
    "--volumes-from",
    "--workdir",
];
const RUN_FLAGS: &[&str] = &[
    "--detach",
    "--disable-content-trust",
    "--help",
    "--init",
    "--interactive",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--privileged",
    "--publish-all",
    "--quiet",
    "--http-proxy",
    "--read-only",
    "--replace",
    "--rm",
    "--rmi",
    "--sig-proxy",
    "--tls-verify",
    "--tty",
    "--use-api-socket",
];
/// Short options: flags, and those that take a value.
const RUN_SHORT_FLAGS: &str = "ditPq";
const RUN_SHORT_VALUES: &str = "acehlmpuvw";

const PULL_VALUES: &[&str] = &[
    "--platform",
    "--arch",
    "--os",
    "--variant",
    "--authfile",
    "--creds",
    "--cert-dir",
    "--retry",
    "--retry-delay",
    "--unpack",
];
const PULL_FLAGS: &[&str] = &[
    "--disable-content-trust",
    "--quiet",
    "--all-platforms",
    "--tls-verify",
];
const PULL_SHORT_FLAGS: &str = "q";

/// The options of a subcommand.
struct Options {
    values: &'static [&'static str],
    flags: &'static [&'static str],
    short_flags: &'static str,
    short_values: &'static str,
}

const RUN: Options = Options {
    values: RUN_VALUES,
    flags: RUN_FLAGS,
    short_flags: RUN_SHORT_FLAGS,
    short_values: RUN_SHORT_VALUES,
};

const PULL: Options = Options {
    values: PULL_VALUES,
    flags: PULL_FLAGS,
    short_flags: PULL_SHORT_FLAGS,
    short_values: "",
};

/// The words of one simple command.
struct Words<'c> {
    code: &'c str,
    words: Vec<(usize, usize)>,
}

impl<'c> Words<'c> {
    fn text(&self, index: usize) -> Option<&'c str> {
        self.words
            .get(index)
            .map(|&(start, end)| &self.code[start..end])
    }
}

/// Finds container CLI commands in `code` (a logical command line, comments cut off and
/// continuations blanked, starting at byte `offset` of the file).
pub(super) fn scan(sink: &mut Sink<'_>, code: &str, offset: usize) {
    scan_nested(sink, code, offset, 0);
}

/// How deep `$( … )` inside `$( … )` is read: each level reads its text again.
const MAX_SUBSTITUTION_DEPTH: usize = 8;

/// [`scan`] of a command line `depth` substitutions deep.
fn scan_nested(sink: &mut Sink<'_>, code: &str, offset: usize, depth: usize) {
    let mut command = Words {
        code,
        words: Vec::new(),
    };
    for token in tokens(code) {
        match token {
            Token::Separator => {
                cli_command(sink, &command, offset);
                command.words.clear();
            }
            Token::Word { start, end, .. } => command.words.push((start, end)),
            Token::Substitution { start, end } if depth < MAX_SUBSTITUTION_DEPTH => {
                scan_nested(sink, &code[start..end], offset + start, depth + 1);
            }
            Token::Substitution { .. } => {}
        }
    }
    cli_command(sink, &command, offset);
}

/// The words of the last command in `code` from its program on (see [`command_start`]):
/// `gcloud compute instances create vm` in `sudo gcloud compute instances create vm`.
pub(super) fn last_command(code: &str) -> Vec<&str> {
    let mut command = Words {
        code,
        words: Vec::new(),
    };
    for token in tokens(code) {
        match token {
            Token::Separator => command.words.clear(),
            Token::Word { start, end, .. } => command.words.push((start, end)),
            Token::Substitution { .. } => {}
        }
    }
    let start = command_start(&command);
    (start..command.words.len())
        .filter_map(|index| command.text(index))
        .collect()
}

/// The words a command line may hold before its program (besides `sudo`, whose options
/// [`command_start`] skips too, and variable assignments): wrappers and shell keywords.
pub(super) const BEFORE_THE_PROGRAM: [&str; 14] = [
    "", "env", "exec", "command", "time", "nohup", "if", "then", "else", "elif", "do", "while",
    "until", "!",
];

/// A variable's name: letters, digits and `_`.
fn is_name(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| is_name(name))
}

/// Where the command proper starts: after `sudo`, `env`, assignments and a recipe prefix.
fn command_start(command: &Words<'_>) -> usize {
    // A Makefile variable that holds a command (`LINT := docker run … golangci/golangci-lint:v1`):
    // the command is its value.
    let make_variable = command.text(0).is_some_and(is_name)
        && command
            .text(1)
            .is_some_and(|op| matches!(op, "=" | ":=" | "::=" | "?=" | "+="));
    let mut index = if make_variable { 2 } else { 0 };
    while let Some(word) = command.text(index) {
        let word = if index == 0 {
            word.trim_start_matches(['@', '-', '+'])
        } else {
            word
        };
        match word {
            "sudo" => {
                index += 1;
                while let Some(option) = command.text(index).filter(|w| w.starts_with('-')) {
                    index += if matches!(option, "-u" | "-g" | "-C" | "-h" | "-p") {
                        2
                    } else {
                        1
                    };
                }
                continue;
            }
            _ if BEFORE_THE_PROGRAM.contains(&word) || is_assignment(word) => {}
            // `timeout 300 docker run …`: its options, then the duration.
            "timeout" => {
                index += 1;
                while let Some(option) = command.text(index).filter(|w| w.starts_with('-')) {
                    index += if matches!(option, "-s" | "-k") { 2 } else { 1 };
                }
            }
            // A recipe's prefix variable before the command (`$(CMD_PREFIX) docker run`, as
            // `$(Q)` quiets a kernel-style Makefile's recipes).
            _ if index == 0
                && variable_prefix(word).is_some_and(str::is_empty)
                && !names_an_engine(word)
                && command.text(1).is_some_and(is_known_cli) => {}
            _ => return index,
        }
        index += 1;
    }
    index
}

/// What follows a leading `$(NAME)` or `${NAME}` in `word` (empty when that is all of it).
fn variable_prefix(word: &str) -> Option<&str> {
    let rest = word.strip_prefix('$')?;
    let close = match rest.as_bytes().first()? {
        b'(' => ')',
        b'{' => '}',
        _ => return None,
    };
    let end = rest.find(close)?;
    is_name(&rest[1..end]).then(|| &rest[end + 1..])
}

/// Whether `word` runs a container CLI, `kubectl` or `oc` by name (`docker`, `/usr/bin/podman`).
fn is_known_cli(word: &str) -> bool {
    let program = word.rsplit('/').next().unwrap_or(word);
    CLIS.contains(&program) || matches!(program, "kubectl" | "oc")
}

fn cli_command(sink: &mut Sink<'_>, command: &Words<'_>, offset: usize) {
    let start = command_start(command);
    let Some(cli) = command.text(start) else {
        return;
    };
    let cli = cli.trim_start_matches(['@', '-', '+']);
    // `$(Q)docker`: a prefix variable glued to the command.
    let cli = variable_prefix(cli)
        .filter(|rest| is_known_cli(rest) || names_an_engine(rest))
        .unwrap_or(cli);
    let program = cli.rsplit('/').next().unwrap_or(cli);
    if matches!(program, "kubectl" | "oc") {
        return kubectl::set_image(sink, command, start, offset);
    }
    if notes_a_build(sink, command, program, start) {
        return;
    }
    if !names_an_engine(cli) && !CLIS.contains(&program) {
        return;
    }
    // Global options, then the subcommand (`run`, or `container run`).
    let mut index = start + 1;
    while let Some(word) = command.text(index) {
        if !word.starts_with('-') {
            break;
        }
        if (word.starts_with("--") && word.contains('=')) || GLOBAL_FLAGS.contains(&word) {
            index += 1;
        } else if GLOBAL_VALUES.contains(&word) {
            index += 2;
        } else {
            return;
        }
    }
    if matches!(command.text(index), Some("container" | "image" | "buildx")) {
        index += 1;
    }
    let pulls = command.text(index) == Some("pull");
    let options = match command.text(index) {
        Some("run" | "create") => &RUN,
        Some("pull") => &PULL,
        Some("build") => {
            note_built(sink, command, index + 1);
            return;
        }
        // `docker tag SOURCE TARGET`, `docker commit CONTAINER NAME`: the script makes TARGET
        // and NAME, whatever runs them later.
        Some("tag" | "commit") => {
            note_last_word(sink, command, index + 1);
            return;
        }
        _ => return,
    };
    index += 1;
    // `--pull=never`: the image must be there already, built or loaded.
    let mut never = false;
    while let Some(word) = command.text(index) {
        if word == "--" {
            index += 1;
            break;
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        let Some(skip) = option_words(options, word) else {
            return;
        };
        never |=
            word == "--pull=never" || word == "--pull" && command.text(index + 1) == Some("never");
        index += skip;
    }
    if let Some(&(start, end)) = command.words.get(index) {
        let before = sink.len();
        report(sink, &command.code[start..end], offset + start);
        if sink.len() == before {
            report_templated(sink, &command.code[start..end], offset + start);
        }
        if never && sink.len() > before {
            mark_last_local(sink);
        }
        if pulls && sink.len() > before {
            let pulled = sink.findings.last().map(|finding| finding.span.start);
            sink.pulled.extend(pulled);
        }
    }
}

/// Notes the image another builder than the container CLIs makes, when `command` (whose
/// `program` is word `start`) is one: `buildah bud -t app`, `pack build app`, `kind build
/// node-image` (`kindest/node:latest` unless `--image` names it). Whether it was one.
fn notes_a_build(sink: &mut Sink<'_>, command: &Words<'_>, program: &str, start: usize) -> bool {
    let mut words =
        (start + 1..command.words.len()).filter_map(|i| command.text(i).map(|w| (i, w)));
    let name = match (program, command.text(start + 1), command.text(start + 2)) {
        ("buildah", Some("bud" | "build"), _) => {
            note_built(sink, command, start + 2);
            return true;
        }
        // Cloud Build builds and pushes the image it tags (`--tag gcr.io/p/app:latest`);
        // minikube builds it inside the cluster's runtime.
        ("gcloud", Some("builds"), Some("submit")) | ("minikube", Some("image"), Some("build")) => {
            note_built(sink, command, start + 3);
            return true;
        }
        ("pack", Some("build"), _) => words
            .skip(1)
            .map(|(_, word)| word)
            .find(|word| !word.starts_with('-')),
        ("kind", Some("build"), Some("node-image")) => Some(
            words
                .find_map(|(i, word)| {
                    word.strip_prefix("--image=")
                        .or_else(|| (word == "--image").then(|| command.text(i + 1)).flatten())
                })
                .unwrap_or("kindest/node:latest"),
        ),
        _ => return false,
    };
    if let Some(name) = name {
        note_name(sink, name);
    }
    true
}

/// Notes the last word of `command` from word `index` on, when it is no option, as an image
/// the script makes (`docker tag a:1 b:1`).
fn note_last_word(sink: &mut Sink<'_>, command: &Words<'_>, index: usize) {
    let last = (index..command.words.len())
        .filter_map(|i| command.text(i))
        .next_back()
        .filter(|word| !word.starts_with('-'));
    if let Some(name) = last {
        note_name(sink, name);
    }
}

/// Notes the names `build`'s options from word `index` on tag the image with (`-t app`,
/// `--tag=app:dev`), as written.
fn note_built(sink: &mut Sink<'_>, command: &Words<'_>, mut index: usize) {
    while let Some(word) = command.text(index) {
        let name = match word {
            "-t" | "--tag" => {
                index += 1;
                command.text(index)
            }
            _ => word.strip_prefix("--tag=").or_else(|| {
                word.strip_prefix("-t")
                    .filter(|name| !name.is_empty() && !word.starts_with("--"))
            }),
        };
        if let Some(name) = name {
            note_name(sink, name);
        }
        index += 1;
    }
}

/// Notes `name` (a shell word, quotes taken off) as an image the script makes.
fn note_name(sink: &mut Sink<'_>, name: &str) {
    sink.built.push(name.trim_matches(['"', '\'']).to_owned());
}

/// How many words the option `word` takes up (itself, and its value when that is the next
/// word), or `None` for an option tagpin does not know.
fn option_words(options: &Options, word: &str) -> Option<usize> {
    if let Some(long) = word.strip_prefix("--") {
        let (name, attached) = match long.split_once('=') {
            Some((name, _)) => (name, true),
            None => (long, false),
        };
        let option = &word[..name.len() + 2];
        if options.values.contains(&option) {
            return Some(if attached { 1 } else { 2 });
        }
        return options.flags.contains(&option).then_some(1);
    }
    // Short options, combined: flags, then at most one that takes a value (attached, or the
    // next word).
    let letters = &word[1..];
    for (i, c) in letters.char_indices() {
        if options.short_flags.contains(c) {
            continue;
        }
        if options.short_values.contains(c) {
            let last = i + c.len_utf8() == letters.len();
            return Some(if last { 2 } else { 1 });
        }
        return None;
    }
    Some(1)
}

/// Reports the image word of a container command (`word`, at `at`) that expands a variable
/// after a literal name (`golang:$(GOLANG_VERSION)`, `quay.io/org/opm:${V}`, `"ghcr.io/$ORG/x"`)
/// as `templated`: the options before it were all read, so it is the image, whatever the
/// variable holds. A word that is only a variable (`$IMAGE`) says nothing of what it names.
fn report_templated(sink: &mut Sink<'_>, word: &str, at: usize) {
    let (inner, at) = match word.as_bytes().first() {
        Some(b'"' | b'\'') if word.len() >= 2 && word.ends_with(&word[..1]) => {
            (&word[1..word.len() - 1], at + 1)
        }
        _ => (word, at),
    };
    let Some(dollar) = inner.find('$') else {
        return;
    };
    let name = &inner[..dollar];
    let literal_name = name.contains([':', '/'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/' | b':'));
    if literal_name && !inner.contains(['"', '\'', '\\', '`', ' ']) {
        sink.push(Found::templated(at..at + inner.len(), inner));
    }
}
