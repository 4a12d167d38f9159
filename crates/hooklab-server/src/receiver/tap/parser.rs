//! The tap's byte-stream parser: splits one connection's inbound bytes into request heads.
//!
//! It sees exactly the bytes hyper reads, in the same order, and keeps just enough HTTP/1.1
//! framing to stay in step with hyper: parse a head with `httparse` (as hyper does), then skip
//! the body by `Content-Length` or chunked framing, then expect the next head. Only heads are
//! copied; body bytes are counted and dropped. On anything it does not understand it stops for
//! good ([`HeadParser::is_broken`]) — hyper will answer 400 and close the connection, or the
//! handler will notice the mismatch and fall back to hyper's header map.

use hooklab_core::request::Header;

/// A head larger than this is not tracked (hyper refuses heads above ~400 KiB with 431 anyway).
pub(crate) const MAX_HEAD_BYTES: usize = 512 * 1024;
/// More header lines than this are not tracked (hyper refuses more than 100).
const MAX_HEADERS: usize = 128;

/// One request head as sent: method, target and header lines in arrival order, names with
/// their original case, values as bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestHead {
    pub(crate) method: String,
    /// The request target exactly as sent (origin form `/a?b`, absolute form, or `*`).
    pub(crate) target: String,
    pub(crate) headers: Vec<Header>,
}

/// Where the parser is in the byte stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Accumulating a request head (possibly preceded by empty lines).
    Head,
    /// Skipping this many remaining bytes of a `Content-Length` body.
    Fixed(u64),
    /// Inside a chunked body.
    Chunked(Chunk),
    /// Lost step with the stream; nothing more is tracked on this connection.
    Broken,
}

/// The chunked-body states, mirroring hyper's decoder so that both accept the same framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Expecting the first hex digit of a chunk size.
    Start,
    /// Reading hex digits of the size (accumulated so far).
    Size(u64),
    /// Whitespace after the size.
    SizeLws(u64),
    /// A `;extension` after the size, up to CR.
    Extension(u64),
    /// Expecting the LF that ends the size line.
    SizeLf(u64),
    /// Skipping this many chunk-data bytes.
    Data(u64),
    /// Expecting CR after chunk data.
    DataCr,
    /// Expecting LF after chunk data.
    DataLf,
    /// After the last chunk: an empty line ends the body, anything else starts a trailer.
    EndCr,
    /// Expecting the final LF.
    EndLf,
    /// Inside a trailer line, up to CR.
    Trailer,
    /// Expecting the LF that ends a trailer line.
    TrailerLf,
}

/// Per-connection parser state. Feed it every byte read from the socket, in order.
#[derive(Debug)]
pub(crate) struct HeadParser {
    state: State,
    /// The bytes of an incomplete head (only heads are ever buffered).
    partial: Vec<u8>,
    /// How far `partial` has been scanned for the blank line that ends a head.
    scanned: usize,
}

impl Default for HeadParser {
    fn default() -> Self {
        Self::new()
    }
}

impl HeadParser {
    pub(crate) fn new() -> Self {
        Self {
            state: State::Head,
            partial: Vec::new(),
            scanned: 0,
        }
    }

    /// Whether the parser gave up on this connection.
    pub(crate) fn is_broken(&self) -> bool {
        self.state == State::Broken
    }

    /// Marks the connection as untracked from here on (e.g. the head queue is full).
    pub(crate) fn give_up(&mut self) {
        self.state = State::Broken;
        self.partial = Vec::new();
    }

    /// Consumes `input`, calling `on_head` for every complete request head, in order.
    pub(crate) fn feed(&mut self, mut input: &[u8], on_head: &mut dyn FnMut(RequestHead) -> bool) {
        while !input.is_empty() {
            match self.state {
                State::Broken => return,
                State::Head => {
                    let Some(consumed) = self.feed_head(input, on_head) else {
                        return;
                    };
                    input = &input[consumed..];
                }
                State::Fixed(remaining) => {
                    let n = usize::try_from(remaining)
                        .unwrap_or(usize::MAX)
                        .min(input.len());
                    input = &input[n..];
                    let left = remaining - n as u64;
                    self.state = if left == 0 {
                        State::Head
                    } else {
                        State::Fixed(left)
                    };
                }
                State::Chunked(Chunk::Data(remaining)) => {
                    let n = usize::try_from(remaining)
                        .unwrap_or(usize::MAX)
                        .min(input.len());
                    input = &input[n..];
                    let left = remaining - n as u64;
                    self.state = State::Chunked(if left == 0 {
                        Chunk::DataCr
                    } else {
                        Chunk::Data(left)
                    });
                }
                State::Chunked(chunk) => {
                    self.state = step_chunk(chunk, input[0]);
                    input = &input[1..];
                }
            }
        }
    }

