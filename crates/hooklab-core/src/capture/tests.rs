use super::*;
use crate::clock::UnixMillis;
use crate::metadata::Metadata;
use crate::provider::{ProviderId, ProviderOptions};
use crate::request::Header;
use crate::secret::Secret;
use crate::store::{Delivery, NewDelivery};
use crate::verdict::Verdict;
use crate::verify::{VerifyConfig, verify};
use proptest::prelude::*;

pub(crate) fn delivery(
    id: i64,
    method: &str,
    target: &str,
    headers: Vec<Header>,
    body: &[u8],
) -> Delivery {
    let (path, query) = split_url(target);
    Delivery {
        id,
        record: NewDelivery {
            received_at: UnixMillis(1_750_000_000_123),
            source: "pay".into(),
            provider: Some(ProviderId::Stripe),
            method: method.into(),
            path,
            query,
            headers,
            body: body.to_vec(),
            body_size: body.len() as u64,
            body_refused: false,
            remote_addr: Some("127.0.0.1:5555".into()),
            verdict: Verdict::valid(0, None, "ok".into()),
            metadata: Metadata::default(),
            response_status: 200,
            idempotency: None,
            enqueue: false,
        },
        duplicate_of: None,
    }
}

/// Headers like a real delivery's: duplicates, mixed case, a value that is not UTF-8.
fn awkward_headers(len: usize) -> Vec<Header> {
    vec![
        Header::new("Host", "127.0.0.1:8787"),
        Header::new("X-Dup", "one"),
        Header::new("content-type", "application/octet-stream"),
        Header::new("X-Dup", "two"),
        Header::new("X-Bin", vec![0xff, b'a', 0x80]),
        Header::new("X-Empty", ""),
        Header::new("Content-Length", len.to_string()),
    ]
}

fn only(mut requests: Vec<RawRequest>) -> RawRequest {
    assert_eq!(requests.len(), 1, "one request: {requests:?}");
    requests.remove(0)
}

fn no_files(path: &str) -> Result<Vec<u8>, String> {
    super::no_files(path)
}

#[test]
fn every_export_format_reads_back_to_the_same_request() {
    let body = b"\xff\xfe{\"a\":1}\r\nline two\x00\x01'\"\\$`";
    let d = delivery(
        7,
        "POST",
        "/pay/hook?a=1&a=2&b=%20",
        awkward_headers(body.len()),
        body,
    );
    for format in [
        ExportFormat::Json,
        ExportFormat::Har,
        ExportFormat::Curl,
        ExportFormat::Http,
    ] {
        let bytes = export(std::slice::from_ref(&d), format);
        let (detected, capture) = read(&bytes, None, &no_files).unwrap_or_else(|e| {
            panic!(
                "{format:?} reads back: {e}\n{}",
                String::from_utf8_lossy(&bytes)
            )
        });
        let Capture::Requests(requests) = capture else {
            panic!("{format:?} is requests")
        };
        let r = only(requests);
        assert_eq!(detected.as_str(), format.as_str(), "auto-detected");
        assert_eq!(r.body, body, "{format:?}: the body bytes survive");
        assert_eq!(
            r.headers, d.record.headers,
            "{format:?}: headers in order, duplicates kept"
        );
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/pay/hook"));
        assert_eq!(
            r.query.as_deref(),
            Some("a=1&a=2&b=%20"),
            "{format:?}: raw query"
        );
        assert_eq!(
            r.url.as_deref(),
            Some("http://127.0.0.1:8787/pay/hook?a=1&a=2&b=%20"),
            "{format:?}: the URL from Host"
        );
    }
}

