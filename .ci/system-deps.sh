#!/usr/bin/env bash
# System packages the test suite needs (installed from Debian's packages when missing).
set -euo pipefail
need=()
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "system-deps: missing ${need[*]} (install them as root)" >&2
  fi
fi
