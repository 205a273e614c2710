#!/usr/bin/env bash
# up.sh - start a small but real Slurm 22.05 test cluster (Debian 12 packages) on this machine, for
# `make test-slurm` and for trying `ordo slurm` by hand. Adapted from the measured reference script
# in ../shared/docs/slurm/ (see ../shared/docs/slurm-test-cluster.md for what was measured):
#   1 slurmctld + NNODES slurmd (Debian's build has MULTIPLE_SLURMD: nodes n1..nN all on 127.0.0.1,
#   one port each), each with NGPUS fake GPUs (char devices made with mknod; no driver behind them).
# No systemd, no cgroups, no slurmdbd, auth/none. Everything lives under $SIM_ROOT; down.sh stops
# exactly the PIDs this script recorded in $SIM_ROOT/run/up/.
#
# Usage: [SIM_ROOT=${SLURM_TEST_DIR:-/tmp/ordo-slurm}] [NNODES=4] [NGPUS=8] [GRES_MODE=typed|plain]
#        [SCHED_PARAMS=batch_sched_delay=0] [PROBE=1|0] [KEEP_STATE=0|1] scripts/slurm/up.sh
#   GRES_MODE=typed (default): one GRES type per GPU index (g0..g7), so ordo can pin exact indices
#   GRES_MODE=plain          : gres.conf "Name=gpu File=.../nvidia[0-7]"; ordo pins nodes and counts
# After it returns:  . $SIM_ROOT/env.sh   (exports SLURM_CONF; without it every client command fails)
# scripts/slurm/ctld.sh stop|start restarts only the controller (state kept) for restart tests.
set -euo pipefail

SIM_ROOT=${SIM_ROOT:-${SLURM_TEST_DIR:-/tmp/ordo-slurm}}
NNODES=${NNODES:-4}
NGPUS=${NGPUS:-8}
NODE_CPUS=${NODE_CPUS:-16}
NODE_MEM_MB=${NODE_MEM_MB:-64000}
GRES_MODE=${GRES_MODE:-typed}
AUTH=${AUTH:-none}
CTLD_PORT=${CTLD_PORT:-16817}
NODE_PORT_BASE=${NODE_PORT_BASE:-16900}     # node i listens on NODE_PORT_BASE+i
SCHEDULER=${SCHEDULER:-sched/backfill}
SCHED_PARAMS=${SCHED_PARAMS-batch_sched_delay=0}   # default 3 s batch delay -> ~2-3 s release->RUNNING
UP_TIMEOUT=${UP_TIMEOUT:-60}
KEEP_STATE=${KEEP_STATE:-0}                  # 1: keep slurmctld state (jobs, reservations) from last run
REST=${REST:-0}
REST_PORT=${REST_PORT:-16820}
REST_USER=${REST_USER:-slurm}                # must not be root (slurmrestd refuses root)
PROBE=${PROBE:-1}                            # 1: run one tiny sbatch job and wait for it before returning
HOLD_ALL=${HOLD_ALL:-0}                      # 1: job_submit.lua holds every new job (Priority=0; shows as
                                             #    JobHeldUser, so the owner could release it too) except jobs named
                                             #    up-probe / svc-ph*, so that the external planner decides starts
CTLD_HOST=$(hostname -s)

ETC=$SIM_ROOT/etc; RUN=$SIM_ROOT/run; LOG=$SIM_ROOT/log; STATE=$SIM_ROOT/state; DEV=$SIM_ROOT/dev
export SLURM_CONF=$ETC/slurm.conf

t0=$EPOCHREALTIME
log() { printf '[up.sh %6.2fs] %s\n' "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{print b-a}')" "$*"; }
die() { echo "up.sh: $*" >&2; exit 1; }

for b in slurmctld slurmd sinfo scontrol setsid; do
  command -v "$b" >/dev/null || die "missing $b (apt-get install -y slurmctld slurmd slurm-client munge)"
