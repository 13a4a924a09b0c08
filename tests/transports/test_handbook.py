"""The handbook scenario, as a newcomer runs it from the docs: the FastAPI program of
docs/web-apps.md (an OAuth proxy before a provider without registration, the app
mounted under /mcp), signed in to once by ``snodo auth login`` with the test user as
the browser; then ``snodo call`` with the kept sign-in, and the official Python SDK's
client (mcp 1.x) with the token ``snodo auth token`` prints. Two workers given one
Redis setting are tests/scaleout/test_one_redis.py's, apart from this program."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.idp import USER, serve_provider
from tests.support.legacy_sdk import LEGACY_SDK_PYTHON
from tests.support.processes import Serving, serving, snodo
from tests.transports.test_web_apps import sign_in_program

pytest.importorskip("authlib")
pytest.importorskip("fastapi")
pytestmark = pytest.mark.slow  # a provider, the app, and a sign-in by processes

WHOAMI = f"{USER['name']} <{USER['email']}>"

OFFICIAL_CLIENT = """
import asyncio, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

async def main(url, token):
    headers = {"Authorization": f"Bearer {token}"}
    async with streamablehttp_client(url, headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("whoami", {})
            print(result.content[0].text)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@pytest.fixture(scope="module")
def handbook() -> Iterator[Serving]:
    with serve_provider() as idp, serving(sign_in_program("fastapi_oauth", idp)) as app:
        yield app


def test_sign_in_once_then_call_from_snodo_and_the_official_client(
    handbook: Serving, tmp_path: Path
) -> None:
    mcp = f"{handbook.base}/mcp"
    browser = f"{sys.executable} -m tests.support.idp %s"
    env = {**os.environ, "BROWSER": browser, "XDG_CONFIG_HOME": str(tmp_path)}
    login = snodo("auth", "login", mcp, env=env)
    assert login.returncode == 0, login.stderr
    assert login.stderr.splitlines()[-1].startswith(f"snodo: signed in to {mcp};")

    called = snodo("call", mcp, "whoami", env=env)
    assert (called.returncode, called.stdout.strip()) == (0, WHOAMI), called.stderr

    token = snodo("auth", "token", mcp, env=env)
    assert token.returncode == 0, token.stderr
    if not LEGACY_SDK_PYTHON.exists():
        pytest.skip(f"{LEGACY_SDK_PYTHON} is missing (scripts/_env.sh makes it)")
    official = subprocess.run(
        [str(LEGACY_SDK_PYTHON), "-c", OFFICIAL_CLIENT, mcp, token.stdout.strip()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (official.returncode, official.stdout.strip()) == (0, WHOAMI), official.stderr
