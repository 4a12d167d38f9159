//! `hooklab providers`: what each provider signs, how, and its default tolerance.

use crate::cli::ProvidersArgs;
use crate::output;
use std::process::ExitCode;

pub(crate) fn run(args: ProvidersArgs) -> anyhow::Result<ExitCode> {
    let catalog = hooklab_core::provider::catalog();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&catalog)?);
    } else {
        print!("{}", output::providers_table(&catalog));
    }
    Ok(ExitCode::SUCCESS)
}
