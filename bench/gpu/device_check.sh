#!/bin/sh
# The whole device check of native/gpu in one command, for a GPU machine (see DEVELOPERS.md):
#   sh bench/gpu/device_check.sh OUTDIR
# 1. ../shared/gpu/fast_plane_check.py (copied into bench/gpu/shared/, gitignored) when present:
#    fast_score built by nvcc against g++, every pixel (0 must differ);
# 2. the harness: build into build-gpu, ctest (device self-test, device = host reference), device vs
#    cv2 on the packed frames, throughput (batches of 64 clips) against cv2 on every core.
# If the device's selection or its warp KLT fails the self-test, the harness is run again with the
# former kernel (EGOGEO_GPU_HOST_SELECT=1: selection on the host; EGOGEO_GPU_THREAD_KLT=1: a
# thread per point) so the rest is still measured. Outputs land in OUTDIR.
set -u
out=${1:-/tmp/gpu-check}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$out/device.txt"
if [ -f bench/gpu/shared/fast_plane_check.py ]; then
  timeout 150 python3 bench/gpu/shared/fast_plane_check.py --frames bench/gpu/frames >"$out/fast_plane_check.txt" 2>&1
  echo "fast_plane_check exit $?" >>"$out/fast_plane_check.txt"
  tail -6 "$out/fast_plane_check.txt"
fi
python3 bench/gpu/harness.py --build --arch 90 --frames bench/gpu/frames --max-frames 120 --batch 64 --clips 256 \
  --out "$out/gpu-h200.json" >"$out/harness.log" 2>&1
rc=$?
grep -E '^(ok|FAIL|all passed|[0-9]+ failed|[0-9]+% tests|device|  [0-9]+x|error|wrote|FAILED)|Test +#' "$out/harness.log" | tail -40
echo "harness exit $rc"
if [ $rc -ne 0 ] && grep -q 'KLT job' "$out/harness.log"; then
  EGOGEO_GPU_THREAD_KLT=1 python3 bench/gpu/harness.py --frames bench/gpu/frames --max-frames 120 --batch 64 --clips 256 \
    --out "$out/gpu-h200-thread-klt.json" >"$out/harness-thread-klt.log" 2>&1
  echo "harness (a thread per tracked point) exit $?"
  grep -E '^(device|  [0-9]+x|error|FAILED)' "$out/harness-thread-klt.log"
fi
if [ $rc -ne 0 ] && grep -q 'corners after selection' "$out/harness.log"; then
  EGOGEO_GPU_HOST_SELECT=1 python3 bench/gpu/harness.py --frames bench/gpu/frames --max-frames 120 --batch 64 --clips 256 \
    --out "$out/gpu-h200-host-select.json" >"$out/harness-host-select.log" 2>&1
  echo "harness (selection on the host) exit $?"
  grep -E '^(device|  [0-9]+x|error|FAILED)' "$out/harness-host-select.log"
fi
exit $rc
