#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of wheelhouse from Debian 12's packages.
# Safe to run twice: apt-get skips what is already installed.
#   deploy/install-deps.sh           build, test and benchmark tools (developers, CI)
#   deploy/install-deps.sh build     only what compiling the binary needs (the image's build stage)
#   deploy/install-deps.sh runtime   only the shared libraries the binary loads, and curl for the
#                                    health check (the image's run stage, a bare host)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

build=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libsqlite3-dev libzip-dev zlib1g-dev libssl-dev libspdlog-dev
  libcli11-dev libtomlplusplus-dev catch2 libbenchmark-dev
)
test=(
  python3 python3-pip python3-packaging python3-pytest python3-pytest-xdist python3-wheel twine curl zip unzip
  python3-poetry python3-pdm pipenv  # tests/e2e/test_clients.py: the README's client commands
  python3-build  # tests/e2e/test_sdists.py: python3 -m build makes the sdist and wheel twine uploads
  python3-jsonschema  # tests/e2e/test_pep825_variants.py: the PEP 825 appendix's JSON schema
  python3-jwt python3-cryptography python3-requests  # tests/e2e/oidc_issuer.py: a local OIDC issuer
  nginx-light wrk chromium sqlite3 openssl ca-certificates procps prometheus strace util-linux
  clang-14 libclang-rt-14-dev  # the fuzz preset: clang 14 and its libFuzzer
  ceph-mon ceph-osd radosgw s3cmd  # tests/e2e/test_s3_check.py: a one-node Ceph with radosgw (deploy/radosgw.sh)
)
# What `ldd wheelhouse` names, by package; keep in step with CMakeLists.txt's find_package list.
runtime=(
  libboost-json1.81.0 libboost-url1.81.0 libsqlite3-0 libzip4 zlib1g libspdlog1.10 libfmt9 libssl3
  libtomlplusplus3 ca-certificates curl
)
wanted=()
case "${1:-all}" in
  all)
    # Browser tests need node and npm; keep a Node.js that is already there (it may bundle npm).
    command -v npm >/dev/null 2>&1 || test+=(nodejs npm)
    wanted=("${build[@]}" "${test[@]}") ;;
  build) wanted=("${build[@]}") ;;
  runtime) wanted=("${runtime[@]}") ;;
  *) echo "usage: $0 [all|build|runtime]" >&2; exit 2 ;;
esac

missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