#[test]
fn formats_are_told_apart() {
    let cases: [(&[u8], Format); 7] = [
        (
            b"{\"hooklab_export\":1,\"schema_version\":4}\n{}",
            Format::Hooklab,
        ),
        (br#"{"log":{"version":"1.2","entries":[]}}"#, Format::Har),
        (
            br#"[{"method":"POST","path":"/a","headers":[]}]"#,
            Format::Json,
        ),
        (br#"{"id":"evt_1","object":"event"}"#, Format::Event),
        (b"# copied\ncurl 'http://x/a' -d 1", Format::Curl),
        (
            b"printf '\\000' | curl http://x/a --data-binary @-",
            Format::Curl,
        ),
        (b"POST /a HTTP/1.1\nHost: x\n\n", Format::Http),
    ];
    for (bytes, format) in cases {
        assert_eq!(
            detect(bytes),
            Ok(format),
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
    for bad in [&b""[..], b"   \n", b"hello world", b"[1,2]", b"{not json"] {
        let e = detect(bad).unwrap_err();
        assert_eq!(e.at, "import", "{e}");
    }
    assert!("nope".parse::<Format>().is_err());
    assert_eq!("har".parse::<Format>(), Ok(Format::Har));
}

#[test]
fn events_show_json_imports_with_its_base64_body() {
    let d = delivery(
        3,
        "POST",
        "/pay",
        vec![Header::new("A", "1")],
        &[0, 159, 146, 150],
    );
    let shown = json::delivery_value(&d);
    assert_eq!(shown["body"]["base64"], "AJ+Slg==", "not UTF-8: base64");
    let r = only(json::parse(shown.to_string().as_bytes()).unwrap());
    assert_eq!(r.body, [0, 159, 146, 150]);
    assert_eq!(
        r.url.as_deref(),
        Some("http://localhost/pay"),
        "no Host: localhost"
    );
    let refused = br#"{"method":"POST","path":"/a","headers":[],"body":"","body_refused":true}"#;
    let e = json::parse(refused).unwrap_err();
    assert_eq!(e.at, "delivery 1");
    assert!(e.detail.contains("not kept"), "{e}");
    let e = json::parse(br#"[{"method":"POST","path":"/a","headers":[]},{"method":"POST","path":"/b","headers":[["X",{"base64":"%%"}]]}]"#).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("delivery 2: header 1: bad base64"),
        "{e}"
    );
}

#[test]
fn chrome_and_firefox_hars_are_read() {
    // Chrome over HTTP/2: pseudo-headers first, a base64 body.
    let chrome = br#"{"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},
      "pages":[],"entries":[{"_initiator":{"type":"script"},"_priority":"High","cache":{},
      "request":{"method":"POST","url":"https://api.example.com/hooks/stripe?x=1",
        "httpVersion":"http/2.0","headers":[{"name":":authority","value":"api.example.com"},
        {"name":":method","value":"POST"},{"name":":path","value":"/hooks/stripe?x=1"},
        {"name":"content-type","value":"application/octet-stream"},{"name":"x-a","value":"1"},
        {"name":"x-a","value":"2"}],"queryString":[{"name":"x","value":"1"}],"cookies":[],
        "headersSize":-1,"bodySize":3,"postData":{"mimeType":"application/octet-stream",
        "text":"/wAB","encoding":"base64"}},"response":{"status":200}}]}}"#;
    let r = only(har::parse(chrome).unwrap());
    assert_eq!(r.body, [0xff, 0x00, 0x01], "base64 postData decoded");
    let names: Vec<&str> = r.headers.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(
        names,
        ["content-type", "x-a", "x-a"],
        "pseudo-headers dropped, order kept"
    );
    assert_eq!(
        (r.path.as_str(), r.query.as_deref()),
        ("/hooks/stripe", Some("x=1"))
    );
    assert_eq!(
        r.url.as_deref(),
        Some("https://api.example.com/hooks/stripe?x=1")
    );

    // Firefox: HTTP/1.1 headers in order, text with params beside it, a GET without postData.
    let firefox = br#"{"log":{"version":"1.2","creator":{"name":"Firefox","version":"128.0"},
      "entries":[{"request":{"bodySize":13,"method":"POST","url":"http://127.0.0.1:8787/mp",
        "httpVersion":"HTTP/1.1","headers":[{"name":"Host","value":"127.0.0.1:8787"},
        {"name":"Content-Type","value":"application/x-www-form-urlencoded"}],"cookies":[],
        "queryString":[],"headersSize":120,"postData":{"mimeType":"application/x-www-form-urlencoded",
        "params":[{"name":"a","value":"1"}],"text":"a=1&b=caf\u00e9"}}},
        {"request":{"method":"GET","url":"http://127.0.0.1:8787/mp/ping","headers":[]}}]}}"#;
    let rs = har::parse(firefox).unwrap();
    assert_eq!(rs.len(), 2, "every entry");
    assert_eq!(rs[0].body, "a=1&b=café".as_bytes());
    assert_eq!(rs[0].headers[0], Header::new("Host", "127.0.0.1:8787"));
    assert!(rs[1].body.is_empty() && rs[1].method == "GET");

    let broken = br#"{"log":{"entries":[{"request":{"method":"GET","url":"http://x/"}},
      {"request":{"method":"POST","url":"http://x/"}},
      {"request":{"method":"POST","url":"http://x/","postData":{"mimeType":"a/b"}}}]}}"#;
    assert_eq!(
        har::parse(broken).unwrap_err().to_string(),
        "HAR entry 3: postData has no text"
    );
    let bad_b64 = br#"{"log":{"entries":[{"request":{"method":"POST","url":"http://x/","postData":{"text":"***","encoding":"base64"}}}]}}"#;
    assert!(har::parse(bad_b64).unwrap_err().detail.contains("base64"));
}

