//! Shell scripts and Makefiles: YAML `image: <ref>` lines in heredocs (and `- image:` items)
//! or echoed (`echo '  image: <ref>' >> values.yaml`, `printf`), and `--image=<ref>` /
//! `--image <ref>` flags (kubectl, kind, helm `--set` aside).
//!
//! A value counts only when all of it, after stripping one pair of matching quotes, parses as
//! a reference: shell variables, command substitutions and partial names are not reported
//! (there is no reliable way to tell a `$IMAGE` apart from any other word here).
//!
//! What is a command and what is data is told apart as a shell reads it, so that Makefiles
//! read right too:
//!
//! - an `image:` line counts only inside a heredoc (`<<EOF` … `EOF`, `<<-`, quoted words; the
//!   terminator may be indented, as in a Makefile recipe) or as the quoted argument of `echo`
//!   or `printf`. Elsewhere `image: image-nginx` is a make rule (target `image`, prerequisite
//!   `image-nginx`), or a command named `image:`, not a reference. An echoed line counts
//!   only when the command sends it on (`>> values.yaml`, `| kubectl apply -f -`): printed
//!   to a CI log it is a message;
//! - `--image` flags count on command lines (continued with `\`) and in heredocs, but not
//!   those of commands whose `--image` is a virtual machine's or one they build
//!   (`gcloud compute`, `az vm`, `az acr build`, `hcloud`, …), nor those after `--` (the
//!   arguments of the program a container runs);
//! - a comment is skipped: a line whose first word starts with `#` (after a recipe's `@`, `-`
//!   or `+`), and the rest of a line from a `#` that starts a word outside quotes. In a
//!   heredoc, a line whose first non-blank character is `#` (a YAML comment).
//!
//! Container CLI commands, `docker|podman|nerdctl run|create|pull IMAGE`, and the pairs of
//! `kubectl set image RESOURCE CONTAINER=IMAGE`, are read on command lines (continued with
//! `\`), never in heredocs or comments ([`commands`]). There the image word is known by its
//! place, so one that expands a variable after a literal name (`golang:$(GO_VERSION)`) is
//! reported `templated`.
//!
//! `# tagpin:ignore` later on a line marks its references `ignored`.

mod commands;
mod named;

pub(crate) use commands::{CLIS, may_name_an_engine};
pub(crate) use named::mark_named_elsewhere;

use std::collections::VecDeque;

use crate::common::{Found, Sink, is_templated};

/// Scans a whole script.
pub(crate) fn scan(sink: &mut Sink<'_>) {
    scan_region(sink, 0..sink.text.len(), false);
    mark_named_elsewhere(sink, 0);
}

