#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests (Debian's `postgresql` package; the server will not run as root,
# so the cluster belongs to the `postgres` user).
#   scripts/postgres.sh start DIR    initdb DIR (first time), start it on a free loopback port, print its URL
#   scripts/postgres.sh stop DIR     stop it
set -euo pipefail
action="${1:?usage: scripts/postgres.sh start|stop DIR}"
dir="${2:?usage: scripts/postgres.sh start|stop DIR}"
bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -x "$bindir/pg_ctl" ] || { echo "postgres.sh: PostgreSQL is not installed (scripts/install.sh --test installs it)" >&2; exit 1; }
as_postgres() { if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi; }

case "$action" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_postgres "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    # Tests only: no fsync, and room for every test database's connections.
    as_postgres "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
      >/dev/null || { tail -20 "$dir/server.log" >&2; exit 1; }
    echo "postgresql://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    as_postgres "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  *) echo "usage: scripts/postgres.sh start|stop DIR" >&2; exit 2 ;;
esac
