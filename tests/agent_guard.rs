//! The hard-line guard: dangerous commands, each next to harmless look-alikes.

use frontier::agent::guard::{check, mentions, Violation};

/// Commands the guard must refuse, with the rule each breaks.
const DANGEROUS: &[(&str, Violation)] = &[
    ("rm -rf /", Violation::RemoveRoot),
    ("rm -rf /*", Violation::RemoveRoot),
    ("rm -rf / *", Violation::RemoveRoot),
    ("rm -fr //", Violation::RemoveRoot),
    ("rm -r -f /.", Violation::RemoveRoot),
    ("rm -rf /./", Violation::RemoveRoot),
    ("rm -rf --no-preserve-root /", Violation::RemoveRoot),
    ("rm -rf -- /", Violation::RemoveRoot),
    ("rm -rf \"/\"", Violation::RemoveRoot),
    ("rm -rf '/'", Violation::RemoveRoot),
    ("rm -rf /tmp/x /", Violation::RemoveRoot),
    ("/bin/rm -rf /", Violation::RemoveRoot),
    ("RM -RF /", Violation::RemoveRoot),
    ("cd /tmp && rm -rf /", Violation::RemoveRoot),
    ("true; rm -rf /", Violation::RemoveRoot),
    ("false || rm -rf /", Violation::RemoveRoot),
    ("echo x | rm -rf /", Violation::RemoveRoot),
    ("ls &\nrm -rf /", Violation::RemoveRoot),
    ("sudo rm -rf /", Violation::RemoveRoot),
    ("sudo -u root rm -rf /", Violation::RemoveRoot),
    ("env -i PATH=/bin rm -rf /", Violation::RemoveRoot),
    ("exec rm -rf /", Violation::RemoveRoot),
    ("FOO=1 rm -rf /", Violation::RemoveRoot),
    ("nohup rm -rf / &", Violation::RemoveRoot),
    ("timeout 5 rm -rf /", Violation::RemoveRoot),
    ("(rm -rf /)", Violation::RemoveRoot),
    ("{ rm -rf /; }", Violation::RemoveRoot),
    ("if true; then rm -rf /; fi", Violation::RemoveRoot),
    ("echo $(rm -rf /)", Violation::RemoveRoot),
    ("echo `rm -rf /`", Violation::RemoveRoot),
    ("echo \"$(rm -rf /)\"", Violation::RemoveRoot),
    ("echo \"`rm -rf /`\"", Violation::RemoveRoot),
    ("cat <(rm -rf /)", Violation::RemoveRoot),
    ("sh -c 'rm -rf /'", Violation::RemoveRoot),
    ("sh -c \"rm -rf /\"", Violation::RemoveRoot),
    ("bash -lc 'cd / && rm -rf /'", Violation::RemoveRoot),
    ("bash -e -c 'rm -rf /'", Violation::RemoveRoot),
    ("busybox sh -c 'rm -rf /'", Violation::RemoveRoot),
    ("eval 'rm -rf /'", Violation::RemoveRoot),
    ("eval rm -rf /", Violation::RemoveRoot),
    ("sh -c \"sh -c 'rm -rf /'\"", Violation::RemoveRoot),
    ("env -S 'rm -rf /'", Violation::RemoveRoot),
    ("rm -rf $'\\x2f'", Violation::RemoveRoot),
    ("xargs rm -rf /", Violation::RemoveRoot),
    ("mkfs /dev/sda1", Violation::Mkfs),
    ("mkfs.ext4 /dev/sda1", Violation::Mkfs),
    ("sudo mkfs.xfs -f /dev/nvme0n1", Violation::Mkfs),
    ("dd if=/dev/zero of=/dev/sda bs=1M", Violation::DdToDisk),
    ("dd if=image.iso of=/dev/nvme0n1", Violation::DdToDisk),
    ("sudo dd if=/dev/urandom of=/dev/vda", Violation::DdToDisk),
    ("shutdown -h now", Violation::PowerOff),
    ("reboot", Violation::PowerOff),
    ("sudo poweroff", Violation::PowerOff),
    ("echo bye; halt", Violation::PowerOff),
    ("systemctl reboot", Violation::PowerOff),
    ("init 0", Violation::PowerOff),
    ("echo x > /dev/sda", Violation::RedirectToDisk),
    ("cat image >/dev/nvme0n1", Violation::RedirectToDisk),
    ("cat image 2>&1 >> /dev/vdb", Violation::RedirectToDisk),
    ("sh -c 'cat x > /dev/sda'", Violation::RedirectToDisk),
    (":(){ :|:& };:", Violation::ForkBomb),
    (":(){ :|: & };:", Violation::ForkBomb),
    ("bomb(){ bomb|bomb& };bomb", Violation::ForkBomb),
    ("bash -c ':(){ :|:& };:'", Violation::ForkBomb),
    ("echo 'unterminated", Violation::Unreadable),
    ("echo $(rm -rf /", Violation::Unreadable),
];

