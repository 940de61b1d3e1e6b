//! The values tagpin renders a chart with to learn how each candidate becomes an image.
//!
//! Each candidate `i` gets values no chart would hold, so that what a rendering prints can be
//! traced back: a repository `tpsr{i}z`, a name part `tpsn{i}z`, a registry `tpsg{i}z.invalid`, a
//! tag `99.0.0-tpst{i}z` and a digest `sha256:` followed by 64 hex digits ending in `i`; the
//! `j`th empty string beside its parts, where a rendering turns those on, `tpse{i}x{j}z`. The
//! `z` ends each one, so that `tpsr1z` is not found inside `tpsr12z`.

use serde_json::{Map, Value};

use super::candidates::{Beside, Candidate, Shape, ValuesImages};

/// Which values a rendering is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Render {
    /// Every part of every candidate replaced: how each part is used.
    Sentinels,
    /// As [`Render::Names`], with each key beside a split map's parts
    /// ([`Candidate::beside`]) changed: a string becomes [`switched`], a flag its opposite.
    /// An image that differs from the one of [`Render::Names`] is what a user who sets one
    /// of them asks for (see [`super::switched`]).
    Switched,
    /// As [`Render::Switched`], with the digest sentinels: whether the image the user then
    /// gets still pulls the digest tagpin wrote for the defaults.
    SwitchedDigested,
    /// The name replaced and digests emptied, tags as written: which image lines are whose,
    /// and the tag the chart uses.
    Names,
    /// Digests emptied, everything else as written: the references to resolve.
    Undigested,
    /// The values as they are.
    Original,
}

pub fn repository(i: usize) -> String {
    format!("tpsr{i}z")
}

pub fn name_part(i: usize) -> String {
    format!("tpsn{i}z")
}

pub fn registry(i: usize) -> String {
    format!("tpsg{i}z.invalid")
}

/// A tag that is also a semantic version, and a high one (`99.0.0-tpst{i}z`): charts compare
/// their image tag with `semverCompare`, Helm fails the rendering when it is not a version,
/// and charts that check their tag refuse one below a minimum (ingress-nginx wants 0.27.0).
pub fn tag(i: usize) -> String {
    format!("99.0.0-tpst{i}z")
}

/// The value [`Render::Switched`] gives the string under candidate `i`'s `j`th key of
/// [`Candidate::beside`].
pub fn switched(i: usize, j: usize) -> String {
    format!("tpse{i}x{j}z")
}

/// Every sentinel in a rendered text, for [`mask`].
static SENTINELS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"tpsg[0-9]+z\.invalid|99\.0\.0-tpst[0-9]+z|tps[rnt][0-9]+z|tpse[0-9]+x[0-9]+z|d1e5[0-9a-f]{60}",
    )
        .expect("a valid pattern")
});

/// `text` with every sentinel replaced by `…`: what a reason shows of a rendered line.
pub fn mask(text: &str) -> String {
    SENTINELS.replace_all(text, "…").into_owned()
}

