#!/usr/bin/env bash
# Installs what Hooklab needs to build and test on Debian/Ubuntu, skipping what is present.
# Sourced by scripts/run.sh and scripts/test.sh; safe to run again.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_apt=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# openssh-server and openssh-client: the tunnel tests run a throwaway sshd on 127.0.0.1 (ssh -R).
# chromium: the UI tests render the real UI in headless Chromium. WebKitGTK (dev), librsvg:
# the desktop app (Tauri). libayatana-appindicator3-1: the desktop app's tray icon (loaded at
# run time; without it the app runs without a tray). Xvfb, x11-utils, imagemagick, xdotool, xclip
# and dbus-daemon: the desktop test opens its window on a virtual display, checks a screenshot
# of it, drives its menu with the keyboard, reads the clipboard, and receives its notifications
# on a private bus.
for pkg in build-essential pkg-config libssl-dev ca-certificates curl git openssh-server openssh-client chromium \
    libwebkit2gtk-4.1-dev librsvg2-dev libayatana-appindicator3-1 xvfb xauth x11-utils imagemagick xdotool \
    xclip dbus-daemon; do
  have_pkg "$pkg" || need_apt+=("$pkg")
done
# Python with venv (an existing python3 that can make a venv, e.g. pyenv's, is kept).
if ! { command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' 2>/dev/null; }; then
  need_apt+=(python3 python3-venv)
fi
# Node.js and npm for the UI (Vite, Svelte) and the SDK cross-checks; keep an existing install.
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "==> apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Rust (edition 2024 needs 1.85+; Debian's cargo is older, so use rustup when it is missing).
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "==> installing Rust with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c rustfmt,clippy
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true

# PostgreSQL server binaries (initdb, postgres) for the production engine's tests: they run a
# throwaway cluster of their own on 127.0.0.1 (scripts/test.sh starts one for the whole run).
# The package's own `main` cluster is not wanted: no server is created or left running by apt.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  echo "==> apt-get install postgresql"
  $SUDO mkdir -p /etc/postgresql-common
  if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql >/dev/null
fi
# PgBouncer: the PostgreSQL engine is also tested through it in transaction mode
# (scripts/pgbouncer-check.sh starts its own on a free port; the package's service is not used).
if ! command -v pgbouncer >/dev/null 2>&1 && ! [ -x /usr/sbin/pgbouncer ]; then
  echo "==> apt-get install pgbouncer"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq pgbouncer >/dev/null
  # Debian may start its own service (it listens on 6432 with an empty config): not needed.
  $SUDO service pgbouncer stop >/dev/null 2>&1 || true
fi
