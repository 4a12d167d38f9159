//! Forwarding end to end through the `hooklab` binary, over real sockets and a real SQLite
//! file: a 500-way race forwarded exactly once, a listener killed mid-forward that finishes the
//! job after a restart, and the dead-letter queue through `hooklab dlq`.

mod support;

mod crash;
mod dlq;
mod race;
