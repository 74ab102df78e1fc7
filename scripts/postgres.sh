#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: one cluster in a temporary folder, on a free
# port of 127.0.0.1 and a socket folder of its own, so it never meets another server.
#
#   bash scripts/postgres.sh install    # apt-get install postgresql, only where initdb is missing
#   eval "$(bash scripts/postgres.sh start)"   # prints two export lines:
#       OPENPROGRAM_TEST_POSTGRES_URL   postgresql://postgres@127.0.0.1:PORT/postgres
#       OPENPROGRAM_TEST_POSTGRES_DIR   the cluster's folder (data, socket, log)
#   bash scripts/postgres.sh stop [DIR]  # stops the server and deletes DIR
#                                        # (default: $OPENPROGRAM_TEST_POSTGRES_DIR)
#
# start given a DIR whose server runs prints its exports again; stop of a folder that is
# gone, or whose server is down, only cleans up: both can be repeated. initdb and pg_ctl
# refuse to run as root, so as root they run as the `postgres` user (which owns the
# folder); as any other user they run directly. The binaries are looked up in
# $OPENPROGRAM_POSTGRES_BIN, then Debian's /usr/lib/postgresql/*/bin (the newest), then PATH.
#
# Exit codes: 0 done, 2 failed, 3 PostgreSQL's binaries are missing (nothing was started).
#
# The cluster trusts every local connection and runs with fsync=off and
# synchronous_commit=off: fine for data that is thrown away, never for data to keep.
set -euo pipefail

die() {
  echo "postgres.sh: $*" >&2
  exit 2
}

bindir() {
  if [[ -n "${OPENPROGRAM_POSTGRES_BIN:-}" ]]; then
    [[ -x "$OPENPROGRAM_POSTGRES_BIN/initdb" ]] || return 1
    echo "$OPENPROGRAM_POSTGRES_BIN"
    return
  fi
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [[ -n "$found" && -x "$found/initdb" ]]; then
    echo "$found"
  elif command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  else
    return 1
  fi
}

# Runs a server binary as the cluster's owner.
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    # From /, which the postgres user can enter (the caller's folder may be private to root).
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

exports() {
  echo "export OPENPROGRAM_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:$(cat "$1/port")/postgres"
  echo "export OPENPROGRAM_TEST_POSTGRES_DIR=$1"
}

running() {
  [[ -f "$1/data/postmaster.pid" ]] && as_owner "$2/pg_ctl" -D "$1/data" status >/dev/null 2>&1
}

cmd_install() {
  if bindir >/dev/null; then
    echo "postgres.sh: PostgreSQL found in $(bindir)" >&2
    return
  fi
  [[ $(id -u) -eq 0 ]] || die "PostgreSQL is missing: install it (sudo apt-get install postgresql)"
  echo "postgres.sh: installing Debian's postgresql package" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  bindir >/dev/null || die "apt-get installed postgresql, but no initdb was found"
}

cmd_start() {
  local bin dir port attempt
  if ! bin=$(bindir); then
    echo "postgres.sh: PostgreSQL's initdb and pg_ctl were not found; install them (apt-get install postgresql on Debian and Ubuntu, brew install postgresql on macOS), or set OPENPROGRAM_POSTGRES_BIN to their folder" >&2
    exit 3
  fi
  if [[ $# -gt 0 ]] && running "$1" "$bin"; then
    exports "$1"
    return
  fi
  dir=${1:-$(mktemp -d "${TMPDIR:-/tmp}/openprogram-pg.XXXXXX")}
  mkdir -p "$dir"
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the postgres user (apt-get install postgresql creates it)"
    chown postgres: "$dir"
  fi
  chmod 700 "$dir"
  [[ -d "$dir/data" ]] || as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 \
    --no-instructions >"$dir/initdb.log" 2>&1 || die "initdb failed: $(tail -n 5 "$dir/initdb.log")"
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start -o \
      "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
      >/dev/null 2>&1; then
      echo "$port" >"$dir/port"
      exports "$dir"
      return
    fi
  done
  die "the server did not start in $dir: $(tail -n 5 "$dir/log" 2>/dev/null)"
}

cmd_stop() {
  local dir=${1:-${OPENPROGRAM_TEST_POSTGRES_DIR:-}} bin
  [[ -n "$dir" ]] || die "stop: give the cluster's folder, or set OPENPROGRAM_TEST_POSTGRES_DIR"
  [[ -d "$dir" ]] || return 0
  if bin=$(bindir) && running "$dir" "$bin"; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  install) cmd_install ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) die "usage: bash scripts/postgres.sh install | start [DIR] | stop [DIR]" ;;
esac
