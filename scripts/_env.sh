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
if [ -z "${SNODO_SCHEMA_DIR:-}" ] && [ -d "$ROOT/../shared/mcp-schema" ]; then
  SNODO_SCHEMA_DIR="$(cd "$ROOT/../shared/mcp-schema" && pwd)"
fi
export SNODO_SCHEMA_DIR="${SNODO_SCHEMA_DIR:-}"
export PATH="$ROOT/.venv/bin:$PATH"
