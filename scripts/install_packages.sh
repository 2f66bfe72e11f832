#!/usr/bin/env bash
# `make setup`'s package step: torch's CPU wheel and the pack with its extras, into the venv $VENV, without
# torchvision and timm (below).
#
# Uses uv (installed from PyPI into the venv by pip, ~15 MB) because pip's resolver and serial installs were
# most of a bare machine's `make demo` time; pip does the same installs when uv cannot be installed or fails.
# uv does not read pip's configuration, so the index URLs, find-links and constraint files pip is configured
# with (pip.conf, PIP_* variables: a local wheel folder or mirror) are passed to uv as flags.
# uv first resolves from its own cache alone (--offline: no index is asked, ~5 s of CPU where asking the
# indexes took ~20 s and most of the step's wall time); it asks the indexes when the cache lacks something
# (a first install on this machine) or LMMS_EVAL_TASKS_REFRESH=1 asks for the newest releases.
#
# torchvision and timm are left out: the PyPI torchvision that lmms-eval drags in fails to import next to the
# CPU wheel and breaks transformers' import paths (spec 00 §3; transformers works without it), and timm imports
# torchvision (`accelerate launch` imports timm whenever it is installed). uv never installs them (--excludes);
# after pip they are uninstalled.
#
# usage: VENV=.venv bash scripts/install_packages.sh CONSTRAINTS TORCH_REQUIREMENT PACK_REQUIREMENT
set -euo pipefail

constraints=$1 torch_requirement=$2 pack_requirement=$3
venv=${VENV:-.venv}
python=$venv/bin/python
uv=$venv/bin/uv
left_out=(torchvision timm)

pip_install() {
  "$python" -m pip install --quiet -c "$constraints" "$torch_requirement"
  "$python" -m pip install --quiet -c "$constraints" -e "$pack_requirement"
  "$python" -m pip uninstall --quiet -y "${left_out[@]}" 2>/dev/null || true
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
  excludes=$(mktemp)
  trap 'rm -f "$excludes"' EXIT
  printf '%s\n' "${left_out[@]}" >"$excludes"
  # One resolution for torch and the pack: the constraints file pins torch to the CPU wheel (an unpinned
  # torch would pull a CUDA build). --index-strategy unsafe-best-match: like pip, take the best version
  # across every index (a local wheel folder next to PyPI); uv's default stops at the first index that has
  # the package at all. The venv's own torchvision/timm (an older set-up's) go too.
  uv_install() {
    "$uv" pip install --quiet --python "$python" --index-strategy unsafe-best-match "${flags[@]}" \
      --excludes "$excludes" -c "$constraints" "$@" "$torch_requirement" -e "$pack_requirement"
  }
  if { [ "${LMMS_EVAL_TASKS_REFRESH:-}" != 1 ] && uv_install --offline 2>/dev/null; } || uv_install; then
    "$uv" pip uninstall --quiet --python "$python" "${left_out[@]}" 2>/dev/null || true
    exit 0
  fi
  echo "setup: uv failed (above); installing with pip instead" >&2
else
  echo "setup: installing with pip (uv not available)" >&2
fi
pip_install
