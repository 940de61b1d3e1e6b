//! A rendering of a chart without Helm, for the lines that matter: every template line that
//! reads a value of an image map is evaluated ([`super::evaluate`]) and printed as Helm would
//! print it, one document per line, so that [`super::decide`] and [`super::prove`] read it as
//! they read `helm template`'s output.
//!
//! It is conservative: a map is **blocked** (the caller writes nothing for it, with the reason)
//! when any template reads it in a way a line cannot show: the map or a map above it passed
//! whole (to a helper, to `with`, to `toYaml`), `.Values` passed whole, a value read inside a
//! named template or a `with`/`range` block, a condition on it that spans lines, or a line the
//! evaluator cannot evaluate. Files of vendored subcharts are read too (a library chart's
//! helper is one), and a map under a subchart's name is blocked: its templates see it under
//! another path.

use std::fmt::Write as _;

use serde_json::Value;

use super::evaluate::{self, Piece, Root};

/// A template file: its path as Helm names it (`chart/templates/x.yaml`) and its text.
#[derive(Clone, Debug)]
pub struct Template {
    pub source: String,
    pub text: String,
}

/// What the static rendering of a chart gave.
#[derive(Debug, Default)]
pub struct StaticRendering {
    /// The evaluated lines, as `helm template` would print documents.
    pub output: String,
    /// For each candidate path that cannot be followed, why.
    pub blocked: Vec<(usize, String)>,
}

/// A read of `.Values…` in a template: where, and the keys after `.Values`.
struct Read<'t> {
    template: usize,
    line: usize,
    keys: Vec<&'t str>,
    /// In an action that opens a block on this line and does not close it there, or in a
    /// named template, or inside `with`/`range`.
    context: Context,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// A line at the top of a template file (perhaps inside `if` blocks): `.` is the root.
    Line,
    /// In `define`, `with` or `range`: `.` is something else.
    Scoped,
    /// The condition of a block that spans lines.
    Condition,
}

/// Renders what `templates` do with the candidates at `paths` (keys from the values root),
/// with `root` (`{"Values": …, "Chart": …, "Release": …}`). `subcharts` are the names of the
/// chart's vendored subcharts.
pub fn render(
    templates: &[Template],
    paths: &[Vec<String>],
    subcharts: &[String],
    root: &Value,
) -> StaticRendering {
    let reads = reads(templates);
    let mut rendering = StaticRendering::default();
    let mut lines = std::collections::BTreeSet::new();
    for (i, path) in paths.iter().enumerate() {
        match follow(path, &reads, templates, subcharts) {
            Ok(found) => lines.extend(found),
            Err(reason) => rendering.blocked.push((i, reason)),
        }
    }
    let root = Root { root };
    for (template, line) in lines {
        let text = templates[template]
            .text
            .lines()
            .nth(line)
            .unwrap_or_default();
        let source = &templates[template].source;
        match evaluate::line(text, &root) {
            Ok(evaluated) => {
                let shown = evaluated.trim_start().trim_start_matches("- ").trim_start();
                let _ = write!(rendering.output, "---\n# Source: {source}\n{shown}\n");
            }
            Err(error) => {
                let reason = format!(
                    "not proven: without Helm, `{}` at {source}:{} cannot be evaluated ({error})",
                    text.trim(),
                    line + 1
                );
                for (i, path) in paths.iter().enumerate() {
                    let on_line = reads.iter().any(|r| {
                        r.template == template && r.line == line && starts_with(&r.keys, path)
                    });
                    if on_line && !rendering.blocked.iter().any(|(b, _)| *b == i) {
                        rendering.blocked.push((i, reason.clone()));
                    }
                }
            }
        }
    }
    rendering
}

/// The lines that read the candidate at `path`, or why it cannot be followed.
fn follow(
    path: &[String],
    reads: &[Read<'_>],
    templates: &[Template],
    subcharts: &[String],
) -> Result<Vec<(usize, usize)>, String> {
    if path.first().is_some_and(|top| subcharts.contains(top)) {
        return Err(format!(
            "not proven: without Helm, the values under `{}` feed a subchart, whose templates \
             this reading does not follow",
            path[0]
        ));
    }
    let mut lines = Vec::new();
    for read in reads {
        let at = || format!("{}:{}", templates[read.template].source, read.line + 1);
        // `.Values` itself, or a map on the way to this one, passed whole.
        let whole_above =
            read.keys.len() <= path.len() && path.iter().zip(&read.keys).all(|(p, k)| p == k);
        if whole_above {
            let shown = std::iter::once("Values")
                .chain(read.keys.iter().copied())
                .collect::<Vec<_>>()
                .join(".");
            return Err(format!(
                "not proven: without Helm, `.{shown}` is read whole at {}, which this reading \
                 does not follow",
                at()
            ));
        }
        if !starts_with(&read.keys, path) {
            continue;
        }
        match read.context {
            Context::Line => lines.push((read.template, read.line)),
            Context::Scoped => {
                return Err(format!(
                    "not proven: without Helm, the map is read inside a named template or a \
                     `with`/`range` block at {}",
                    at()
                ));
            }
            Context::Condition => {
                return Err(format!(
                    "not proven: without Helm, a block that spans lines depends on the map at {}",
                    at()
                ));
            }
        }
    }
    Ok(lines)
}

fn starts_with(keys: &[&str], path: &[String]) -> bool {
    keys.len() > path.len() && path.iter().zip(keys).all(|(p, k)| p == k)
}

/// Every read of `.Values` in `templates`, with its context.
fn reads(templates: &[Template]) -> Vec<Read<'_>> {
    let mut reads = Vec::new();
    for (template, file) in templates.iter().enumerate() {
        // The blocks open at the start of each line: true for `define`/`with`/`range`.
        let mut open: Vec<bool> = Vec::new();
        for (line, text) in file.text.lines().enumerate() {
            let scoped_before = open.iter().any(|scoped| *scoped);
            let actions: Vec<&str> = match evaluate::pieces(text) {
                Some(pieces) => pieces
                    .into_iter()
                    .filter_map(|p| match p {
                        Piece::Action(a) => Some(a),
                        Piece::Text(_) => None,
                    })
                    .collect(),
                // An action over several lines: read as scoped, which blocks what it reads.
                None => vec![text],
            };
            let depth_before = open.len();
            for action in &actions {
                match first_word(action) {
                    "define" | "with" | "range" | "block" => open.push(true),
                    "if" => open.push(false),
                    "end" => {
                        open.pop();
                    }
                    _ => {}
                }
            }
            // A block opened here and closed on a later line, or an `else` between lines.
            let spans =
                open.len() > depth_before || actions.iter().any(|a| first_word(a) == "else");
            for action in &actions {
                let opens = ["if", "else", "with", "range"].contains(&first_word(action));
                let context = if scoped_before {
                    Context::Scoped
                } else if spans && opens {
                    Context::Condition
                } else {
                    Context::Line
                };
                for keys in values_reads(action) {
                    reads.push(Read {
                        template,
                        line,
                        keys,
                        context,
                    });
                }
            }
        }
    }
    reads
}

