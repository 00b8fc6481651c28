#!/bin/bash
# Issue #39 on the device machine (quiet, 16 cores), packed by bench/device/pack.sh: unpacks node,
# svc's node_modules, PostgreSQL + Redis and the inspect corpus from .devpack, copies this tree's
# src, bench, scripts and test over them, starts PostgreSQL (as an unprivileged user) and Redis,
# then runs the benches (workers only has meaning on free cores). Results append to $OUT as each
# bench ends: results.jsonl (one JSON line per bench), log.txt, machine.txt.
set -u
D=${DEVROOT:-/tmp/dv}; T0=$(date +%s)
R="$OUT/results.jsonl"; L="$OUT/log.txt"; M="$OUT/machine.txt"
log() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$L"; }
mkdir -p "$D/n" "$D/w"
python3 - "$D" <<'PY' || { log "unpack failed"; exit 1; }
import lzma, shutil, sys, tarfile
d = sys.argv[1]
shutil.copyfileobj(lzma.open('.devpack/node.xz'), open(d + '/n/node', 'wb'))
for f, dest in (('.devpack/svc.tar.xz', d + '/w'), ('.devpack/data.tar.xz', d + '/w'), ('.devpack/pg.tar.xz', d), ('.devpack/mcp.tar.xz', d + '/w/svc'), ('.devpack/pk.tar.xz', d + '/w/svc')):
    if f.endswith('pk.tar.xz') and not __import__('os').path.exists(f): continue
    tarfile.open(f, 'r:xz').extractall(dest)
PY
chmod +x "$D/n/node"; export PATH="$D/n:$PATH"
cp -r src bench scripts test package.json "$D/w/svc/"   # the working tree (tracked files) travels: its code runs with the packed node_modules
{ echo "cores $(nproc)"; node -v; grep -m1 "model name" /proc/cpuinfo; uptime; free -g | head -2; } > "$M"
log "unpacked"
# PostgreSQL 15 and Redis 7 from the pack (Debian 12 builds with their libraries), as a non-root user.
P="$D/pgpack"; PGB="$P/usr/lib/postgresql/15/bin"
[ -e /usr/share/zoneinfo/UTC ] || { mkdir -p /usr/share/zoneinfo && cp "$P/zoneinfo/UTC" /usr/share/zoneinfo/UTC; }
id pgb >/dev/null 2>&1 || useradd -M -s /bin/sh pgb >>"$L" 2>&1 || true
U=$(id -u pgb 2>/dev/null || echo 65534); G=$(id -g pgb 2>/dev/null || echo 65534)
mkdir -p "$D/pgdata" "$D/pgsock" && chown "$U:$G" "$D/pgdata" "$D/pgsock"
asuser() { if command -v setpriv >/dev/null; then setpriv --reuid="$U" --regid="$G" --clear-groups "$@"; else su -s /bin/sh "$(id -nu "$U")" -c "$*"; fi; }
LD_LIBRARY_PATH="$P/libs" ldd "$PGB/postgres" "$PGB/initdb" "$PGB/pg_ctl" "$P/bin/redis-server" | grep "not found" >>"$L" 2>&1
STORAGE=ok
asuser env LD_LIBRARY_PATH="$P/libs" TZ=UTC "$PGB/initdb" -D "$D/pgdata/db" --auth=trust -U postgres --locale=C.UTF-8 -E UTF8 >>"$L" 2>&1 || { log "initdb failed"; STORAGE=no; }
asuser env LD_LIBRARY_PATH="$P/libs" TZ=UTC "$PGB/pg_ctl" -D "$D/pgdata/db" -l "$D/pgdata/log" -w -t 60 -o "-p 55432 -c listen_addresses=127.0.0.1 -c unix_socket_directories=$D/pgsock -c max_connections=400 -c shared_buffers=1GB -c jit=off" start >>"$L" 2>&1 || { log "postgres failed"; tail -20 "$D/pgdata/log" >> "$L"; STORAGE=no; }
LD_LIBRARY_PATH="$P/libs" "$P/bin/redis-server" --port 56379 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes >>"$L" 2>&1 || { log "redis failed"; STORAGE=no; }
log "storage: $STORAGE"
run_bench() { local limit=$1; shift; log "start $* (limit ${limit} s, load $(cut -d' ' -f1-3 /proc/loadavg))"
  (cd "$D/w/svc" && timeout "$limit" node node_modules/tsx/dist/cli.mjs bench/run.ts "$@" ${QUICK:-} >> "$R" 2>> "$L"); log "end $* rc=$?"; }
# name:limit[:options]; workers on PostgreSQL + Redis, the rest on the embedded default as in earlier runs.
for spec in ${BENCHES:-workers:210 gateway:180:--quick inspect:70 mcp:90:--latency-only}; do
  name=${spec%%:*}; rest=${spec#*:}; limit=${rest%%:*}; extra=""; [ "$rest" != "$limit" ] && extra=${rest#*:}
  case $name in
    workers) [ "$STORAGE" = ok ] && BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:55432/postgres BENCH_REDIS_URL=redis://127.0.0.1:56379 run_bench "$limit" workers $extra ;;
    inspect) BENCH_INSPECT_PARTS=cost run_bench "$limit" inspect $extra ;;
    *) run_bench "$limit" "$name" $extra ;;
  esac
done
uptime >> "$M"; log "done"
