//! Each child-process provider's command line, and the parser that finds its public URL in
//! what it prints. Parsers are pure functions over one output line, tested on recorded output.
//!
//! | provider      | command                                                            | the URL is in            |
//! |---------------|--------------------------------------------------------------------|--------------------------|
//! | ssh           | `ssh -v -N -R 0:127.0.0.1:PORT user@host`                          | `Allocated port N …`     |
//! | localhost.run | `ssh -T -R 80:127.0.0.1:PORT nokey@localhost.run`                  | `… tunneled with tls termination, https://…` |
//! | cloudflared   | `cloudflared tunnel --no-autoupdate --url http://127.0.0.1:PORT`   | a box on stderr          |
//! | ngrok         | `ngrok http http://127.0.0.1:PORT --log stdout --log-format json`  | `"msg":"started tunnel"` |
//! | custom        | `sh -c COMMAND` with `{port}` replaced                             | the regex's first match  |

use super::{ProcessSpec, SshTarget, TunnelSpecError};
use hooklab_core::secret::Secret;
use regex::Regex;
use std::path::{Path, PathBuf};

/// The placeholder for the receiver's port in arguments.
pub(crate) const PORT: &str = "{port}";

/// The default regex of a custom command: the first http(s) URL it prints.
pub const DEFAULT_URL_REGEX: &str = r#"https?://[^\s"'<>|]+"#;

/// Finds the public URL in one line of a provider's output.
#[derive(Debug, Clone)]
pub(crate) enum UrlParser {
    LocalhostRun,
    /// `ssh -R`: the URL is `http://{host}:{port}`, the port the one the server allocated
    /// (`remote_port` 0) or the one asked for, once the server confirms it.
    SshForward {
        host: String,
        remote_port: u16,
    },
    Cloudflared,
    Ngrok,
    Regex(Regex),
}

impl UrlParser {
    pub(crate) fn scan(&self, line: &str) -> Option<String> {
        match self {
            Self::LocalhostRun => localhost_run_url(line),
            Self::SshForward { host, remote_port } => {
                let port = match *remote_port {
                    0 => ssh_allocated_port(line)?,
                    asked => ssh_forward_confirmed(line, asked)?,
                };
                Some(format!("http://{host}:{port}"))
            }
            Self::Cloudflared => cloudflared_url(line),
            Self::Ngrok => ngrok_url(line),
            Self::Regex(re) => regex_url(re, line),
        }
    }
}

/// `ssh -o` options shared by the ssh providers; the user's come first (ssh keeps the first
/// value it sees for an option, so the user's win).
fn ssh_base(
    program: PathBuf,
    target: &SshTarget,
    identity: Option<&Path>,
    user_options: &[String],
) -> (PathBuf, Vec<String>) {
    let mut args = Vec::new();
    for option in user_options {
        args.extend(["-o".to_string(), option.clone()]);
    }
    for option in [
        // Never prompt (stdin is not a terminal; a prompt would hang the tunnel).
        "BatchMode=yes",
        // Notice a dead connection within ~45 s, and exit so the supervisor reconnects.
        "ServerAliveInterval=15",
        "ServerAliveCountMax=3",
    ] {
        args.extend(["-o".to_string(), option.to_string()]);
    }
    if let Some(port) = target.port {
        args.extend(["-p".to_string(), port.to_string()]);
    }
    if let Some(identity) = identity {
        args.extend(["-i".to_string(), identity.display().to_string()]);
    }
    (program, args)
}

/// `ssh -v -N -T -o ExitOnForwardFailure=yes -R REMOTE:127.0.0.1:{port} user@host`.
/// `-v` because ssh confirms a fixed remote port only in its debug output.
pub(crate) fn ssh_command(
    program: PathBuf,
    target: &SshTarget,
    remote_port: u16,
    identity: Option<&Path>,
    user_options: &[String],
) -> ProcessSpec {
    let (program, mut args) = ssh_base(program, target, identity, user_options);
    args.extend(
        [
            "-o",
            "ExitOnForwardFailure=yes",
            "-v",
            "-N",
            "-T",
            "-R",
            &format!("{remote_port}:127.0.0.1:{PORT}"),
            "--",
            &format!("{}@{}", target.user, target.host),
        ]
        .map(String::from),
    );
    ProcessSpec {
        program,
        args,
        env: Vec::new(),
        parser: UrlParser::SshForward {
            host: target.url_host(),
            remote_port,
        },
        hold_stdin: false,
    }
}

