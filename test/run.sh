#!/usr/bin/env bash
# `npm test`: every tier in order, each timed; the tiers' durations print at the end (also when one
# fails, which stops the run). Browser set-up (Debian's Chromium and Firefox ESR) is a tier of its own,
# so `npm ci && npm test` works on a fresh Debian machine (see test/setup-browsers.sh).
#   setup      npm run setup: the install scripts package.json allows (@lavamoat/allow-scripts; `.npmrc` has
#              ignore-scripts=true, so `npm ci` ran none), then `wxt prepare`; fails on an unreviewed script
#   typecheck  tsc --noEmit
#   lint       npm run lint: Prettier's check (width 120) and ESLint with typescript-eslint's type-checked rules
#              (floating and misused promises, awaited non-promises, exhaustive switches, no line over 120)
#   unit       vitest (lib, components, entrypoints, test/conformance, test/structure, test/compat)
#   build      the Chrome MV3 and Firefox MV3 builds
#   browsers   test/setup-browsers.sh
#   chromium   test/e2e in real Chromium (files in parallel, vitest.e2e.config.ts)
#   crash      test/crash: the browser's process group SIGKILLed inside each vault write and each trading
#              operation, relaunched on the same profile, invariants checked (a short run; `npm run soak`
#              is the long one)
#   firefox    test/firefox in real Firefox ESR, one file at a time (the event-page tests time a 3 s idle
#              timeout and fail when another Firefox competes for the CPU)
#   release    `npm run release`, then test/release on its artifacts: rebuilt byte-identical from the
#              sources zip, store rules (addons-linter), installed from the zips in Chromium and Firefox
set -uo pipefail
cd "$(dirname "$0")/.."

names=()
times=()
summary() {
  echo
  echo "== tier durations"
  local i total=0
  for i in "${!names[@]}"; do
    printf '   %-10s %6ss\n' "${names[$i]}" "${times[$i]}"
    total=$((total + times[i]))
  done
  printf '   %-10s %6ss\n' total "$total"
}
trap summary EXIT

# tier NAME COMMAND…: runs COMMAND, records its duration; a failure ends `npm test` with its status.
tier() {
  local name=$1 start=$SECONDS rc=0
  shift
  echo "== $name: $*"
  "$@" || rc=$?
  names+=("$name")
  times+=($((SECONDS - start)))
  [ "$rc" -eq 0 ] || { echo "== $name failed (exit $rc)" >&2; exit "$rc"; }
}

tier setup npm run setup
tier typecheck npx tsc --noEmit
tier lint npm run lint
tier unit npx vitest run
tier build sh -c 'npx wxt build && npx wxt build -b firefox --mv3'
tier browsers bash test/setup-browsers.sh
tier chromium npx vitest run -c vitest.e2e.config.ts test/e2e
tier crash npx vitest run -c vitest.e2e.config.ts test/crash
tier firefox env E2E_WORKERS=1 npx vitest run -c vitest.e2e.config.ts test/firefox
tier release sh -c 'npm run release && E2E_WORKERS=1 npx vitest run -c vitest.e2e.config.ts test/release'
