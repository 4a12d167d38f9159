#!/usr/bin/env bash
# Installs what is missing, builds Hooklab and runs it: the desktop app when a display is
# available, else `hooklab listen --ui`, which serves the same UI and prints its address (open
# it in a browser on this machine, or through an SSH port forward). Arguments go to either, e.g.
#   scripts/run.sh --source stripe=stripe:whsec_...
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh
npm --prefix ui ci --no-audit --no-fund
npm --prefix ui run build
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  # The `desktop` Cargo profile: release, optimised for size (Cargo.toml); HOOKLAB_PROFILE
  # picks another. The CLI is built beside the app, in target/desktop/.
  profile="${HOOKLAB_PROFILE:-desktop}"
  cargo build --profile "$profile" -p hooklab -p hooklab-desktop
  [ "$profile" = dev ] && dir=debug || dir="$profile"
  exec "target/$dir/hooklab-desktop" "$@"
fi
cargo build --release --bin hooklab
echo "No display: running the receiver in this terminal; open the UI address it prints."
exec target/release/hooklab listen --ui "$@"
