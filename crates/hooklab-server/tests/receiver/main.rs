//! The receiver end to end: real sockets on 127.0.0.1:0, a real SQLite file in a temp dir, raw
//! HTTP/1.1 bytes written by hand. One module per capability.

mod support;

mod bodies;
mod durability;
mod headers;
mod idempotency;
mod lifecycle;
mod public_url;
mod routing;
mod signatures;
