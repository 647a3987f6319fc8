#!/usr/bin/env bash
# Installs the Debian 12 packages clustersim builds against. Idempotent: packages already present
# are left alone, and apt is not touched at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  clang libclang-rt-14-dev
  libboost-graph-dev libeigen3-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-dev python3-numpy pybind11-dev protobuf-compiler libprotobuf-dev zlib1g-dev libdeflate-dev
  libopenmpi-dev openmpi-bin
  libsimgrid-dev
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
