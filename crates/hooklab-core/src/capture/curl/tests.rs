use super::*;
use crate::capture::tests::delivery;
use proptest::prelude::*;

fn no_files(path: &str) -> Result<Vec<u8>, String> {
    crate::capture::no_files(path)
}

fn one(input: &str) -> RawRequest {
    let mut rs = parse(input.as_bytes(), &no_files).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rs.len(), 1);
    rs.remove(0)
}

fn names(r: &RawRequest) -> Vec<(String, String)> {
    r.headers
        .iter()
        .map(|h| {
            (
                h.name.clone(),
                String::from_utf8_lossy(&h.value).into_owned(),
            )
        })
        .collect()
}

#[test]
fn chrome_copy_as_curl_bash() {
    let r = one(
        "curl 'https://api.example.com/hooks/stripe?x=1' \\\n  -H 'accept: */*' \\\n  -H 'content-type: application/json' \\\n  -b 'sid=1; lang=en' \\\n  --data-raw $'{\"name\":\"caf\\u00e9\",\"q\":\"it\\'s\"}\\r\\n' \\\n  --compressed",
    );
    assert_eq!(r.method, "POST", "data makes it a POST");
    assert_eq!(
        (r.path.as_str(), r.query.as_deref()),
        ("/hooks/stripe", Some("x=1"))
    );
    assert_eq!(r.body, "{\"name\":\"café\",\"q\":\"it's\"}\r\n".as_bytes());
    assert_eq!(
        names(&r),
        [
            ("accept".into(), "*/*".into()),
            ("content-type".into(), "application/json".into()),
            ("Cookie".into(), "sid=1; lang=en".into()),
        ]
    );
    assert_eq!(
        r.url.as_deref(),
        Some("https://api.example.com/hooks/stripe?x=1")
    );
}

