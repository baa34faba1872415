#!/usr/bin/env bash
# The Python package's tests: install it into a venv the way a user does (`pip install ./python`,
# which builds the Rust library with cargo and ships it inside the package), then run pytest
# against the installed copy. The venv is kept between runs; cargo's build is incremental.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${OSSA_PYTHON_VENV:-$here/.venv}"
pip=("$venv/bin/pip" --quiet --disable-pip-version-check)

if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
"${pip[@]}" install "pytest==8.4.2"
"${pip[@]}" install "$here"

# The pytest script, not `python -m pytest`: the latter puts the working directory on sys.path,
# and python/ossa there (without its library) would shadow the installed package.
cd "$here"
"$venv/bin/pytest" -q -rs "$@"
