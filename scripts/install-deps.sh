#!/usr/bin/env bash
# Installs what fourfold needs to build and test on Debian 12, from Debian's own packages.
set -euo pipefail
# libopenblas-dev: only the gemm_vs_openblas bench links it. clang and its runtime libraries build the libFuzzer
# target (scripts/fuzz.sh).
# libpcre2-dev and libutf8proc-dev: the tokenizer's split regexes and NFC normalization. pkg-config finds them.
# libpng-dev: the VAE commands' PNG frames; zlib1g-dev (which it pulls in anyway): the PNG tests' own hostile streams.
# python3-venv: the PyTorch driver's environment (scripts/python-env.sh takes PyTorch itself from PyPI).
packages=(build-essential cmake ninja-build git pkg-config libgtest-dev libfmt-dev nlohmann-json3-dev libcli11-dev
          libopenblas-dev clang libclang-rt-14-dev libpcre2-dev libutf8proc-dev libpng-dev zlib1g-dev python3 python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