done
[ "$AUTH" = munge ] && { command -v munged >/dev/null || die "missing munged (apt-get install -y munge)"; }
[ "$REST" = 1 ] && { command -v slurmrestd >/dev/null || die "missing slurmrestd (apt-get install -y slurmrestd)"; }
# auth/jwt (for slurmrestd and "scontrol token") lives in Debian's slurm-wlm-jwt-plugin package
HAVE_JWT=0; ls /usr/lib/*/slurm-wlm/auth_jwt.so >/dev/null 2>&1 && HAVE_JWT=1
[ "$REST" = 1 ] && [ $HAVE_JWT = 0 ] && die "REST=1 needs auth/jwt: apt-get install -y slurm-wlm-jwt-plugin"

# refuse to start twice (PIDs recorded by a previous up.sh that are still alive)
for f in "$RUN"/up/*.pid; do
  [ -e "$f" ] || continue
  p=$(cat "$f" 2>/dev/null || true)
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then die "$f -> pid $p still alive; run down.sh first"; fi
done

mkdir -p "$ETC" "$RUN/up" "$LOG" "$STATE/ctld" "$DEV" "$SIM_ROOT/out"
rm -f "$RUN"/*.pid "$RUN"/up/*.pid
if [ "$KEEP_STATE" != 1 ]; then rm -rf "${STATE:?}/ctld"/* "${STATE:?}/d" "$SIM_ROOT/out"/*; fi
for i in $(seq 1 "$NNODES"); do mkdir -p "$STATE/d/n$i"; done   # slurmd does not create its spool dir
rm -f "$LOG"/*.log "$LOG"/*.stdout

# ---- fake GPU device files: char devices 195:i (no driver -> open() gives ENXIO, harmless)
last=$((NGPUS - 1))
for g in $(seq 0 "$last"); do
  f=$DEV/nvidia$g
  if [ ! -c "$f" ]; then
    rm -f "$f"
    # mknod needs root and a filesystem without nodev; fall back to a plain file
    # (slurmd then logs "... is not a valid character or block device" but still counts it)
    mknod "$f" c 195 "$g" 2>/dev/null || touch "$f"
  fi
done

# ---- gres.conf + node Gres= string.  NB: Count-only lines (no File=) are dropped by 22.05's gpu
#      plugin ("Removing file-less GPU") and the nodes then go INVAL/DRAIN.
if [ "$GRES_MODE" = typed ]; then
  : > "$ETC/gres.conf"
  gres=""
  for g in $(seq 0 "$last"); do
    echo "NodeName=n[1-$NNODES] Name=gpu Type=g$g File=$DEV/nvidia$g" >> "$ETC/gres.conf"
    gres="${gres:+$gres,}gpu:g$g:1"
  done
else
  echo "NodeName=n[1-$NNODES] Name=gpu File=$DEV/nvidia[0-$last]" > "$ETC/gres.conf"
  gres="gpu:$NGPUS"
fi

# ---- JWT key (slurmctld verifies tokens made by "scontrol token"; slurmrestd clients send them)
[ -s "$ETC/jwt_hs256.key" ] || dd if=/dev/urandom of="$ETC/jwt_hs256.key" bs=32 count=1 status=none
chmod 600 "$ETC/jwt_hs256.key"

# ---- authentication
if [ "$AUTH" = munge ]; then
  mkdir -p "$RUN/munge" "$STATE/munge"; chmod 755 "$RUN/munge"; chmod 700 "$STATE/munge"
  [ -s "$ETC/munge.key" ] || dd if=/dev/urandom of="$ETC/munge.key" bs=1024 count=1 status=none
  chmod 400 "$ETC/munge.key"
  MUNGE_SOCK=$RUN/munge/munge.socket.2
  auth_lines="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK"
else
  auth_lines="AuthType=auth/none
CredType=cred/none"
fi
if [ $HAVE_JWT = 1 ]; then auth_lines="$auth_lines
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$ETC/jwt_hs256.key"; fi

# ---- optional job_submit.lua (HOLD_ALL=1): slurmctld looks for it next to slurm.conf
if [ "$HOLD_ALL" = 1 ]; then
  cat > "$ETC/job_submit.lua" <<'LUA'
-- generated by up.sh: hold every new job so that only the external planner releases (starts) jobs
function slurm_job_submit(job_desc, part_list, submit_uid)
   local n = job_desc.name or ""
   if n ~= "up-probe" and string.sub(n, 1, 6) ~= "svc-ph" then
      job_desc.priority = 0
   end
   return slurm.SUCCESS
end
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   return slurm.SUCCESS
end
LUA
else
  rm -f "$ETC/job_submit.lua"
fi

# ---- slurm.conf
{
cat <<EOF
# generated by $SIM_ROOT/up.sh
ClusterName=sim
SlurmctldHost=$CTLD_HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((NODE_PORT_BASE))
SlurmUser=root
SlurmdUser=root
$auth_lines
MailProg=/bin/true
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d/%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SchedulerType=$SCHEDULER
EOF
if [ -n "$SCHED_PARAMS" ]; then echo "SchedulerParameters=$SCHED_PARAMS"; fi
if [ "$HOLD_ALL" = 1 ]; then echo "JobSubmitPlugins=lua"; fi
cat <<EOF
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=300
SlurmdTimeout=60
SlurmctldTimeout=60
Waittime=0
EOF
for i in $(seq 1 "$NNODES"); do
  # Features=nX lets a job be pinned with --constraint=nX too (the v0.0.38 REST API has no nodelist field)
  echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((NODE_PORT_BASE + i)) CPUs=$NODE_CPUS RealMemory=$NODE_MEM_MB Gres=$gres Features=n$i State=UNKNOWN"
done
echo "PartitionName=gpu Nodes=n[1-$NNODES] Default=YES MaxTime=INFINITE State=UP"
} > "$ETC/slurm.conf"

cat > "$SIM_ROOT/env.sh" <<EOF
export SLURM_CONF=$ETC/slurm.conf
EOF

# ---- start daemons in the foreground (-D/-F) in their own session (setsid), stdin from /dev/null, so a
#      CI shell or terminal going away does not take them down. In a non-interactive shell there is no
#      job control, so setsid does not fork and \$! is the daemon itself. up.sh records these PIDs in
#      $RUN/up/*.pid (what down.sh stops); slurmctld/slurmd also write their own (same) PIDs to $RUN/*.pid.
if [ "$AUTH" = munge ]; then
  rm -f "$MUNGE_SOCK" "$MUNGE_SOCK.lock"
  setsid munged -F --key-file="$ETC/munge.key" --socket="$MUNGE_SOCK" --pid-file="$RUN/munge/munged.pid" \
    --log-file="$LOG/munged.log" --seed-file="$STATE/munge/munged.seed" > "$LOG/munged.stdout" 2>&1 < /dev/null &
  echo $! > "$RUN/up/munged.pid"
  for _ in $(seq 1 100); do [ -S "$MUNGE_SOCK" ] && break; sleep 0.05; done
  [ -S "$MUNGE_SOCK" ] || { cat "$LOG/munged.stdout" >&2; die "munged did not start"; }
  log "munged up ($MUNGE_SOCK)"
fi

log "starting slurmctld"
setsid slurmctld -D -f "$ETC/slurm.conf" > "$LOG/slurmctld.stdout" 2>&1 < /dev/null &
echo $! > "$RUN/up/slurmctld.pid"
for _ in $(seq 1 $((UP_TIMEOUT * 10))); do
  scontrol ping 2>/dev/null | grep -q 'is UP' && break
  kill -0 "$(cat "$RUN/up/slurmctld.pid")" 2>/dev/null || { tail -20 "$LOG/slurmctld.stdout" >&2; die "slurmctld died"; }
  sleep 0.1
done
log "slurmctld answers ping"

for i in $(seq 1 "$NNODES"); do
  setsid slurmd -D -N "n$i" -f "$ETC/slurm.conf" > "$LOG/slurmd-n$i.stdout" 2>&1 < /dev/null &
  echo $! > "$RUN/up/slurmd-n$i.pid"
done
log "started $NNODES slurmd"

# wait until every node is plain "idle" (not idle*, i.e. responding; not drained/invalid)
ok=0
for _ in $(seq 1 $((UP_TIMEOUT * 10))); do
  nidle=$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2=="idle"' | wc -l)
  if [ "$nidle" -eq "$NNODES" ]; then ok=1; break; fi
  sleep 0.1
done
if [ $ok != 1 ]; then
  sinfo -N -o '%N %T %E' >&2 || true
  die "nodes not idle after ${UP_TIMEOUT}s (see $LOG/slurmctld.log, $LOG/slurmd-n*.log)"
fi
log "all $NNODES nodes idle"

# The controller's first batch scheduling pass comes ~3 s after it starts; until then sbatch jobs stay
# PENDING (Reason=None). A probe job proves the whole batch path (scheduler, slurmd, slurmstepd, GRES env).
if [ "$PROBE" = 1 ]; then
  pj=$(sbatch --parsable -J up-probe -o /dev/null --gres=gpu:1 --wrap 'test -n "$CUDA_VISIBLE_DEVICES"')
  st=""
  for _ in $(seq 1 $((UP_TIMEOUT * 10))); do
    st=$(scontrol show job "$pj" -o 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case "$st" in COMPLETED) break;; FAILED|CANCELLED|NODE_FAIL|TIMEOUT|OUT_OF_MEMORY) break;; esac
    sleep 0.1
  done
  [ "$st" = COMPLETED ] || die "probe job $pj ended as '$st' (see $LOG/slurmctld.log)"
  log "probe job $pj COMPLETED (batch scheduling + launch + GPU env work)"
fi

if [ "$REST" = 1 ]; then
  # slurmrestd refuses root ("slurmrestd should not be run as the root user"), so it runs as $REST_USER.
  # SLURM_JWT=daemon makes slurmrestd talk to slurmctld with the caller's JWT (auth/jwt is AuthAltTypes), so
  # requests run as the user named in X-SLURM-USER-NAME (root tokens work: admin operations possible).
  # Clients: T=$(scontrol token username=root lifespan=3600 | sed 's/^SLURM_JWT=//')
  #          curl -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $T" http://127.0.0.1:$REST_PORT/slurm/v0.0.38/jobs
  # (Without SLURM_JWT=daemon only a unix socket with rest_auth/local works, and then every request runs as
  #  $REST_USER; with SLURM_JWT=daemon that unix-socket mode fails with "slurmctld config is unable to load".)
  setsid setpriv --reuid="$REST_USER" --regid="$(id -g "$REST_USER")" --clear-groups \
    env SLURM_CONF="$ETC/slurm.conf" SLURM_JWT=daemon slurmrestd -a rest_auth/jwt -s openapi/v0.0.38 \
    "127.0.0.1:$REST_PORT" > "$LOG/slurmrestd.log" 2>&1 < /dev/null &
  echo $! > "$RUN/up/slurmrestd.pid"
  for _ in $(seq 1 100); do
    curl -s -m 1 -o /dev/null "http://127.0.0.1:$REST_PORT/openapi/v3" 2>/dev/null && break; sleep 0.05
  done
  curl -s -m 1 -o /dev/null "http://127.0.0.1:$REST_PORT/openapi/v3" || { cat "$LOG/slurmrestd.log" >&2; die "slurmrestd did not start"; }
  log "slurmrestd on http://127.0.0.1:$REST_PORT (rest_auth/jwt, runs as $REST_USER)"
fi

sinfo -N -o '%N %T %G %c %m'
echo "ready: . $SIM_ROOT/env.sh"
