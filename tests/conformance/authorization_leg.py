"""The runner's authorization-server scenarios against snodo's OAuth proxy, with a
person at the browser.

    python -m tests.conformance.authorization_leg OUT_DIR

Serves the loopback provider (tests/support/idp.py) and, with ``snodo run``,
tests/conformance/authorization_server.py in front of it, then runs ``conformance
authorization`` against the proxy: ``authorization-server-metadata-endpoint`` and
``authorization-code-grant``. The second prints the authorization URL for a person to
open and waits for its callback server to be called back; the ``TestUser`` of
tests/support/idp.py is that person: it opens the URL, signs in at the provider (the
runner's client is first-party at the proxy, so there is no consent page) and follows
the redirects to the runner's callback. Results go to OUT_DIR; the exit status is the
runner's (the Node it needs must be first on PATH, as scripts/conformance puts it).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from tests.conformance.authorization_server import CLIENT_ID
from tests.support.idp import TestUser, serve_provider
from tests.support.paths import ROOT
from tests.support.processes import free_port, serving, snodo_run

RUNNER = ["npx", "--no-install", "--prefix", str(ROOT / "interop" / "conformance"), "conformance"]
TARGET = "tests/conformance/authorization_server.py:server"


def _sign_in(url: str, runner: subprocess.Popen[str], failed: list[BaseException]) -> None:
    try:
        TestUser().open(url)
    except BaseException as exc:  # reported by the leg; the runner would wait 5 minutes
        failed.append(exc)
        runner.terminate()


def run(out: Path) -> int:
    """Both scenarios, results under ``out``; the runner's exit status."""
    with serve_provider() as idp:
        callback_port = free_port()
        callback = f"http://127.0.0.1:{callback_port}/callback"

        def command(port: int) -> list[str]:
            base = f"http://127.0.0.1:{port}"
            idp.add_client(redirect_uris=[base + "/auth/callback"])
            env = [f"TEST_IDP={idp.url}", f"TEST_BASE={base}", f"TEST_CALLBACK={callback}"]
            return ["env", *env, *snodo_run(TARGET, "http", "--port", str(port))]

        with serving(command) as proxy:
            runner = subprocess.Popen(
                [
                    *RUNNER,
                    "authorization",
                    "--url",
                    proxy.base,
                    "--client-id",
                    CLIENT_ID,
                    "--resource",
                    proxy.base + "/mcp",
                    "--port",
                    str(callback_port),
                    "-o",
                    str(out),
                ],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            assert runner.stdout is not None
            failed: list[BaseException] = []
            address = ""
            for line in runner.stdout:
                print(line, end="", flush=True)
                if line.startswith(proxy.base + "/authorize?"):
                    address = line.strip()
                elif line.startswith("Callback server started") and address:
                    # Only once its callback server listens: the sign-in ends there.
                    args = (address, runner, failed)
                    threading.Thread(target=_sign_in, args=args, daemon=True).start()
            status = runner.wait()
    if failed:
        print(f"the sign-in failed: {failed[0]!r}", file=sys.stderr)
        return status or 1
    return status


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.conformance.authorization_leg OUT_DIR")
    sys.exit(run(Path(sys.argv[1])))
