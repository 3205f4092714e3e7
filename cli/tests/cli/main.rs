//! The `flakery` binary as a user runs it.

mod bad_input;
mod decode;
mod doctor;
mod next;
mod secrets;

use std::process::{Command, Output};

fn flakery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flakery"))
        .args(args)
        .env_remove("FLAKERY_LAYOUT")
        .env_remove("FLAKERY_WORKER_ID")
        .env_remove("FLAKERY_DATACENTER_ID")
        .output()
        .expect("run flakery")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A failure is one line naming the problem, a non-zero exit, and never a panic.
fn fails_with(args: &[&str], code: &str, needle: &str) {
    let output = flakery(args);
    assert!(!output.status.success(), "{args:?} succeeded");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    assert!(
        stderr.contains(code) && stderr.contains(needle),
        "{args:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn every_option_has_help_text() {
    for command in ["next", "decode", "compose", "layouts", "doctor"] {
        let help = stdout(&flakery(&[command, "--help"]));
        let options = help.split("Options:").nth(1).unwrap_or_default();
        for line in options.lines().filter(|l| l.trim_start().starts_with('-')) {
            let (flag, text) = line.trim().split_once("  ").unwrap_or((line, ""));
            assert!(
                !text.trim().is_empty(),
                "{command}: {flag} has no help text"
            );
        }
    }
}

/// Bytes that are not UTF-8 as the host name (set in a UTS namespace of the child's own) are
/// read as U+FFFD, three bytes each; the database lease cut the name to 64 bytes inside one
/// and panicked (exit 101). Now the lease goes on to connect, and says it cannot.
#[test]
#[ignore = "needs a UTS namespace (root or user namespaces): run by tests/security/run.sh"]
fn a_host_name_that_is_not_utf8_is_no_panic() {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_flakery"));
    command
        .args(["next"])
        .env_remove("FLAKERY_WORKER_ID")
        .env_remove("FLAKERY_DATACENTER_ID")
        .env_remove("FLAKERY_ZOOKEEPER")
        // A closed port on loopback: the lease is refused at once.
        .env(
            "FLAKERY_DATABASE_URL",
            "postgres://u@127.0.0.1:1/ids?sslmode=disable",
        );
    // SAFETY: between fork and exec only async-signal-safe system calls are made.
    unsafe {
        command.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWUTS) != 0
                && libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWUTS) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            let name = [0xffu8; 64];
            if libc::sethostname(name.as_ptr().cast(), name.len()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().expect("run flakery in a UTS namespace");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("coordinator_unavailable"), "{stderr}");
}
