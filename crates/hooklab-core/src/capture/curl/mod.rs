//! curl command lines: what Chrome's and Firefox's "Copy as cURL" produce, what the UI's
//! "Copy as curl" produces, and what `hooklab export --format curl` writes. One request per
//! command; commands are separated by newlines (or `;`, `&&`), continued with `\`.
//!
//! Read as curl would send it: `-X`, `-H` (in order; `Name:` removes a header curl would add,
//! `Name;` sends it empty), `-d`/`--data`/`--data-ascii` (`@FILE`: the file without its line
//! breaks), `--data-binary` (`@FILE`: exact), `--data-raw`, `--data-urlencode`, `--json`,
//! several joined with `&`; `-G` moves them to the query; `-A`, `-b`, `-e`, `-u` become their
//! headers; with data and no `Content-Type`, curl's `application/x-www-form-urlencoded` is
//! added. Headers curl adds by itself (`Host`, `User-Agent`, `Accept`, `Content-Length`) are
//! not invented. `printf 'FORMAT' | curl … --data-binary @-` reads the body from the printf.
//!
//! Written exactly: every recorded header in order, the body with `--data-binary` in `'…'`
//! or, for control characters and bytes that are not UTF-8, `$'…'` escapes; a body holding
//! NUL (which no shell argument can carry) is piped from `printf`.

mod shell;
mod write;

pub use write::{command_line, export};

use super::{CaptureError, ReadFile};
use crate::request::{Header, RawRequest};
use base64::Engine as _;
use shell::{Word, position, printf};

/// Whether the text starts (after comments and blank lines) with a curl command, or a printf
/// piped into one.
pub(super) fn looks_like_curl(text: &[u8]) -> bool {
    let first = text
        .split(|&b| b == b'\n')
        .map(|line| line.trim_ascii())
        .find(|line| !line.is_empty() && !line.starts_with(b"#"));
    first.is_some_and(|line| {
        line.starts_with(b"curl ")
            || line == b"curl"
            || line.starts_with(b"curl.exe ")
            || (line.starts_with(b"printf ") && line.windows(6).any(|w| w == b"| curl"))
    })
}

/// Every command's request.
pub fn parse(input: &[u8], files: ReadFile<'_>) -> Result<Vec<RawRequest>, CaptureError> {
    let lines = shell::split(input)?;
    if lines.is_empty() {
        return Err(CaptureError::new("curl", "no command"));
    }
    lines
        .iter()
        .map(|pipeline| command(input, pipeline, files))
        .collect()
}

fn at(input: &[u8], word: &Word) -> String {
    format!("curl, {}", position(input, word.offset))
}

fn text(word: &Word) -> String {
    String::from_utf8_lossy(&word.bytes).into_owned()
}

fn command(
    input: &[u8],
    pipeline: &[Vec<Word>],
    files: ReadFile<'_>,
) -> Result<RawRequest, CaptureError> {
    let (stdin, words) = match pipeline {
        [words] => (None, words),
        [printf_words, words] if printf_words.first().is_some_and(|w| w.bytes == b"printf") => {
            let [_, format] = printf_words.as_slice() else {
                return Err(CaptureError::new(
                    at(input, &printf_words[0]),
                    "only `printf 'FORMAT' | curl …` is supported (one argument)",
                ));
            };
            let bytes =
                printf(&format.bytes).map_err(|e| CaptureError::new(at(input, format), e))?;
            (Some(bytes), words)
        }
        _ => {
            let first = &pipeline[0][0];
            return Err(CaptureError::new(
                at(input, first),
                "only a curl command, or `printf 'FORMAT' | curl …`, is supported",
            ));
        }
    };
    let program = &words[0];
    let name = text(program);
    let base = name.rsplit(['/', '\\']).next().unwrap_or(&name);
    if base != "curl" && base != "curl.exe" {
        return Err(CaptureError::new(
            at(input, program),
            format!("not a curl command (`{name}`)"),
        ));
    }
    Args::read(input, &words[1..], stdin.as_deref(), files)?.request(input, program)
}

