#!/usr/bin/env bash
# Builds vigil ui's page (ui/) into BUILD/ui: npm ci of the pinned packages (ui/package.json,
# ui/package-lock.json, from the npm registry; never a browser download) into
# BUILD/ui-npm, then esbuild bundles ui/src/main.js into BUILD/ui/app.js (a classic
# script, so that a copy made by vigil ui --export opens from disk), the display module
# (ui/src/display/render.js, the Display tab's drawing) with it; ui/src/analysis/main.js
# into BUILD/ui/analysis.js (the model workbench and network browser, analysis.html).
# usage: scripts/build-ui.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
out=$2
npmdir=$out/ui-npm
mkdir -p "$npmdir" "$out/ui"
if ! cmp -s "$src/ui/package-lock.json" "$npmdir/package-lock.json" || [ ! -x "$npmdir/node_modules/.bin/esbuild" ]; then
  cp "$src/ui/package.json" "$src/ui/package-lock.json" "$npmdir/"
  (cd "$npmdir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) >&2
fi
esbuild=$npmdir/node_modules/.bin/esbuild
NODE_PATH=$npmdir/node_modules "$esbuild" "$src/ui/src/main.js" --bundle --format=iife \
  --target=es2020 --outfile="$out/ui/app.js" --log-level=warning
# the analysis views (model workbench, network browser): a page of their own
NODE_PATH=$npmdir/node_modules "$esbuild" "$src/ui/src/analysis/main.js" --bundle --format=iife \
  --target=es2020 --outfile="$out/ui/analysis.js" --log-level=warning
cp "$src/ui/src/index.html" "$src/ui/src/style.css" "$src/ui/src/analysis.html" \
  "$src/ui/src/analysis.css" "$out/ui/"
# Served as is: the static data of a copy made by --export replaces it there.
echo "/* vigil ui: served by the server, no static data */" > "$out/ui/data.js"