/// Scans the lines of `region` of the sink's text as a script: a CI step's commands, held in
/// a YAML scalar whose source is the script as it runs. `joined`: the lines are one command
/// line, as YAML folds a multi-line plain or folded scalar into one (its line breaks and
/// indentation are blanks between words, as a continuation's are).
pub(crate) fn scan_region(sink: &mut Sink<'_>, region: std::ops::Range<usize>, joined: bool) {
    let text = &sink.text[region.clone()];
    // The heredocs opened and not yet closed; the first one's body is read.
    let mut heredocs: VecDeque<Heredoc> = VecDeque::new();
    let mut offset = region.start;
    // The command line being continued with `\`: where it starts, and its bytes with
    // comments, continuations and line endings blanked (so offsets stay the file's).
    let mut logical: Option<usize> = None;
    // The logical line's bytes: one buffer for the whole file, emptied after each line.
    let mut bytes: Vec<u8> = Vec::new();
    // Whether a line of it holds `image` (a `--image` flag, perhaps).
    let mut logical_has_image = false;
    let words = command_words_in(text);
    for raw in text.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(heredoc) = heredocs.front_mut() {
            if line.trim() == heredoc.word {
                let closed = heredocs.pop_front().expect("the front one");
                closed.close(sink);
                if let Some(next) = heredocs.front_mut() {
                    next.first_finding = sink.len();
                }
            } else if heredoc.read {
                heredoc.never |= line.contains("ullPolicy: Never");
                if line.trim_start_matches([' ', '-']).starts_with("build:") {
                    heredoc.builds.push(start);
                }
                if line.contains("image") {
                    scan_data_line(sink, line, start);
                }
            }
            continue;
        }
        let code = if line.contains('#') {
            &line[..comment_start(line)]
        } else {
            line
        };
        if IMAGE.find(code.as_bytes()).is_some() {
            scan_command_line(sink, code, start);
            logical_has_image = true;
        }
        let opens_heredoc = code.contains("<<");
        if opens_heredoc {
            let read = !feeds_no_yaml(code);
            let first_finding = sink.len();
            heredocs.extend(heredoc_words(code).into_iter().map(|word| Heredoc {
                word,
                read,
                first_finding,
                never: false,
                builds: Vec::new(),
            }));
        }
        let logical_start = *logical.get_or_insert(start);
        let kept = bytes.len() + code.len();
        bytes.extend_from_slice(raw.as_bytes());
        let escaped = !opens_heredoc && code.trim_end().ends_with('\\');
        // In a joined line, a comment runs to the end of the line YAML makes.
        let commented = joined && code.len() < line.len();
        let continued = escaped || joined && !commented && offset < region.end;
        if escaped {
            let backslash = bytes.len() - raw.len() + code.trim_end().len() - 1;
            bytes[backslash] = b' ';
        }
        bytes[kept..].fill(b' ');
        if !continued {
            // A command on one line has its flags read from that line, as it is.
            let one_line = logical_start == start;
            if one_line && logical_has_image {
                scan_flags(sink, code, start);
            }
            flush_logical(
                sink,
                logical_start,
                &bytes,
                logical_has_image && !one_line,
                words,
            );
            logical = None;
            logical_has_image = false;
            bytes.clear();
        }
        if commented {
            break;
        }
    }
    if let Some(start) = logical {
        flush_logical(sink, start, &bytes, logical_has_image, words);
    }
    if let Some(unclosed) = heredocs.pop_front() {
        unclosed.close(sink);
    }
    // An image the script builds and then runs is what it built. The names stay for the
    // next region: a pipeline's later step runs what an earlier one built.
    if !sink.built.is_empty() {
        let built = sink.built.clone();
        for finding in &mut sink.findings {
            if built
                .iter()
                .any(|name| same_local_name(name, &finding.text))
            {
                finding.status = crate::Status::Local;
            }
        }
    }
}

/// Whether `used` names the image a build tagged `built`: as written, or with the `:latest` a
/// name without a tag means, or with the `localhost/` podman gives a name without a registry.
pub(crate) fn same_local_name(built: &str, used: &str) -> bool {
    fn plain(name: &str) -> &str {
        let name = name.strip_prefix("localhost/").unwrap_or(name);
        name.strip_suffix(":latest").unwrap_or(name)
    }
    plain(built) == plain(used)
}

/// Built once: every command line of every script is searched for it.
static IMAGE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new("image"));

/// The words that make a command line worth taking apart for its commands ([`commands`]): the
/// container CLIs, `kubectl set image` and `oc set image` (not every kubectl line: scripts
/// have many), and the builders whose images a script makes.
const COMMAND_WORDS: [&str; COMMAND_WORD_COUNT] = [
    "docker",
    "podman",
    "nerdctl",
    "set image",
    "buildah",
    "pack build",
    "kind build",
    "builds submit",
    "image build",
];

/// How many [`COMMAND_WORDS`] there are.
const COMMAND_WORD_COUNT: usize = 9;

/// Searchers of [`COMMAND_WORDS`], built once.
static COMMAND_FINDERS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; COMMAND_WORD_COUNT]> =
    std::sync::LazyLock::new(|| COMMAND_WORDS.map(memchr::memmem::Finder::new));

/// Which of [`COMMAND_WORDS`] `text` holds: a search of each in the whole text, so that a
/// command line is searched only for those (a search per short line costs more than its
/// bytes, and most scripts hold none of the words).
fn command_words_in(text: &str) -> [bool; COMMAND_WORD_COUNT] {
    COMMAND_FINDERS
        .each_ref()
        .map(|finder| finder.find(text.as_bytes()).is_some())
}

