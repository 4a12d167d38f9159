#!/usr/bin/env bash
# Installs what is missing and runs every test: the UI's type check and build, formatting,
# lints, the Rust test suites (unit, integration, end-to-end over real sockets, the UI in
# headless Chromium), and the cross-checks against the
# providers' official SDKs from PyPI and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
source scripts/pg-cluster.sh
pg_cluster_start
trap pg_cluster_stop EXIT

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
echo "==> the README's run command starts the desktop app (scripts/run.sh on Xvfb)"
bash scripts/run-check.sh
echo "==> UI end to end (Chromium + playwright-core against hooklab listen --ui)"
HOOKLAB_BIN="$PWD/target/debug/hooklab" npm --prefix ui run e2e
bash scripts/pgbouncer-check.sh
echo "==> SDK cross-checks"
HOOKLAB_BIN="$PWD/target/debug/hooklab" bash tests/sdk/run.sh
echo "==> no PostgreSQL left running by the tests"
pg_cluster_stop
# Clusters the tests start themselves (data dirs named hooklab-pg-*) stop with their process.
for _ in 1 2 3 4 5 6 7 8 9 10; do pgrep -f "hooklab-pg-" >/dev/null || break; sleep 0.5; done
if pgrep -f "hooklab-pg-" >/dev/null; then
  echo "error: a test cluster outlived the test run:" >&2
  pgrep -a -f "hooklab-pg-" >&2
  exit 1
fi
echo "==> all tests passed"
