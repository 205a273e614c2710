#!/usr/bin/env bash
# Keeps the architecture picture true: no module includes a layer above it (docs/architecture.md).
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
declare -A allowed=(
  [core]="core"
  [io]="core priority io"
  [solver]="core solver"
  [forecast]="core io forecast"
  [priority]="core priority"
  [policy]="core solver policy"
  [report]="core io policy sim report"
  [sim]="core io policy forecast priority sim"
  [service]="core io solver forecast priority policy sim service"
  [adapters]="core io forecast priority policy adapters"
  [client]="core client"
)
status=0
for module in "${!allowed[@]}"; do
  dir="$root/src/ordo/$module"
  [ -d "$dir" ] || continue
  while IFS=: read -r file line include; do
    used=$(sed -E 's|.*"ordo/([a-z_]+)/.*|\1|' <<<"$include")
    if [[ " ${allowed[$module]} " != *" $used "* ]]; then
      echo "layering: ${file#$root/}:$line includes ordo/$used/, above layer $module" >&2
      status=1
    fi
  done < <(grep -rn --include='*.h' --include='*.cc' -E '#include "ordo/' "$dir" || true)
done
[ $status -eq 0 ] && echo "layering: ok"
exit $status