/// Scans a logical command line for `--image` flags (when `has_image`, a line of it holds the
/// word) and commands; `words` are the [`COMMAND_WORDS`] the file holds.
fn flush_logical(
    sink: &mut Sink<'_>,
    start: usize,
    bytes: &[u8],
    has_image: bool,
    words: [bool; COMMAND_WORD_COUNT],
) {
    let has_cli = COMMAND_FINDERS
        .iter()
        .zip(words)
        .any(|(finder, held)| held && finder.find(bytes).is_some())
        || memchr::memchr(b'$', bytes).is_some() && may_name_an_engine(bytes);
    if !has_cli && !has_image {
        return;
    }
    // Only whole lines' code and ASCII spaces went in: still UTF-8.
    let Ok(code) = std::str::from_utf8(bytes) else {
        return;
    };
    if has_image {
        scan_flags(sink, code, start);
    }
    if has_cli {
        commands::scan(sink, code, start);
    }
}

/// A line of a heredoc's body: YAML `image:` items and flags.
fn scan_data_line(sink: &mut Sink<'_>, line: &str, offset: usize) {
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') {
        return;
    }
    let indent = line.len() - trimmed.len();
    if let Some((value, at)) = yaml_image_value(trimmed) {
        let value_end = value.find(" #").unwrap_or(value.len());
        report_yaml_value(sink, &value[..value_end], offset + indent + at);
    }
    scan_flags(sink, line, offset);
}

/// Why a heredoc's or an echoed line's image without a tag or digest is not written.
const UNTAGGED_YAML_LINE: &str = "no tag or digest is written, and a YAML line in a script \
     does not show what is around it: a `tag:` beside it may complete the name (a chart's \
     values), and only in a pod's containers does it mean `latest`";

/// Reports the value of a YAML `image:` line a script holds (a heredoc's, or one it echoes):
/// not a file (`disk.qcow2`), and, without a tag or a digest, reported but not written.
fn report_yaml_value(sink: &mut Sink<'_>, value: &str, at: usize) {
    if crate::rules::names_a_file(value.trim()) {
        return;
    }
    let before = sink.len();
    report(sink, value, at);
    if sink.len() > before
        && let Some(finding) = sink.findings.last_mut()
        && finding.status == crate::Status::Floating
        && finding
            .reference
            .as_ref()
            .is_some_and(|r| r.tag().is_none() && r.digest().is_none())
    {
        finding.site = crate::EditSite::Unsupported {
            reason: UNTAGGED_YAML_LINE.to_owned(),
        };
    }
}

/// `image: value` or `- image: value`: the value and where it starts in `text`.
fn yaml_image_value(text: &str) -> Option<(&str, usize)> {
    let item = text.strip_prefix("- ").map_or(text, str::trim_start);
    let value = item.strip_prefix("image:")?;
    Some((value, text.len() - item.len() + "image:".len()))
}

/// A command line (its comment cut off): the quoted YAML lines `echo` and `printf` print.
/// (Its flags are read with the whole logical line, [`flush_logical`].)
fn scan_command_line(sink: &mut Sink<'_>, code: &str, offset: usize) {
    let mut command_word = true;
    let mut printing = false;
    for token in tokens(code) {
        match token {
            // A substitution's own `echo` prints into the word around it.
            Token::Substitution { .. } => {}
            Token::Separator => {
                command_word = true;
                printing = false;
            }
            Token::Word { start, end, quoted } => {
                let word = &code[start..end];
                if command_word {
                    let word = word.trim_start_matches(['@', '-', '+']);
                    printing = matches!(word, "echo" | "printf");
                    command_word = false;
                    continue;
                }
                if !printing {
                    continue;
                }
                let Some((from, to)) = quoted else { continue };
                if !writes_a_file(&code[end..]) {
                    continue;
                }
                let content = &code[from..to];
                let trimmed = content.trim_start();
                let Some((value, at)) = yaml_image_value(trimmed) else {
                    continue;
                };
                // `printf 'image: x\n'` and `echo -e`: an escaped newline ends the YAML line.
                let value = value.split("\\n").next().unwrap_or(value);
                let value_end = value.find(" #").unwrap_or(value.len());
                let indent = content.len() - trimmed.len();
                report_yaml_value(sink, &value[..value_end], offset + from + indent + at);
            }
        }
    }
}