/// Commands that look like the dangerous ones but are not, and must pass.
const HARMLESS: &[&str] = &[
    "echo \"rm -rf /\"",
    "echo 'rm -rf /'",
    "echo rm -rf /",
    "printf '%s\\n' 'sh -c \"rm -rf /\"'",
    "grep -r 'rm -rf /' .",
    "git commit -m 'never run rm -rf /'",
    "rm -rf /tmp/build",
    "rm -rf ./build",
    "rm -rf build/",
    "rm -rf .cache",
    "rm -rf *",
    "rm -rf ~/.cache/frontier",
    "ls /",
    "find / -name '*.rs' -maxdepth 1",
    "cd / && ls",
    "cat /dev/null > out.txt",
    "echo x > /dev/null",
    "echo x > /dev/stderr",
    "dd if=/dev/zero of=disk.img bs=1M count=1",
    "dd if=/dev/sda of=backup.img",
    "echo '> /dev/sda'",
    "echo mkfs",
    "man mkfs",
    "which shutdown",
    "echo reboot",
    "cargo build --release",
    "systemctl status nginx",
    "./format_disk.sh --dry-run",
    "python -c 'import os; print(os.getcwd())'",
    "sh -c 'ls /'",
    "sh greet.sh",
    "eval echo hello",
    "echo ':(){ :|:& };:'",
    "f(){ echo hi; }; f",
    "a | b | c",
    "echo \"$HOME\" # rm -rf /",
    "echo '\"'",
];

#[test]
fn refuses_every_dangerous_command() {
    for &(command, rule) in DANGEROUS {
        assert_eq!(
            check(command),
            Err(rule),
            "{command:?} should break {}",
            rule.kind()
        );
    }
}

#[test]
fn lets_every_harmless_look_alike_through() {
    for &command in HARMLESS {
        assert_eq!(check(command), Ok(()), "{command:?} is harmless");
    }
}

#[test]
fn never_panics_on_any_prefix() {
    for &(command, _) in DANGEROUS {
        for end in 0..=command.len() {
            if command.is_char_boundary(end) {
                let _ = check(&command[..end]);
            }
        }
    }
    // Deep nesting is refused, not followed forever.
    let deep = format!("{}echo hi", "eval ".repeat(40));
    assert_eq!(check(&deep), Err(Violation::Unreadable));
    let shallow = format!("{}echo hi", "eval ".repeat(5));
    assert_eq!(check(&shallow), Ok(()));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Text that needs no escaping inside single quotes.
    fn prose() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9 /;&|$()`\"<>*.:{}-]{0,40}"
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Single-quoted text is prose to `echo`, whatever it holds.
        #[test]
        fn quoted_text_is_prose(text in prose()) {
            let command = format!("echo '{text}'");
            prop_assert_eq!(check(&command), Ok(()));
        }

        /// The same text run as code by a carrier is judged exactly as the text itself.
        #[test]
        fn a_carrier_runs_its_text_as_code(text in prose(), carrier in 0usize..3) {
            // A leading `-` or `+` would be read by `sh` as one more option.
            prop_assume!(!text.starts_with(['-', '+']));
            let wrapped = match carrier {
                0 => format!("sh -c '{text}'"),
                1 => format!("bash -lc '{text}'"),
                _ => format!("eval '{text}'"),
            };
            prop_assert_eq!(check(&wrapped), check(&text));
        }

        /// A dangerous command stays dangerous after any harmless command and any separator.
        #[test]
        fn separators_keep_command_position(
            index in 0usize..40,
            before in "[a-z]{1,8}( [a-z0-9.]{1,8}){0,3}",
            separator in prop::sample::select(vec![";", "&&", "||", "|", "&", "\n", "; sudo"]),
        ) {
            let (dangerous, rule) = DANGEROUS[index];
            let command = format!("{before} {separator} {dangerous}");
            prop_assert_eq!(check(&command), Err(rule));
        }
    }
}

#[test]
fn commands_that_name_a_protected_file_are_seen() {
    let name = b"run.jsonl";
    for command in [
        "echo x > run.jsonl",
        "cat ./run.jsonl",
        "rm /tmp/ws/run.jsonl",
        "dd if=/dev/zero of=run.jsonl",
        "cat 'run.jsonl'",
        r#"cat "run".jsonl"#,
        r"cat r\un.jsonl",
        r"cat $'\x72un.jsonl'",
        "sh -c 'truncate -s0 run.jsonl'",
        r#"bash -c "cat 'run'.jsonl""#,
        ": > $(printf %s run.jsonl)",
        "x=`cat \"run\".jsonl`",
        "cp a run.jsonl",
    ] {
        assert!(mentions(command, name), "{command}");
    }
    for command in [
        "echo run.jsonl.bak",
        "cat myrun.jsonl",
        "cat run_jsonl",
        "ls",
        "echo 'it''s'",
    ] {
        assert!(!mentions(command, name), "{command}");
    }
    assert!(!mentions("anything", b""));
}
