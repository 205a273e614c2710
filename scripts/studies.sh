#!/usr/bin/env bash
# studies.sh ORDO DATA_DIR OUT_DIR STUDY... - the simulator's studies (docs/simulator.md), each one
# command: `make study-replay`, `make study-horizon`, `make study-noise` (or `make studies`).
#   replay   seven days of the real traces (ITP jobs, ServeGen services), every policy, re-planning
#            every step and on arrivals; per-day and total tables
#   horizon  the "end of the world" effect: plan 24 hours once and commit all of it, against rolling
#            re-plans every step and every 2 hours
#   noise    forecast-error sweep: duration noise 0, 15, 30, 50% (log-normal sigma) and traffic
#            off its profile, the value each policy keeps against perfect information; then the
#            traffic noise with the demand forecaster in the loop (level-shape, weekly profile)
#   weeks    starvation: four weeks of three ITP clusters (cluster04 days 7 and 14, cluster07 day
#            14, cluster03 day 49), every policy, ordo with and without planning priorities;
#            waits by priority class
#   tenants  fair share: two tenants of a 40% share each, without and with one flooding the queue;
#            GPU-hours per tenant and day against min(demand, share); then ordo with and without
#            the share guarantee, with and without checkpoints, on three noise seeds
#   preempt  preemption: the week with checkpointed jobs at traffic noise 0.3 (means over twelve
#            noise seeds, with and without surges re-planned, ordo also with a ramp reserve)
#            and with long low-priority jobs ahead of high-priority arrivals; every policy, the two
#            preempting peers, ordo with and without checkpoints
# Worlds are generated from DATA_DIR into OUT_DIR (never committed); without DATA_DIR the studies
# that need the traces say so and the others use the synthetic generator.
set -euo pipefail
ordo=$1 data=$2 out=$3
shift 3
mkdir -p "$out"

trace_world() {  # $1: output, then --make-world options
  local world=$1
  shift
  if [[ ! -f "$data/jobs/ms_itp_2021_jobs.csv.gz" ]]; then
    echo "studies: $data/jobs/ms_itp_2021_jobs.csv.gz is missing: the trace studies need ../shared/data" >&2
    return 1
  fi
  "$ordo" simulate --make-world "$world" --data "$data" "$@" >&2
}