/// Whether the rest of a printing command after a word (`rest`) sends what it prints to a
/// file or another command (`>> values.yaml`, `| kubectl apply -f -`): printed to the log,
/// an `image:` line is a message. A CI runner's own files (`>> $GITHUB_STEP_SUMMARY`,
/// `$GITHUB_OUTPUT`) are messages and outputs too.
fn writes_a_file(rest: &str) -> bool {
    let command = rest.split([';', '&', '\n']).next().unwrap_or_default();
    let Some(at) = command.find(['>', '|']) else {
        return false;
    };
    let target = command[at..].trim_start_matches(['>', '|', ' ', '\t']);
    !target
        .trim_start_matches(['"', '$', '{'])
        .starts_with("GITHUB_")
}

/// `--image=ref` and `--image ref` in `line` (a logical command line, or a heredoc's line),
/// where the command the flag belongs to takes a container image ([`takes_a_container_image`]).
fn scan_flags(sink: &mut Sink<'_>, line: &str, offset: usize) {
    let mut search = 0;
    // By bytes: `str::find` builds a searcher per call, and every line is searched.
    while let Some(i) = memchr::memmem::find(&line.as_bytes()[search..], b"--image") {
        let flag = search + i;
        search = flag + "--image".len();
        if flag > 0 && !line.as_bytes()[flag - 1].is_ascii_whitespace() {
            continue;
        }
        let rest = &line[search..];
        let (value_start, value) = if let Some(value) = rest.strip_prefix('=') {
            (search + 1, value)
        } else if rest.starts_with([' ', '\t']) {
            let value = rest.trim_start();
            (search + rest.len() - value.len(), value)
        } else {
            continue;
        };
        if !takes_a_container_image(&line[..flag]) {
            continue;
        }
        let word_end = word_end(value);
        let before = sink.len();
        report(sink, &value[..word_end], offset + value_start);
        if sink.len() > before && never_pulled(line) {
            mark_last_local(sink);
        }
    }
}

/// Whether the command line asks that its image never be pulled (`kubectl run
/// --image-pull-policy=Never`: it must be on the node already, as `kind load` leaves it).
fn never_pulled(line: &str) -> bool {
    // Built once: every `--image` flag's line is searched for it.
    static POLICY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("--image-pull-policy"));
    POLICY.find_iter(line.as_bytes()).any(|at| {
        line[at + "--image-pull-policy".len()..]
            .strip_prefix(['=', ' '])
            .is_some_and(|value| value.trim_start().starts_with("Never"))
    })
}

/// Makes the finding pushed last `local` (unless it is templated): an image that is never
/// pulled, or that the script makes.
fn mark_last_local(sink: &mut Sink<'_>) {
    if let Some(finding) = sink.findings.last_mut()
        && matches!(
            finding.status,
            crate::Status::Floating | crate::Status::Pinned
        )
    {
        finding.status = crate::Status::Local;
    }
}

/// Commands whose `--image` names no container image to pull: a virtual machine's image (a
/// cloud's or a local hypervisor's), or one the command builds or imports. Each is the
/// program and the words (subcommands, in any place after it) that make it one.
const NOT_CONTAINER_IMAGES: &[(&str, &[&str])] = &[
    ("gcloud", &["compute"]),
    ("hcloud", &[]),
    ("doctl", &["compute"]),
    ("linode-cli", &[]),
    ("vultr-cli", &[]),
    ("openstack", &[]),
    ("nova", &[]),
    ("az", &["vm"]),
    ("az", &["vmss"]),
    ("az", &["acr", "build"]),
    ("az", &["acr", "import"]),
    ("multipass", &[]),
    ("lxc", &[]),
    ("incus", &[]),
    ("virt-install", &[]),
    ("vagrant", &[]),
    ("packer", &[]),
    ("podman", &["machine"]),
    // `flux create image repository --image=ghcr.io/org/app`: a repository to watch.
    ("flux", &["image"]),
    // Images these build or push: `kind build node-image --image kindest/node:dev`, Jib's
    // `./gradlew jib --image=…`, Knative's `func deploy --image`, Code Engine's builds, and the
    // local image `aws lightsail push-container-image` uploads.
    ("kind", &["build"]),
    ("gradle", &[]),
    ("gradlew", &[]),
    ("func", &[]),
    ("kn", &["func"]),
    ("ibmcloud", &["ce", "build"]),
    ("ibmcloud", &["ce", "buildrun"]),
    ("aws", &["lightsail", "push-container-image"]),
];

