#!/usr/bin/env bash
# Debian packages capplan needs beyond Python: chromium (the browser tests drive the app in it;
# PDF charts need no browser), pango (weasyprint's HTML -> PDF), poppler-utils (pdftotext in
# tests), a font, and PostgreSQL (the tests' second backend; scripts/start-postgres.sh). Installs only what is missing; needs root (CI and these machines run as root).
set -euo pipefail
packages=(chromium poppler-utils fonts-dejavu-core libpango-1.0-0 libpangoft2-1.0-0 postgresql)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
