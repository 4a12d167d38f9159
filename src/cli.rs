//! The command-line grammar (clap). Only parsing lives here; `dlq` has its own file.

mod dlq;
mod lab;
mod objects;
mod reconcile;
mod scenario;
mod transfer;

pub(crate) use dlq::{DlqActArgs, DlqCommand, DlqListArgs, DlqShowArgs};
pub(crate) use lab::{InjectArgs, ReplayArgs, TriggerArgs, UiArgs};
pub(crate) use objects::{ObjectsArgs, TimelineArgs};
pub(crate) use reconcile::{ApiArgs, ReconcileArgs};
pub(crate) use scenario::{RunArgs, SequenceArgs};
pub(crate) use transfer::{ExportArgs, ExportKind, ImportArgs};

use clap::{Args, Parser, Subcommand};
use hooklab_core::provider::ProviderId;
use std::path::PathBuf;

/// Hooklab: receive, verify and record webhooks byte-exact, and say why a signature fails.
#[derive(Debug, Parser)]
#[command(name = "hooklab", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Exit status: 0 ok, 1 a failed check (e.g. an invalid signature) or an error, 2 a usage error.\nDocs: README.md and docs/ in the repository."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Receive webhooks: record every request byte-exact with its signature verdict.
    Listen(Box<ListenArgs>),
    /// Production mode: the receiver and its workers on PostgreSQL; run several replicas on
    /// one database behind a load balancer.
    Serve(Box<ServeArgs>),
    /// Create or upgrade a database's schema (PostgreSQL URL or SQLite file).
    Migrate(MigrateArgs),
    /// Write the whole database (SQLite or PostgreSQL) as JSON Lines, or deliveries as JSON,
    /// HAR, curl commands or raw HTTP, on standard output.
    Export(ExportArgs),
    /// Import a captured request (HAR, curl, raw HTTP, JSON) or a provider's event as
    /// deliveries, or a whole-database export into a new database.
    Import(ImportArgs),
    /// Check a captured request's signature offline, with a diagnosis when it fails.
    Verify(VerifyArgs),
    /// Print the headers a provider would send for a body (to test your own verifier).
    Sign(SignArgs),
    /// List, search, show or compare recorded deliveries.
    #[command(subcommand)]
    Events(EventsCommand),
    /// Idempotency keys: each event's deliveries collapsed onto one key, duplicates counted.
    Keys(KeysArgs),
    /// The dead-letter queue: jobs whose forward failed every retry. List, show, redrive, discard.
    #[command(subcommand)]
    Dlq(DlqCommand),
    /// Business objects (payments) and the state their machine put them in.
    Objects(ObjectsArgs),
    /// One object's state-machine timeline: every event, applied, stale, parked or reviewed.
    Timeline(TimelineArgs),
    /// Ask the providers' APIs about objects stuck in a non-final state; correct them through
    /// their state machine, and report Stripe events that never arrived.
    Reconcile(ReconcileArgs),
    /// List the supported providers with their headers, algorithm and tolerance.
    Providers(ProvidersArgs),
    /// The tunnel of a running `hooklab listen`: status and public URL.
    #[command(subcommand)]
    Tunnel(TunnelCommand),
    /// Open the UI of a running `hooklab listen` in a browser (or print its address).
    Ui(UiArgs),
    /// Send a recorded delivery again: as recorded, re-signed now, or as a variant that must
    /// fail verification (stale, wrong secret, tampered, unsigned, another body's signature).
    Replay(ReplayArgs),
    /// Send N copies of a recorded delivery: one after another, or as a true concurrent race
    /// (every connection open first, then every request at once).
    Inject(InjectArgs),
    /// Send one object's events in a realistic wrong order (a preset), or recorded deliveries
    /// in a given order with delays.
    Sequence(SequenceArgs),
    /// Run a scenario file (steps and expectations) headless, e.g. in CI; JUnit XML on request.
    Run(RunArgs),
    /// Send a signed test event of a provider and event type (`stripe trigger` for every
    /// provider), with fields set by --set; `--list` shows the event types.
    Trigger(TriggerArgs),
}

#[derive(Debug, Subcommand)]
pub(crate) enum TunnelCommand {
    /// Ask the running `hooklab listen` (found beside its database) about its tunnel.
    Status(TunnelStatusArgs),
}