#[test]
fn firefox_copy_as_curl_and_the_uis_copy() {
    let firefox = one(
        "curl 'http://127.0.0.1:8787/gh' -X POST -H 'User-Agent: Mozilla/5.0' -H 'X-A: 1' -H 'X-A: 2' -H 'Connection: keep-alive' --data-raw 'a=1&b=2'",
    );
    assert_eq!(firefox.body, b"a=1&b=2");
    assert_eq!(
        firefox.headers.last().map(|h| h.name.as_str()),
        Some("Content-Type"),
        "curl's own form content type, after the given headers"
    );
    assert_eq!(firefox.headers_named("x-a").count(), 2, "duplicates kept");

    // The UI's "Copy as curl" (ui/src/lib/format.ts).
    let ui = one(
        "curl -X POST 'http://127.0.0.1:8787/stripe' \\\n  -H 'Stripe-Signature: t=1,v1=ab' \\\n  -H 'Content-Type: application/json' \\\n  --data-binary '{\"id\":\"evt_1\",\"note\":\"it'\\''s\"}'",
    );
    assert_eq!(ui.body, br#"{"id":"evt_1","note":"it's"}"#);
    assert_eq!(ui.header_str("stripe-signature"), Some("t=1,v1=ab"));
}

#[test]
fn data_options_follow_curl() {
    let r = one("curl http://h/a -d a=1 --data b=2 --data-urlencode 'c=x y&' --data-urlencode z");
    assert_eq!(r.body, b"a=1&b=2&c=x%20y%26&z", "joined with &, urlencoded");
    let r = one("curl -G http://h/a?x=1 -d a=1 -d b=2");
    assert_eq!(
        (r.method.as_str(), r.query.as_deref(), r.body.len()),
        ("GET", Some("x=1&a=1&b=2"), 0)
    );
    let r = one("curl -XPUT -sSL http://h/a --json '{\"a\":1}' -H 'Accept: text/plain'");
    assert_eq!(r.method, "PUT", "attached -X value, clustered flags");
    assert_eq!(
        names(&r),
        [
            ("Accept".into(), "text/plain".into()),
            ("Content-Type".into(), "application/json".into()),
        ],
        "--json's headers unless given"
    );
    let r =
        one("curl http://h/a -H 'Content-Type:' -H 'X-Empty;' -u user:pw -A agent --data-binary x");
    assert_eq!(
        names(&r),
        [
            ("X-Empty".into(), String::new()),
            ("Authorization".into(), "Basic dXNlcjpwdw==".into()),
            ("User-Agent".into(), "agent".into()),
        ],
        "`Name:` removes curl's content type, `Name;` sends an empty header"
    );
    let r = one("curl -I http://h/a");
    assert_eq!(r.method, "HEAD");
    let r = one("curl \"http://h/a\" -H \"X-Q: \\\"q\\\" \\$HOME\" --data-binary \"a\\nb\"");
    assert_eq!(
        r.header_str("x-q"),
        Some("\"q\" $HOME"),
        "double quotes, nothing expanded"
    );
    assert_eq!(
        r.body, b"a\\nb",
        "a backslash before n stays in double quotes"
    );
}

#[test]
fn files_are_read_through_the_callers_reader() {
    let files = |path: &str| -> Result<Vec<u8>, String> {
        match path {
            "body.bin" => Ok(b"line1\r\nline2\n\xff".to_vec()),
            other => Err(format!("no such file {other}")),
        }
    };
    let rs = parse(
        b"curl http://h/a --data-binary @body.bin\ncurl http://h/b -d @body.bin\n",
        &files,
    )
    .unwrap();
    assert_eq!(
        rs[0].body, b"line1\r\nline2\n\xff",
        "--data-binary @file: exact"
    );
    assert_eq!(
        rs[1].body, b"line1line2\xff",
        "-d @file: line breaks dropped"
    );
    let e = parse(b"curl http://h/a --data-binary @missing", &files).unwrap_err();
    assert_eq!(
        e.to_string(),
        "curl, line 1, column 31: @missing: no such file missing"
    );
}

#[test]
fn errors_say_where() {
    for (input, says) in [
        (
            "curl 'http://h/a",
            "curl: unbalanced quote `'` at line 1, column 6",
        ),
        (
            "curl http://h/a \\\n  -H $'x",
            "curl: unbalanced quote `$'` at line 2, column 6",
        ),
        (
            "curl http://h/a \\\n  --bogus",
            "curl, line 2, column 3: unknown curl option `--bogus`",
        ),
        (
            "wget http://h/a",
            "curl, line 1, column 1: not a curl command (`wget`)",
        ),
        ("curl -X POST", "curl, line 1, column 1: no URL"),
        (
            "curl http://h/a -H",
            "curl, line 1, column 17: `-H` needs a header",
        ),
        (
            "curl http://h/a -H 'nocolon'",
            "curl, line 1, column 20: header `nocolon` has no `:`",
        ),
        (
            "curl http://h/a http://h/b",
            "curl, line 1, column 17: a second URL (`http://h/b`): one request per command",
        ),
        (
            "curl http://h/a -F a=1",
            "curl, line 1, column 17: `-F` is not supported (no multipart forms, uploads or config files)",
        ),
        (
            "curl http://h/a > out",
            "curl: `>` (a redirection, subshell or background job) is not supported at line 1, column 17",
        ),
        (
            "curl http://h/a --data-binary @-",
            "curl, line 1, column 31: `@-` reads standard input, which the command line does not hold",
        ),
    ] {
        let e = parse(input.as_bytes(), &no_files).unwrap_err();
        assert_eq!(e.to_string(), says, "{input}");
    }
}

#[test]
fn exports_are_runnable_commands_that_read_back_exactly() {
    let body = b"{\"a\":\"\xff\"}\r\n\x00tail'";
    let d = delivery(
        9,
        "POST",
        "/pay?x=1",
        vec![
            crate::request::Header::new("Host", "127.0.0.1:8787"),
            crate::request::Header::new("X-Bin", vec![0x80, b'\'']),
        ],
        body,
    );
    let text = String::from_utf8(export(std::slice::from_ref(&d))).unwrap();
    assert!(
        text.starts_with("# Hooklab delivery #9 (source pay): valid\nprintf '"),
        "{text}"
    );
    assert!(text.contains("-H $'X-Bin: \\x80\\''"), "{text}");
    assert!(
        text.contains("-H 'Content-Type:'"),
        "no recorded content type: curl adds none"
    );
    let r = one(&text);
    assert_eq!(r.body, body);
    assert_eq!(r.headers, d.record.headers);

    let at = delivery(10, "POST", "/pay", vec![], b"@body.bin");
    let text = String::from_utf8(export(std::slice::from_ref(&at))).unwrap();
    assert!(
        text.contains("--data-raw '@body.bin'"),
        "not a file to read: {text}"
    );
    assert_eq!(one(&text).body, b"@body.bin");
}

#[test]
fn quoting_reads_back() {
    for bytes in [
        &b""[..],
        b"plain",
        b"it's",
        b"a\nb\tc",
        b"\r",
        b"\xff\xfe",
        b"\x1b[0m",
        "é\u{85}".as_bytes(),
        b"\\x41",
    ] {
        let quoted = shell::quote(bytes);
        let words = shell::split(quoted.as_bytes()).unwrap();
        let got = words
            .first()
            .map_or_else(Vec::new, |p| p[0][0].bytes.clone());
        assert_eq!(got, bytes, "{quoted}");
    }
    let all: Vec<u8> = (0..=255).collect();
    assert_eq!(
        shell::printf(shell::printf_format(&all).as_bytes()).unwrap(),
        all
    );
    assert!(shell::printf(b"%s").is_err());
}

fn header_strategy() -> impl Strategy<Value = crate::request::Header> {
    (
        "[A-Za-z][A-Za-z0-9-]{0,12}",
        proptest::collection::vec(0x21u8..=0xff, 0..20),
    )
        .prop_map(|(name, value)| crate::request::Header::new(name, value))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_body_and_headers_survive_curl(
        body in proptest::collection::vec(any::<u8>(), 0..300),
        headers in proptest::collection::vec(header_strategy(), 0..6),
        method in "(POST|PUT|PATCH|DELETE)",
    ) {
        let mut headers = headers;
        headers.push(crate::request::Header::new("Content-Type", "application/octet-stream"));
        let d = delivery(1, &method, "/s?q=1&r", headers.clone(), &body);
        let text = export(std::slice::from_ref(&d));
        let rs = parse(&text, &no_files).map_err(|e| TestCaseError::fail(format!("{e}\n{}", String::from_utf8_lossy(&text))))?;
        prop_assert_eq!(rs.len(), 1);
        prop_assert_eq!(&rs[0].body, &body);
        prop_assert_eq!(&rs[0].headers, &headers);
        prop_assert_eq!(&rs[0].method, &method);
        prop_assert_eq!(rs[0].query.as_deref(), Some("q=1&r"));
    }

    #[test]
    fn any_text_is_an_error_or_requests_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut input = b"curl ".to_vec();
        input.extend_from_slice(&bytes);
        let _ = parse(&input, &no_files);
        let _ = shell::printf(&bytes);
    }
}
