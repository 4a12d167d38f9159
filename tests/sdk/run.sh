#!/usr/bin/env bash
# Cross-checks hooklab's signatures against the providers' official SDKs (Python and Node).
#
#   tests/sdk/run.sh                # uses target/debug/hooklab, builds it if missing
#   HOOKLAB_BIN=/path/to/hooklab tests/sdk/run.sh
#
# Creates tests/sdk/.venv (gitignored), installs the pinned requirements and the locked npm
# packages, then runs pytest and node's test runner. Exits non-zero if either suite fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export HOOKLAB_BIN="${HOOKLAB_BIN:-$repo/target/debug/hooklab}"

if [[ ! -x "$HOOKLAB_BIN" ]]; then
  echo "== building hooklab ($HOOKLAB_BIN not found)"
  (cd "$repo" && cargo build -p hooklab)
fi

cd "$here"

echo "== python: venv and pinned SDKs"
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt

echo "== node: npm ci"
npm ci --no-audit --no-fund --silent

status=0
echo "== pytest"
.venv/bin/python -m pytest -q -p no:cacheprovider test_sdk_python.py || status=1
echo "== node --test"
node --test test_sdk_node.mjs || status=1

exit "$status"
