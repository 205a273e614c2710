#!/usr/bin/env bash
# Installs the Debian packages ordo builds and tests with, only those missing (checked with dpkg).
# Needs root or password-less sudo to install; says so plainly when it has neither.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config make
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libyaml-cpp-dev libexpected-dev
  coinor-libcbc-dev libsqlite3-dev libboost-dev zlib1g-dev
  # The dashboard's browser test (label browser, part of `make test`) runs headless Chromium.
  chromium
)
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "ordo: installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  run=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run=(sudo)
else
  echo "ordo: these packages are missing and installing them needs root or password-less sudo:" >&2
  echo "      apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${run[@]}" apt-get update -qq
"${run[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
