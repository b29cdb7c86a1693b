#!/usr/bin/env bash
# Installs what attn needs to build and test, from Debian 12's packages, when it is missing.
# Safe to run again: it installs nothing when every package is present. Works as root, or
# through sudo for a normal user.
set -euo pipefail

# libexpat1-dev: the tests parse every SVG picture with expat (tests/xml_check.hpp).
# nlohmann-json3-dev: the tests parse the manifest and --format json with it (tests/cli/test_cli_json.cpp).
# zsh: the tests load `attn completion zsh` in zsh.
# chromium: the browser tests (tests/browser) load every --html page in headless chromium.
# nlohmann-json3-dev, libonig-dev, libutf8proc-dev, pkg-config: reading Hugging Face checkpoints and
#   tokenizers (config.json, safetensors headers, tokenizer.json; its split regexes; NFC).
packages=(cmake make g++ libxtensor-dev libxtensor-blas-dev libopenblas-dev libcli11-dev doctest-dev xtl-dev libexpat1-dev nlohmann-json3-dev libonig-dev libutf8proc-dev pkg-config zsh chromium)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all build packages are installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "setup: error: installing ${missing[*]} needs root or sudo" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
