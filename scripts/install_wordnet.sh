#!/usr/bin/env bash
# Install WordNet 3.0 for nltk, offline-capable: Debian's WordNet files copied into an nltk data folder.
# Usage: scripts/install_wordnet.sh NLTK_DATA_DIR   (idempotent; needs apt-get and root only the first time)
# "Installed" is decided by the files nltk opens (lmms_eval_tasks.wordnet.NLTK_OPENS), and the script ends
# by loading WordNet through nltk (wn.synsets("dog")), failing loudly with the fix.
set -euo pipefail
target="${1:?usage: install_wordnet.sh NLTK_DATA_DIR}"
python="${PYTHON:-.venv/bin/python}"
source_dir="${WORDNET_SOURCE:-/usr/share/wordnet}"
if ! "$python" -c "import sys; from lmms_eval_tasks.wordnet import is_prepared; sys.exit(0 if is_prepared(sys.argv[1]) else 1)" "$target/corpora/wordnet"; then
  if [ ! -f "$source_dir/data.noun" ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "Installing Debian's wordnet-base and wordnet-sense-index (WordNet 3.0 data)..."
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        wordnet-base wordnet-sense-index >/dev/null
    else
      echo "WordNet data missing: run 'sudo apt-get install --no-install-recommends wordnet-base'," >&2
      echo "or in Python: import nltk; nltk.download('wordnet')" >&2
      exit 1
    fi
  fi
fi
# Copies what is missing (building index.sense when wordnet-sense-index is absent), then loads WordNet.
"$python" -m lmms_eval_tasks.cli setup-wordnet --target "$target" --source "$source_dir"
