#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for testing `apusim sweep --slurm` for real.
#
#   scripts/slurm-local.sh start    install slurm-wlm and munge when missing (Debian/Ubuntu,
#                                   as root), write a one-node slurm.conf, start munged,
#                                   slurmctld and slurmd as plain daemons (no systemd), and
#                                   wait until `sinfo` shows the node idle
#   scripts/slurm-local.sh stop     stop the three daemons this script started
#   scripts/slurm-local.sh status   say whether the cluster answers, with `sinfo`
#
# `start` is idempotent: a cluster that already answers with its node idle is left running;
# daemons left over from an earlier start that do not answer are stopped and started again.
# The node is `localhost` with the machine's CPUs and memory in one partition, `debug`; the
# state and logs are under /var/lib/apusim-slurm and /var/log/apusim-slurm. The script writes
# /etc/slurm/slurm.conf (where sbatch, squeue and sinfo look for it) and refuses to replace one
# that it did not write. START_TIMEOUT (seconds, default 60) bounds the wait for the node.
set -euo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# written by apusim scripts/slurm-local.sh"
STATE=/var/lib/apusim-slurm
LOGS=/var/log/apusim-slurm
RUN=/run/apusim-slurm
TIMEOUT=${START_TIMEOUT:-60}

die() {
  echo "slurm-local.sh: $*" >&2
  exit 1
}

need_root() {
  [ "$(id -u)" = 0 ] || die "$1 needs root (it installs packages, writes $CONF and starts daemons)"
}

install_packages() {
  local missing=()
  command -v munged >/dev/null 2>&1 || missing+=(munge)
  command -v slurmctld >/dev/null 2>&1 || missing+=(slurmctld)
  command -v slurmd >/dev/null 2>&1 || missing+=(slurmd)
  command -v sbatch >/dev/null 2>&1 || missing+=(slurm-client)
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 ||
    die "missing ${missing[*]} and no apt-get to install them; install SLURM and munge by hand"
  echo "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  # Daemons are not started by the packages' scripts: this script starts them itself.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    created_policy=1
  fi
  local rc=0
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends \
    munge slurmctld slurmd slurm-client; } || rc=$?
  [ "$created_policy" = 1 ] && rm -f "$policy"
  [ "$rc" = 0 ] || die "apt-get could not install ${missing[*]} (exit $rc)"
}

# The pid in a pid file, when that process is alive.
alive() {
  local f=$1 pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

stop_one() {
  local name=$1 f=$2 pid i
  if pid=$(alive "$f"); then
    kill "$pid" 2>/dev/null || true
    for i in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    echo "stopped $name ($pid)"
  fi
  rm -f "$f"
}

stop() {
  stop_one slurmd "$RUN/slurmd.pid"
  stop_one slurmctld "$RUN/slurmctld.pid"
  stop_one munged "$RUN/munged.pid"
}

node_state() {
  sinfo -h -N -n localhost -o '%T' 2>/dev/null | head -n1
}

write_conf() {
  if [ -f "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
    die "$CONF exists and was not written by this script; move it away to start a local cluster"
  fi
  local cpus mem
  cpus=$(nproc)
  # RealMemory in MB, leaving 10% for the system.
  mem=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
  mkdir -p /etc/slurm "$STATE/ctld" "$STATE/d" "$LOGS" "$RUN"
  cat >"$CONF.tmp" <<EOF
$MARK
ClusterName=apusim-local
SlurmctldHost=localhost
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=60
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  mv -f "$CONF.tmp" "$CONF"
}

start_munge() {
  if alive "$RUN/munged.pid" >/dev/null && munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    return 0
  fi
  stop_one munged "$RUN/munged.pid"
  local user=root
  id munge >/dev/null 2>&1 && user=munge
  mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown -R "$user:" /etc/munge /var/lib/munge /var/log/munge /run/munge
  chmod 700 /etc/munge /var/lib/munge /var/log/munge
  chmod 755 /run/munge
  chmod 400 /etc/munge/munge.key
  rm -f /run/munge/munge.socket.2 /run/munge/munge.socket.2.lock
  if [ "$user" = root ]; then
    munged --force --pid-file="$RUN/munged.pid" 2>>"$LOGS/munged.err" ||
      die "munged did not start (see $LOGS/munged.err and /var/log/munge/munged.log)"
  else
    # munged writes its pid file as the munge user, so it goes into munge's own directory.
    runuser -u munge -- munged 2>>"$LOGS/munged.err" ||
      die "munged did not start (see $LOGS/munged.err and /var/log/munge/munged.log)"
    ln -sf /run/munge/munged.pid "$RUN/munged.pid"
  fi
  local i
  for i in $(seq 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "munged does not answer (see /var/log/munge/munged.log)"
}

start() {
  need_root start
  install_packages
  # The daemons first: sinfo retries for seconds when no slurmctld answers.
  if alive "$RUN/slurmctld.pid" >/dev/null && alive "$RUN/slurmd.pid" >/dev/null &&
    [ "$(node_state)" = idle ]; then
    echo "the local SLURM cluster is already up:"
    sinfo
    return 0
  fi
  stop_one slurmd "$RUN/slurmd.pid"
  stop_one slurmctld "$RUN/slurmctld.pid"
  write_conf
  start_munge
  # -c: a clean start, forgetting jobs and node states an earlier cluster left behind.
  slurmctld -c -f "$CONF" 2>>"$LOGS/slurmctld.err" ||
    die "slurmctld did not start (see $LOGS/slurmctld.log)"
  slurmd -N localhost -f "$CONF" 2>>"$LOGS/slurmd.err" ||
    die "slurmd did not start (see $LOGS/slurmd.log)"
  local t0=$SECONDS state=""
  while [ $((SECONDS - t0)) -lt "$TIMEOUT" ]; do
    state=$(node_state)
    case "$state" in
      idle) break ;;
      down* | drain* | unknown*)
        scontrol update NodeName=localhost State=RESUME >/dev/null 2>&1 || true ;;
    esac
    sleep 0.5
  done
  if [ "$state" != idle ]; then
    echo "slurm-local.sh: the node did not become idle in $TIMEOUT s (state: ${state:-no answer})" >&2
    tail -n 5 "$LOGS/slurmctld.log" "$LOGS/slurmd.log" >&2 2>/dev/null || true
    exit 1
  fi
  echo "the local SLURM cluster is up in $((SECONDS - t0)) s after its daemons started:"
  sinfo
}

status() {
  if command -v sinfo >/dev/null 2>&1 && sinfo >/dev/null 2>&1; then
    sinfo
  else
    echo "no SLURM cluster answers (start one with: $0 start)"
    exit 1
  fi
}

case "${1:-}" in
  start) start ;;
  stop) need_root stop; stop ;;
  status) status ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