#[test]
fn raw_http_with_crlf_lf_and_chunked_bodies() {
    let crlf = b"POST /stripe?x=1 HTTP/1.1\r\nHost: h:1\r\nX-A: 1\r\nX-A:  2 \r\nContent-Length: 5\r\n\r\nab\r\ncGET /next HTTP/1.1\r\nHost: h:1\r\n\r\n";
    let rs = http::parse(crlf).unwrap();
    assert_eq!(rs.len(), 2, "two requests back to back");
    assert_eq!(
        rs[0].body, b"ab\r\nc",
        "Content-Length bytes, CRLF inside kept"
    );
    assert_eq!(
        rs[0].headers_named("x-a").collect::<Vec<_>>(),
        [b"1", b"2"],
        "OWS trimmed"
    );
    assert_eq!(rs[0].url.as_deref(), Some("http://h:1/stripe?x=1"));
    assert_eq!((rs[1].method.as_str(), rs[1].body.len()), ("GET", 0));

    let chunked = b"POST /a HTTP/1.1\nTransfer-Encoding: chunked\n\n3;ext=1\nabc\n2\r\n\xff\x00\r\n0\nTrailer: x\n\n";
    let r = only(http::parse(chunked).unwrap());
    assert_eq!(r.body, b"abc\xff\x00", "chunks joined, LF or CRLF");

    let hand_written = b"POST /a HTTP/1.1\nContent-Type: application/json\n\n{\"a\":1}\n";
    assert_eq!(
        only(http::parse(hand_written).unwrap()).body,
        b"{\"a\":1}\n"
    );

    let absolute = b"POST http://example.com/a?b HTTP/1.1\r\n\r\n";
    let r = only(http::parse(absolute).unwrap());
    assert_eq!(
        (r.path.as_str(), r.url.as_deref()),
        ("/a", Some("http://example.com/a?b"))
    );

    for (bad, at, says) in [
        (
            &b"POST /a HTTP/1.1\r\nContent-Length: 10\r\n\r\nshort"[..],
            "HTTP request 1, line 4",
            "only 5 bytes",
        ),
        (
            b"POST /a HTTP/1.1\r\nX-A: 1\r\n fold\r\n\r\n",
            "HTTP request 1, line 3",
            "folded",
        ),
        (
            b"POST /a HTTP/1.1\r\nno colon\r\n\r\n",
            "HTTP request 1, line 2",
            "no `:`",
        ),
        (
            b"GET / HTTP/1.1\n\nPOST /a HTTP/1.1\nTransfer-Encoding: chunked\n\nzz\n",
            "HTTP request 2, line 6",
            "chunk size",
        ),
        (
            b"POST /a HTTP/1.1\r\nHost: x\r\n",
            "HTTP request 1, line 3",
            "blank line",
        ),
    ] {
        let e = http::parse(bad).unwrap_err();
        assert_eq!(e.at, at, "{e}");
        assert!(e.detail.contains(says), "{e}");
    }
}

const STRIPE_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

