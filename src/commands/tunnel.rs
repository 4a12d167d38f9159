//! `hooklab tunnel status`: asks the running `hooklab listen` (found through the discovery
//! file beside its database) about its tunnel, over the loopback control API.

use crate::cli::TunnelStatusArgs;
use crate::output;
use anyhow::Context as _;
use hooklab_server::control::client;
use hooklab_server::tunnel::{TunnelState, TunnelStatus};
use std::process::ExitCode;

/// Exit status 0 when the tunnel is up, 1 otherwise (down, reconnecting, off, no instance).
pub(crate) fn status(args: TunnelStatusArgs) -> anyhow::Result<ExitCode> {
    let found = super::running_instance(&args.db)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let answer = runtime.block_on(client::get(&found, "/api/tunnel"))?;
    if args.json {
        println!("{answer}");
    }
    if answer["status"] == "off" {
        if !args.json {
            println!(
                "No tunnel: the `hooklab listen` at {} runs without --tunnel.",
                found.receiver
            );
        }
        return Ok(ExitCode::from(1));
    }
    let status: TunnelStatus =
        serde_json::from_value(answer).context("the control API's answer is not a status")?;
    if !args.json {
        print!("{}", output::tunnel_status_text(&status));
    }
    Ok(if matches!(status.state, TunnelState::Up { .. }) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