/// A quick yes for [`takes_a_container_image`] on most lines, without taking them apart: no
/// quote (which may hide a separator), no `--` word, and a first word after the last
/// separator that is a program, none of [`NOT_CONTAINER_IMAGES`]. Otherwise `false`: ask
/// the parser.
fn surely_takes_one(before: &str) -> bool {
    // One pass over the bytes: the generic searchers cost more than these short lines.
    let bytes = before.as_bytes();
    let mut start = 0;
    for (at, &b) in bytes.iter().enumerate() {
        match b {
            // A backtick's command is part of the word around it: the parser knows.
            b'"' | b'\'' | b'\\' | b'`' => return false,
            b';' | b'&' | b'|' | b'(' | b')' | b'{' | b'}' => start = at + 1,
            b'-' if bytes.get(at + 1) == Some(&b'-')
                && (at == 0 || bytes[at - 1].is_ascii_whitespace())
                && bytes.get(at + 2).is_none_or(u8::is_ascii_whitespace) =>
            {
                return false;
            }
            _ => {}
        }
    }
    let first = before[start..]
        .split_ascii_whitespace()
        .next()
        .unwrap_or("");
    let first = first.trim_start_matches(['@', '-', '+']);
    let wrapper =
        first.contains('=') || first == "sudo" || commands::BEFORE_THE_PROGRAM.contains(&first);
    !wrapper && !may_be_denied(program_name(first), &before[start..])
}

/// Whether `program`, in the command `text`, may be one of [`NOT_CONTAINER_IMAGES`]: its name
/// is, and the text holds the words that make it one (`kind create cluster` is not `kind
/// build`), as the parser would find them or not.
fn may_be_denied(program: &str, text: &str) -> bool {
    NOT_CONTAINER_IMAGES
        .iter()
        .any(|(name, needs)| *name == program && needs.iter().all(|word| text.contains(word)))
}

/// `word` as the program it names: a recipe line's `@`, `-` and `+` and a directory taken off
/// (`@/usr/bin/gcloud`: `gcloud`).
fn program_name(word: &str) -> &str {
    let word = word.trim_start_matches(['@', '-', '+']);
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether `program`, followed by the words `after`, is one of [`NOT_CONTAINER_IMAGES`].
fn is_denied(program: &str, after: &[&str]) -> bool {
    NOT_CONTAINER_IMAGES
        .iter()
        .any(|(name, needs)| *name == program && needs.iter().all(|w| after.contains(w)))
}

/// Whether the command that `before` (a line up to a `--image` flag) ends inside may take a
/// container image there: not one of [`NOT_CONTAINER_IMAGES`], and not after a `--` (past
/// it, `kubectl run x --image=a:1 -- app --image=b:2` passes flags to the container's program).
fn takes_a_container_image(before: &str) -> bool {
    if surely_takes_one(before) {
        return true;
    }
    let words = commands::last_command(before);
    let Some((program, after)) = words.split_first() else {
        return true;
    };
    !after.contains(&"--") && !is_denied(program_name(program), after)
}

/// Where the comment of a command line starts (its length when it has none): a `#` that
/// begins a word outside quotes; a recipe line's `@`, `-` and `+` prefixes do not count as
/// words before it.
fn comment_start(line: &str) -> usize {
    let bytes = line.as_bytes();
    let mut quote = None;
    let mut escaped = false;
    let mut word_start = true;
    let mut first_word = true;
    for (i, &b) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
            word_start = false;
            continue;
        }
        match (quote, b) {
            (Some(b'\'' | b'"'), _) if quote == Some(b) => quote = None,
            (Some(b'"') | None, b'\\') => escaped = true,
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'#') if word_start => return i,
            _ => {}
        }
        let separator = b.is_ascii_whitespace() || matches!(b, b';' | b'&' | b'|' | b'(');
        let prefix = first_word && matches!(b, b'@' | b'-' | b'+');
        word_start = quote.is_none() && (separator || prefix);
        first_word &= b.is_ascii_whitespace() || prefix;
    }
    bytes.len()
}

/// A heredoc opened and not yet closed.
struct Heredoc {
    /// The line that closes it.
    word: String,
    /// Whether its body may be YAML (see [`feeds_no_yaml`]).
    read: bool,
    /// The first finding of its body.
    first_finding: usize,
    /// Its body sets `imagePullPolicy: Never` (or a chart's `pullPolicy: Never`).
    never: bool,
    /// Where its body's `build:` lines start (a compose file's service that builds its image).
    builds: Vec<usize>,
}