/// Whether a rendered line holds some candidate's repository sentinel: another map's image.
pub fn names_an_image(text: &str) -> bool {
    text.match_indices("tpsr").any(|(at, _)| {
        let digits = text[at + 4..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        digits > 0 && text.as_bytes().get(at + 4 + digits) == Some(&b'z')
    })
}

/// The hex digits of candidate `i`'s digest sentinel.
pub fn digest_hex(i: usize) -> String {
    format!("d1e5{i:060x}")
}

/// The token that marks candidate `i`'s image lines in a rendering of [`Render::Sentinels`]
/// or [`Render::Names`]: its repository sentinel.
pub fn token(i: usize) -> String {
    repository(i)
}

/// The override values for a rendering (written as JSON, which is YAML, for Helm): `enabled: true` for every
/// disabled mapping on a candidate's path (every one, with [`ValuesImages::every_flag`]), and
/// the candidates' parts as `render` asks.
///
/// Every rendering also sets `global.security.allowInsecureImages`: Bitnami's common library
/// (its `common.errors.insecureImages`, called from NOTES.txt) fails any rendering whose images
/// differ from the chart's own, and the value means nothing to other charts.
pub fn overrides(images: &ValuesImages, render: Render) -> Value {
    let mut root = Value::Object(Map::new());
    set(
        &mut root,
        &["global".to_owned(), "security".to_owned()],
        "allowInsecureImages",
        Value::Bool(true),
    );
    for path in &images.disabled {
        let on_a_path = images.candidates.iter().any(|c| c.path.starts_with(path));
        if on_a_path || images.every_flag {
            set(&mut root, path, "enabled", Value::Bool(true));
        }
    }
    for (i, candidate) in images.candidates.iter().enumerate() {
        parts(&mut root, i, candidate, render);
    }
    root
}

fn parts(root: &mut Value, i: usize, candidate: &Candidate, render: Render) {
    let path = &candidate.path;
    match (&candidate.shape, render) {
        (_, Render::Original) | (Shape::Inline(_), Render::Undigested) => {}
        (Shape::Inline(_), Render::Sentinels) => {
            let (parent, key) = path.split_at(path.len() - 1);
            let value = format!("{}:{}", repository(i), tag(i));
            set(root, parent, &key[0], Value::String(value));
        }
        (Shape::Inline(part), Render::Names | Render::Switched | Render::SwitchedDigested) => {
            // The tag as written stays, so the rendering shows the chart's own tag.
            let tag = part
                .text
                .rsplit_once('@')
                .map_or(part.text.as_str(), |(name, _)| name)
                .rsplit_once(':')
                .filter(|(_, tag)| !tag.contains('/'))
                .map_or("latest", |(_, tag)| tag);
            let (parent, key) = path.split_at(path.len() - 1);
            set(
                root,
                parent,
                &key[0],
                Value::String(format!("{}:{tag}", repository(i))),
            );
        }
        (
            Shape::Split {
                registry: registry_part,
                name,
                image,
                tag: tag_part,
                digest,
            },
            _,
        ) => {
            let names = matches!(
                render,
                Render::Sentinels | Render::Switched | Render::SwitchedDigested | Render::Names
            );
            if names {
                set(root, path, &name.key, Value::String(repository(i)));
            }
            let every_part = render == Render::Sentinels;
            if matches!(render, Render::Switched | Render::SwitchedDigested) {
                switch(root, i, candidate);
            }
            if every_part {
                if let Some(part) = registry_part {
                    set(root, path, &part.key, Value::String(registry(i)));
                }
                if let Some(part) = image {
                    set(root, path, &part.key, Value::String(name_part(i)));
                }
                if let Some(part) = tag_part {
                    set(root, path, &part.key, Value::String(tag(i)));
                }
            }
            if let Some(part) = digest {
                let value = if every_part || render == Render::SwitchedDigested {
                    format!("sha256:{}", digest_hex(i))
                } else {
                    String::new()
                };
                set(root, path, &part.key, Value::String(value));
            }
        }
    }
}

/// Changes the keys beside candidate `i`'s parts (see [`Render::Switched`]).
fn switch(root: &mut Value, i: usize, candidate: &Candidate) {
    for (j, (key, beside)) in candidate.beside.iter().enumerate() {
        let changed = match beside {
            Beside::Empty | Beside::Word => Value::String(switched(i, j)),
            Beside::False => Value::Bool(true),
            Beside::True => Value::Bool(false),
        };
        set(root, &candidate.path, key, changed);
    }
}

/// Sets `path.key` in `root`, creating mappings on the way (a non-mapping on the way is
/// replaced: the override is for a rendering, never written).
fn set(root: &mut Value, path: &[String], key: &str, value: Value) {
    let mut node = root;
    for segment in path {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        node = node
            .as_object_mut()
            .expect("just made an object")
            .entry(segment.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !node.is_object() {
        *node = Value::Object(Map::new());
    }
    node.as_object_mut()
        .expect("just made an object")
        .insert(key.to_owned(), value);
}
