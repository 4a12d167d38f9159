#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on 127.0.0.1 for one test run. Sourced by scripts/test.sh:
#   pg_cluster_start   initdb into a temp dir, start postgres on a free port (as the `postgres`
#                      OS user when root: PostgreSQL refuses to run as root), export
#                      HOOKLAB_TEST_DATABASE_URL for the tests (each test creates its own database)
#   pg_cluster_stop    stop it (immediate: the data is thrown away) and remove the dir
# Without it, the tests start a cluster of their own per test process.

pg_cluster_bin() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
  dirname "$(command -v initdb)"
}

pg_cluster_as() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_cluster_start() {
  local bin port
  bin="$(pg_cluster_bin)"
  PG_CLUSTER_DIR="$(mktemp -d /tmp/hooklab-ci-pg.XXXXXX)"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$PG_CLUSTER_DIR"; fi
  pg_cluster_as "$bin/initdb" -D "$PG_CLUSTER_DIR/data" -U postgres --auth=trust -E UTF8 \
    --locale=C -N >/dev/null
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  pg_cluster_as "$bin/pg_ctl" -D "$PG_CLUSTER_DIR/data" -l "$PG_CLUSTER_DIR/log" -w -s \
    -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start
  PG_CLUSTER_BIN="$bin"
  # Should this shell die without running pg_cluster_stop (SIGKILL, an aborted script), a
  # watchdog stops the cluster once the shell is gone: no server outlives its run.
  (
    owner=$$ dir="$PG_CLUSTER_DIR"
    trap '' HUP INT TERM
    while kill -0 "$owner" 2>/dev/null && [ -d "$dir/data" ]; do sleep 1; done
    if [ -d "$dir/data" ]; then
      pg_cluster_as "$bin/pg_ctl" -D "$dir/data" -m immediate -w -s stop >/dev/null 2>&1 || true
      rm -rf "$dir"
    fi
  ) </dev/null >/dev/null 2>&1 &
  disown $! 2>/dev/null || true
  export HOOKLAB_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
  echo "==> PostgreSQL ($("$bin/postgres" --version)) on 127.0.0.1:$port for this run"
}

pg_cluster_stop() {
  if [ -n "${PG_CLUSTER_DIR:-}" ] && [ -d "$PG_CLUSTER_DIR/data" ]; then
    pg_cluster_as "$PG_CLUSTER_BIN/pg_ctl" -D "$PG_CLUSTER_DIR/data" -m immediate -w -s stop || true
    rm -rf "$PG_CLUSTER_DIR"
  fi
}
