#!/usr/bin/env bash
# The comparison environment of benchmarks/retargeting.py: dex-retargeting 0.5.0 in its own virtualenv
# (.venv-dexretarget at the repository root), with pinned versions from PyPI. One command, any machine:
#
#     bash benchmarks/setup_dex_retargeting.sh          # or: make dex-retargeting-env
#
# dex-retargeting imports torch (undeclared in its wheel) and six (imported by its vendored yourdfpy); torch is
# pinned to the version LeRobot resolves in .venv, so a warm pip cache serves it. PYTHON picks the interpreter
# (dex-retargeting 0.5.0 needs 3.7-3.12; default: the first of python3.12, pyenv's 3.12, python3.11, python3). EXTRA_PIP_ARGS is passed to pip (e.g.
# "--index-url <a CPU-only torch index>" for a smaller torch).
#
# The benchmark also reads dex-retargeting's published example recording and the dex-urdf hand URDFs from a local
# checkout (never committed): see "Reference assets" in benchmarks/retargeting.py.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-dexretarget
if [ -z "${PYTHON:-}" ]; then  # the first interpreter that really is 3.7-3.12 (a pyenv shim may not be)
    for candidate in python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 python3.11 python3; do
        if "$candidate" -c 'import sys; assert (3, 7) <= sys.version_info[:2] <= (3, 12)' 2>/dev/null; then
            PYTHON=$candidate; break; fi
    done
fi
test -n "${PYTHON:-}" || { echo "dex-retargeting 0.5.0 needs Python 3.7-3.12; set PYTHON=/path/to/python"; exit 1; }
test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# shellcheck disable=SC2086
"$VENV/bin/python" -m pip install --quiet ${EXTRA_PIP_ARGS:-} \
    "dex-retargeting==0.5.0" "torch==2.11.0" "six==1.17.0" "numpy>=2,<3" "nlopt==2.11.0" "pin==4.1.0"
"$VENV/bin/python" -c 'import dex_retargeting, torch; print("dex-retargeting ready:", torch.__version__)'
