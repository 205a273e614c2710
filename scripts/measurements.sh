#!/usr/bin/env bash
# measurements.sh [--with-studies] [--build DIR] [--shared DIR] [--out FILE]
# Runs ordo's own benchmark and study commands on the release build and writes docs/measurements.md:
# one section per command, each with the exact command, the date, the machine and the commit above
# its table, so every figure the docs quote can be reproduced (`make measurements` builds first).
#   (a) every policy on the built-in scenarios (ordo compare)
#   (b) fast mode's latency and plan quality by size (ordo_bench), and fast mode against the
#       baselines on random instances (the property tests' printed figures)
#   (c) full mode on the built-in scenarios: status, gap proved, time (from (a)'s report.json)
#   (d) the forecasters on ../shared/data (skipped, with the reason, without it)
#   (e) the simulator's studies replay, horizon and noise, only with --with-studies
# About three minutes on two shared cores, a few more with --with-studies. Needs jq.
set -euo pipefail

with_studies=0
build=build/release
shared=../shared
out=docs/measurements.md
while [[ $# -gt 0 ]]; do
  case $1 in
    --with-studies) with_studies=1 ;;
    --build) build=$2; shift ;;
    --shared) shared=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "measurements: unknown argument '$1' (--with-studies, --build DIR, --shared DIR, --out FILE)" >&2
       exit 2 ;;
  esac
  shift
done

cd "$(dirname "$0")/.."
ordo=$build/apps/ordo/ordo
bench=$build/bench/ordo_bench
forecast_eval=$build/bench/forecast_eval
property=$build/tests/ordo_property_test
for tool in "$ordo" "$bench"; do
  if [[ ! -x $tool ]]; then
    echo "measurements: $tool not found: build the release preset first (make measurements does)" >&2
    exit 1
  fi
