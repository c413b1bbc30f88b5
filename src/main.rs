//! The protocheck command line (this build exposes the reference servers only).

use clap::{Parser, Subcommand};
use protocheck::reference::rcp::{RcpReferenceArgs, run_rcp_reference};

#[derive(Debug, Parser)]
#[command(
    name = "protocheck",
    version,
    about = "Conformance checks for protocol servers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a reference target server, correct by default, with fault switches.
    Reference {
        #[command(subcommand)]
        protocol: ReferenceProtocol,
    },
}

#[derive(Debug, Subcommand)]
enum ReferenceProtocol {
    /// The RCP/1 reference server (L0), over HTTP or stdio.
    Rcp(RcpReferenceArgs),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Logs go to stderr: over stdio, stdout carries protocol frames only (spec §5).
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Reference {
            protocol: ReferenceProtocol::Rcp(args),
        } => run_rcp_reference(args).await,
    }
}
