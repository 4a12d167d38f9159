#!/usr/bin/env bash
# Installs what is missing, builds Hooklab and runs it: `hooklab listen` with any arguments
# given, e.g. scripts/run.sh --source stripe=stripe:whsec_...
# Open its UI from another terminal with `target/release/hooklab ui`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
npm --prefix ui ci --no-audit --no-fund
npm --prefix ui run build
cargo build --release --bin hooklab
exec target/release/hooklab listen "$@"
