//! `hooklab`: the command line. Parses arguments, sets up logging, and calls the library;
//! every command lives in [`commands`] and does its work through `hooklab-core` and
//! `hooklab-server`, the same code the desktop app and a production service run.

mod cli;
mod commands;
mod output;

use clap::Parser as _;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HOOKLAB_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
