//! Tekton's step images given as a parameter: `image: $(params.gitInitImage)` in a Task whose
//! `params` declare `gitInitImage` with a `default:` (as most tasks of the Tekton catalog do).
//! The default is what runs unless a run passes another value: it is the reference, reported
//! (and pinned) at the default, when the Task reads the parameter nowhere else; read
//! elsewhere too (a script that prints it, a second step), it is reported and not written.

use super::walk::{At, Chain, Entry, Seg};
use super::{Map, Out, ScalarAt};

/// `NAME` when `written` is, whole, a parameter's reference `$(params.NAME)`.
pub(super) fn param_name(written: &str) -> Option<&str> {
    let name = written
        .trim_matches(['"', '\''])
        .strip_prefix("$(params.")?
        .strip_suffix(')')?;
    (!name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')))
    .then_some(name)
}

/// The default of the parameter `name` that the step `map` (in a `steps` list) reads as its
/// image, and why it is not to be written when the parameter is read elsewhere too.
pub(super) fn param_default<'t>(
    map: &Map<'t, '_>,
    out: &Out<'_>,
    name: &str,
) -> Option<(ScalarAt<'t>, Option<String>)> {
    // The mapping that holds the steps holds the params too (a Task's `spec`, a Pipeline's
    // embedded `taskSpec`).
    let steps_at = map.path.iter().rposition(|seg| *seg == Seg::Key("steps"))?;
    let holder = reach(map, &map.path[..steps_at])?;
    let mut entries = Vec::new();
    map.doc.entries_into(&holder, &mut entries);
    let params = entries.iter().find(|e| e.key == "params")?.value.clone();
    let default = map.doc.items(&params).into_iter().find_map(|param| {
        let mut fields: Vec<Entry<'t>> = Vec::new();
        map.doc.entries_into(&param, &mut fields);
        let named = fields
            .iter()
            .any(|f| f.key == "name" && map.doc.scalar(&f.value).is_some_and(|s| s.value == name));
        named
            .then(|| fields.iter().find(|f| f.key == "default"))
            .flatten()
            .and_then(|f| map.doc.scalar(&f.value))
    })?;
    let holder_span = map.doc.tree.node(holder.node).span;
    let text = out
        .text
        .get(holder_span.start as usize..holder_span.end as usize)
        .unwrap_or_default();
    let reason = (reads(text, name) > 1).then(|| {
        format!(
            "the Task reads `params.{name}` elsewhere than as this step's image: a digest in its \
             default would change that value too"
        )
    });
    Some((default, reason))
}

/// How many times `text` reads the parameter `name` (`$(params.NAME)`, and the bracket forms).
fn reads(text: &str, name: &str) -> usize {
    ["params.", "params['", "params[\""]
        .iter()
        .map(|prefix| super::whole_name_reads(text, &format!("{prefix}{name}")))
        .sum()
}

/// The node at `path` from the document's root (the path a walk reached `map` by).
fn reach(map: &Map<'_, '_>, path: &[Seg<'_>]) -> Option<At> {
    let mut at = root_of(map)?;
    for seg in path {
        at = match seg {
            Seg::Key(key) => {
                let mut entries = Vec::new();
                map.doc.entries_into(&at, &mut entries);
                entries.into_iter().find(|e| e.key == *key)?.value
            }
            Seg::Item(index) => map.doc.items(&at).into_iter().nth(*index)?,
        };
    }
    Some(at)
}

/// The root of the document `map` is in: the one whose span holds it (an alias never reaches
/// into another document).
fn root_of(map: &Map<'_, '_>) -> Option<At> {
    let tree = map.doc.tree;
    let span = tree.node(map.at.node).span;
    tree.documents
        .iter()
        .flatten()
        .copied()
        .find(|&root| {
            let document = tree.node(root).span;
            document.start <= span.start && span.end <= document.end
        })
        .map(|root| map.doc.at(root, &Chain::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_reference_names_the_parameter() {
        for (written, name) in [
            ("$(params.gitInitImage)", Some("gitInitImage")),
            ("\"$(params.builder-image)\"", Some("builder-image")),
            ("$(params.a):$(params.b)", None),
            ("$(params.)", None),
            ("gcr.io/x:1", None),
        ] {
            assert_eq!(param_name(written), name, "{written}");
        }
        assert_eq!(
            reads("$(params.img) $(params.img_tag) $(params['img'])", "img"),
            2
        );
    }
}
