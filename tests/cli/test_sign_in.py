"""``snodo auth login`` through the OAuth proxy before the loopback provider (no
registration there), the test user as the browser; the kept tokens used by ``call``,
``list``, ``auth token`` and ``snodo proxy --oauth``, refreshed as they expire (the
proxy's live five seconds here, so every use refreshes them), by several processes at
once without spending one refresh token twice; what each says when the sign-in is
missing or refused. Each test keeps its sign-ins in a folder of its own
(``XDG_CONFIG_HOME``)."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.auth_proxy.site import Site, proxied
from tests.support.idp import USER, serve_provider
from tests.support.processes import SNODO, serving, snodo

pytest.importorskip("authlib")
pytestmark = pytest.mark.slow  # processes signing in, refreshing every five seconds

CLAIMS = f"{USER['sub']} {USER['email']} {USER['name']} notes:read notes:write"


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve_provider() as idp, proxied(idp, access_lifetime=5) as found:
        yield found


def environment(config: Path, *, deny: bool = False) -> dict[str, str]:
    browser = f"{sys.executable} -m tests.support.idp {'--deny ' if deny else ''}%s"
    return {**os.environ, "BROWSER": browser, "XDG_CONFIG_HOME": str(config)}


def kept_file(config: Path) -> Path:
    (found,) = (config / "snodo" / "auth").glob("*.json")
    return found


def test_sign_in_once_then_call_list_and_print_a_token(site: Site, tmp_path: Path) -> None:
    env = environment(tmp_path)
    before = snodo("call", site.mcp, "me", env=env)
    assert before.returncode == 1
    assert before.stderr == (
        f"snodo: {site.mcp} needs a sign-in (HTTP 401: Authorization required): snodo auth"
        f" login {site.mcp}, or a bearer token (--auth-file PATH or SNODO_AUTH_TOKEN)\n"
    )
    login = snodo("auth", "login", site.mcp, env=env)
    assert login.returncode == 0, login.stderr
    kept = kept_file(tmp_path)
    assert login.stderr.splitlines()[-1] == (
        f"snodo: signed in to {site.mcp}; the tokens are kept in {kept}"
    )
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    called = snodo("call", site.mcp, "me", env=env)
    assert (called.returncode, called.stdout) == (0, CLAIMS + "\n"), called.stderr
    listed = snodo("list", site.mcp, "--output", "json", env=env)
    assert "me" in [tool["name"] for tool in json.loads(listed.stdout)["tools"]], listed.stderr
    printed = snodo("auth", "token", site.mcp, env=env)
    assert printed.returncode == 0, printed.stderr
    assert snodo("auth", "list", env=env).stdout == f"{site.mcp}\n"
    # The token printed is one the server takes from any program.
    answered = httpx.post(
        site.mcp,
        json={"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}},
        headers={"authorization": f"Bearer {printed.stdout.strip()}"},
    )
    assert answered.status_code != 401, answered.text
    out = snodo("auth", "logout", site.mcp, env=env)
    assert out.stderr == f"snodo: signed out of {site.mcp}\n"
    assert not kept.exists()
    assert snodo("call", site.mcp, "me", env=env).returncode == 1
    token = snodo("auth", "token", site.mcp, env=env)
    assert token.stderr == f"snodo: not signed in to {site.mcp}: snodo auth login {site.mcp}\n"


def test_signing_in_again_uses_the_registration_kept(site: Site, tmp_path: Path) -> None:
    env = environment(tmp_path)
    assert snodo("auth", "login", site.mcp, env=env).returncode == 0
    first = json.loads(kept_file(tmp_path).read_text())
    assert snodo("auth", "login", site.mcp, env=env).returncode == 0
    again = json.loads(kept_file(tmp_path).read_text())
    assert again["clients"] == first["clients"] and len(first["clients"]) == 1
    assert again["redirect_uri"] == first["redirect_uri"]
    assert again["tokens"]["refresh_token"] != first["tokens"]["refresh_token"]


def test_a_refused_sign_in_keeps_nothing(site: Site, tmp_path: Path) -> None:
    refused = snodo("auth", "login", site.mcp, env=environment(tmp_path, deny=True))
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        f"snodo: signing in to {site.mcp} failed: authorization refused: access_denied"
    )
    assert not json.loads(kept_file(tmp_path).read_text()).get("tokens")


def test_processes_refresh_the_kept_tokens_in_turn(site: Site, tmp_path: Path) -> None:
    """The proxy rotates refresh tokens and revokes the grant when a spent one comes
    back: six processes refreshing at once would revoke it, one at a time they do not."""
    env = environment(tmp_path)
    assert snodo("auth", "login", site.mcp, env=env).returncode == 0
    kept = kept_file(tmp_path)
    first = json.loads(kept.read_text())["tokens"]
    with ThreadPoolExecutor(6) as pool:
        runs = list(pool.map(lambda _: snodo("auth", "token", site.mcp, env=env), range(6)))
    assert [run.returncode for run in runs] == [0] * 6, [run.stderr for run in runs]
    now = json.loads(kept.read_text())["tokens"]
    assert now["refresh_token"] != first["refresh_token"]
    called = snodo("call", site.mcp, "me", env=env)  # the grant is still good
    assert (called.returncode, called.stdout) == (0, CLAIMS + "\n"), called.stderr


def test_a_refresh_refused_says_to_sign_in_again(site: Site, tmp_path: Path) -> None:
    env = environment(tmp_path)
    assert snodo("auth", "login", site.mcp, env=env).returncode == 0
    kept = kept_file(tmp_path)
    record = json.loads(kept.read_text())
    record["tokens"]["refresh_token"] = "spent-or-revoked"
    record["tokens"]["access_token"] = "expired-or-revoked"
    kept.write_text(json.dumps(record))
    token = snodo("auth", "token", site.mcp, env=env)
    assert token.stderr == (
        f"snodo: the refresh token for {site.mcp} was refused: snodo auth login {site.mcp}\n"
    )
    called = snodo("call", site.mcp, "me", env=env)
    assert called.stderr == (
        f"snodo: {site.mcp} needs a sign-in (HTTP 401: not signed in, or the sign-in expired"
        f" and could not be refreshed): snodo auth login {site.mcp}, or a bearer token"
        " (--auth-file PATH or SNODO_AUTH_TOKEN)\n"
    )


# -- snodo proxy: the kept sign-in behind, tokens or OAuth in front ------------------------


FRONT_TOKEN = "front-token-for-the-tests-0123456789"


def front_command(url: str, *extra: str) -> Callable[[int], list[str]]:
    def command(port: int) -> list[str]:
        return [*SNODO, "proxy", url, "--transport", "http", "--port", str(port), *extra]

    return command


def test_a_proxy_calls_its_backend_with_the_kept_sign_in(site: Site, tmp_path: Path) -> None:
    env = environment(tmp_path)
    not_yet = snodo("proxy", site.mcp, "--oauth", env=env)
    assert not_yet.stderr == (
        f"snodo proxy: not signed in to {site.mcp}: snodo auth login {site.mcp}\n"
    )
    assert snodo("auth", "login", site.mcp, env=env).returncode == 0
    tokens = tmp_path / "front-tokens"
    tokens.write_text(f"# who may call the proxy\n{FRONT_TOKEN}\n")
    tokens.chmod(0o600)
    workers = ("--workers", "2", "--unshared-legacy-sessions")  # the calls are modern
    command = front_command(site.mcp, "--oauth", "--token-file", str(tokens), *workers)
    with serving(command, env={"XDG_CONFIG_HOME": str(tmp_path)}) as front:
        url = f"{front.base}/mcp"
        given = tmp_path / "token"
        given.write_text(FRONT_TOKEN)
        for _ in range(3):  # its workers refresh the backend's tokens in turn
            called = snodo("call", url, "me", "--auth-file", str(given), env=env)
            assert (called.returncode, called.stdout) == (0, CLAIMS + "\n"), called.stderr
        nobody = snodo("call", url, "me", env={**env, "XDG_CONFIG_HOME": str(tmp_path / "x")})
        assert nobody.returncode == 1
        assert nobody.stderr.startswith(f"snodo: {url} needs a sign-in (HTTP 401")
        # The backend's sign-in gone: the front is told it was the backend's 401.
        assert snodo("auth", "logout", site.mcp, env=env).returncode == 0
        refused = snodo("call", url, "me", "--auth-file", str(given), env=env)
        assert refused.returncode == 1
        assert refused.stderr == (
            "snodo: RequestError: -32603: The server behind this proxy refused the proxy's"
            " credentials (HTTP 401: none, or no longer valid)\n"
        )


FRONT_AUTHORIZATION = """
from snodo.auth import AccessToken, InvalidToken, ProtectedResource


