//! One module per command. Each takes its parsed arguments and returns the exit code.

mod capture;
mod diff;
mod dlq;
mod events;
mod lab;
mod listen;
mod objects;
mod providers;
pub(crate) mod reconcile;
mod replay;
pub(crate) mod serve;
mod sign;
mod transfer;
mod trigger;
mod tunnel;
mod ui;
mod verify;

use crate::cli::{
    BodyArgs, Cli, Command, DbArg, DlqCommand, EventsCommand, GenericArgs, TunnelCommand,
};
use anyhow::{Context as _, bail};
use hooklab_core::provider::{Digest, Encoding, GenericHmacOptions, ProviderOptions, TokenOptions};
use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Listen(args) => listen::run(*args),
        Command::Serve(args) => serve::run(*args),
        Command::Migrate(args) => serve::migrate(args),
        Command::Export(args) => transfer::export(args),
        Command::Import(args) => transfer::import(args),
        Command::Verify(args) => verify::run(args),
        Command::Sign(args) => sign::run(args),
        Command::Events(EventsCommand::List(args)) => events::list(args),
        Command::Events(EventsCommand::Show(args)) => events::show(args),
        Command::Events(EventsCommand::Diff(args)) => diff::run(args),
        Command::Keys(args) => events::keys(args),
        Command::Dlq(DlqCommand::List(args)) => dlq::list(args),
        Command::Dlq(DlqCommand::Show(args)) => dlq::show(args),
        Command::Dlq(DlqCommand::Redrive(args)) => dlq::redrive(args),
        Command::Dlq(DlqCommand::Discard(args)) => dlq::discard(args),
        Command::Objects(args) => objects::list(args),
        Command::Timeline(args) => objects::timeline(args),
        Command::Reconcile(args) => reconcile::run(args),
        Command::Providers(args) => providers::run(args),
        Command::Tunnel(TunnelCommand::Status(args)) => tunnel::status(args),
        Command::Ui(args) => ui::open(args),
        Command::Replay(args) => replay::run(args),
        Command::Inject(args) => replay::inject(args),
        Command::Sequence(args) => lab::sequence(args),
        Command::Run(args) => lab::run(args),
        Command::Trigger(args) => trigger::run(args),
    }
}

/// The body bytes from `--body` or `--body-file` (`-` is standard input), byte-exact.
pub(crate) fn read_body(args: &BodyArgs) -> anyhow::Result<Vec<u8>> {
    match (&args.body, &args.body_file) {
        (Some(s), _) => Ok(s.clone().into_bytes()),
        (None, Some(p)) if p.as_os_str() == "-" => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("reading the body from standard input")?;
            Ok(buf)
        }
        (None, Some(p)) => {
            std::fs::read(p).with_context(|| format!("cannot read the body file {}", p.display()))
        }
        (None, None) => bail!("give the body with --body or --body-file"),
    }
}

/// The database path: `--db`, `$HOOKLAB_DB`, or the platform data directory.
pub(crate) fn db_path(arg: &DbArg) -> anyhow::Result<PathBuf> {
    if let Some(p) = &arg.db {
        return Ok(p.clone());
    }
    let dirs = directories::ProjectDirs::from("dev", "hooklab", "hooklab")
        .context("cannot find a home directory for the default database; pass --db FILE")?;
    Ok(dirs.data_dir().join("hooklab.db"))
}

/// generic-hmac and token settings from flags.
pub(crate) fn provider_options(g: &GenericArgs) -> anyhow::Result<ProviderOptions> {
    let mut opts = ProviderOptions::default();
    let any_generic = g.hmac_header.is_some()
        || g.hmac_algorithm.is_some()
        || g.hmac_encoding.is_some()
        || g.hmac_prefix.is_some()
        || g.hmac_template.is_some()
        || g.hmac_timestamp_header.is_some()
        || g.hmac_id_header.is_some();
    if any_generic {
        let mut o = GenericHmacOptions::default();
        if let Some(h) = &g.hmac_header {
            o.header = h.clone();
        }
        if let Some(a) = &g.hmac_algorithm {
            o.algorithm = match a.to_ascii_lowercase().as_str() {
                "sha1" => Digest::Sha1,
                "sha256" => Digest::Sha256,
                "sha512" => Digest::Sha512,
                other => bail!("unknown --hmac-algorithm `{other}`; use sha1, sha256 or sha512"),
            };
        }
        if let Some(e) = &g.hmac_encoding {
            o.encoding = match e.to_ascii_lowercase().as_str() {
                "hex" => Encoding::Hex,
                "base64" => Encoding::Base64,
                other => bail!("unknown --hmac-encoding `{other}`; use hex or base64"),
            };
        }
        o.prefix = g.hmac_prefix.clone().or(o.prefix);
        if let Some(t) = &g.hmac_template {
            o.template = t.clone();
        }
        o.timestamp_header = g.hmac_timestamp_header.clone().or(o.timestamp_header);
        o.id_header = g.hmac_id_header.clone().or(o.id_header);
        opts.generic = Some(o);
    }
    if g.token_header.is_some() || g.token_prefix.is_some() {
        let defaults = TokenOptions::default();
        opts.token = Some(TokenOptions {
            header: g.token_header.clone().unwrap_or(defaults.header),
            prefix: g.token_prefix.clone().or(defaults.prefix),
        });
    }
    Ok(opts)
}

/// Parses `Name: value` into a header pair.
pub(crate) fn parse_header(s: &str) -> anyhow::Result<(String, Vec<u8>)> {
    let (name, value) = s
        .split_once(':')
        .with_context(|| format!("header `{s}` is not of the form `Name: value`"))?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        bail!("header `{s}` has an invalid name");
    }
    Ok((name.to_string(), value.trim().as_bytes().to_vec()))
}

/// The running `hooklab listen` (or desktop app) on the database `db` names, found through the
/// discovery file beside it.
pub(crate) fn running_instance(
    db: &crate::cli::DbArg,
) -> anyhow::Result<hooklab_server::control::discovery::Discovery> {
    use anyhow::Context as _;
    let db = db_path(db)?;
    let path = hooklab_server::control::discovery::path_beside(&db);
    hooklab_server::control::discovery::Discovery::read(&path).with_context(|| {
        format!(
            "no running `hooklab listen` for {} (cannot read {}); start one, or pass the \
             --db it uses",
            db.display(),
            path.display()
        )
    })
}
