#!/usr/bin/env bash
# Browser set-up for the browser tiers of `npm test` (two commands on a fresh machine).
# The browser tests drive Debian's Chromium (/usr/lib/chromium/chromium) and Firefox ESR
# (/usr/bin/firefox-esr). When one is missing and we run as root, install it with apt; otherwise
# say plainly what to run and fail, so `npm ci && npm test` either sets itself up or says why not.
set -euo pipefail

need=()
[ -x /usr/lib/chromium/chromium ] || [ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/bin/firefox-esr ] || [ -x /usr/bin/firefox ] || need+=(firefox-esr)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get > /dev/null; then
  echo "The browser tests need Debian's ${need[*]} (not installed here)." >&2
  echo "Install it as root, then run npm test again:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi

echo "== installing Debian's ${need[*]} (for the browser tests)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" > /dev/null