#[derive(Debug, Args)]
pub(crate) struct TunnelStatusArgs {
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// The status as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct KeysArgs {
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// At most this many keys, most recently seen first.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub(crate) limit: u32,
    /// Only this scope (the provider id, e.g. `stripe`).
    #[arg(long, value_name = "PROVIDER")]
    pub(crate) scope: Option<String>,
    /// Only keys with this status: processing, completed or failed.
    #[arg(long, value_name = "STATUS")]
    pub(crate) status: Option<hooklab_core::store::KeyStatus>,
    /// Only keys delivered more than once.
    #[arg(long)]
    pub(crate) duplicates: bool,
    /// A JSON array instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DbArg {
    /// The SQLite database file [default: the platform data dir, e.g. ~/.local/share/hooklab/hooklab.db]
    #[arg(long, env = "HOOKLAB_DB", value_name = "FILE")]
    pub(crate) db: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab listen --source stripe=stripe:whsec_...\n  hooklab listen --source gh=github:env:GITHUB_WEBHOOK_SECRET --port 9000 --json\n  hooklab listen --source pay=stripe:whsec_... --forward-to http://127.0.0.1:3000/webhooks\n  hooklab listen --source pay=stripe:whsec_... --forward-to http://127.0.0.1:3000/webhooks \\\n      --retry-schedule stripe --time-scale 4320   # Stripe's 3 days of retries in a minute\n  hooklab listen --config hooklab.toml\n  hooklab listen --source pay=stripe:whsec_... --tunnel              # localhost.run, HTTPS\n  hooklab listen --source pay=stripe:whsec_... --tunnel bore         # bore.pub, plain HTTP\n  hooklab listen --source pay=stripe:whsec_... --tunnel ssh --ssh me@my.host --ssh-remote-port 8080"
)]
pub(crate) struct ListenArgs {
    #[command(flatten)]
    pub(crate) receiver: ReceiverArgs,
    #[command(flatten)]
    pub(crate) db: DbArg,
    #[command(flatten, next_help_heading = "Tunnel")]
    pub(crate) tunnel: TunnelArgs,
    /// Print the address of the UI, with this run's access token (with --json: `ready.ui`).
    /// The UI is served either way; `hooklab ui` opens it later.
    #[arg(long)]
    pub(crate) ui: bool,
}

/// What `listen` and `serve` share: the receiver, its sources, forwarding, reconciliation.
#[derive(Debug, Args)]
pub(crate) struct ReceiverArgs {
    /// A TOML config file with sources, secrets and responses (flags override it).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// The address to listen on. Keep 127.0.0.1 unless you know why: a tunnel exposes it.
    #[arg(long, value_name = "ADDR")]
    pub(crate) host: Option<String>,
    /// The port to listen on (0 picks a free one) [default: 8787]
    #[arg(long, value_name = "N")]
    pub(crate) port: Option<u16>,
    /// A source: requests to /NAME/... are verified with PROVIDER and SECRET.
    /// SECRET may be `env:VAR` to read it from the environment. Repeatable.
    #[arg(long = "source", value_name = "NAME=PROVIDER[:SECRET]")]
    pub(crate) sources: Vec<String>,
    /// The public URL the gateway calls, for providers that sign the URL (Twilio, Square,
    /// Mercado Pago) behind a proxy or tunnel.
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,
    /// The largest body accepted, in bytes; larger requests get 413 (and are still recorded).
    #[arg(long, value_name = "BYTES")]
    pub(crate) body_limit: Option<u64>,
    /// Forward every verified delivery to your app at this http:// URL (plus the delivery's
    /// query string), retrying on failure; sources with their own `forward_to` keep theirs.
    #[arg(long, value_name = "URL", help_heading = "Forwarding")]
    pub(crate) forward_to: Option<String>,
    /// Delays between forward attempts, e.g. `0.2s,5s,5m`, or a provider's preset: stripe,
    /// standard-webhooks, svix, resend, shopify, slack, github, paddle, razorpay, wompi, asaas,
    /// mercadopago, none [default: 0.2s,1s,5s,30s,2m,10m]
    #[arg(long, value_name = "SCHEDULE", help_heading = "Forwarding")]
    pub(crate) retry_schedule: Option<hooklab_core::retry::RetrySchedule>,
    /// Divide every retry delay by F (4320 plays three days in a minute).
    #[arg(long, value_name = "F", help_heading = "Forwarding")]
    pub(crate) time_scale: Option<hooklab_core::retry::TimeScale>,
    /// How long one forward attempt may take, e.g. `30s` [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Forwarding")]
    pub(crate) forward_timeout: Option<std::time::Duration>,
    /// How long a state-machine event may stay parked (waiting for its object) before the
    /// object is flagged `requires_review`, e.g. `10m` [default: 1h]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) review_after: Option<std::time::Duration>,
    /// Run a reconciliation pass this often (e.g. `5m`), against the APIs given below.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Reconciliation")]
    pub(crate) reconcile_every: Option<std::time::Duration>,
    /// With --reconcile-every: only objects not updated for this long [default: 10m]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_or_zero, help_heading = "Reconciliation")]
    pub(crate) reconcile_older_than: Option<std::time::Duration>,
    /// How many forward attempts run at once [default: 8]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..), help_heading = "Forwarding")]
    pub(crate) concurrency: Option<u16>,
    /// One JSON object per line instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten, next_help_heading = "Reconciliation")]
    pub(crate) reconcile_apis: ApiArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab migrate --database postgres://hooklab@db.internal/hooklab\n  hooklab serve --database postgres://hooklab@db.internal/hooklab --host 0.0.0.0 --port 8080 \\\n      --source pay=stripe:env:STRIPE_WEBHOOK_SECRET --forward-to http://127.0.0.1:3000/webhooks"
)]
pub(crate) struct ServeArgs {
    /// The PostgreSQL database every replica shares: postgres://USER[:PASSWORD]@HOST[:PORT]/DB
    #[arg(
        long,
        env = "HOOKLAB_DATABASE_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub(crate) database: String,
    /// Connections this replica keeps to the database [default: 32]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) pool_size: Option<u16>,
    /// Send every statement unnamed, for a transaction-mode pooler older than PgBouncer 1.21
    /// (slower: PostgreSQL then plans each delivery's statement anew). Also set by
    /// HOOKLAB_NO_PREPARED_STATEMENTS=1.
    #[arg(long)]
    pub(crate) no_prepared_statements: bool,
    /// Also run the control API (and the UI) on 127.0.0.1:N (0: a free port). Off by default
    /// in production; never exposed beyond loopback.
    #[arg(long, value_name = "N")]
    pub(crate) control_port: Option<u16>,
    /// With --control-port: where to write its address and token (mode 0600; removed on
    /// exit). `hooklab ui --db X` reads `X.control.json`.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "hooklab-serve.control.json"
    )]
    pub(crate) control_file: PathBuf,
    #[command(flatten)]
    pub(crate) receiver: ReceiverArgs,
}

