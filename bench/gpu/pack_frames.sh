#!/bin/sh
# Copies the first N frames of KITTI 00 (../shared, not on the GPU machine) into bench/gpu/frames/
# (gitignored) so they travel with the working tree: 120 frames are about 17 MB (< 40 MB).
#   sh bench/gpu/pack_frames.sh [N] [SOURCE_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-120}
src=${2:-$here/../../../shared/data/kitti/00/image_0}
[ -d "$src" ] || { echo "pack_frames: no $src (pass the image_0 folder as the second argument)" >&2; exit 1; }
dst=$here/frames/image_0
rm -rf "$here/frames"
mkdir -p "$dst"
ls "$src" | grep -E '\.(jpg|png)$' | sort | head -n "$n" | while read -r f; do cp "$src/$f" "$dst/"; done
echo "pack_frames: $(ls "$dst" | wc -l) frames, $(du -sh "$here/frames" | cut -f1) in $dst"