impl Heredoc {
    /// Its body's images are never pulled when it says so: `local`, as in a manifest file. So
    /// is an `image:` beside a `build:` key, as in a compose file: what the build makes.
    fn close(self, sink: &mut Sink<'_>) {
        let text = sink.text;
        for finding in &mut sink.findings[self.first_finding..] {
            if !matches!(
                finding.status,
                crate::Status::Floating | crate::Status::Pinned
            ) {
                continue;
            }
            let line =
                memchr::memrchr(b'\n', &text.as_bytes()[..finding.span.start]).map_or(0, |i| i + 1);
            if self.never
                || self
                    .builds
                    .iter()
                    .any(|&build| same_mapping(text, line, build))
            {
                finding.status = crate::Status::Local;
            }
        }
    }
}

/// Whether the YAML lines starting at `a` and `b` of `text` are keys of one block mapping:
/// their keys are as deep (a list item's `- ` counted as indentation), and no line between
/// them is less deep.
fn same_mapping(text: &str, a: usize, b: usize) -> bool {
    fn line_at(text: &str, at: usize) -> &str {
        let rest = &text[at..];
        rest.split('\n').next().unwrap_or(rest)
    }
    let depth = |line: &str| line.len() - line.trim_start_matches([' ', '-']).len();
    let key_depth = depth(line_at(text, a));
    if key_depth != depth(line_at(text, b)) {
        return false;
    }
    let (first, last) = (a.min(b), a.max(b));
    text[first..last].split('\n').skip(1).all(|line| {
        let line = line.trim_end_matches('\r');
        line.trim().is_empty() || line.len() - line.trim_start_matches(' ').len() >= key_depth
    })
}

/// Whether a command line that opens a heredoc feeds it to something that is no manifest: an
/// interpreter's program (`python3 - <<'PY'`), or a CI runner's own file
/// (`cat >> "$GITHUB_STEP_SUMMARY" <<EOF`).
fn feeds_no_yaml(code: &str) -> bool {
    const RUNNER_FILES: [&str; 3] = ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_ENV"];
    const INTERPRETERS: [&str; 8] = [
        "python", "node", "ruby", "perl", "php", "deno", "bun", "pwsh",
    ];
    let program = code
        .split_whitespace()
        .find(|word| !word.contains('=') && !matches!(*word, "sudo" | "env" | "exec" | "time"))
        .map(|word| word.rsplit('/').next().unwrap_or(word));
    RUNNER_FILES.iter().any(|file| code.contains(file))
        || program.is_some_and(|program| INTERPRETERS.iter().any(|i| program.starts_with(i)))
}

/// The terminators of the heredocs a command line opens, in order: `<<WORD`, `<<-WORD`,
/// `<<'WORD'`, `<<"WORD"`, `<<\WORD`; not `<<<` (a here-string) nor `$((1<<2))`.
fn heredoc_words(code: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = code;
    while let Some(i) = memchr::memmem::find(rest.as_bytes(), b"<<") {
        let after = &rest[i + 2..];
        if let Some(more) = after.strip_prefix('<') {
            rest = more;
            continue;
        }
        let after = after.strip_prefix('-').unwrap_or(after).trim_start();
        let (word, used) = if let Some(&quote @ (b'\'' | b'"')) = after.as_bytes().first() {
            let Some(end) = after[1..].find(char::from(quote)) else {
                break;
            };
            (after[1..=end].to_owned(), end + 2)
        } else {
            let end = after
                .find(|c: char| c.is_whitespace() || ";&|<>()".contains(c))
                .unwrap_or(after.len());
            (after[..end].replace('\\', ""), end)
        };
        if word
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        {
            words.push(word);
        }
        rest = &after[used..];
    }
    words
}

/// A word or a separator of a command line.
enum Token {
    /// `quoted`: the range inside the quotes when the whole word is one quoted string.
    Word {
        start: usize,
        end: usize,
        quoted: Option<(usize, usize)>,
    },
    /// `;`, `&`, `|`, `(`, `)`, `{`, `}`, a backquote: a new command follows.
    Separator,
    /// The commands inside a `$( … )` of the word before (`start..end`, inside the
    /// parentheses): a command line of their own.
    Substitution { start: usize, end: usize },
}