for study in "$@"; do
  case $study in
    replay)
      trace_world "$out/itp-servegen.json"
      echo "## Seven-day replay: ITP cluster04 jobs + ServeGen services (default world)"
      "$ordo" simulate "$out/itp-servegen.json" --format markdown --per-day --by-hour --quiet \
        --timeline "$out/replay-timeline.json" --html "$out/replay.html"
      ;;
    horizon)
      trace_world "$out/itp-servegen-perfect.json" --demand-forecast none
      echo "## End of the world: plan once per horizon vs rolling (perfect forecasts)"
      "$ordo" simulate "$out/itp-servegen-perfect.json" --format markdown --quiet \
        --policies ordo@plan,ordo@4,ordo,priority-backfill@plan,priority-backfill \
        --planning-priority off
      ;;
    noise)
      trace_world "$out/itp-servegen-perfect.json" --demand-forecast none
      echo "## Duration noise sweep (sigma 0, 0.15, 0.30, 0.50), 3 noise seeds"
      "$ordo" simulate "$out/itp-servegen-perfect.json" --format markdown --quiet \
        --sweep-duration-noise 0,0.15,0.3,0.5 --noise-seeds 1,2,3 --planning-priority off
      for q in 0.5 0.9; do
        echo "## Traffic off its profile (sigma 0, 0.15, 0.30), planners told quantile $q, 3 noise seeds"
        "$ordo" simulate "$out/itp-servegen-perfect.json" --format markdown --quiet \
          --sweep-traffic-noise 0,0.15,0.3 --noise-seeds 1,2,3 --traffic-quantile "$q" \
          --planning-priority off
      done
      # The same traffic noise with the demand forecaster in the loop, level-shape and the weekly
      # profile: the planner told the forecaster's p90.
      trace_world "$out/itp-servegen.json"
      trace_world "$out/itp-servegen-profile.json" --forecast-method profile
      for world in itp-servegen itp-servegen-profile; do
        echo "## Traffic off its profile, forecaster in the loop ($world), 3 noise seeds"
        "$ordo" simulate "$out/$world.json" --format markdown --quiet \
          --sweep-traffic-noise 0,0.15,0.3 --noise-seeds 1,2,3 --planning-priority off
      done
      ;;
    weeks)
      # Planning priorities were tuned on the first week; the other three are held out.
      for week in "cluster04 7" "cluster07 14" "cluster03 49" "cluster04 14"; do
        set -- $week
        trace_world "$out/itp-$1-day$2.json" --trace-cluster "$1" --start-day "$2"
        echo "## $1, days $2 to $(($2 + 7)): every policy, and ordo planning at base priorities"
        "$ordo" simulate "$out/itp-$1-day$2.json" --format markdown --quiet
        echo
        "$ordo" simulate "$out/itp-$1-day$2.json" --format markdown --quiet --policies ordo \
          --planning-priority off
      done
      ;;
    tenants)
      trace_world "$out/itp-servegen.json"
      python3 "$(dirname "$0")/tenant_world.py" "$out/itp-servegen.json" "$out/tenants.json"
      python3 "$(dirname "$0")/tenant_world.py" "$out/itp-servegen.json" "$out/tenants-flood.json" \
        --flood 3
      for world in tenants tenants-flood; do
        echo "## $world: ordo with and without planning priorities, priority-backfill, reactive"
        "$ordo" simulate "$out/$world.json" --format markdown --quiet \
          --policies priority-backfill,reactive,ordo
        echo
        "$ordo" simulate "$out/$world.json" --format markdown --quiet --policies ordo \
          --planning-priority off
      done
      # The share guarantee (--borrowing-factor): the same two worlds, and both with checkpointed
      # jobs (borrowed GPUs can then be taken back), at traffic noise 0.1 on three noise seeds.
      for world in tenants tenants-flood; do
        python3 "$(dirname "$0")/preempt_world.py" "$out/$world.json" "$out/$world-ckpt.json"
        for w in "$world" "$world-ckpt"; do
          for seed in 1 2 3; do
            for factor in 1 0.0009765625; do
              echo "## $w, noise seed $seed, ordo --borrowing-factor $factor"
              "$ordo" simulate "$out/$w.json" --format markdown --quiet --policies ordo \
                --traffic-noise 0.1 --noise-seed "$seed" --borrowing-factor "$factor"
              echo
            done
          done
        done
      done
      ;;
    preempt)
      # Jobs that save every hour and restart in 30 minutes; the same week with traffic noise,
      # then with its long jobs at priority 1 (high-priority arrivals queue behind them).
      trace_world "$out/itp-servegen.json"
      python3 "$(dirname "$0")/preempt_world.py" "$out/itp-servegen.json" "$out/preempt.json"
      python3 "$(dirname "$0")/preempt_world.py" "$out/itp-servegen.json" \
        "$out/preempt-behind.json" --long-low 6
      all=fifo,fifo-backfill,priority-backfill,reactive,priority-preempt,reactive-preempt,ordo
      # Means over twelve noise seeds: per seed the runs diverge by a few percent either way (one
      # early decision changes the week), and three seeds do not settle a 2% difference.
      sweep=(--format markdown --quiet --sweep-traffic-noise 0.3
             --noise-seeds 1,2,3,4,5,6,7,8,9,10,11,12)
      for surge in "" --surge-replan; do
        echo "## Traffic noise 0.3${surge:+, every policy re-planning on surges}: every policy"
        "$ordo" simulate "$out/preempt.json" "${sweep[@]}" --policies "$all" $surge
        echo
        echo "ordo without checkpoints (nothing can be preempted):"
        echo
        "$ordo" simulate "$out/preempt.json" "${sweep[@]}" --policies ordo --no-checkpoints $surge
        for ckpt in "" --no-checkpoints; do
          echo
          echo "ordo with a 24-hour ramp reserve${ckpt:+, without checkpoints}:"
          echo
          "$ordo" simulate "$out/preempt.json" "${sweep[@]}" --policies ordo --ramp-reserve 24 \
            $ckpt $surge
        done
      done
      echo "## Long jobs (6 h or more) at priority 1 ahead of high-priority arrivals: every policy"
      "$ordo" simulate "$out/preempt-behind.json" --format markdown --quiet --policies "$all"
      echo
      echo "ordo without checkpoints:"
      echo
      "$ordo" simulate "$out/preempt-behind.json" --format markdown --quiet --policies ordo \
        --no-checkpoints
      ;;
    *)
      echo "studies: unknown study '$study' (replay, horizon, noise, weeks, tenants, preempt)" >&2
      exit 2
      ;;
  esac
done
