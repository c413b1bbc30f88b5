//! RCP reference server (arrives with the RCP suite).
#[derive(Debug, clap::Args)]
pub struct RcpReferenceArgs {
    #[arg(long, default_value_t = 8766)]
    pub port: u16,
}
pub async fn run_rcp_reference(_args: RcpReferenceArgs) -> anyhow::Result<()> {
    anyhow::bail!("the RCP reference server is not in this build yet")
}
