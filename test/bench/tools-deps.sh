#!/usr/bin/env bash
# Installs the floors of the tool benchmarks (ripgrep, fd-find: binary
# fdfind) with apt when they are missing; sudo is used when not root and
# available. A failed installation is reported and the bench skips that
# floor's rows; it never fails the bench.
set -u
SUDO=
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
fi
missing=()
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v fdfind >/dev/null 2>&1 || missing+=(fd-find)
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "bench: apt-get not found; install ${missing[*]} to get their floor rows" >&2
  exit 0
fi
echo "bench: installing ${missing[*]} with apt-get" >&2
if ! $SUDO apt-get install -y "${missing[@]}" >/dev/null 2>&1; then
  $SUDO apt-get update >/dev/null 2>&1
  $SUDO apt-get install -y "${missing[@]}" >/dev/null 2>&1 ||
    echo "bench: could not install ${missing[*]}; their floor rows are skipped" >&2
fi
exit 0
