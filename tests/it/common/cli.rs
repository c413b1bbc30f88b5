//! The `protocheck` binary as the CLI tests run it.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The binary with nothing inherited that would change what it does: no
/// database, credentials or service from the environment.
pub fn protocheck() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_protocheck"));
    for var in [
        "DATABASE_URL",
        "PROTOCHECK_BEARER_TOKEN",
        "PROTOCHECK_LIMITED_TOKEN",
        "PROTOCHECK_API_KEY",
        "PROTOCHECK_SERVER",
        "PROTOCHECK_PUBLIC_URL",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("RUST_LOG", "warn");
    cmd
}

/// Runs `cmd` to its end off the async runtime.
pub async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("run protocheck"))
        .await
        .expect("join")
}

/// Exit code, stdout and stderr, for assertion messages.
pub fn show(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