fn verifies(provider: ProviderId, secret: &str, r: &RawRequest, now: UnixMillis) -> bool {
    verify(
        &VerifyConfig::new(provider, vec![Secret::new(secret)]),
        r,
        now,
    )
    .is_valid()
}

#[test]
fn provider_events_are_recognised_wrapped_and_signed_now() {
    let stripe = b"{\n  \"id\": \"evt_1\",\n  \"object\": \"event\",\n  \"type\": \"payment_intent.succeeded\"\n}";
    let (format, capture) = read(stripe, None, &no_files).unwrap();
    assert_eq!(format, Format::Event);
    assert_eq!(
        capture,
        Capture::Event {
            body: stripe.to_vec(),
            provider: Some(ProviderId::Stripe)
        }
    );
    let now = UnixMillis::from_secs(1_750_000_000);
    let secret = Secret::new(STRIPE_SECRET);
    let r = event::wrap(event::Wrap {
        body: stripe,
        provider: ProviderId::Stripe,
        options: &ProviderOptions::default(),
        secret: &secret,
        url: "http://localhost/stripe",
        now,
    })
    .unwrap();
    assert_eq!(
        r.body, stripe,
        "the event's bytes as given, not re-serialised"
    );
    assert_eq!(r.header_str("content-type"), Some("application/json"));
    assert!(
        verifies(ProviderId::Stripe, STRIPE_SECRET, &r, now),
        "signed now: valid"
    );
    assert!(!verifies(ProviderId::Stripe, "whsec_other", &r, now));

    let mp = br#"{"action":"payment.updated","api_version":"v1","data":{"id":"123456"},"date_created":"2024-01-10T15:33:30Z","id":12345,"live_mode":false,"type":"payment","user_id":"1"}"#;
    let value: serde_json::Value = serde_json::from_slice(mp).unwrap();
    assert_eq!(
        event::detect_provider(&value),
        Some(ProviderId::Mercadopago)
    );
    let r = event::wrap(event::Wrap {
        body: mp,
        provider: ProviderId::Mercadopago,
        options: &ProviderOptions::default(),
        secret: &Secret::new("mp-secret"),
        url: "http://127.0.0.1:8787/mp",
        now,
    })
    .unwrap();
    assert_eq!(
        r.query.as_deref(),
        Some("data.id=123456&type=payment"),
        "MP's query"
    );
    assert!(verifies(ProviderId::Mercadopago, "mp-secret", &r, now));

    let asaas = br#"{"id":"evt_05b7&1","event":"PAYMENT_RECEIVED","payment":{"id":"pay_1"}}"#;
    let value: serde_json::Value = serde_json::from_slice(asaas).unwrap();
    assert_eq!(event::detect_provider(&value), Some(ProviderId::Asaas));
    let r = event::wrap(event::Wrap {
        body: asaas,
        provider: ProviderId::Asaas,
        options: &ProviderOptions::default(),
        secret: &Secret::new("asaas-token"),
        url: "http://127.0.0.1:8787/asaas",
        now,
    })
    .unwrap();
    assert!(verifies(ProviderId::Asaas, "asaas-token", &r, now));

    let unknown: serde_json::Value = serde_json::from_str(r#"{"hello":"world"}"#).unwrap();
    assert_eq!(event::detect_provider(&unknown), None);
    assert!(
        read(b"[1]", Some(Format::Event), &no_files).is_err(),
        "an event is an object"
    );
}

#[test]
fn more_providers_are_told_by_their_event_shape() {
    let shapes: [(&str, ProviderId); 9] = [
        (
            r#"{"event_id":"evt_01h","event_type":"transaction.completed","notification_id":"ntf_1","data":{}}"#,
            ProviderId::Paddle,
        ),
        (
            r#"{"entity":"event","event":"payment.captured","payload":{"payment":{}}}"#,
            ProviderId::Razorpay,
        ),
        (
            r#"{"meta":{"event_name":"order_created"},"data":{"id":"1"}}"#,
            ProviderId::Lemonsqueezy,
        ),
        (
            r#"{"live":"false","notificationItems":[]}"#,
            ProviderId::Adyen,
        ),
        (
            r#"{"event":"transaction.updated","data":{},"signature":{"properties":[],"checksum":"x"},"timestamp":1}"#,
            ProviderId::Wompi,
        ),
        (
            r#"{"event":"meeting.started","event_ts":1,"payload":{}}"#,
            ProviderId::Zoom,
        ),
        (
            r#"{"payment_id":5077125051,"payment_status":"finished"}"#,
            ProviderId::Nowpayments,
        ),
        (
            r#"{"merchant_id":"M","type":"payment.updated","event_id":"e","data":{}}"#,
            ProviderId::Square,
        ),
        (
            r#"{"action":"create","type":"Issue","data":{},"webhookTimestamp":1}"#,
            ProviderId::Linear,
        ),
    ];
    for (json, provider) in shapes {
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(event::detect_provider(&value), Some(provider), "{json}");
    }

    // Adyen signs inside the body: the wrapped request carries the signed body, and verifies.
    let key = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
    let batch = br#"{"live":"false","notificationItems":[{"NotificationRequestItem":{"amount":{"currency":"EUR","value":1130},"eventCode":"AUTHORISATION","merchantAccountCode":"M","merchantReference":"r1","originalReference":"","pspReference":"7914073381342284","success":"true"}}]}"#;
    let now = UnixMillis::from_secs(1_750_000_000);
    let r = event::wrap(event::Wrap {
        body: batch,
        provider: ProviderId::Adyen,
        options: &ProviderOptions::default(),
        secret: &Secret::new(key),
        url: "http://localhost/adyen",
        now,
    })
    .unwrap();
    assert_ne!(r.body, batch, "the HMAC went into the items");
    assert!(verifies(ProviderId::Adyen, key, &r, now));
}

fn header_strategy() -> impl Strategy<Value = Header> {
    (
        "[A-Za-z][A-Za-z0-9-]{0,12}",
        proptest::collection::vec(0x21u8..=0xff, 0..20),
    )
        .prop_map(|(name, mut value)| {
            // Header values have no CR, LF or NUL, and no leading or trailing whitespace.
            value.retain(|&b| b != 0x7f);
            Header::new(name, value)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_body_and_headers_survive_har_http_and_json(
        body in proptest::collection::vec(any::<u8>(), 0..300),
        headers in proptest::collection::vec(header_strategy(), 0..6),
        chunked in any::<bool>(),
    ) {
        let mut headers = headers;
        headers.retain(|h| !h.name.eq_ignore_ascii_case("content-length") && !h.name.eq_ignore_ascii_case("transfer-encoding"));
        headers.push(if chunked {
            Header::new("Transfer-Encoding", "chunked")
        } else {
            Header::new("Content-Length", body.len().to_string())
        });
        let d = delivery(1, "PUT", "/s/x?q=1", headers.clone(), &body);
        for format in [ExportFormat::Har, ExportFormat::Http, ExportFormat::Json] {
            let bytes = export(std::slice::from_ref(&d), format);
            let parsed = match format {
                ExportFormat::Har => har::parse(&bytes),
                ExportFormat::Http => http::parse(&bytes),
                _ => json::parse(&bytes),
            };
            let r = only(parsed.map_err(|e| TestCaseError::fail(format!("{format:?}: {e}")))?);
            prop_assert_eq!(&r.body, &body, "{:?}", format);
            prop_assert_eq!(&r.headers, &headers, "{:?}", format);
        }
    }

    #[test]
    fn malformed_input_is_an_error_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read(&bytes, None, &no_files);
        for format in Format::ALL {
            let _ = read(&bytes, Some(format), &no_files);
        }
    }

    #[test]
    fn mangled_exports_are_an_error_never_a_panic(cut in 0usize..2000, flip in any::<u8>()) {
        let body = b"{\"a\":\"\xff\"}\r\n";
        let d = delivery(2, "POST", "/p?x", awkward_headers(body.len()), body);
        for format in [ExportFormat::Har, ExportFormat::Http, ExportFormat::Json, ExportFormat::Curl] {
            let mut bytes = export(std::slice::from_ref(&d), format);
            let at = cut % bytes.len();
            bytes[at] ^= flip;
            let _ = read(&bytes, None, &no_files);
            bytes.truncate(at);
            let _ = read(&bytes, None, &no_files);
        }
    }
}
