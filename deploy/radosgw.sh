#!/usr/bin/env bash
# A throw-away, one-node Ceph cluster with radosgw on loopback: the S3 endpoint that the tests
# (tests/e2e/test_s3_check.py) use. One mon, one OSD on memstore
# (the data lives in the OSD's memory), no mgr, radosgw's beast frontend on 127.0.0.1, and one
# user whose keys are written to DIR/env. Nothing is installed or left running outside DIR.
#
#   deploy/radosgw.sh start DIR [RGW_PORT]   # prints DIR/env: endpoint, keys, pids; ~3 s
#   deploy/radosgw.sh stop DIR               # kills the three daemons by their PIDs
#   deploy/radosgw.sh stop-gateway DIR       # radosgw alone (the bucket "down"); start-gateway DIR brings it back
#
# What it needs on Debian 12 (Ceph 16.2.15): ceph-mon, ceph-osd, radosgw (deploy/install-deps.sh).
# Settings that matter, found the hard way:
#   auth ... = none and ms mon client mode = crc: else radosgw retries for ever with
#     "get_initial_auth_request returned -13"
#   paxos propose interval = 0.05: else every map change waits 1 s and start-up takes ~14 s
#   pool size 1, few placement groups: one OSD holds everything
#   mon data avail crit = 0: else a mon on a disk with under 5% free refuses to start (a CI disk)
set -euo pipefail

command_name=${1:-}
dir=${2:-}
[[ -n "$command_name" && -n "$dir" ]] || { sed -n 2,9p "$0" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
conf() { echo "$dir/ceph.conf"; }

# The last lines each daemon wrote: a failed start in CI leaves nothing else to read.
show_logs() {
  local file
  for file in "$dir"/log/*; do
    [[ -s "$file" ]] || continue
    echo "--- $file" >&2
    grep -v '^\s*$' "$file" | tail -n 8 >&2 || true
  done
}

# Waits up to $2 seconds for `$1` to succeed, giving up at once when daemon $3 (a pid file) has died.
wait_for() {
  local deadline=$((SECONDS + $2)) pid
  pid=$(cat "$dir/$3.pid")
  until eval "$1" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "radosgw.sh: $3 exited while waiting for: $1" >&2; show_logs; return 1; }
    ((SECONDS < deadline)) || { echo "radosgw.sh: timed out waiting for: $1 (logs in $dir/log)" >&2; show_logs; return 1; }
    sleep 0.1
  done
}

start_gateway() {
  # shellcheck disable=SC1091
  source "$dir/env"
  radosgw -c "$(conf)" -n client.rgw -f --rgw-frontends "beast endpoint=127.0.0.1:$RGW_PORT" \
    >>"$dir/log/radosgw.out" 2>&1 &
  echo $! >"$dir/radosgw.pid"
  wait_for "curl -sf -o /dev/null http://127.0.0.1:$RGW_PORT/" 60 radosgw
}

stop_pid_file() {
  local file=$1
  [[ -f "$file" ]] || return 0
  local pid
  pid=$(cat "$file")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

start() {
  local rgw_port=${1:-$(free_port)} mon_port fsid
  mon_port=$(free_port)
  fsid=$(python3 -c 'import uuid; print(uuid.uuid4())')
  mkdir -p "$dir"/{mon,osd,run,log}
  cat >"$(conf)" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
paxos propose interval = 0.05
mon data avail crit = 0
mon data avail warn = 0
mon allow pool size one = true
mon allow pool delete = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd objectstore = memstore
memstore device bytes = $((8 << 30))
osd data = $dir/osd/\$cluster-\$id
mon data = $dir/mon/\$cluster-\$id
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
keyring = /dev/null
[client.rgw]
rgw data = $dir/rgw
rgw dns name = 127.0.0.1
# A deleted object's data goes to the garbage collector, by default after two hours: in a throw-away
# memstore of 8 GiB, a few 1 GiB uploads deleted in turns (bench/s3_store.py) would fill the OSD,
# and a full OSD blocks every write. Collected within seconds instead.
rgw gc obj min wait = 2
rgw gc processor period = 2
EOF
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
  ceph-mon -c "$(conf)" --mkfs -i a --monmap "$dir/monmap" >"$dir/log/mkfs.out" 2>&1
  ceph-mon -c "$(conf)" -i a -f >>"$dir/log/mon.out" 2>&1 &
  echo $! >"$dir/mon.pid"
  wait_for "ceph -c $(conf) --connect-timeout 1 mon stat" 30 mon

  local osd_uuid osd_id
  osd_uuid=$(python3 -c 'import uuid; print(uuid.uuid4())')
  osd_id=$(ceph -c "$(conf)" osd new "$osd_uuid")
  mkdir -p "$dir/osd/ceph-$osd_id"
  ceph-osd -c "$(conf)" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" >>"$dir/log/mkfs.out" 2>&1
  ceph-osd -c "$(conf)" -i "$osd_id" -f >>"$dir/log/osd.out" 2>&1 &
  echo $! >"$dir/osd.pid"
  wait_for "ceph -c $(conf) osd stat | grep -q '1 up'" 30 osd

  local access secret
  access=$(python3 -c 'import secrets; print("WH" + secrets.token_hex(9).upper())')
  secret=$(python3 -c 'import secrets; print(secrets.token_urlsafe(30))')
  cat >"$dir/env" <<EOF
RGW_PORT=$rgw_port
S3_ENDPOINT=http://127.0.0.1:$rgw_port
S3_ACCESS_KEY=$access
S3_SECRET_KEY=$secret
CEPH_CONF=$(conf)
EOF
  start_gateway
  radosgw-admin -c "$(conf)" user create --uid wheelhouse --display-name wheelhouse \
    --access-key "$access" --secret-key "$secret" >"$dir/log/user.json"
  cat "$dir/env"
}

case "$command_name" in
  start) start "${3:-}" ;;
  stop)
    for daemon in radosgw osd mon; do stop_pid_file "$dir/$daemon.pid"; done ;;
  stop-gateway) stop_pid_file "$dir/radosgw.pid" ;;
  start-gateway) start_gateway ;;
  *) sed -n 2,9p "$0" >&2; exit 2 ;;
esac