/// A curl command's arguments, as they bear on the request sent.
#[derive(Default)]
struct Args {
    method: Option<String>,
    urls: Vec<(String, usize)>,
    /// `-H` headers in order; `None` value: `Name:` (suppress).
    headers: Vec<(String, Option<Vec<u8>>)>,
    /// Headers from other options (`-A`, `-b`, `-e`, `-u`, `--json`), added when no `-H` names them.
    implied: Vec<Header>,
    data: Vec<Vec<u8>>,
    json: bool,
    get: bool,
    head: bool,
}

/// Options that take no value and do not change the request.
const FLAGS: &[&str] = &[
    "compressed",
    "silent",
    "show-error",
    "include",
    "verbose",
    "insecure",
    "location",
    "location-trusted",
    "fail",
    "fail-with-body",
    "globoff",
    "http1.0",
    "http1.1",
    "http2",
    "http2-prior-knowledge",
    "http3",
    "no-buffer",
    "progress-bar",
    "raw",
    "tcp-nodelay",
    "no-keepalive",
    "ipv4",
    "ipv6",
    "path-as-is",
    "ssl-no-revoke",
    "tlsv1",
    "tlsv1.0",
    "tlsv1.1",
    "tlsv1.2",
    "tlsv1.3",
    "no-progress-meter",
    "remote-name",
    "remote-header-name",
    "no-alpn",
    "no-npn",
    "styled-output",
    "no-styled-output",
];
const SHORT_FLAGS: &[u8] = b"sSivkLfgN46#0OJR";
/// Options that take a value that does not change the request.
const IGNORED: &[&str] = &[
    "output",
    "max-time",
    "connect-timeout",
    "retry",
    "retry-delay",
    "retry-max-time",
    "proxy",
    "proxy-user",
    "cert",
    "cacert",
    "capath",
    "key",
    "resolve",
    "connect-to",
    "write-out",
    "limit-rate",
    "interface",
    "cookie-jar",
    "dump-header",
    "trace",
    "trace-ascii",
    "max-redirs",
    "expect100-timeout",
    "keepalive-time",
    "unix-socket",
    "abstract-unix-socket",
    "cert-type",
    "key-type",
    "pass",
    "ciphers",
    "stderr",
];
const SHORT_IGNORED: &[u8] = b"omxEwcDyYz";

