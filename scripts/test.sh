#!/usr/bin/env bash
# Installs what is missing and runs every test: the UI's type check and build, formatting,
# lints, the Rust test suites (unit, integration, end-to-end over real sockets, the UI in
# headless Chromium), and the cross-checks against the
# providers' official SDKs from PyPI and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh

echo "==> UI: install, type check, build"
npm --prefix ui ci --no-audit --no-fund
npm --prefix ui run check
npm --prefix ui run build
echo "==> cargo fmt --check"
cargo fmt --all -- --check
echo "==> cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "==> cargo test"
cargo test --workspace --locked
echo "==> UI end to end (Chromium + playwright-core against hooklab listen --ui)"
HOOKLAB_BIN="$PWD/target/debug/hooklab" npm --prefix ui run e2e
echo "==> SDK cross-checks"
HOOKLAB_BIN="$PWD/target/debug/hooklab" bash tests/sdk/run.sh
echo "==> all tests passed"
