//! `hooklab ui`: opens the UI of a running `hooklab listen` (found through the discovery file
//! beside its database). The address carries this run's control token in its fragment
//! (`#token=…`), which browsers never send to a server; the UI keeps it for the tab only.

use super::db_path;
use crate::cli::UiArgs;
use anyhow::Context as _;
use hooklab_server::control::discovery;
use std::process::{Command, ExitCode, Stdio};

pub(crate) fn open(args: UiArgs) -> anyhow::Result<ExitCode> {
    let db = db_path(&args.db)?;
    let path = discovery::path_beside(&db);
    let found = discovery::Discovery::read(&path).with_context(|| {
        format!(
            "no running `hooklab listen` for {} (cannot read {}); start one, or pass the \
             --db it uses",
            db.display(),
            path.display()
        )
    })?;
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
