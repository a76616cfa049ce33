#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of wheelhouse from Debian 12's packages.
# Safe to run twice: apt-get skips what is already installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

build=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libsqlite3-dev libzip-dev libssl-dev libspdlog-dev
  libcli11-dev libtomlplusplus-dev catch2 libbenchmark-dev
)
test=(
  python3 python3-pip python3-packaging python3-pytest python3-wheel twine curl zip unzip
  nginx-light wrk chromium sqlite3 openssl ca-certificates procps
)
# Browser tests need node and npm; keep a Node.js that is already there (it may bundle npm).
command -v npm >/dev/null 2>&1 || test+=(nodejs npm)

missing=()
for pkg in "${build[@]}" "${test[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
