#!/usr/bin/env bash
# Installs what is missing and runs every test: formatting, lints, the Rust test suites
# (unit, integration, end-to-end over real sockets), and the cross-checks against the
# providers' official SDKs from PyPI and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh

echo "==> cargo fmt --check"
cargo fmt --all -- --check
echo "==> cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "==> cargo test"
cargo test --workspace --locked
echo "==> SDK cross-checks"
HOOKLAB_BIN="$PWD/target/debug/hooklab" bash tests/sdk/run.sh
echo "==> all tests passed"