class OneToken:
    async def verify(self, token: str) -> AccessToken:
        if token != "the-one-token-the-front-takes":
            raise InvalidToken("not the one")
        return AccessToken(subject="ada", scopes=frozenset(), client_id="c")


def resource(port: int = {port}) -> ProtectedResource:
    return ProtectedResource(
        f"http://127.0.0.1:{{port}}/mcp", ["https://id.example.com"], OneToken()
    )
"""


def test_a_proxys_front_checks_tokens_as_a_servers_authorization(
    site: Site, tmp_path: Path
) -> None:
    env = environment(tmp_path)
    assert snodo("auth", "login", site.mcp, env=env).returncode == 0

    def command(port: int) -> list[str]:
        (tmp_path / "front_auth.py").write_text(FRONT_AUTHORIZATION.format(port=port))
        target = f"{tmp_path / 'front_auth.py'}:resource"
        return front_command(site.mcp, "--oauth", "--authorization", target)(port)

    with serving(command, env={"XDG_CONFIG_HOME": str(tmp_path)}) as front:
        url = f"{front.base}/mcp"
        refused = httpx.post(url, json={})
        assert refused.status_code == 401
        metadata = f"{front.base}/.well-known/oauth-protected-resource/mcp"
        assert refused.headers["www-authenticate"].startswith(
            f'Bearer resource_metadata="{metadata}"'
        )
        token = {"SNODO_AUTH_TOKEN": "the-one-token-the-front-takes"}
        called = snodo("call", url, "me", env={**env, **token})
        assert (called.returncode, called.stdout) == (0, CLAIMS + "\n"), called.stderr


def test_the_front_options_are_checked_first(site: Site, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n")
    target = "examples/preferences.py:server"
    run = snodo("run", target, "--transport", "http", "--token-file", str(empty), "--port", "1")
    assert run.stderr == f"snodo: --token-file {empty} holds no token (one a line)\n"
    stdio = snodo("run", target, "--token-file", str(empty))
    assert stdio.stderr == "snodo: --token-file is for --transport http (stdio has no tokens)\n"
    both = snodo("proxy", site.mcp, "--authorization", "x:y", "--token-file", str(empty))
    assert both.stderr == "snodo proxy: give --authorization or --token-file, not both\n"
    stdio_oauth = snodo("proxy", "--oauth", "--", "python", "server.py")
    assert stdio_oauth.stderr == "snodo proxy: --oauth is for an HTTP backend (a URL)\n"
