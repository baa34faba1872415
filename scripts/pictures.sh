#!/usr/bin/env bash
# The pictures README.md shows, drawn by `ossa render` from the rig the demo builds in code:
#   bash scripts/pictures.sh            draw them into docs/pictures/
#   bash scripts/pictures.sh --check    draw them apart and fail if they differ from docs/pictures/
# The renderer gives the same bytes for the same input on every machine, so a difference means
# the pictures were not redrawn after a change that shows in them.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet --bin ossa
ossa=target/debug/ossa
committed=docs/pictures
out=$committed
if [ "${1-}" = --check ]; then
  out=target/tmp/pictures
fi
mkdir -p "$out"

# The tube bent a fifth of a second into its scene, its skeleton over it; and a sheet of the scene.
"$ossa" render --demo --scene wave --time 0.2 --bones --antialias -o "$out/demo.png"
"$ossa" render --demo --sheet --antialias -o "$out/demo-sheet.png"

if [ "$out" != "$committed" ]; then
  status=0
  for f in demo.png demo-sheet.png; do
    if ! cmp -s "$out/$f" "$committed/$f"; then
      echo "$committed/$f differs from what ossa render draws now ($out/$f): run bash scripts/pictures.sh and commit" >&2
      status=1
    fi
  done
  [ "$status" = 0 ] && echo "pictures: docs/pictures/ is what ossa render draws"
  exit "$status"
fi
