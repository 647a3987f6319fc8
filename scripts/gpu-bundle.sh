#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh runs on a GPU machine into .gpu/ (docs/calibration.md "Running
# the CUDA back end on a GPU machine"): builds clustersim and clustersim-calibrate-cuda here, where
# nvcc, cuBLAS and NCCL are installed but no GPU is needed, then copies the two binaries and the
# shared libraries they need that a bare CUDA machine lacks (yaml-cpp, Boost, protobuf, ...). Left
# out: glibc, libstdc++ and libgcc_s (the machine's own, newer ones are used; copies go to
# .gpu/fallback/ for a machine with older ones), and CUDA's and the driver's libraries (the
# machine's: cuBLAS and NCCL keep their sonames across minor versions).
# Usage: scripts/gpu-bundle.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
export PATH=/usr/local/cuda/bin:$PATH

# Release without -Werror: GCC 12 at -O3 warns maybe-uninitialized inside std::optional (a false
# positive the RelWithDebInfo build of CI does not see). sm_90 only: the machines lent are Hopper.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCLUSTERSIM_WITH_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DCLUSTERSIM_WITH_GUI=OFF \
  -DCLUSTERSIM_BUILD_TESTS=OFF -DCLUSTERSIM_BUILD_BENCH=OFF -DCLUSTERSIM_WERROR=OFF
cmake --build "$BUILD" -j "$(nproc)" --target clustersim

rm -rf .gpu
mkdir -p .gpu/lib .gpu/fallback
cp "$BUILD/cli/clustersim" "$BUILD/cli/clustersim-calibrate-cuda" .gpu/
strip .gpu/clustersim .gpu/clustersim-calibrate-cuda
ldd .gpu/clustersim .gpu/clustersim-calibrate-cuda | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  sort -u | while read -r name path; do
    case "$name" in
      libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux*) ;;
      libcublas* | libnccl* | libcudart* | libcuda.so* | libnvidia*) ;;
      libstdc++.so* | libgcc_s.so*) cp -L "$path" .gpu/fallback/ ;;
      *) cp -L "$path" .gpu/lib/ ;;
    esac
  done
du -sh .gpu
ls .gpu/lib .gpu/fallback