#[derive(Debug, Args)]
pub(crate) struct MigrateArgs {
    /// postgres://… (or postgresql://…), or a SQLite file (a path or sqlite://PATH).
    #[arg(
        long,
        env = "HOOKLAB_DATABASE_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub(crate) database: String,
}

/// Which database: `--database` (a PostgreSQL URL or a SQLite path) or `--db FILE`.
#[derive(Debug, Args)]
pub(crate) struct AnyDatabaseArg {
    /// postgres://… (or postgresql://…), or a SQLite file (a path or sqlite://PATH).
    #[arg(
        long,
        env = "HOOKLAB_DATABASE_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub(crate) database: Option<String>,
    #[command(flatten)]
    pub(crate) db: DbArg,
}

/// `listen`'s tunnel flags; they fill the same settings as `[tunnel]` in the config.
#[derive(Debug, Args)]
pub(crate) struct TunnelArgs {
    /// Expose the receiver (only the receiver) through a tunnel: localhost.run (the default,
    /// HTTPS, no account), bore (plain HTTP), ssh, cloudflared, ngrok or custom.
    #[arg(long, value_name = "PROVIDER", num_args = 0..=1, default_missing_value = "localhost.run")]
    pub(crate) tunnel: Option<hooklab_server::config::TunnelKind>,
    /// bore: the server [default: bore.pub].
    #[arg(long, value_name = "HOST")]
    pub(crate) bore_server: Option<String>,
    /// bore: the server's secret, when it needs one.
    #[arg(
        long,
        value_name = "SECRET",
        env = "BORE_SECRET",
        hide_env_values = true
    )]
    pub(crate) bore_secret: Option<String>,
    /// ssh: the host to forward from; localhost.run: replaces nokey@localhost.run.
    #[arg(long, value_name = "USER@HOST[:PORT]")]
    pub(crate) ssh: Option<String>,
    /// ssh: the port to open on the host; it must be reachable from the internet (sshd's
    /// GatewayPorts) [default: 0, the host picks one]
    #[arg(long, value_name = "N")]
    pub(crate) ssh_remote_port: Option<u16>,
    /// ssh, localhost.run: the private key to log in with.
    #[arg(long, value_name = "FILE")]
    pub(crate) ssh_identity: Option<PathBuf>,
    /// ssh, localhost.run: an ssh option (`ssh -o KEY=VALUE`). Repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) ssh_option: Vec<String>,
    /// The executable of cloudflared, ngrok or ssh [default: found on PATH].
    #[arg(long, value_name = "PATH")]
    pub(crate) tunnel_binary: Option<PathBuf>,
    /// ngrok: your authtoken (passed in ngrok's environment, never on its command line).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "NGROK_AUTHTOKEN",
        hide_env_values = true
    )]
    pub(crate) ngrok_authtoken: Option<String>,
    /// custom: the command line (run with sh -c), `{port}` standing for the receiver's port.
    #[arg(long, value_name = "COMMAND")]
    pub(crate) tunnel_command: Option<String>,
    /// custom: a regex finding the public URL in the command's output (its first group, or
    /// the whole match) [default: the first http(s) URL]
    #[arg(long, value_name = "REGEX")]
    pub(crate) tunnel_url_regex: Option<String>,
    /// How long the tunnel may take to give a URL before it is restarted [default: 30s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub(crate) tunnel_start_timeout: Option<std::time::Duration>,
    /// The control API's port on 127.0.0.1 (never exposed by the tunnel) [default: 0, a free one]
    #[arg(long, value_name = "N")]
    pub(crate) control_port: Option<u16>,
}

