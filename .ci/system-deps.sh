#!/usr/bin/env bash
# Debian packages the test suite needs: xmlsec1 (SAML signatures, pysaml2) and chromium
# (the browser test of the operator console; Playwright drives the system Chromium, no
# browser download). Installed when missing; needs root, as on CI and development machines.
set -euo pipefail
need=()
command -v xmlsec1 >/dev/null || need+=(xmlsec1)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "system-deps: installing ${need[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "system-deps: missing ${need[*]}; install them as root (apt-get install ${need[*]})" >&2
    exit 1
  fi
fi
