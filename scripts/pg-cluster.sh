#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for tests and benchmarks (Debian's postgresql package):
#
#   scripts/pg-cluster.sh start DIR    initdb in DIR, start on 127.0.0.1 at a free port (and a
#                                      socket in DIR); prints the connection URL
#   scripts/pg-cluster.sh stop DIR     stops it (fast shutdown) and removes DIR
#
# The server refuses to run as root, so as root the cluster belongs to the `postgres` user
# (created by the package). Durability is off (fsync, synchronous_commit): the data is thrown
# away with the folder.
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 64; }
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
[ -x "$bin/initdb" ] || { echo "pg-cluster: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_owner "$bin/initdb" -D "$dir/data" -U gatehouse -A trust -E UTF8 --locale=C --no-sync > "$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start > /dev/null || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U gatehouse gatehouse
    echo "$port" > "$dir/port"
    echo "postgresql://gatehouse@127.0.0.1:$port/gatehouse"
    ;;
stop)
    [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop > /dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2; exit 64 ;;
esac
