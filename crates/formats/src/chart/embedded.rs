//! Chart values written inside another resource: a Flux `HelmRelease`'s `spec.values` and an
//! Argo CD `Application`'s `helm.valuesObject`. When the chart is a directory of the same
//! repository, the values can be decided and proven like a values file: they are lifted out
//! as a values file of their own (the same lines, less their indentation) to render the chart
//! with, and their candidates keep their spans in the resource's file, where the edits land.
//!
//! ```
//! use std::path::Path;
//! use tagpin_formats::chart::{ChartSource, embedded_values};
//!
//! let text = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  chart:\n    spec:\n      chart: ./charts/app\n      sourceRef: {kind: GitRepository, name: flux-system}\n  values:\n    image:\n      repository: ghcr.io/acme/app\n      tag: \"1.2\"\n";
//! let [embedded] = &embedded_values(Path::new("release.yaml"), text).unwrap()[..] else {
//!     panic!("one values map");
//! };
//! assert_eq!(embedded.chart, ChartSource::Path("./charts/app".to_owned()));
//! assert_eq!(
//!     embedded.values.as_deref(),
//!     Ok("image:\n  repository: ghcr.io/acme/app\n  tag: \"1.2\"\n")
//! );
//! assert_eq!(&text[embedded.images.candidates[0].span.clone()], "ghcr.io/acme/app");
//! ```

use std::ops::Range;
use std::path::Path;

use super::candidates::{ValuesImages, images_under};
use super::values_json::convert;
use crate::Error;
use crate::rules::chart_values::{self, ChartSource};
use crate::rules::walk::{self, Doc};
use crate::yaml::{self, Mode};

/// One values map inside a resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbeddedValues {
    /// `HelmRelease` or `Application`.
    pub kind: &'static str,
    pub chart: ChartSource,
    /// Why these values are not all the chart gets, when they are not.
    pub more_values: Option<String>,
    /// The map's bytes in the file (its first key to the end of its last line).
    pub span: Range<usize>,
    /// The map as a values file of its own, or why it cannot be one.
    pub values: Result<String, String>,
    /// Its image candidates: paths from the map, spans in the resource's file.
    pub images: ValuesImages,
}

/// The chart values inside the resources of the YAML stream `text`, in document order.
pub fn embedded_values(path: &Path, text: &str) -> Result<Vec<EmbeddedValues>, Error> {
    let tree = yaml::read(path, text, Mode::Strict)?;
    let doc = Doc {
        tree: &tree,
        structure: text,
    };
    let aliased = walk::aliased(&tree);
    let mut found = Vec::new();
    for root in tree.documents.iter().flatten() {
        for at in chart_values::values_of(doc, *root) {
            let node = tree.node(at.values.node);
            let span = lines_of(text, node.span.range());
            let values = lift(text, &span).and_then(|lifted| {
                let read = yaml::read(path, &lifted, Mode::Strict)
                    .map_err(|error| format!("the values do not read alone: {error}"))?;
                let same = match read.documents[..] {
                    [Some(root)] => {
                        convert(&read, &lifted, root, 0) == convert(&tree, text, at.values.node, 0)
                    }
                    _ => false,
                };
                if same {
                    Ok(lifted)
                } else {
                    Err(
                        "the values read differently on their own (an alias to an anchor \
                         outside them, or a layout tagpin cannot lift)"
                            .to_owned(),
                    )
                }
            });
            found.push(EmbeddedValues {
                kind: at.kind,
                chart: at.chart,
                more_values: at.more_values,
                images: images_under(doc, at.values.node, &aliased, path)?,
                span,
                values,
            });
        }
    }
    Ok(found)
}

/// `span` widened to whole lines: from its line's start (when only spaces come before it) to
/// the end of its last line.
fn lines_of(text: &str, span: Range<usize>) -> Range<usize> {
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let blank_before = text[line_start..span.start].bytes().all(|b| b == b' ');
    let start = if blank_before { line_start } else { span.start };
    let last = span.end.max(span.start + 1).min(text.len());
    let end = text[last - 1..]
        .find('\n')
        .map_or(text.len(), |i| last - 1 + i);
    start..end
}

