//! Tunnels end to end through the `hooklab` binary, on loopback, for real: a bore server
//! (the `bore-cli` crate's, in this process), a throwaway OpenSSH sshd (plain and with a
//! `ForceCommand` that prints localhost.run's output), and a fake tunnel executable for the
//! lifecycle. Signed events go in at the public side and must come out recorded byte-exact
//! with verdict `valid`; the control API must stay unreachable through the tunnel; no tunnel
//! process may outlive `hooklab listen`.

#[path = "../common/mod.rs"]
mod common;

mod bore;
mod custom;
mod localhost_run;
mod ssh;
mod sshd;
mod support;
