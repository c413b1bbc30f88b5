//! Shared by the benchmarks that time the `protocheck` binary.

use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `cmd` to its end off the async runtime and returns its wall time; a
/// non-zero exit stops the benchmark (a failed run measures nothing).
pub async fn timed(mut cmd: Command) -> Duration {
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let out = cmd.output().expect("run protocheck");
        let elapsed = started.elapsed();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        elapsed
    })
    .await
    .expect("join")
}
