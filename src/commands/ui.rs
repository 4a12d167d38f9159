//! `hooklab ui`: opens the UI of a running `hooklab listen` (found through the discovery file
//! beside its database). The address carries this run's control token in its fragment
//! (`#token=…`), which browsers never send to a server; the UI keeps it for the tab only.

use crate::cli::UiArgs;
use std::process::{Command, ExitCode, Stdio};

pub(crate) fn open(args: UiArgs) -> anyhow::Result<ExitCode> {
    let found = super::running_instance(&args.db)?;
    let address = format!("{}/#token={}", found.url, found.token.expose());
    if args.print {
        println!("{address}");
        return Ok(ExitCode::SUCCESS);
    }
    let opened = ["xdg-open", "open"].iter().any(|opener| {
        Command::new(opener)
            .arg(&address)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if opened {
        println!(
            "Opened the Hooklab UI of {} in your browser.",
            found.receiver
        );
    } else {
        println!(
            "Could not start a browser here. Open this address on this machine (it holds this \
             run's access token, keep it private):\n{address}"
        );
    }
    Ok(ExitCode::SUCCESS)
}
