#!/usr/bin/env bash
# `make setup`'s package step: torch's CPU wheel first, then the pack with its extras, into the venv $VENV.
#
# Uses uv (installed from PyPI into the venv by pip, ~15 MB) because pip's resolver and serial installs were
# most of a bare machine's `make demo` time; pip does the same installs when uv cannot be installed or fails.
# uv does not read pip's configuration, so the index URLs, find-links and constraint files pip is configured
# with (pip.conf, PIP_* variables: a local wheel folder or mirror) are passed to uv as flags.
#
# usage: VENV=.venv bash scripts/install_packages.sh CONSTRAINTS TORCH_REQUIREMENT PACK_REQUIREMENT
set -euo pipefail

constraints=$1 torch_requirement=$2 pack_requirement=$3
venv=${VENV:-.venv}
python=$venv/bin/python
uv=$venv/bin/uv

pip_install() {
  "$python" -m pip install --quiet -c "$constraints" "$torch_requirement"
  "$python" -m pip install --quiet -c "$constraints" -e "$pack_requirement"
}

# pip's effective settings (config files and PIP_* variables), as uv flags.
uv_flags_from_pip() {
  local key value item
  while IFS= read -r line; do
    key=${line%%=*} value=${line#*=}
    value=${value#\'} value=${value%\'}
    case "${key##*.}" in
      index-url) echo "--index-url=$value" ;;
      extra-index-url) for item in $value; do echo "--extra-index-url=$item"; done ;;
      find-links) for item in $value; do echo "--find-links=$item"; done ;;
      constraint) for item in $value; do [ -f "$item" ] && echo "--constraint=$item"; done ;;
    esac
  done < <("$python" -m pip config list 2>/dev/null)
  for item in ${PIP_INDEX_URL:-}; do echo "--index-url=$item"; done
  for item in ${PIP_EXTRA_INDEX_URL:-}; do echo "--extra-index-url=$item"; done
  for item in ${PIP_FIND_LINKS:-}; do echo "--find-links=$item"; done
  for item in ${PIP_CONSTRAINT:-}; do [ -f "$item" ] && echo "--constraint=$item"; done
  return 0
}

if [ "${LMMS_EVAL_TASKS_NO_UV:-}" != 1 ] && { [ -x "$uv" ] || "$python" -m pip install --quiet uv; }; then
  mapfile -t flags < <(uv_flags_from_pip | sort -u)
  # --index-strategy unsafe-best-match: like pip, take the best version across every index (a local
  # wheel folder next to PyPI); uv's default stops at the first index that has the package at all.
  if "$uv" pip install --quiet --python "$python" --index-strategy unsafe-best-match "${flags[@]}" \
      -c "$constraints" "$torch_requirement" &&
     "$uv" pip install --quiet --python "$python" --index-strategy unsafe-best-match "${flags[@]}" \
      -c "$constraints" -e "$pack_requirement"; then
    exit 0
  fi
  echo "setup: uv failed (above); installing with pip instead" >&2
else
  echo "setup: installing with pip (uv not available)" >&2
fi
pip_install
