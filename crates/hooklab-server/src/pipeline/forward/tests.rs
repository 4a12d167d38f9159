//! The forward handler's pure parts: which headers go on, and where the request goes.

use super::*;

fn names(headers: &[(HeaderName, HeaderValue)]) -> Vec<String> {
    headers
        .iter()
        .map(|(n, _)| n.as_str().to_string())
        .collect()
}

#[test]
fn hop_by_hop_headers_stay_behind_and_hooklab_adds_its_own() {
    let original = vec![
        Header::new("Host", "hooks.example"),
        Header::new("Stripe-Signature", "t=1,v1=ab"),
        Header::new("Connection", "keep-alive, X-Per-Hop"),
        Header::new("Keep-Alive", "timeout=5"),
        Header::new("Transfer-Encoding", "chunked"),
        Header::new("TE", "trailers"),
        Header::new("Trailer", "X-Sum"),
        Header::new("Upgrade", "h2c"),
        Header::new("Proxy-Authorization", "Basic abc"),
        Header::new("Proxy-Connection", "keep-alive"),
        Header::new("X-Per-Hop", "named by Connection"),
        Header::new("Content-Length", "12"),
        Header::new("X-Hooklab-Attempt", "99"),
        Header::new("Content-Type", "application/json"),
        Header::new("X-Dup", "1"),
        Header::new("X-Dup", "2"),
    ];
    let sent = forward_headers(&original, 42, 3);
    assert_eq!(
        names(&sent),
        [
            "stripe-signature",
            "content-type",
            "x-dup",
            "x-dup",
            "x-hooklab-delivery",
            "x-hooklab-attempt"
        ],
        "only end-to-end headers, in arrival order, then Hooklab's"
    );
    assert_eq!(sent[0].1, "t=1,v1=ab", "values byte for byte");
    assert_eq!(
        (&sent[2].1, &sent[3].1),
        (&"1".parse().unwrap(), &"2".parse().unwrap())
    );
    assert_eq!(sent[4].1, "42");
    assert_eq!(
        sent[5].1, "3",
        "a sender's X-Hooklab-Attempt is replaced, not kept"
    );
}

#[test]
fn non_ascii_header_values_are_forwarded_as_bytes() {
    let sent = forward_headers(&[Header::new("X-Name", b"caf\xc3\xa9".to_vec())], 1, 1);
    assert_eq!(sent[0].1.as_bytes(), b"caf\xc3\xa9");
}

#[test]
fn the_query_string_is_appended_to_the_target() {
    let target: Uri = "http://127.0.0.1:3000/hooks".parse().unwrap();
    assert_eq!(with_query(&target, None).unwrap(), target);
    assert_eq!(with_query(&target, Some("")).unwrap(), target);
    assert_eq!(
        with_query(&target, Some("data.id=123&type=payment"))
            .unwrap()
            .to_string(),
        "http://127.0.0.1:3000/hooks?data.id=123&type=payment"
    );
    let with_own: Uri = "http://app:80/in?token=x".parse().unwrap();
    assert_eq!(
        with_query(&with_own, Some("a=1")).unwrap().to_string(),
        "http://app:80/in?token=x&a=1",
        "the target's own query comes first"
    );
}

#[test]
fn https_targets_are_refused_with_a_clear_reason() {
    let e = ForwardHandler::new(
        "https://example.com/hooks",
        SuccessPolicy::Any2xx,
        Duration::from_secs(1),
    )
    .unwrap_err();
    assert!(e.contains("TLS forwarding is not supported yet"), "{e}");
    for bad in ["127.0.0.1:3000", "ftp://x/", "/hooks", "http://"] {
        assert!(
            ForwardHandler::new(bad, SuccessPolicy::Any2xx, Duration::from_secs(1)).is_err(),
            "`{bad}` is not a forward target"
        );
    }
}
