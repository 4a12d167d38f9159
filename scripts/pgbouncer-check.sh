#!/usr/bin/env bash
# The PostgreSQL engine through PgBouncer in transaction mode (the pooler production puts in
# front of PostgreSQL): the store suite and the end-to-end replica and export/import tests
# again, every connection going through a PgBouncer whose server connections are shared between
# transactions. Anything that relied on session state (SET, LISTEN, session advisory locks,
# prepared statements kept across transactions) fails here. PgBouncer 1.18 (Debian 12) cannot
# keep prepared statements, so the run uses HOOKLAB_NO_PREPARED_STATEMENTS=1 (`serve
# --no-prepared-statements`); 1.21+ with max_prepared_statements > 0 takes them.
# Needs HOOKLAB_TEST_DATABASE_URL (a throwaway cluster, see scripts/pg-cluster.sh) and
# pgbouncer (scripts/setup-deps.sh installs it). Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin"  # pgbouncer lives in /usr/sbin on Debian
: "${HOOKLAB_TEST_DATABASE_URL:?start a cluster first (scripts/pg-cluster.sh)}"
pg_hostport="${HOOKLAB_TEST_DATABASE_URL#*@}"; pg_hostport="${pg_hostport%%/*}"
pg_port="${pg_hostport##*:}"
dir="$(mktemp -d /tmp/hooklab-pgbouncer.XXXXXX)"
as_user() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat > "$dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$pg_port user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = any
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
as_user pgbouncer -d "$dir/pgbouncer.ini"
stop() { kill "$(cat "$dir/pgbouncer.pid" 2>/dev/null)" 2>/dev/null || true; sleep 0.5; rm -rf "$dir"; }
trap stop EXIT
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
echo "==> the PostgreSQL engine through PgBouncer ($(pgbouncer --version | head -n 1)), transaction mode"
export HOOKLAB_NO_PREPARED_STATEMENTS=1
HOOKLAB_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres" \
  cargo test --locked --no-fail-fast -p hooklab-postgres --test store -- postgres::
HOOKLAB_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres" \
  cargo test --locked --no-fail-fast --test replicas --test transfer
