//! `tagpin completions SHELL` and `tagpin man`: generated from the flag definitions, so they
//! work wherever the binary runs, even beside a config file that does not parse.

use crate::context::TestContext;

#[test]
fn completions_and_man_ignore_a_broken_config() {
    let context = TestContext::new();
    context.write(".tagpin.yaml", "not_a_key: true\n");

    let bash = context.run(["completions", "bash"]);
    bash.assert_code(0);
    assert!(bash.stdout.contains("_tagpin()"), "{}", bash.stdout);
    assert!(
        bash.stdout.contains("--no-refresh"),
        "pin's flags are completed"
    );
    assert_eq!(bash.stderr, "");

    let man = context.run(["man"]);
    man.assert_code(0);
    assert!(man.stdout.contains(".TH tagpin 1"), "{}", man.stdout);
    assert!(man.stdout.contains("tagpin\\-pin"), "{}", man.stdout);
    assert_eq!(man.stderr, "");

    // The same config file does stop a command that reads it.
    context.run(["scan"]).assert_code(2);
}

#[test]
fn completions_reject_an_unknown_shell() {
    let run = TestContext::new().run(["completions", "cmd.exe"]);
    run.assert_code(2);
    assert!(run.stderr.contains("invalid value"), "{}", run.stderr);
}

/// `tagpin --help` (and so the man page) says what the exit codes mean, and what `-v` adds.
#[test]
fn help_lists_the_exit_codes() {
    let context = TestContext::new();
    let help = context.run(["--help"]);
    help.assert_code(0);
    assert!(
        help.stdout.contains("Exit codes: 0 success; 1 findings"),
        "{help}"
    );
    assert!(help.stdout.contains("-vv"), "{help}");
    let man = context.run(["man"]);
    assert!(man.stdout.contains("Exit codes"), "{man}");
}
