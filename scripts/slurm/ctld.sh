#!/usr/bin/env bash
# ctld.sh stop|start - stop or start only the slurmctld of the cluster scripts/slurm/up.sh started,
# keeping its saved state (jobs, allocations), the slurmds and the running jobs: what a controller
# restart or crash looks like to ordo. Stops only the PID recorded in $SIM_ROOT/run/up/slurmctld.pid.
set -euo pipefail
SIM_ROOT=${SIM_ROOT:-${SLURM_TEST_DIR:-/tmp/ordo-slurm}}
RUN=$SIM_ROOT/run; ETC=$SIM_ROOT/etc; LOG=$SIM_ROOT/log
export SLURM_CONF=$ETC/slurm.conf
pidfile=$RUN/up/slurmctld.pid
die() { echo "ctld.sh: $*" >&2; exit 1; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null && [ "$(cat /proc/$1/comm 2>/dev/null)" = slurmctld ]; }

case "${1:-}" in
  stop)
    p=$(cat "$pidfile" 2>/dev/null || true)
    alive "$p" || die "no running slurmctld recorded in $pidfile"
    kill -TERM "$p"
    for _ in $(seq 1 300); do alive "$p" || break; sleep 0.1; done
    if alive "$p"; then kill -KILL "$p"; sleep 0.2; fi
    echo "ctld.sh: slurmctld $p stopped"
    ;;
  start)
    p=$(cat "$pidfile" 2>/dev/null || true)
    alive "$p" && die "slurmctld $p is still running"
    # Without -c the controller recovers its saved state (jobs, holds, allocations).
    setsid slurmctld -D -f "$ETC/slurm.conf" >> "$LOG/slurmctld.stdout" 2>&1 < /dev/null &
    echo $! > "$pidfile"
    for _ in $(seq 1 600); do
      scontrol ping 2>/dev/null | grep -q 'is UP' && break
      alive "$(cat "$pidfile")" || die "slurmctld died (see $LOG/slurmctld.log)"
      sleep 0.1
    done
    scontrol ping 2>/dev/null | grep -q 'is UP' || die "slurmctld does not answer"
    echo "ctld.sh: slurmctld $(cat "$pidfile") started"
    ;;
  *) die "usage: ctld.sh stop|start" ;;
esac
