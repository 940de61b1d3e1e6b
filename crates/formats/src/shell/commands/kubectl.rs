//! `kubectl set image RESOURCE CONTAINER=IMAGE …` (and `oc set image`, `OpenShift`'s): each
//! `CONTAINER=IMAGE` pair after the resource names the image a workload's container is set to
//! run. A deploy script's way to roll out a release.
//!
//! Options are known by name, as for the container CLIs: those that take a value skip it
//! (`-n prod`, `-l app=web`, whose `app=web` is a selector, not a pair), flags do not
//! (`--record`), and an option tagpin does not know stops the command without a finding. The
//! container's name must be a Kubernetes name (lower case letters, digits and `-`) or `*`.

use super::{Options, Words, option_words};
use crate::common::Sink;
use crate::shell::report;

/// kubectl's global options that take a value, and those of `set image`.
const VALUES: &[&str] = &[
    "--namespace",
    "--context",
    "--cluster",
    "--kubeconfig",
    "--user",
    "--server",
    "--token",
    "--as",
    "--as-group",
    "--as-uid",
    "--request-timeout",
    "--cache-dir",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--tls-server-name",
    "--filename",
    "--kustomize",
    "--selector",
    "--output",
    "--template",
    "--field-manager",
    "--dry-run",
    "--show-managed-fields",
    "--allow-missing-template-keys",
];
const FLAGS: &[&str] = &[
    "--all",
    "--local",
    "--record",
    "--recursive",
    "--insecure-skip-tls-verify",
];

const OPTIONS: Options = Options {
    values: VALUES,
    flags: FLAGS,
    short_flags: "R",
    short_values: "nsfklo",
};

/// Reports the images of `kubectl set image` in `command`, whose program (`kubectl` or `oc`)
/// is word `program`; the command line starts at byte `offset` of the file.
pub(super) fn set_image(sink: &mut Sink<'_>, command: &Words<'_>, program: usize, offset: usize) {
    let mut index = program + 1;
    for subcommand in ["set", "image"] {
        let Some(at) = skip_options(command, index) else {
            return;
        };
        if command.text(at) != Some(subcommand) {
            return;
        }
        index = at + 1;
    }
    while let Some(word) = command.text(index) {
        if word.starts_with('-') {
            let Some(skip) = option_words(&OPTIONS, word) else {
                return;
            };
            index += skip;
            continue;
        }
        if let Some((container, image)) = word.split_once('=')
            && is_container_name(container)
        {
            let (start, _) = command.words[index];
            report(sink, image, offset + start + container.len() + 1);
        }
        index += 1;
    }
}

/// The index of the first word from `index` on that is no option (`None` at an option tagpin
/// does not know).
fn skip_options(command: &Words<'_>, mut index: usize) -> Option<usize> {
    while let Some(word) = command.text(index).filter(|word| word.starts_with('-')) {
        index += option_words(&OPTIONS, word)?;
    }
    Some(index)
}

/// A container's name as `set image` takes it: a DNS label (RFC 1123), or `*` for every
/// container.
fn is_container_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    name == "*"
        || (1..=63).contains(&bytes.len())
            && bytes
                .iter()
                .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && bytes[0] != b'-'
            && bytes[bytes.len() - 1] != b'-'
}