done
command -v jq >/dev/null || { echo "measurements: jq not found (apt-get install jq)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
body=$work/body.md

if commit=$(git rev-parse --short HEAD 2>/dev/null); then
  git diff --quiet HEAD -- src apps bench scenarios || commit="$commit + uncommitted changes"
else
  commit="unknown (not a git checkout)"
fi
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
machine="$(nproc) cores, ${cpu:-unknown CPU}"

# The provenance line every section carries above its table.
provenance() {
  local load
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  printf 'Run %s on %s (load average %s at the start), commit %s.\n\n' \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$machine" "$load" "$commit" >>"$body"
}
command_block() {  # the exact command(s), as a reader would type them from the repository's root
  { echo '```'; printf '%s\n' "$@"; echo '```'; } >>"$body"
}
say() { printf '%s\n' "$@" >>"$body"; }
note() { echo "measurements: $*" >&2; }

# (a) ------------------------------------------------------------------------------------------
note "(a) ordo compare on scenarios/ (every policy; ordo-full 10 s a scenario)"
say "## The built-in scenarios, every policy" ""
command_block "$ordo compare scenarios/*.json --report-dir DIR"
provenance
say "The tables are DIR/report.md (columns defined in \`docs/cli.md\`). Time limits are wall clock, so" \
  "\`ordo-full\`'s gaps depend on the machine's load; fast mode's plans do not."
report=$work/report
"$ordo" compare scenarios/*.json --report-dir "$report" >/dev/null 2>"$work/compare.err" || {
  cat "$work/compare.err" >&2
  exit 1
}
# The report's own title and headings, one level down under this section.
sed -e '1{/^# /d}' -e 's/^## /### /' "$report/report.md" >>"$body"
say ""

# (b) ------------------------------------------------------------------------------------------
note "(b) ordo_bench (fast mode, fifo, priority-backfill at five sizes)"
say "## Fast mode: latency and plan quality by size" ""
command_block "$bench --benchmark_format=json"
provenance
say "Contended synthetic instances of \`bench/synthetic.h\` (\`bench/fast_bench.cc\`; the work offered" \
  "over the cluster's GPU-steps in the \`offered\` column): CPU time per plan, one thread; the" \
  "objective and utilization of the plan beside fifo's and priority-backfill's on the same" \
  "instance. Targets: 1 ms at 8 GPUs, 5 ms at 64, 100 ms at 4,096 / 10,000 jobs, 1 s at 32,768 /" \
  "80,000 jobs." \
  "Wall time varies by a quarter between identical runs while other work runs on the machine;" \
  "to compare two builds, count instructions (\`valgrind --tool=callgrind $bench" \
  "--benchmark_filter='BM_Fast/gpus:8/'\`)." ""
"$bench" --benchmark_format=json >"$work/bench.json" 2>"$work/bench.err" || {
  cat "$work/bench.err" >&2
  exit 1
}
bench_table() {  # $1: the header rows, $2: a row of the benchmarks of one size ($b by policy)
  jq -r --arg header "$1" '
    def size: (.name | split("/") | .[1:] | map(split(":")[1]) | join(" / "));
    def policy: (.name | split("/")[0] | ltrimstr("BM_"));
    def sig: if . >= 100 then round elif . >= 10 then (. * 10 | round / 10)
             elif . >= 1 then (. * 100 | round / 100) else (. * 1000 | round / 1000) end;
    def ms: (.cpu_time | sig | tostring) + " ms";
    def pct: (.utilization * 1000 | round / 10 | tostring) + "%";
    def num: (. * 10 | round / 10 | tostring);
    def target: {"8": "1 ms", "64": "5 ms", "4096": "100 ms", "32768": "1 s"}[. | split(" / ")[0]] // "—";
    $header,
    ([.benchmarks[] | select(.run_type == "iteration")] | group_by(size)
     | sort_by(.[0].per_family_instance_index)[]
     | (map({key: policy, value: .}) | from_entries) as $b | (.[0] | size) as $size
     | '"$2"')
  ' "$work/bench.json" >>"$body"
  say ""
}
bench_table $'| GPUs / jobs / steps | offered | ordo (fast mode) | target | fifo | priority-backfill |\n|---|---|---|---|---|---|' \
  '"| \($size) | \($b.Fast.offered * 100 | round / 100) | \($b.Fast | ms) | \($size | target) | \($b.Fifo | ms) | \($b.PriorityBackfill | ms) |"'
say "The plans' objective and utilization on the same instances:" ""
bench_table $'| GPUs / jobs / steps | ordo objective | fifo | priority-backfill | ordo utilization | fifo | priority-backfill |\n|---|---|---|---|---|---|---|' \
  '"| \($size) | \($b.Fast.objective | num) | \($b.Fifo.objective | num) | \($b.PriorityBackfill.objective | num) | \($b.Fast | pct) | \($b.Fifo | pct) | \($b.PriorityBackfill | pct) |"'
if [[ -x /usr/bin/time ]]; then
  /usr/bin/time -o "$work/rss.txt" -f '%M' "$bench" --benchmark_filter='BM_Fast/gpus:32768/' \
    >/dev/null 2>&1
  rss=$(tail -1 "$work/rss.txt")
  say "Peak resident memory of the 32,768-GPU fast-mode benchmark alone" \
    "(\`/usr/bin/time -f %M $bench --benchmark_filter='BM_Fast/gpus:32768/'\`): $((rss / 1024)) MB." ""
else
  note "/usr/bin/time not found: the peak-memory line is skipped"
  say "Peak memory: skipped (\`/usr/bin/time\` not installed)." ""
fi

say "### Fast mode against the baselines on random instances" ""
if [[ -x $property ]]; then
  note "(b) property tests' figures (3,000 contended instances, 1,000 with checkpoints)"
  command_block "ORDO_PROPERTY_INSTANCES=3000 $property --gtest_filter='FastVs*'" \
    "ORDO_PROPERTY_INSTANCES=1000 $property --gtest_filter='FastPreemption*'"
  provenance
  say "\`RandomScenario(seed, {.contended = true})\` of \`tests/support/random_scenario.h\` (8–32 GPUs," \
    "24–48 steps, every job kind, services with churn limits); the second line on instances with" \
    "running and checkpointed jobs. The tests assert fast mode's promises on every instance" \
    "(\`docs/fast-mode.md\`, Guarantees) and print these figures:" ""
  say '```'
  for run in "3000 FastVs*" "1000 FastPreemption*"; do
    set -- $run
    ORDO_PROPERTY_INSTANCES=$1 "$property" --gtest_filter="$2" --gtest_brief=1 >"$work/prop.txt" 2>&1 || {
      cat "$work/prop.txt" >&2
      echo "measurements: $property --gtest_filter='$2' failed" >&2
      exit 1
    }
    grep -E "instances" "$work/prop.txt" | grep -v "^\[" >>"$body"
  done
  say '```' ""
else
  note "$property not found: the random-instance figures are skipped"
  say "Skipped: \`$property\` was not built (\`cmake --build --preset release --target" \
    "ordo_property_test\`; \`make measurements\` builds it)." ""
fi

# (c) ------------------------------------------------------------------------------------------
note "(c) full mode's status and gap, from (a)'s report.json"
say "## Full mode on the built-in scenarios" ""
command_block "$ordo compare scenarios/*.json --report-dir DIR   # the run of the first section" \
  "$ordo plan scenarios/04-large-mixed.json --policy ordo-full     # one scenario, 10 s"
provenance
say "\`ordo-full\` under the CLI's 10 s (wall clock), from DIR/report.json: the solver's status," \
  "the objective, the best bound it proved and the gap \`(bound − objective) / max(1, |bound|)\`," \
  "beside fast mode's objective. The timed figures were taken while this script ran (same run as" \
  "the first section)." ""
jq -r '
  def r(n): if . == null then "—" else (. * pow(10; n) | round / pow(10; n) | tostring) end;
  "| scenario | GPUs / jobs / steps | status | objective | best bound | gap | ordo objective | ordo-full time |",
  "|---|---|---|---|---|---|---|---|",
  (.scenarios[] | .runs as $runs
    | ($runs | map(select(.policy == "ordo-full")) | first) as $f
    | ($runs | map(select(.policy == "ordo")) | first) as $o
    | select($f != null)
    | "| \(.name) | \(.gpus) / \(.jobs) / \(.horizon_steps) | \($f.metrics.status // $f.error // "—") | \($f.metrics.objective | r(1)) | \($f.metrics.best_bound | r(1)) | \(if $f.metrics.gap == null then "—" else ($f.metrics.gap * 10000 | round / 100 | tostring) + "%" end) | \($o.metrics.objective | r(1)) | \(($f.metrics.solve_ms // 0) / 1000 | r(2)) s |")
' "$report/report.json" >>"$body"
say "" "The measurements on random instances (contended 8–32 GPUs, 512 and 4,096 GPUs, and fast mode" \
  "against the proven optimum) take hours; their commands and last figures are in" \
  "\`docs/full-mode.md\`, Figures." ""

# (d) ------------------------------------------------------------------------------------------
say "## The forecasters" ""
if [[ -d $shared/data/jobs && -d $shared/data/inference ]]; then
  note "(d) forecasters on $shared/data"
  command_block "$ordo forecast eval --data $shared/data" \
    "$forecast_eval $shared/data --section training" \
    "$forecast_eval $shared/data --section quantization"
  provenance
  say "The demand forecaster's rolling-origin evaluation, then the duration forecasters' tables" \
    "(\`docs/forecasting.md\` says what each column means)." ""
  "$ordo" forecast eval --data "$shared/data" >"$work/forecast.txt" 2>"$work/forecast.err" || {
      cat "$work/forecast.err" >&2
      exit 1
    }
  cat "$work/forecast.txt" >>"$body"
  say ""
  if [[ -x $forecast_eval ]]; then
    for section in training quantization; do
      "$forecast_eval" "$shared/data" --section "$section" >>"$body" 2>"$work/forecast.err" || {
        cat "$work/forecast.err" >&2
        exit 1
      }
      say ""
    done
  else
    note "$forecast_eval not found: the training and quantization tables are skipped"
    say "The training and quantization tables: skipped (\`$forecast_eval\` was not built)." ""
  fi
else
  note "(d) $shared/data not found: the forecasters' evaluation is skipped"
  say "Skipped: \`$shared/data\` (the public traces) was not found when this file was written." \
    "With it: \`make forecast-eval\`, or this script again." ""
fi

# (e) ------------------------------------------------------------------------------------------
say "## The simulator's studies" ""
if [[ $with_studies -eq 1 && ! -d $shared/data/jobs ]]; then
  note "(e) $shared/data not found: the simulator's studies are skipped"
  say "Skipped: the studies replay the public traces, and \`$shared/data\` was not found when this" \
    "file was written." ""
elif [[ $with_studies -eq 1 ]]; then
  note "(e) the simulator's studies (replay, horizon, noise): a few minutes more"
  command_block "scripts/studies.sh $ordo $shared/data build/studies replay horizon noise"
  provenance
  scripts/studies.sh "$(realpath "$ordo")" "$shared/data" build/studies replay horizon noise \
    2>"$work/studies.err" | sed 's/^## /### /' >>"$body" || {
    cat "$work/studies.err" >&2
    exit 1
  }
  say ""
else
  note "(e) the simulator's studies are skipped (run with --with-studies, or make studies)"
  say "Not run by default (they replay a week of the public traces per policy and noise level):" \
    "\`scripts/measurements.sh --with-studies\` (or \`make measurements" \
    "MEASUREMENTS_FLAGS=--with-studies\`) adds the replay, horizon and noise studies here;" \
    "\`make studies\` (or \`make study-replay\`, \`study-horizon\`, \`study-noise\`, \`study-weeks\`," \
    "\`study-tenants\`) prints them. \`docs/simulator.md\` describes each study." ""
fi

{
  echo "# Measurements"
  echo
  echo "Generated by \`scripts/measurements.sh\` (\`make measurements\`: the release build, then this"
  echo "script; \`--with-studies\` adds the simulator's studies). Do not edit by hand: rerun it. Each"
  echo "section names the command that produced its table, when, on which machine and at which commit."
  echo "The machine is shared, so times move with its load; plans, objectives and gaps proved do not"
  echo "(except where a wall-clock limit cuts a search: ordo-full, and fast mode above its latency"
  echo "targets)."
  echo
  cat "$body"
} >"$out"
note "wrote $out"