#[derive(Debug, Args)]
pub(crate) struct BodyArgs {
    /// Read the body from this file, byte-exact (`-` for standard input).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "body",
        required_unless_present = "body"
    )]
    pub(crate) body_file: Option<PathBuf>,
    /// The body as a string.
    #[arg(long, value_name = "STRING")]
    pub(crate) body: Option<String>,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "generic-hmac / token options")]
pub(crate) struct GenericArgs {
    /// generic-hmac: the signature header.
    #[arg(long, value_name = "NAME")]
    pub(crate) hmac_header: Option<String>,
    /// generic-hmac: sha1, sha256 or sha512.
    #[arg(long, value_name = "ALG")]
    pub(crate) hmac_algorithm: Option<String>,
    /// generic-hmac: hex or base64.
    #[arg(long, value_name = "ENC")]
    pub(crate) hmac_encoding: Option<String>,
    /// generic-hmac: a prefix before the signature, e.g. `sha256=`.
    #[arg(long, value_name = "PREFIX")]
    pub(crate) hmac_prefix: Option<String>,
    /// generic-hmac: what is signed, over {body} {timestamp} {id} {url}, e.g. `{timestamp}.{body}`.
    #[arg(long, value_name = "TEMPLATE")]
    pub(crate) hmac_template: Option<String>,
    /// generic-hmac: the header carrying {timestamp}.
    #[arg(long, value_name = "NAME")]
    pub(crate) hmac_timestamp_header: Option<String>,
    /// generic-hmac: the header carrying {id}.
    #[arg(long, value_name = "NAME")]
    pub(crate) hmac_id_header: Option<String>,
    /// token: the header that must equal the secret.
    #[arg(long, value_name = "NAME")]
    pub(crate) token_header: Option<String>,
    /// token: text before the token, e.g. `Bearer ` (the default); `""` for none.
    #[arg(long, value_name = "PREFIX")]
    pub(crate) token_prefix: Option<String>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab verify --provider stripe --secret whsec_... \\\n      --header 'Stripe-Signature: t=1700000000,v1=...' --body-file event.json --now 1700000000\n  hooklab verify --provider twilio --secret TOKEN --url 'https://example.com/sms' \\\n      --header 'X-Twilio-Signature: ...' --body 'From=%2B1555&Body=hi' --json"
)]
pub(crate) struct VerifyArgs {
    #[arg(long, value_name = "PROVIDER")]
    pub(crate) provider: ProviderId,
    /// A secret to try (repeat during a rotation; the verdict says which matched).
    #[arg(long = "secret", value_name = "SECRET")]
    pub(crate) secrets: Vec<String>,
    /// Another endpoint's secret, used only to explain a mismatch. Repeatable.
    #[arg(long = "other-secret", value_name = "LABEL=SECRET")]
    pub(crate) other_secrets: Vec<String>,
    /// A request header, as `Name: value`. Repeatable, in arrival order.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    #[command(flatten)]
    pub(crate) body: BodyArgs,
    /// The absolute URL the sender signed (Twilio, Square, Mercado Pago).
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// Verify as of this Unix time (seconds) instead of now.
    #[arg(long, value_name = "UNIX")]
    pub(crate) now: Option<i64>,
    /// Tolerance in seconds, replacing the provider's default (0 disables the check).
    #[arg(long, value_name = "SECS")]
    pub(crate) tolerance: Option<u64>,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    // Last: its heading applies to what follows it.
    #[command(flatten)]
    pub(crate) generic: GenericArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  hooklab sign --provider stripe --secret whsec_test --body '{\"id\":\"evt_1\"}'"
)]
pub(crate) struct SignArgs {
    #[arg(long, value_name = "PROVIDER")]
    pub(crate) provider: ProviderId,
    /// The secret to sign with (Discord: the 32-byte private seed, hex).
    #[arg(long, value_name = "SECRET")]
    pub(crate) secret: String,
    #[command(flatten)]
    pub(crate) body: BodyArgs,
    /// Sign as of this Unix time (seconds) instead of now.
    #[arg(long, value_name = "UNIX")]
    pub(crate) now: Option<i64>,
    /// The message/delivery id to sign, where the provider signs one.
    #[arg(long, value_name = "ID")]
    pub(crate) id: Option<String>,
    /// The absolute URL the request will be sent to (Twilio, Square, Mercado Pago).
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// The request's content type (Twilio signs form and JSON bodies differently).
    #[arg(long, value_name = "TYPE")]
    pub(crate) content_type: Option<String>,
    /// Where to write the signed body, for providers that sign inside the body (Adyen, Wompi).
    #[arg(long, value_name = "FILE")]
    pub(crate) body_out: Option<PathBuf>,
    /// Print `{"headers": [[name, value]…], "body": …, "url": …}`.
    #[arg(long)]
    pub(crate) json: bool,
    // Last: its heading applies to what follows it.
    #[command(flatten)]
    pub(crate) generic: GenericArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum EventsCommand {
    /// Recorded deliveries, newest first.
    List(EventsListArgs),
    /// One delivery: request, headers in arrival order, verdict and diagnosis, body.
    Show(EventsShowArgs),
    /// Two deliveries compared: request line, headers in arrival order, body byte by byte
    /// (e.g. a replay against its original). Exit 0 when identical, 1 when they differ.
    Diff(EventsDiffArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hooklab events diff 12 15        # a replay (15) against its original (12)\n  hooklab events diff 12 15 --json"
)]
pub(crate) struct EventsDiffArgs {
    /// The first delivery id.
    pub(crate) a: i64,
    /// The second delivery id.
    pub(crate) b: i64,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// The comparison as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct EventsListArgs {
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// At most this many rows.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub(crate) limit: u32,
    /// Only this source.
    #[arg(long, value_name = "NAME")]
    pub(crate) source: Option<String>,
    /// Only this verdict: valid, invalid or unsigned.
    #[arg(long, value_name = "VERDICT")]
    pub(crate) verdict: Option<hooklab_core::verdict::Status>,
    /// Only deliveries older than this id (paging).
    #[arg(long, value_name = "ID")]
    pub(crate) before: Option<i64>,
    /// Only this event type (e.g. payment_intent.succeeded).
    #[arg(long = "type", value_name = "TYPE")]
    pub(crate) event_type: Option<String>,
    /// Only duplicates (deliveries whose idempotency key an earlier delivery claimed).
    #[arg(long)]
    pub(crate) duplicates: bool,
    /// Only deliveries whose idempotency key is now processing, completed or failed.
    #[arg(long, value_name = "STATUS")]
    pub(crate) key_status: Option<hooklab_core::store::KeyStatus>,
    /// Full-text search in the body, headers, path, event id, event type and key (ASCII
    /// letters case-insensitive), or a delivery id.
    #[arg(long, short = 's', value_name = "TEXT")]
    pub(crate) search: Option<String>,
    /// A JSON array instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct EventsShowArgs {
    /// The delivery id (from `hooklab events list`).
    pub(crate) id: i64,
    #[command(flatten)]
    pub(crate) db: DbArg,
    /// The whole delivery as JSON.
    #[arg(long, conflicts_with = "raw")]
    pub(crate) json: bool,
    /// Write the exact body bytes to standard output, nothing else.
    #[arg(long)]
    pub(crate) raw: bool,
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    match hooklab_core::retry::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be longer than zero".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_duration_or_zero(s: &str) -> Result<std::time::Duration, String> {
    hooklab_core::retry::parse_duration(s).map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub(crate) struct ProvidersArgs {
    /// A JSON array instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}
