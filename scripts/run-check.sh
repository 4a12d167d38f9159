#!/usr/bin/env bash
# The README's first command, checked: on a machine with a display, `scripts/run.sh` installs,
# builds and starts the desktop app. Run by scripts/test.sh on a virtual display (Xvfb) with
# HOOKLAB_PROFILE=dev, the binaries the tests already built (the default profile, `desktop`,
# is a separate optimised build); the app itself is tested in src-tauri/tests/desktop.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
app=
xvfb=
cleanup() {
  [ -n "$app" ] && kill "$app" 2>/dev/null || true
  [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "error: $1" >&2
  echo "--- run.sh's output:" >&2
  cat "$work/out" "$work/log" >&2 || true
  exit 1
}

# Xvfb picks a free display and writes its number once it accepts connections.
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp -noreset 3>"$work/display" 2>/dev/null &
xvfb=$!
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
[ -s "$work/display" ] || fail "Xvfb did not start"
display=":$(head -n1 "$work/display")"

HOOKLAB_PROFILE=dev DISPLAY="$display" bash scripts/run.sh \
  --db "$work/hooklab.db" --port 0 --window-state "$work/window.json" --no-tray --print-ready \
  >"$work/out" 2>"$work/log" &
app=$!
for _ in $(seq 1200); do
  grep -q '"ready"' "$work/out" 2>/dev/null && break
  kill -0 "$app" 2>/dev/null || fail "run.sh exited before the app was ready"
  sleep 0.5
done
grep -q '"ready"' "$work/out" || fail "the app was not ready after 10 minutes"
[ "$(cat "/proc/$app/comm")" = hooklab-desktop ] || fail "run.sh did not start the desktop app"
for _ in $(seq 120); do
  xwininfo -display "$display" -root -tree 2>/dev/null | grep -q '"Hooklab"' && break
  sleep 0.25
done
xwininfo -display "$display" -root -tree | grep -q '"Hooklab"' || fail "no Hooklab window"

kill -TERM "$app"
status=0
wait "$app" || status=$?
app=
[ "$status" = 0 ] || fail "the app exited with status $status on SIGTERM"
echo "run.sh started the desktop app: $(grep '"ready"' "$work/out"); its window opened and it exited cleanly"
