//! Unit tests of the head parser: framing, pipelining, every split position, hostile input.

use super::*;
use proptest::prelude::*;

fn heads_of(chunks: &[&[u8]]) -> (Vec<RequestHead>, HeadParser) {
    let mut parser = HeadParser::new();
    let mut heads = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, &mut |h| {
            heads.push(h);
            true
        });
    }
    (heads, parser)
}

fn names(head: &RequestHead) -> Vec<(&str, &[u8])> {
    head.headers
        .iter()
        .map(|h| (h.name.as_str(), h.value.as_slice()))
        .collect()
}

/// Three pipelined requests: a Content-Length body, a chunked body with extensions and
/// trailers, and a bodiless GET. Bodies contain text that looks like request heads.
const PIPELINE: &[u8] = b"POST /stripe/a?x=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-b: 2\r\nX-a: 3\r\nContent-Length: 24\r\n\r\nGET /fake HTTP/1.1\r\n\r\n\r\n\
PUT /gh HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
5;name=value;other\r\nhello\r\n1A \t;ext\r\nGET /no HTTP/1.1\r\n\r\n......\r\n0\r\nX-Trailer: t\r\nX-Other: \r\n\r\n\
GET /last HTTP/1.1\r\nHOST: h\r\n\r\n";

fn assert_pipeline(heads: &[RequestHead]) {
    let targets: Vec<&str> = heads.iter().map(|h| h.target.as_str()).collect();
    assert_eq!(
        targets,
        ["/stripe/a?x=1", "/gh", "/last"],
        "body bytes must be skipped"
    );
    assert_eq!(heads[0].method, "POST");
    assert_eq!(
        names(&heads[0]),
        [
            ("Host", &b"h"[..]),
            ("X-A", b"1"),
            ("x-b", b"2"),
            ("X-a", b"3"),
            ("Content-Length", b"24")
        ],
        "arrival order, duplicates and original case are kept"
    );
    assert_eq!(names(&heads[2]), [("HOST", &b"h"[..])]);
}

#[test]
fn pipelined_requests_in_one_read_give_every_head_in_order() {
    let (heads, parser) = heads_of(&[PIPELINE]);
    assert_pipeline(&heads);
    assert!(!parser.is_broken());
}

#[test]
fn every_split_position_gives_the_same_heads() {
    for i in 0..=PIPELINE.len() {
        let (heads, parser) = heads_of(&[&PIPELINE[..i], &PIPELINE[i..]]);
        assert_pipeline(&heads);
        assert!(!parser.is_broken(), "split at {i}");
    }
}

#[test]
fn every_pair_of_split_positions_gives_the_same_heads() {
    let n = PIPELINE.len();
    for i in (0..=n).step_by(3) {
        for j in i..=n {
            let (heads, _) = heads_of(&[&PIPELINE[..i], &PIPELINE[i..j], &PIPELINE[j..]]);
            assert_pipeline(&heads);
        }
    }
}

#[test]
fn one_byte_at_a_time_gives_the_same_heads() {
    let chunks: Vec<&[u8]> = PIPELINE.chunks(1).collect();
    let (heads, parser) = heads_of(&chunks);
    assert_pipeline(&heads);
    assert!(!parser.is_broken());
}

#[test]
fn body_bytes_are_counted_not_buffered() {
    let mut parser = HeadParser::new();
    let mut count = 0;
    parser.feed(
        b"POST /s HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n",
        &mut |_| {
            count += 1;
            true
        },
    );
    parser.feed(&[b'x'; 64 * 1024], &mut |_| true);
    assert_eq!(count, 1);
    assert!(parser.partial.is_empty(), "no body byte may be copied");
    assert_eq!(parser.state, State::Fixed(1_000_000 - 64 * 1024));
}

#[test]
fn empty_lines_before_a_request_line_are_skipped_as_hyper_does() {
    let (heads, _) = heads_of(&[b"\r\n\r\nGET /a HTTP/1.1\r\n\r\n"]);
    assert_eq!(heads.len(), 1);
    assert_eq!(heads[0].target, "/a");
}