    /// Feeds bytes while a head is expected. Returns how many bytes of `input` belong to the
    /// head once it is complete, or `None` when all of `input` was taken (incomplete or broken).
    fn feed_head(
        &mut self,
        input: &[u8],
        on_head: &mut dyn FnMut(RequestHead) -> bool,
    ) -> Option<usize> {
        // Fast path: a whole head inside one read is parsed in place, without copying.
        if self.partial.is_empty() {
            return match parse_head(input) {
                Parsed::Complete(len, head, framing) => {
                    self.accept(head, framing, on_head);
                    Some(len)
                }
                Parsed::Partial => {
                    self.buffer(input);
                    None
                }
                Parsed::Invalid => {
                    self.give_up();
                    None
                }
            };
        }
        let before = self.partial.len();
        self.buffer(input);
        if self.is_broken() || !self.ends_head() {
            return None;
        }
        match parse_head(&self.partial) {
            Parsed::Complete(len, head, framing) => {
                self.partial.clear();
                self.scanned = 0;
                self.accept(head, framing, on_head);
                // The previous bytes held no complete head, so the head ends inside `input`.
                Some(len.saturating_sub(before).min(input.len()))
            }
            Parsed::Partial => None,
            Parsed::Invalid => {
                self.give_up();
                None
            }
        }
    }

    fn buffer(&mut self, input: &[u8]) {
        if self.partial.len() + input.len() > MAX_HEAD_BYTES {
            self.give_up();
            return;
        }
        self.partial.extend_from_slice(input);
    }

    /// Whether the buffered bytes contain a line break followed by an empty line since the last
    /// scan: a cheap hint that a parse may now complete (avoids re-parsing on every byte).
    fn ends_head(&mut self) -> bool {
        let from = self.scanned.saturating_sub(3);
        self.scanned = self.partial.len();
        let window = &self.partial[from..];
        window.windows(2).any(|w| w == b"\n\n") || window.windows(3).any(|w| w == b"\n\r\n")
    }

    fn accept(
        &mut self,
        head: RequestHead,
        framing: Framing,
        on_head: &mut dyn FnMut(RequestHead) -> bool,
    ) {
        if !on_head(head) {
            self.give_up();
            return;
        }
        self.state = match framing {
            Framing::Length(0) => State::Head,
            Framing::Length(n) => State::Fixed(n),
            Framing::Chunked => State::Chunked(Chunk::Start),
        };
    }
}

/// How the body after a head is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(u64),
    Chunked,
}

enum Parsed {
    Complete(usize, RequestHead, Framing),
    Partial,
    Invalid,
}

fn parse_head(bytes: &[u8]) -> Parsed {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    let len = match req.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Invalid,
    };
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Parsed::Invalid;
    };
    let Some(framing) = framing(version, req.headers) else {
        return Parsed::Invalid;
    };
    let head = RequestHead {
        method: method.to_string(),
        target: target.to_string(),
        headers: req
            .headers
            .iter()
            .map(|h| Header::new(h.name, h.value))
            .collect(),
    };
    Parsed::Complete(len, head, framing)
}

/// The body framing hyper applies to a request (RFC 9112 §6.3), or `None` where hyper refuses
/// the request: a final encoding other than chunked, HTTP/1.0 with Transfer-Encoding, or
/// invalid / conflicting Content-Length values.
fn framing(version: u8, headers: &[httparse::Header<'_>]) -> Option<Framing> {
    let mut transfer_encoding = None;
    let mut length = None;
    for h in headers {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            if version == 0 {
                return None;
            }
            transfer_encoding = Some(last_token_is_chunked(h.value));
        } else if h.name.eq_ignore_ascii_case("content-length") && transfer_encoding.is_none() {
            let n = digits(h.value)?;
            if length.is_some_and(|prev| prev != n) {
                return None;
            }
            length = Some(n);
        }
    }
    match transfer_encoding {
        Some(true) => Some(Framing::Chunked),
        Some(false) => None,
        None => Some(Framing::Length(length.unwrap_or(0))),
    }
}

fn last_token_is_chunked(value: &[u8]) -> bool {
    std::str::from_utf8(value)
        .ok()
        .and_then(|s| s.rsplit(',').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"))
}

fn digits(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

fn hex(b: u8) -> Option<u64> {
    (b as char).to_digit(16).map(u64::from)
}

fn push_hex(size: u64, digit: u64) -> State {
    match size.checked_mul(16).and_then(|s| s.checked_add(digit)) {
        Some(size) => State::Chunked(Chunk::Size(size)),
        None => State::Broken,
    }
}

/// One byte of chunked framing outside chunk data.
fn step_chunk(chunk: Chunk, b: u8) -> State {
    use Chunk::*;
    let next = match (chunk, b) {
        (Start, b) => return hex(b).map_or(State::Broken, |d| push_hex(0, d)),
        (Size(size), b) if hex(b).is_some() => return push_hex(size, hex(b).unwrap_or(0)),
        (Size(size) | SizeLws(size), b'\t' | b' ') => SizeLws(size),
        (Size(size) | SizeLws(size), b';') => Extension(size),
        (Size(size) | SizeLws(size) | Extension(size), b'\r') => SizeLf(size),
        (Extension(_), b'\n') => return State::Broken,
        (Extension(size), _) => Extension(size),
        (SizeLf(0), b'\n') => EndCr,
        (SizeLf(size), b'\n') => Data(size),
        (DataCr, b'\r') => DataLf,
        (DataLf, b'\n') => Start,
        (EndCr, b'\r') => EndLf,
        (EndCr, _) | (Trailer, _) if b != b'\r' => Trailer,
        (Trailer, b'\r') => TrailerLf,
        (TrailerLf, b'\n') => EndCr,
        (EndLf, b'\n') => return State::Head,
        _ => return State::Broken,
    };
    State::Chunked(next)
}

#[cfg(test)]
mod tests;