impl Args {
    fn read(
        input: &[u8],
        words: &[Word],
        stdin: Option<&[u8]>,
        files: ReadFile<'_>,
    ) -> Result<Self, CaptureError> {
        let mut args = Args::default();
        let mut i = 0;
        let mut only_urls = false;
        while i < words.len() {
            let word = &words[i];
            let arg = text(word);
            i += 1;
            if only_urls || !arg.starts_with('-') || arg == "-" {
                args.urls.push((arg, word.offset));
                continue;
            }
            if arg == "--" {
                only_urls = true;
                continue;
            }
            // (option name, attached value) for short options; long ones take the next word.
            let options: Vec<(String, Option<Vec<u8>>)> = match arg.strip_prefix("--") {
                Some(long) => vec![(long.to_string(), None)],
                None => {
                    let mut opts = Vec::new();
                    let bytes = &word.bytes[1..];
                    let mut k = 0;
                    while k < bytes.len() {
                        let c = bytes[k];
                        if SHORT_FLAGS.contains(&c) || c == b'G' || c == b'I' {
                            opts.push(((c as char).to_string(), None));
                            k += 1;
                        } else {
                            let rest = &bytes[k + 1..];
                            let value = (!rest.is_empty()).then(|| rest.to_vec());
                            opts.push(((c as char).to_string(), value));
                            break;
                        }
                    }
                    opts
                }
            };
            for (option, attached) in options {
                let mut value = |what: &str| -> Result<(Vec<u8>, &Word), CaptureError> {
                    if let Some(v) = attached.clone() {
                        return Ok((v, word));
                    }
                    let next = words.get(i).ok_or_else(|| {
                        CaptureError::new(at(input, word), format!("`{arg}` needs {what}"))
                    })?;
                    i += 1;
                    Ok((next.bytes.clone(), next))
                };
                let file = |path: &[u8], w: &Word| -> Result<Vec<u8>, CaptureError> {
                    let path = String::from_utf8_lossy(path).into_owned();
                    if path == "-" {
                        return stdin.map(<[u8]>::to_vec).ok_or_else(|| {
                            CaptureError::new(
                                at(input, w),
                                "`@-` reads standard input, which the command line does not hold",
                            )
                        });
                    }
                    files(&path)
                        .map_err(|e| CaptureError::new(at(input, w), format!("@{path}: {e}")))
                };
                match option.as_str() {
                    "X" | "request" => {
                        args.method =
                            Some(String::from_utf8_lossy(&value("a method")?.0).into_owned());
                    }
                    "H" | "header" => {
                        let (v, w) = value("a header")?;
                        args.headers.push(header(input, &v, w)?);
                    }
                    "d" | "data" | "data-ascii" => {
                        let (v, w) = value("data")?;
                        args.data.push(match v.strip_prefix(b"@") {
                            Some(path) => {
                                let mut bytes = file(path, w)?;
                                bytes.retain(|&b| b != b'\r' && b != b'\n');
                                bytes
                            }
                            None => v,
                        });
                    }
                    "data-binary" => {
                        let (v, w) = value("data")?;
                        args.data.push(match v.strip_prefix(b"@") {
                            Some(path) => file(path, w)?,
                            None => v,
                        });
                    }
                    "data-raw" => args.data.push(value("data")?.0),
                    "json" => {
                        let (v, w) = value("data")?;
                        args.data.push(match v.strip_prefix(b"@") {
                            Some(path) => file(path, w)?,
                            None => v,
                        });
                        args.json = true;
                    }
                    "data-urlencode" => {
                        let (v, w) = value("data")?;
                        args.data.push(urlencode_arg(&v, |p| file(p, w))?);
                    }
                    "url" => {
                        let (v, w) = value("a URL")?;
                        args.urls
                            .push((String::from_utf8_lossy(&v).into_owned(), w.offset));
                    }
                    "A" | "user-agent" => {
                        args.implied
                            .push(Header::new("User-Agent", value("a user agent")?.0));
                    }
                    "b" | "cookie" => {
                        let (v, w) = value("cookies")?;
                        if !v.contains(&b'=') {
                            return Err(CaptureError::new(
                                at(input, w),
                                "`-b FILE` reads cookies from a file; give them as `-H 'Cookie: …'`",
                            ));
                        }
                        args.implied.push(Header::new("Cookie", v));
                    }
                    "e" | "referer" => args.implied.push(Header::new("Referer", value("a URL")?.0)),
                    "u" | "user" => {
                        let credentials = base64::engine::general_purpose::STANDARD
                            .encode(value("user:password")?.0);
                        args.implied
                            .push(Header::new("Authorization", format!("Basic {credentials}")));
                    }
                    "G" | "get" => args.get = true,
                    "I" | "head" => args.head = true,
                    "F" | "form" | "form-string" | "T" | "upload-file" | "K" | "config" => {
                        return Err(CaptureError::new(
                            at(input, word),
                            format!(
                                "`{arg}` is not supported (no multipart forms, uploads or config files)"
                            ),
                        ));
                    }
                    o if FLAGS.contains(&o)
                        || (o.len() == 1 && SHORT_FLAGS.contains(&o.as_bytes()[0])) => {}
                    o if IGNORED.contains(&o)
                        || (o.len() == 1 && SHORT_IGNORED.contains(&o.as_bytes()[0])) =>
                    {
                        value("a value")?;
                    }
                    _ => {
                        return Err(CaptureError::new(
                            at(input, word),
                            format!(
                                "unknown curl option `{}`",
                                if arg.starts_with("--") {
                                    arg.clone()
                                } else {
                                    format!("-{option}")
                                }
                            ),
                        ));
                    }
                }
            }
        }
        Ok(args)
    }

