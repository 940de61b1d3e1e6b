//! Whether a chart's version satisfies a dependency's version constraint, as Helm reads one
//! (the Masterminds semver syntax of `Chart.yaml`'s `dependencies[].version`): alternatives
//! joined by `||`, each a list of comparisons (`>=1.2.0 <2`, `>=1.2.0, <2`), where a comparison
//! is `=`, `!=`, `>`, `>=`, `<`, `<=`, `~` (`~>`), `^`, a range `1.2 - 1.4.5`, or a bare
//! version whose missing or `x`/`*` parts are wildcards (`2.x.x`, `1.2`, `*`).
//!
//! ```
//! use tagpin_formats::chart::satisfies;
//!
//! assert!(satisfies("2.31.4", "2.x.x"));
//! assert!(satisfies("1.4.2", "^1.2.0"));
//! assert!(!satisfies("2.0.0", ">=1.2.0 <2.0.0"));
//! assert!(!satisfies("1.3.0-rc.1", "1.x"));
//! ```
//!
//! A version or constraint it cannot read is not satisfied: the caller then does not use the
//! chart.

use std::cmp::Ordering;

/// A version: its three numbers and its pre-release (empty for a release).
#[derive(Debug, PartialEq, Eq)]
struct Version<'a> {
    numbers: [u64; 3],
    pre: &'a str,
}

impl Version<'_> {
    fn compare(&self, other: &Self) -> Ordering {
        self.numbers.cmp(&other.numbers).then_with(|| {
            match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => compare_pre(self.pre, other.pre),
            }
        })
    }
}

/// Semver's order of pre-releases: dot-separated parts, numbers below words.
fn compare_pre(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// A version as written in a constraint: the numbers given (a wildcard ends them).
#[derive(Debug)]
struct Partial<'a> {
    numbers: Vec<u64>,
    pre: &'a str,
}

impl<'a> Partial<'a> {
    fn parse(text: &'a str) -> Option<Self> {
        let text = text.trim().trim_start_matches(['v', 'V']);
        let text = text.split('+').next().unwrap_or_default();
        let (core, pre) = text.split_once('-').unwrap_or((text, ""));
        let mut numbers = Vec::new();
        for part in core.split('.') {
            if matches!(part, "x" | "X" | "*") {
                break;
            }
            numbers.push(part.parse().ok()?);
        }
        (numbers.len() <= 3 && !core.is_empty()).then_some(Self { numbers, pre })
    }

    /// The lowest version this stands for.
    fn floor(&self) -> Version<'a> {
        let mut numbers = [0; 3];
        numbers[..self.numbers.len()].copy_from_slice(&self.numbers);
        Version {
            numbers,
            pre: self.pre,
        }
    }

    /// The lowest version past everything this stands for, bumping the part at `index`
    /// (`None`: it stands for everything).
    fn ceiling(&self, index: usize) -> Option<Version<'static>> {
        if index >= self.numbers.len() {
            return None;
        }
        let mut numbers = [0; 3];
        numbers[..index].copy_from_slice(&self.numbers[..index]);
        numbers[index] = self.numbers[index] + 1;
        Some(Version { numbers, pre: "" })
    }
}

fn parse_version(text: &str) -> Option<Version<'_>> {
    let partial = Partial::parse(text)?;
    (partial.numbers.len() == 3).then(|| partial.floor())
}

/// Whether `version` satisfies `constraint`.
pub fn satisfies(version: &str, constraint: &str) -> bool {
    let Some(version) = parse_version(version) else {
        return false;
    };
    constraint
        .split("||")
        .any(|alternative| satisfies_all(&version, alternative))
}

