# Shared set-up for the scripts: a project venv with every dependency, and the
# location of the pinned schema. Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.snodo-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
  touch "$stamp"
fi
legacy_sdk=interop/python_sdk_legacy/requirements.txt
if [ ! -x .venv-mcp1/bin/python ] || [ "$legacy_sdk" -nt .venv-mcp1/.installed ]; then
  "$PY" -m venv .venv-mcp1
  .venv-mcp1/bin/python -m pip install --quiet --disable-pip-version-check -r "$legacy_sdk"
  touch .venv-mcp1/.installed
fi
if [ -z "${SNODO_SCHEMA_DIR:-}" ] && [ -d "$ROOT/../shared/mcp-schema" ]; then
  SNODO_SCHEMA_DIR="$(cd "$ROOT/../shared/mcp-schema" && pwd)"
fi
export SNODO_SCHEMA_DIR="${SNODO_SCHEMA_DIR:-}"
export PATH="$ROOT/.venv/bin:$PATH"
