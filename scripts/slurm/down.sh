#!/usr/bin/env bash
# down.sh - stop what scripts/slurm/up.sh started (adapted from ../shared/docs/slurm/down.sh)
# down.sh - stop what up.sh started (PIDs in $SIM_ROOT/run/up/*.pid), cleanly, then by signal:
#   1. SIGTERM slurmrestd (it does not react to "scontrol shutdown")
#   2. cancel every job of this cluster and wait (<=15 s) for them to leave RUNNING/COMPLETING
#   3. "scontrol shutdown" (slurmctld tells every slurmd to exit); wait <=15 s
#   4. SIGTERM, then SIGKILL, any recorded slurm PID still alive
#   5. SIGKILL leftovers of this cluster: slurmstepd holding a file under $SIM_ROOT, and job tasks
#      (environment has SLURM_JOB_ID and SLURM_CONF=$SIM_ROOT/etc/slurm.conf)
#   6. SIGTERM munged last (slurm daemons need it until they exit)
# Never signals anything by name: only recorded PIDs whose /proc/PID/comm still matches, and in step 5
# processes identified as this cluster's job steps/tasks by their open files / environment.
set -uo pipefail
SIM_ROOT=${SIM_ROOT:-${SLURM_TEST_DIR:-/tmp/ordo-slurm}}
RUN=$SIM_ROOT/run
export SLURM_CONF=$SIM_ROOT/etc/slurm.conf
t0=$EPOCHREALTIME
log() { printf '[down.sh %6.2fs] %s\n' "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{print b-a}')" "$*"; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# recorded pid, if still alive and still the program up.sh started (guards against PID reuse)
recorded() {  # $1 = name of pid file in run/up, $2 = expected /proc/PID/comm prefix
  local f=$RUN/up/$1.pid p
  [ -e "$f" ] || return 1
  p=$(cat "$f" 2>/dev/null) || return 1
  alive "$p" || return 1
  case "$(cat /proc/$p/comm 2>/dev/null)" in "$2"*) echo "$p";; *) return 1;; esac
}
wait_gone() {  # $1 = seconds, rest = pids
  local t=$1; shift
  for _ in $(seq 1 $((t * 10))); do
    local left=0; for p in "$@"; do alive "$p" && left=1; done
    [ $left = 0 ] && return 0
    sleep 0.1
  done
  return 1
}
stop_pids() {  # graceful TERM already tried by caller; TERM again then KILL
  for sig in TERM KILL; do
    local any=0
    for p in "$@"; do if alive "$p"; then any=1; log "kill -$sig $p ($(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null))"; kill -$sig "$p" 2>/dev/null; fi; done
    [ $any = 0 ] && return 0
    wait_gone 3 "$@" && return 0
  done
}

n_stopped=0
# 1. slurmrestd
if p=$(recorded slurmrestd slurmrestd); then
  kill -TERM "$p"; wait_gone 5 "$p" || stop_pids "$p"; n_stopped=$((n_stopped+1)); log "slurmrestd $p stopped"
fi

# slurm daemons
pids=()
for f in "$RUN"/up/slurm*.pid; do
  [ -e "$f" ] || continue
  name=$(basename "$f" .pid); [ "$name" = slurmrestd ] && continue
  comm=${name%%-*}                    # slurmctld | slurmd
  if p=$(recorded "$name" "$comm"); then pids+=("$p"); fi
done

shutdown_sent=0
if [ ${#pids[@]} -gt 0 ] && timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; then
  # 2. jobs
  jobs=$(squeue -h -o %A 2>/dev/null | tr '\n' ' ')
  if [ -n "${jobs// /}" ]; then
    log "cancelling jobs: $jobs"
    scancel $jobs 2>/dev/null || true
    for _ in $(seq 1 150); do
      [ -z "$(squeue -h -t R,CG,S -o %A 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  # 3. orderly shutdown
  log "scontrol shutdown"
  scontrol shutdown 2>/dev/null && shutdown_sent=1
fi
if [ ${#pids[@]} -gt 0 ]; then
  # 4. (controller unreachable -> no orderly path: go straight to signals)
  if [ $shutdown_sent = 1 ]; then wait_gone 15 "${pids[@]}" || stop_pids "${pids[@]}"; else stop_pids "${pids[@]}"; fi
  n_stopped=$((n_stopped + ${#pids[@]}))
fi

# 5. orphans of THIS cluster, only if something is left after the daemons are gone:
#    slurmstepd processes holding a file under $SIM_ROOT, and job tasks (environment has
#    SLURM_JOB_ID and SLURM_CONF=$SIM_ROOT/etc/slurm.conf). Our own shell and its ancestors are skipped.
skip=" $$ "; a=$$
while [ "$a" -gt 1 ] 2>/dev/null; do a=$(awk '{print $4}' /proc/$a/stat 2>/dev/null || echo 1); skip="$skip$a "; done
orphans=()
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  case "$skip" in *" $p "*) continue;; esac
  if [ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ]; then
    ls -l "$d/fd" 2>/dev/null | grep -q -- "-> $SIM_ROOT/" && orphans+=("$p")
  elif tr '\0' '\n' 2>/dev/null < "$d/environ" | grep -qx "SLURM_CONF=$SIM_ROOT/etc/slurm.conf"; then
    tr '\0' '\n' 2>/dev/null < "$d/environ" | grep -q '^SLURM_JOB_ID=' && orphans+=("$p")
  fi
done
for p in "${orphans[@]}"; do
  log "kill -KILL leftover job process $p ($(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-80))"
  kill -KILL "$p" 2>/dev/null
done

# 6. munged
if p=$(recorded munged munged); then
  kill -TERM "$p"; wait_gone 5 "$p" || stop_pids "$p"; n_stopped=$((n_stopped+1)); log "munged $p stopped"
fi

left=""
for f in "$RUN"/up/*.pid; do
  [ -e "$f" ] || continue; name=$(basename "$f" .pid)
  if p=$(recorded "$name" "${name%%-*}"); then left="$left $p"; fi
done
if [ -n "$left" ]; then log "STILL ALIVE:$left"; exit 1; fi
rm -f "$RUN"/up/*.pid
log "stopped ($n_stopped processes)"