/// Whether `version` satisfies every comparison of one alternative.
fn satisfies_all(version: &Version<'_>, alternative: &str) -> bool {
    let words: Vec<&str> = alternative
        .split([' ', ',', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    // A pre-release is considered only by an alternative that names one.
    if !version.pre.is_empty() && !words.iter().any(|w| w.contains('-') && *w != "-") {
        return false;
    }
    if words.is_empty() {
        return true;
    }
    let mut i = 0;
    while i < words.len() {
        let satisfied = if words.get(i + 1) == Some(&"-") {
            let (Some(low), Some(high)) = (Partial::parse(words[i]), words.get(i + 2)) else {
                return false;
            };
            let Some(high) = Partial::parse(high) else {
                return false;
            };
            i += 3;
            version.compare(&low.floor()) != Ordering::Less && at_most(version, &high)
        } else {
            i += 1;
            compare_one(version, words[i - 1]).unwrap_or(false)
        };
        if !satisfied {
            return false;
        }
    }
    true
}

/// `version <= high`, where `high`'s missing parts are wildcards.
fn at_most(version: &Version<'_>, high: &Partial<'_>) -> bool {
    match high.ceiling(high.numbers.len().saturating_sub(1)) {
        _ if high.numbers.len() == 3 => version.compare(&high.floor()) != Ordering::Greater,
        Some(past) => version.compare(&past) == Ordering::Less,
        None => true,
    }
}

/// One comparison; `None` when it cannot be read.
fn compare_one(version: &Version<'_>, comparison: &str) -> Option<bool> {
    let operator_end = comparison
        .find(|c: char| c.is_ascii_alphanumeric() || c == '*')
        .unwrap_or(comparison.len());
    let (operator, rest) = comparison.split_at(operator_end);
    if rest.is_empty() {
        return None;
    }
    let target = Partial::parse(rest)?;
    let order = version.compare(&target.floor());
    let within = |past: Option<Version<'_>>| {
        order != Ordering::Less && past.is_none_or(|past| version.compare(&past) == Ordering::Less)
    };
    let wildcard_end = target.ceiling(target.numbers.len().saturating_sub(1));
    Some(match operator {
        "" | "=" => {
            within(wildcard_end.filter(|_| target.numbers.len() < 3))
                && (target.numbers.len() < 3 || order == Ordering::Equal)
        }
        "!=" => {
            !(within(wildcard_end.filter(|_| target.numbers.len() < 3))
                && (target.numbers.len() < 3 || order == Ordering::Equal))
        }
        ">" => match target.numbers.len() {
            3 => order == Ordering::Greater,
            _ => wildcard_end.is_none_or(|past| version.compare(&past) != Ordering::Less),
        },
        ">=" => order != Ordering::Less,
        "<" => order == Ordering::Less,
        "<=" => at_most(version, &target),
        // `~1` allows any 1.x; `~1.2` and `~1.2.3` any 1.2.x.
        "~" | "~>" => within(target.ceiling(usize::from(target.numbers.len() != 1))),
        "^" => {
            let first_nonzero = target
                .numbers
                .iter()
                .position(|n| *n != 0)
                .unwrap_or(target.numbers.len().saturating_sub(1));
            within(target.ceiling(first_nonzero))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::satisfies;

    #[test]
    fn constraints_read_as_helm_reads_them() {
        for (version, constraint, expected) in [
            ("2.31.4", "2.x.x", true),
            ("3.0.0", "2.x.x", false),
            ("2.31.4", "2.x", true),
            ("2.31.4", "*", true),
            ("2.31.4", "", true),
            ("1.2.3", "1.2.3", true),
            ("1.2.4", "1.2.3", false),
            ("1.2.4", "=1.2", true),
            ("1.2.4", "!=1.2.4", false),
            ("1.2.4", ">1.2.3", true),
            ("1.2.3", ">1.2.3", false),
            ("1.3.0", ">1.2", true),
            ("1.2.9", ">1.2", false),
            ("1.2.3", ">=1.2.3 <2.0.0", true),
            ("2.0.0", ">=1.2.3 <2.0.0", false),
            ("1.9.0", ">=1.2.3, <2.0.0", true),
            ("1.2.9", "<=1.2", true),
            ("1.3.0", "<=1.2", false),
            ("1.2.9", "~1.2.3", true),
            ("1.3.0", "~1.2.3", false),
            ("1.9.0", "~1", true),
            ("2.0.0", "~1", false),
            ("1.9.0", "^1.2.3", true),
            ("2.0.0", "^1.2.3", false),
            ("0.2.9", "^0.2.3", true),
            ("0.3.0", "^0.2.3", false),
            ("1.4.5", "1.2 - 1.4.5", true),
            ("1.4.6", "1.2 - 1.4.5", false),
            ("1.4.9", "1.2 - 1.4", true),
            ("1.1.9", "1.2 - 1.4", false),
            ("3.1.0", "^1.0 || ^3.0", true),
            ("2.1.0", "^1.0 || ^3.0", false),
            ("1.3.0-rc.1", "1.x", false),
            ("1.3.0-rc.1", ">=1.3.0-rc.0", true),
            ("1.3.0-rc.1", ">=1.3.0-rc.2", false),
            ("v1.2.3", "1.2.3", true),
            ("1.2", "1.x", false),
            ("1.2.3", "latest", false),
            ("1.2.3", ">=", false),
        ] {
            assert_eq!(
                satisfies(version, constraint),
                expected,
                "{version} against {constraint}"
            );
        }
    }
}