    fn request(mut self, input: &[u8], program: &Word) -> Result<RawRequest, CaptureError> {
        let (url, offset) = match self.urls.as_slice() {
            [one] => one.clone(),
            [] => return Err(CaptureError::new(at(input, program), "no URL")),
            [_, (second, offset), ..] => {
                let w = Word {
                    bytes: Vec::new(),
                    offset: *offset,
                };
                return Err(CaptureError::new(
                    at(input, &w),
                    format!("a second URL (`{second}`): one request per command"),
                ));
            }
        };
        let has_data = !self.data.is_empty();
        let joined = self.data.join(&b'&');
        let mut url = url;
        let body = if self.get && has_data {
            let sep = if url.contains('?') { '&' } else { '?' };
            url = format!("{url}{sep}{}", String::from_utf8_lossy(&joined));
            Vec::new()
        } else {
            joined
        };
        let (path, query) = super::split_url(&url);
        if url.is_empty() {
            let w = Word {
                bytes: Vec::new(),
                offset,
            };
            return Err(CaptureError::new(
                at(input, &w),
                format!("`{url}` is not a URL"),
            ));
        }
        let method = match (&self.method, self.head, self.get, has_data) {
            (Some(m), ..) => m.clone(),
            (None, true, ..) => "HEAD".into(),
            (None, false, false, true) => "POST".into(),
            _ => "GET".into(),
        };
        if method.is_empty() || !method.bytes().all(super::json::is_token_byte) {
            return Err(CaptureError::new(
                at(input, program),
                format!("`{method}` is not an HTTP method"),
            ));
        }
        let named = |name: &str, headers: &[(String, Option<Vec<u8>>)]| {
            headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
        };
        if self.json {
            for (name, value) in [
                ("Content-Type", "application/json"),
                ("Accept", "application/json"),
            ] {
                self.implied.push(Header::new(name, value));
            }
        } else if has_data && !self.get {
            self.implied.push(Header::new(
                "Content-Type",
                "application/x-www-form-urlencoded",
            ));
        }
        let mut headers: Vec<Header> = self
            .headers
            .iter()
            .filter_map(|(n, v)| v.as_ref().map(|v| Header::new(n.clone(), v.clone())))
            .collect();
        for h in self.implied {
            if !named(&h.name, &self.headers)
                && !headers.iter().any(|x| x.name.eq_ignore_ascii_case(&h.name))
            {
                headers.push(h);
            }
        }
        let absolute = if url.contains("://") {
            url.clone()
        } else {
            format!("http://{url}")
        };
        Ok(RawRequest {
            method,
            path,
            query,
            headers,
            body,
            url: Some(absolute),
        })
    }
}

/// `-H 'Name: value'` → (name, Some(value)); `Name:` → suppressed; `Name;` → empty.
fn header(
    input: &[u8],
    value: &[u8],
    word: &Word,
) -> Result<(String, Option<Vec<u8>>), CaptureError> {
    if value.starts_with(b"@") {
        return Err(CaptureError::new(
            at(input, word),
            "`-H @FILE` is not supported: give each header",
        ));
    }
    let split = value.iter().position(|&b| b == b':' || b == b';');
    let Some(split) = split else {
        return Err(CaptureError::new(
            at(input, word),
            format!("header `{}` has no `:`", String::from_utf8_lossy(value)),
        ));
    };
    let name = String::from_utf8_lossy(value[..split].trim_ascii()).into_owned();
    if name.is_empty() || !name.bytes().all(super::json::is_token_byte) {
        return Err(CaptureError::new(
            at(input, word),
            format!("`{name}` is not a header name"),
        ));
    }
    let rest = &value[split + 1..];
    if value[split] == b';' {
        return if rest.trim_ascii().is_empty() {
            Ok((name, Some(Vec::new())))
        } else {
            Err(CaptureError::new(
                at(input, word),
                format!("header `{name}` has no `:`"),
            ))
        };
    }
    let start = rest
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(rest.len());
    let rest = &rest[start..];
    if rest.is_empty() {
        return Ok((name, None));
    }
    Ok((name, Some(rest.to_vec())))
}

/// `--data-urlencode`'s forms: `content`, `=content`, `name=content`, `@file`, `name@file`.
fn urlencode_arg(
    arg: &[u8],
    file: impl Fn(&[u8]) -> Result<Vec<u8>, CaptureError>,
) -> Result<Vec<u8>, CaptureError> {
    let eq = arg.iter().position(|&b| b == b'=');
    let at = arg.iter().position(|&b| b == b'@');
    let (name, content) = match (eq, at) {
        (Some(e), Some(a)) if a < e => (&arg[..a], file(&arg[a + 1..])?),
        (Some(e), _) => (&arg[..e], arg[e + 1..].to_vec()),
        (None, Some(a)) => (&arg[..a], file(&arg[a + 1..])?),
        (None, None) => (&arg[..0], arg.to_vec()),
    };
    let mut out = name.to_vec();
    if !name.is_empty() {
        out.push(b'=');
    }
    for &b in &content {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
