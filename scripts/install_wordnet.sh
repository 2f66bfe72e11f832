#!/usr/bin/env bash
# Install WordNet 3.0 for nltk, offline-capable: Debian's wordnet-base files copied into an nltk data folder.
# Usage: scripts/install_wordnet.sh NLTK_DATA_DIR   (idempotent; needs apt-get and root only the first time)
set -euo pipefail
target="${1:?usage: install_wordnet.sh NLTK_DATA_DIR}"
python="${PYTHON:-.venv/bin/python}"
if [ -f "$target/corpora/wordnet/lexnames" ]; then exit 0; fi
if [ ! -f /usr/share/wordnet/data.noun ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's wordnet-base (WordNet 3.0 data)..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wordnet-base >/dev/null
  else
    echo "WordNet data missing: run 'sudo apt-get install --no-install-recommends wordnet-base'," >&2
    echo "or in Python: import nltk; nltk.download('wordnet')" >&2
    exit 1
  fi
fi
"$python" -m lmms_eval_tasks.cli setup-wordnet --target "$target"