/// `ssh -T -R 80:127.0.0.1:{port} nokey@localhost.run`: no `-N`, because localhost.run prints
/// the URL in the session; stdin stays open because the session ends on EOF.
pub(crate) fn localhost_run_command(
    program: PathBuf,
    target: &SshTarget,
    identity: Option<&Path>,
    user_options: &[String],
) -> ProcessSpec {
    let (program, mut args) = ssh_base(program, target, identity, user_options);
    args.extend(
        [
            "-o",
            "StrictHostKeyChecking=accept-new",
            "-T",
            "-R",
            &format!("80:127.0.0.1:{PORT}"),
            "--",
            &format!("{}@{}", target.user, target.host),
        ]
        .map(String::from),
    );
    ProcessSpec {
        program,
        args,
        env: Vec::new(),
        parser: UrlParser::LocalhostRun,
        hold_stdin: true,
    }
}

/// A Cloudflare quick tunnel.
pub(crate) fn cloudflared_command(program: PathBuf) -> ProcessSpec {
    ProcessSpec {
        program,
        args: [
            "tunnel",
            "--no-autoupdate",
            "--url",
            &format!("http://127.0.0.1:{PORT}"),
        ]
        .map(String::from)
        .to_vec(),
        env: Vec::new(),
        parser: UrlParser::Cloudflared,
        hold_stdin: false,
    }
}

/// ngrok with its JSON log on stdout; the authtoken goes in its environment.
pub(crate) fn ngrok_command(program: PathBuf, authtoken: Option<Secret>) -> ProcessSpec {
    ProcessSpec {
        program,
        args: [
            "http",
            &format!("http://127.0.0.1:{PORT}"),
            "--log",
            "stdout",
            "--log-format",
            "json",
        ]
        .map(String::from)
        .to_vec(),
        env: authtoken
            .map(|t| ("NGROK_AUTHTOKEN".to_string(), t))
            .into_iter()
            .collect(),
        parser: UrlParser::Ngrok,
        hold_stdin: false,
    }
}

/// `sh -c COMMAND`, the URL found by `url_regex` (its first capture group when it has one).
pub(crate) fn custom_command(
    command: &str,
    url_regex: Option<&str>,
) -> Result<ProcessSpec, TunnelSpecError> {
    let re = Regex::new(url_regex.unwrap_or(DEFAULT_URL_REGEX))
        .map_err(|e| TunnelSpecError::BadRegex(e.to_string()))?;
    Ok(ProcessSpec {
        program: "sh".into(),
        args: vec!["-c".into(), command.to_string()],
        env: Vec::new(),
        parser: UrlParser::Regex(re),
        hold_stdin: false,
    })
}

/// localhost.run: `abc123.lhr.life tunneled with tls termination, https://abc123.lhr.life`.
/// Its banner's other URLs (admin, docs, twitter) are not on a `tunneled` line.
pub fn localhost_run_url(line: &str) -> Option<String> {
    if !line.contains("tunneled") {
        return None;
    }
    line.split_whitespace()
        .rev()
        .find(|w| w.starts_with("https://"))
        .map(|w| trim_url(w).to_string())
}

/// ssh: `Allocated port 41234 for remote forward to 127.0.0.1:8787`.
pub fn ssh_allocated_port(line: &str) -> Option<u16> {
    let rest = line.trim().strip_prefix("Allocated port ")?;
    rest.split_whitespace().next()?.parse().ok()
}

/// ssh -v: `debug1: remote forward success for: listen 8080, connect 127.0.0.1:8787`.
fn ssh_forward_confirmed(line: &str, asked: u16) -> Option<u16> {
    let rest = line.split("remote forward success for: listen ").nth(1)?;
    let listen = rest.split(',').next()?;
    let port: u16 = listen.rsplit(':').next()?.trim().parse().ok()?;
    (port == asked).then_some(port)
}

/// cloudflared: the `https://….trycloudflare.com` URL in the box it prints on stderr; never
/// `api.trycloudflare.com`, which appears in its error messages.
pub fn cloudflared_url(line: &str) -> Option<String> {
    let mut rest = line;
    while let Some(at) = rest.find("https://") {
        let candidate = &rest[at..];
        let end = candidate
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '|' | '<' | '>'))
            .unwrap_or(candidate.len());
        let url = trim_url(&candidate[..end]);
        let host = url.trim_start_matches("https://");
        let host = host.split('/').next().unwrap_or_default();
        if host.ends_with(".trycloudflare.com") && host != "api.trycloudflare.com" {
            return Some(format!("https://{host}"));
        }
        rest = &candidate[end..];
    }
    None
}