/// The lines at `span` less the indentation of the first (its column): a values file of its
/// own. A line indented less (a comment, or the continuation of a flow collection) loses only
/// its spaces; any other is refused, as the values would not mean the same.
fn lift(text: &str, span: &Range<usize>) -> Result<String, String> {
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let first = &text[span.start..];
    let indent = span.start - line_start + first.len() - first.trim_start_matches(' ').len();
    let mut lifted = String::with_capacity(span.len() + 1);
    for (i, line) in text[span.clone()].split_inclusive('\n').enumerate() {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        if i == 0 {
            lifted.push_str(&line[spaces..]);
            continue;
        }
        let rest = line[spaces..].trim_end_matches(['\r', '\n']);
        if spaces < indent && !rest.is_empty() && !rest.starts_with('#') {
            return Err("a line of the values is indented less than their first".to_owned());
        }
        lifted.push_str(&line[spaces.min(indent)..]);
    }
    if !lifted.ends_with('\n') {
        lifted.push('\n');
    }
    Ok(lifted)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RELEASE: &str = "apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app}
spec:
  chart:
    spec:
      chart: ./charts/app
      sourceRef:
        kind: GitRepository
        name: flux-system
  values:
    # the image
    image:
      repository: ghcr.io/acme/app   # comment
      tag: \"1.2\"
    script: |
      echo hi
        indented
  # trailing comment
";

    #[test]
    fn a_helm_release_from_a_git_repository_lifts_its_values() {
        for crlf in [false, true] {
            let text = if crlf {
                RELEASE.replace('\n', "\r\n")
            } else {
                RELEASE.to_owned()
            };
            let found = embedded_values(Path::new("r.yaml"), &text).unwrap();
            assert_eq!(found.len(), 1);
            let values = found[0].values.clone().unwrap();
            let expected = "image:\n  repository: ghcr.io/acme/app   # comment\n  tag: \"1.2\"\nscript: |\n  echo hi\n    indented\n";
            let expected = if crlf {
                expected.replace('\n', "\r\n")
            } else {
                expected.to_owned()
            };
            assert_eq!(values, expected);
            assert_eq!(found[0].chart, ChartSource::Path("./charts/app".to_owned()));
            assert_eq!(found[0].more_values, None);
            let candidate = &found[0].images.candidates[0];
            assert_eq!(candidate.path, ["image"]);
            assert_eq!(&text[candidate.span.clone()], "ghcr.io/acme/app");
        }
    }

    #[test]
    fn charts_from_chart_repositories_and_extra_values_are_named() {
        let text = "apiVersion: argoproj.io/v1alpha1
kind: Application
spec:
  sources:
    - repoURL: https://charts.example
      chart: redis
      targetRevision: 19.6.4
      helm:
        valuesObject: {image: {repository: r, tag: '7'}}
    - repoURL: https://git.example/repo
      path: charts/app
      helm:
        valueFiles: [values-prod.yaml]
        valuesObject:
          image: {repository: a, tag: '1'}
";
        let found = embedded_values(Path::new("app.yaml"), text).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].chart,
            ChartSource::Named(Some("redis 19.6.4".to_owned()))
        );
        assert_eq!(
            found[0].values.as_deref(),
            Ok("{image: {repository: r, tag: '7'}}\n")
        );
        assert_eq!(found[1].chart, ChartSource::Path("charts/app".to_owned()));
        assert!(
            found[1]
                .more_values
                .as_deref()
                .unwrap()
                .contains("valueFiles")
        );
    }

    #[test]
    fn values_that_would_read_differently_alone_are_refused() {
        let text = "x: &tag '1.0'
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
spec:
  values:
    image: {repository: a, tag: *tag}
";
        // The alias's anchor is in another document: the stream is refused as a whole.
        assert!(embedded_values(Path::new("r.yaml"), text).is_err());
        let text = "apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
base: &tag '1.0'
spec:
  values:
    image: {repository: a, tag: *tag}
";
        let found = embedded_values(Path::new("r.yaml"), text).unwrap();
        assert!(found[0].values.is_err(), "{:?}", found[0].values);
    }
}
