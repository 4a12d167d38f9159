#!/usr/bin/env bash
# Installs what is missing, builds Hooklab and runs it: `hooklab listen` with any arguments
# given, e.g. scripts/run.sh --source stripe=stripe:whsec_...
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
cargo build --release --bin hooklab
exec target/release/hooklab listen "$@"