fn first_word(action: &str) -> &str {
    action.split_whitespace().next().unwrap_or_default()
}

/// The key chains after each `.Values` in `action` (`$.Values.a.b` and `.Values.a.b` give
/// `[a, b]`; `.Values` alone gives `[]`).
fn values_reads(action: &str) -> Vec<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = action;
    while let Some(at) = rest.find(".Values") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + ".Values".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .unwrap_or(after.len());
        let keys = after[..end].split('.').filter(|k| !k.is_empty()).collect();
        out.push(keys);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn template(source: &str, text: &str) -> Template {
        Template {
            source: source.to_owned(),
            text: text.to_owned(),
        }
    }

    fn path(dotted: &str) -> Vec<String> {
        dotted.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn image_lines_are_printed_and_other_reads_block() {
        let templates = [
            template(
                "c/templates/deploy.yaml",
                "spec:\n  {{- if .Values.worker.enabled }}\n  containers:\n    - image: \"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}\"\n    - image: {{ include \"c.image\" .Values.helper }}\n  {{- end }}\n  {{- with .Values.scoped }}\n    image: {{ .repository }}\n  {{- end }}\n",
            ),
            template(
                "c/templates/_helpers.tpl",
                "{{- define \"c.x\" -}}\n{{ .Values.defined.tag }}\n{{- end -}}\n",
            ),
        ];
        let root = json!({
            "Values": {"image": {"repository": "tpsr0z", "tag": "tpst0z"}},
            "Chart": {"AppVersion": "1.0"},
        });
        let paths = [
            path("image"),
            path("helper"),
            path("scoped"),
            path("defined"),
            path("sub.image"),
        ];
        let rendering = render(&templates, &paths, &["sub".to_owned()], &root);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/deploy.yaml\nimage: \"tpsr0z:tpst0z\"\n"
        );
        let blocked: Vec<(usize, &str)> = rendering
            .blocked
            .iter()
            .map(|(i, reason)| (*i, reason.as_str()))
            .collect();
        assert_eq!(
            blocked,
            [
                (
                    1,
                    "not proven: without Helm, `.Values.helper` is read whole at c/templates/deploy.yaml:5, which this reading does not follow"
                ),
                (
                    2,
                    "not proven: without Helm, `.Values.scoped` is read whole at c/templates/deploy.yaml:7, which this reading does not follow"
                ),
                (
                    3,
                    "not proven: without Helm, the map is read inside a named template or a `with`/`range` block at c/templates/_helpers.tpl:2"
                ),
                (
                    4,
                    "not proven: without Helm, the values under `sub` feed a subchart, whose templates this reading does not follow"
                ),
            ]
        );
    }

    #[test]
    fn a_condition_over_lines_blocks_and_one_on_the_line_is_evaluated() {
        let templates = [template(
            "c/templates/d.yaml",
            "{{- if .Values.image.digest }}\nimage: {{ .Values.image.repository }}@{{ .Values.image.digest }}\n{{- end }}\n",
        )];
        let root = json!({"Values": {"image": {"repository": "r", "digest": "d"}}});
        let rendering = render(&templates, &[path("image")], &[], &root);
        assert_eq!(rendering.blocked.len(), 1, "{:?}", rendering.blocked);
        assert!(rendering.blocked[0].1.contains("a block that spans lines"));
        let inline = [template(
            "c/templates/d.yaml",
            "image: {{ .Values.image.repository }}{{ if .Values.image.digest }}@{{ .Values.image.digest }}{{ end }}\n",
        )];
        let rendering = render(&inline, &[path("image")], &[], &root);
        assert_eq!(rendering.blocked, []);
        assert_eq!(
            rendering.output,
            "---\n# Source: c/templates/d.yaml\nimage: r@d\n"
        );
    }
}