/// ngrok (`--log-format json`): the `url` of the line whose `msg` is `started tunnel`.
pub fn ngrok_url(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    if value.get("msg")?.as_str()? != "started tunnel" {
        return None;
    }
    let url = value.get("url")?.as_str()?;
    (url.starts_with("https://") || url.starts_with("http://")).then(|| url.to_string())
}

/// ngrok's local agent API (`GET http://127.0.0.1:4040/api/tunnels`): the first HTTPS
/// `public_url`, else the first one.
pub fn ngrok_api_url(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let urls: Vec<&str> = value
        .get("tunnels")?
        .as_array()?
        .iter()
        .filter_map(|t| t.get("public_url")?.as_str())
        .collect();
    urls.iter()
        .find(|u| u.starts_with("https://"))
        .or_else(|| urls.first())
        .map(|u| u.to_string())
}

fn regex_url(re: &Regex, line: &str) -> Option<String> {
    let caps = re.captures(line)?;
    let found = caps.get(1).or_else(|| caps.get(0))?.as_str();
    let url = trim_url(found);
    (!url.is_empty()).then(|| url.to_string())
}

/// Drops punctuation that ends a sentence rather than the URL.
fn trim_url(url: &str) -> &str {
    url.trim_end_matches(['.', ',', ';', ')', ']', '"', '\''])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// localhost.run's banner as its ssh session prints it (2024).
    const LOCALHOST_RUN: &str = "\
===============================================================================
Welcome to localhost.run!

Follow your favourite reverse tunnel at [https://twitter.com/localhost_run].

To set up and manage custom domains go to https://admin.localhost.run/

More details on custom domains (and how to enable subdomains for free) at
https://localhost.run/docs/custom-domains

To explore using localhost.run visit the documentation site:
https://localhost.run/docs/

===============================================================================


** your connection id is 4f1c2b9e-6a0d-4f3e-9c41-0d9b1e7a2c55, please mention it if you send me a message about an issue. **

3b1e4f2a9c7d21.lhr.life tunneled with tls termination, https://3b1e4f2a9c7d21.lhr.life
";

    #[test]
    fn localhost_run_url_is_the_tunneled_line_not_the_banner() {
        let urls: Vec<String> = LOCALHOST_RUN
            .lines()
            .filter_map(localhost_run_url)
            .collect();
        assert_eq!(urls, ["https://3b1e4f2a9c7d21.lhr.life"]);
    }

    /// cloudflared 2024.x, stderr of `cloudflared tunnel --url http://127.0.0.1:8787`.
    const CLOUDFLARED: &str = "\
2024-05-20T10:00:00Z INF Thank you for trying Cloudflare Tunnel. Doing so, without a Cloudflare account, is a quick way to experiment and try it out. However, be aware that these account-less Tunnels have no uptime guarantee. If you intend to use Tunnels in production you should use a pre-created named tunnel by following: https://developers.cloudflare.com/cloudflare-one/connections/connect-apps
2024-05-20T10:00:00Z INF Requesting new quick Tunnel on trycloudflare.com...
2024-05-20T10:00:01Z INF +--------------------------------------------------------------------------------------------+
2024-05-20T10:00:01Z INF |  Your quick Tunnel has been created! Visit it at (it may take some time to be reachable):  |
2024-05-20T10:00:01Z INF |  https://seasonal-deck-organisms-sf.trycloudflare.com                                     |
2024-05-20T10:00:01Z INF +--------------------------------------------------------------------------------------------+
2024-05-20T10:00:01Z INF Cannot determine default configuration path. No file [config.yml config.yaml] in [~/.cloudflared ~/.cloudflare-warp ~/cloudflare-warp /etc/cloudflared /usr/local/etc/cloudflared]
2024-05-20T10:00:01Z INF Version 2024.5.0
2024-05-20T10:00:02Z INF Registered tunnel connection connIndex=0 connection=7c2f0c1e-4a1b-4b7e-a3f0-2d3b1c0e9f11 event=0 ip=198.41.200.193 location=ams08 protocol=quic
";

    /// cloudflared when trycloudflare.com cannot be reached: the API's URL is no tunnel.
    const CLOUDFLARED_FAILED: &str = "\
2024-05-20T10:00:00Z INF Requesting new quick Tunnel on trycloudflare.com...
2024-05-20T10:00:03Z ERR Error unmarshaling QuickTunnel response: error=\"failed to request quick Tunnel: Post \\\"https://api.trycloudflare.com/tunnel\\\": dial tcp: lookup api.trycloudflare.com: no such host\"
failed to unmarshal quick Tunnel: Post \"https://api.trycloudflare.com/tunnel\": dial tcp: lookup api.trycloudflare.com: no such host
";

    #[test]
    fn cloudflared_url_is_in_the_box_and_never_the_api() {
        let urls: Vec<String> = CLOUDFLARED.lines().filter_map(cloudflared_url).collect();
        assert_eq!(
            urls,
            ["https://seasonal-deck-organisms-sf.trycloudflare.com"]
        );
        let none: Vec<String> = CLOUDFLARED_FAILED
            .lines()
            .filter_map(cloudflared_url)
            .collect();
        assert!(
            none.is_empty(),
            "api.trycloudflare.com is not a tunnel: {none:?}"
        );
    }

    /// ngrok 3.x with `--log stdout --log-format json`.
    const NGROK: &str = r#"{"addr":"","lvl":"info","msg":"no configuration paths supplied","obj":"config","t":"2024-05-20T10:00:00.1Z"}
{"lvl":"info","msg":"starting web service","obj":"web","addr":"127.0.0.1:4040","allow_hosts":[],"t":"2024-05-20T10:00:00.2Z"}
{"lvl":"info","msg":"client session established","obj":"tunnels.session","t":"2024-05-20T10:00:00.9Z"}
{"addr":"http://127.0.0.1:8787","lvl":"info","msg":"started tunnel","name":"command_line","obj":"tunnels","t":"2024-05-20T10:00:01.0Z","url":"https://1a2b-203-0-113-7.ngrok-free.app"}
"#;

    #[test]
    fn ngrok_url_is_the_started_tunnel_line() {
        let urls: Vec<String> = NGROK.lines().filter_map(ngrok_url).collect();
        assert_eq!(urls, ["https://1a2b-203-0-113-7.ngrok-free.app"]);
        assert_eq!(ngrok_url("not json"), None);
        let api = r#"{"tunnels":[{"name":"command_line","public_url":"https://1a2b.ngrok-free.app","proto":"https","config":{"addr":"http://127.0.0.1:8787"}}],"uri":"/api/tunnels"}"#;
        assert_eq!(
            ngrok_api_url(api).as_deref(),
            Some("https://1a2b.ngrok-free.app")
        );
    }

    #[test]
    fn ssh_ports_are_read_from_its_messages() {
        assert_eq!(
            ssh_allocated_port("Allocated port 42243 for remote forward to 127.0.0.1:42080"),
            Some(42243)
        );
        let p = UrlParser::SshForward {
            host: "example.com".into(),
            remote_port: 8080,
        };
        assert_eq!(
            p.scan("debug1: remote forward success for: listen 8080, connect 127.0.0.1:8787")
                .as_deref(),
            Some("http://example.com:8080")
        );
        assert_eq!(
            p.scan("debug1: remote forward success for: listen 0.0.0.0:8080, connect 127.0.0.1:1")
                .as_deref(),
            Some("http://example.com:8080")
        );
        assert_eq!(
            p.scan("debug1: remote forward success for: listen 9, connect 127.0.0.1:1"),
            None
        );
    }

    #[test]
    fn custom_regex_takes_the_first_group_or_match() {
        let spec = custom_command("t {port}", None).unwrap();
        assert_eq!(
            spec.parser
                .scan("ready at https://x.example.dev/, enjoy")
                .as_deref(),
            Some("https://x.example.dev/")
        );
        let spec = custom_command("t {port}", Some(r"public=(\S+)")).unwrap();
        assert_eq!(
            spec.parser
                .scan("url http://a public=https://b.example")
                .as_deref(),
            Some("https://b.example")
        );
        assert!(custom_command("t {port}", Some("(")).is_err());
    }

    #[test]
    fn ssh_user_options_come_first_so_they_win() {
        let target = SshTarget::parse("me@h:2200").unwrap();
        let spec = ssh_command(
            "ssh".into(),
            &target,
            0,
            Some(Path::new("/k")),
            &["BatchMode=no".into()],
        );
        let joined = spec.args.join(" ");
        assert!(
            joined.starts_with("-o BatchMode=no -o BatchMode=yes"),
            "{joined}"
        );
        assert!(joined.contains("-p 2200 -i /k"), "{joined}");
        assert!(
            joined.ends_with("-R 0:127.0.0.1:{port} -- me@h"),
            "{joined}"
        );
    }
}