/// The words and separators of `code`, quotes respected.
fn tokens(code: &str) -> Vec<Token> {
    let bytes = code.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if matches!(b, b';' | b'&' | b'|' | b'(' | b')' | b'{' | b'}') {
            tokens.push(Token::Separator);
            i += 1;
            continue;
        }
        let start = i;
        let mut quote = None;
        let mut substitutions = Vec::new();
        while i < bytes.len() {
            let c = bytes[i];
            match quote {
                Some(q) if c == q => quote = None,
                Some(b'"') | None if c == b'\\' => i += 1,
                // A CI expression (`${{ env.HOST }}`) is replaced before the shell runs: it
                // is part of the word around it, braces and spaces included.
                Some(b'"') | None if c == b'$' && bytes[i + 1..].starts_with(b"{{") => {
                    i = memchr::memmem::find(&bytes[i + 3..], b"}}")
                        .map_or(bytes.len(), |j| i + 3 + j + 1);
                }
                // `$(…)` (and a Makefile's `$(VAR)`) is part of the word around it
                // (`-v $(pwd):/app`); what it runs is read as a command line of its own.
                Some(b'"') | None if c == b'$' && bytes.get(i + 1) == Some(&b'(') => {
                    let end = closing_parenthesis(bytes, i + 1);
                    substitutions.push(Token::Substitution {
                        start: i + 2,
                        end: end.min(bytes.len()),
                    });
                    i = end;
                }
                // So is a backtick's (`--env UID=`id -u``, `source=`pwd``).
                Some(b'"') | None if c == b'`' => {
                    let end =
                        memchr::memchr(b'`', &bytes[i + 1..]).map_or(bytes.len(), |j| i + 1 + j);
                    substitutions.push(Token::Substitution { start: i + 1, end });
                    i = end;
                }
                None if c == b'\'' || c == b'"' => quote = Some(c),
                None if c.is_ascii_whitespace()
                    || matches!(c, b';' | b'&' | b'|' | b'(' | b')') =>
                {
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let end = i.min(bytes.len());
        let word = &bytes[start..end];
        let quoted = match word {
            [q @ (b'\'' | b'"'), .., last] if last == q && word.len() >= 2 => {
                let inner = &word[1..word.len() - 1];
                (!inner.contains(q)).then_some((start + 1, end - 1))
            }
            _ => None,
        };
        tokens.push(Token::Word { start, end, quoted });
        tokens.append(&mut substitutions);
    }
    tokens
}

/// Where the `)` that closes the `(` at `open` is (quotes inside respected), or the end of
/// `bytes` when none does.
fn closing_parenthesis(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0;
    let mut quote = None;
    let mut i = open;
    while i < bytes.len() {
        let c = bytes[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(b'"') | None if c == b'\\' => i += 1,
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if c == b'(' => depth += 1,
            None if c == b')' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            Some(_) | None => {}
        }
        i += 1;
    }
    bytes.len()
}

/// The end of the shell word at the start of `value` (a quoted word ends at its quote).
fn word_end(value: &str) -> usize {
    let bytes = value.as_bytes();
    match bytes.first() {
        Some(&quote @ (b'"' | b'\'')) => {
            memchr::memchr(quote, &bytes[1..]).map_or(bytes.len(), |i| i + 2)
        }
        _ => bytes
            .iter()
            .position(|b| b.is_ascii_whitespace() || matches!(b, b';' | b'|' | b'&' | b')'))
            .unwrap_or(bytes.len()),
    }
}

/// Reports `value` (which starts at `at`) when it is, whole and unquoted, a reference.
fn report(sink: &mut Sink<'_>, value: &str, at: usize) {
    let leading = value.len() - value.trim_start().len();
    let value = value.trim();
    let mut at = at + leading;
    let mut inner = value;
    for quote in ['"', '\''] {
        if let Some(stripped) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            inner = stripped;
            at += 1;
            break;
        }
    }
    if inner.is_empty() || is_templated(inner) || inner.contains(['"', '\'', '\\']) {
        return;
    }
    if let Some(found) = Found::inline(at..at + inner.len(), inner) {
        sink.push(found);
    }
}