#[test]
fn bare_lf_line_endings_are_accepted() {
    let (heads, _) = heads_of(&[b"GET /a HTTP/1.1\nX-A: 1\n\nGET /b HTTP/1.1\n\n"]);
    let targets: Vec<&str> = heads.iter().map(|h| h.target.as_str()).collect();
    assert_eq!(targets, ["/a", "/b"]);
}

#[test]
fn transfer_encoding_wins_over_content_length() {
    let (heads, parser) = heads_of(&[
        b"POST /a HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
    ]);
    assert_eq!(heads.len(), 2, "the chunked framing must be followed");
    assert!(!parser.is_broken());
}

#[test]
fn equal_duplicate_content_lengths_are_accepted() {
    let (heads, _) = heads_of(&[
        b"POST /a HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nokGET /b HTTP/1.1\r\n\r\n",
    ]);
    assert_eq!(heads.len(), 2);
}

#[test]
fn framing_hyper_refuses_stops_the_tap() {
    let refused: [&[u8]; 6] = [
        b"POST /a HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"POST /a HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        b"POST /a HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        b"POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GARBAGE\0\r\n\r\n",
    ];
    for bytes in refused {
        let (heads, parser) = heads_of(&[bytes]);
        assert!(heads.is_empty(), "{:?}", String::from_utf8_lossy(bytes));
        assert!(parser.is_broken(), "{:?}", String::from_utf8_lossy(bytes));
    }
}

#[test]
fn malformed_chunk_framing_stops_the_tap() {
    let bad: [&[u8]; 5] = [
        b"zz\r\n",
        b"5\r\nhelloXX",
        b"5;ext\nhello\r\n",
        b"FFFFFFFFFFFFFFFFFF\r\n",
        b"0\r\n\r\r",
    ];
    for body in bad {
        let mut bytes = b"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        bytes.extend_from_slice(body);
        let (heads, parser) = heads_of(&[&bytes]);
        assert_eq!(heads.len(), 1);
        assert!(parser.is_broken(), "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn an_oversized_head_stops_the_tap_and_frees_its_buffer() {
    let mut parser = HeadParser::new();
    parser.feed(b"GET / HTTP/1.1\r\nX-Big: ", &mut |_| true);
    let filler = vec![b'a'; 64 * 1024];
    for _ in 0..10 {
        parser.feed(&filler, &mut |_| true);
    }
    assert!(parser.is_broken());
    assert!(
        parser.partial.capacity() == 0,
        "the buffer must be released"
    );
}

#[test]
fn a_full_queue_stops_the_tap() {
    let mut parser = HeadParser::new();
    let mut seen = 0;
    parser.feed(
        b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
        &mut |_| {
            seen += 1;
            false
        },
    );
    assert_eq!(seen, 1, "nothing is parsed after the sink refuses");
    assert!(parser.is_broken());
}

#[test]
fn non_utf8_header_values_are_kept_as_bytes() {
    let (heads, _) = heads_of(&[b"GET /a HTTP/1.1\r\nX-Bin: \xff\xfe\r\n\r\n"]);
    assert_eq!(heads[0].headers[0].value, b"\xff\xfe");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn garbage_never_panics(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..8)) {
        let mut parser = HeadParser::new();
        for chunk in &chunks {
            parser.feed(chunk, &mut |_| true);
        }
    }

    #[test]
    fn http_shaped_garbage_never_panics(parts in proptest::collection::vec(prop_oneof![
        Just(&b"GET / HTTP/1.1\r\n"[..]), Just(&b"POST /x HTTP/1.1\r\n"[..]),
        Just(&b"Transfer-Encoding: chunked\r\n"[..]), Just(&b"Content-Length: 3\r\n"[..]),
        Just(&b"\r\n"[..]), Just(&b"\n"[..]), Just(&b"0\r\n"[..]), Just(&b"5;a=b\r\n"[..]),
        Just(&b"abc"[..]), Just(&b"X-Y: z\r\n"[..]), Just(&b"\0"[..]), Just(&b"\xff"[..]),
    ], 0..40), split in 0usize..400) {
        let bytes: Vec<u8> = parts.concat();
        let split = split.min(bytes.len());
        let whole = heads_of(&[&bytes]).0;
        let halves = heads_of(&[&bytes[..split], &bytes[split..]]).0;
        prop_assert_eq!(whole, halves, "splitting must not change the result");
    }
}
