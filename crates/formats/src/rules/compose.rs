//! Docker Compose: `services.*.image` (`local` beside `build:`, which names the image being
//! built), and `image` in `x-*` extension fields, whose values compose ignores except where an
//! alias or a merge key brings them into a service.
//!
//! An image written as a variable with a default, `${AIRFLOW_IMAGE:-apache/airflow:3.1.4}`
//! (compose's interpolation; Airflow's and many apps' published compose files), is the
//! default: that is what runs when the variable is not set, and pinning it there keeps the
//! variable working. Anything else with a `$` is `templated`.

use super::{Map, Out, Rules, Seg};
use crate::Status;

pub(crate) struct Compose;

fn is_extension(path: &[Seg<'_>]) -> bool {
    matches!(path.first(), Some(Seg::Key(key)) if key.starts_with("x-"))
}

impl Rules for Compose {
    fn mapping(&self, map: &Map<'_, '_>, out: &mut Out<'_>) {
        let service = matches!(map.path, [Seg::Key("services"), Seg::Key(_)]);
        if !service && !is_extension(map.path) {
            return;
        }
        let Some(scalar) = map.scalar("image") else {
            return;
        };
        let build = map.has("build");
        let text = out.text.get(scalar.span.clone()).unwrap_or_default();
        let (prefix, suffix) = variable_default(text).unwrap_or(("", ""));
        if let Some(candidate) = out.inline_between(&scalar, prefix, suffix)
            && build
            && candidate.found.status != Status::Templated
        {
            candidate.found.status = Status::Local;
        }
    }

    fn inert(&self, path: &[Seg<'_>]) -> bool {
        is_extension(path)
    }
}

/// `${NAME:-DEFAULT}` or `${NAME-DEFAULT}` written whole, with a `DEFAULT` that expands
/// nothing: the text before the default and after it.
fn variable_default(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_prefix("${")?.strip_suffix('}')?;
    let name_end = body
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))?;
    let name = &body[..name_end];
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let rest = &body[name_end..];
    let operator = if rest.starts_with(":-") {
        2
    } else if rest.starts_with('-') {
        1
    } else {
        return None;
    };
    let default = &body[name_end + operator..];
    if default.is_empty() || default.contains(['$', '{', '}']) {
        return None;
    }
    Some((&text[..2 + name_end + operator], "}"))
}

#[cfg(test)]
mod tests {
    use super::variable_default;

    #[test]
    fn a_variable_with_a_default_is_told_by_its_text() {
        for (text, expected) in [
            ("${IMAGE:-nginx:1.25}", Some(("${IMAGE:-", "}"))),
            ("${IMAGE-nginx:1.25}", Some(("${IMAGE-", "}"))),
            ("${_I2:-a/b@sha256:00}", Some(("${_I2:-", "}"))),
            ("${IMAGE:-}", None),
            ("${IMAGE:?nginx}", None),
            ("${IMAGE:+nginx}", None),
            ("${IMAGE}", None),
            ("${2X:-nginx}", None),
            ("${:-nginx}", None),
            ("${A:-${B:-nginx}}", None),
            ("${A:-nginx}:1", None),
            ("$IMAGE", None),
            ("nginx:1.25", None),
        ] {
            assert_eq!(variable_default(text), expected, "{text}");
        }
    }
}
