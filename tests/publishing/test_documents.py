"""The three documents of every example server, each valid for its raw pinned schema
(``jsonschema``, not snodo's models), through the functions and through the commands;
and what a server that cannot be published is told."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field, SecretStr

from snodo import Publishing, Server
from snodo.cli import load
from snodo.publishing import PublishingError, ai_catalog, identifier, server_card, server_json
from snodo.publishing.bundle import manifest
from snodo.server.settings import SettingsError, declared
from tests.publishing.schemas import errors
from tests.support.processes import snodo

EXAMPLES = [
    "examples/weather.py",
    "examples/preferences.py",
    "examples/apps.py",
    "examples/skills_server.py",
    "docs/examples/publishing.py",
]
URL = "https://mcp.example.com/mcp"


def _server(target: str) -> Server:
    found = load(target)
    assert isinstance(found, Server)
    return found


def _name(server: Server) -> str:
    return f"io.github.example/{server.info['name']}"


@pytest.mark.parametrize("target", EXAMPLES)
def test_each_example_publishes_three_valid_documents(target: str) -> None:
    server = _server(target)
    name = _name(server)
    card = server_card(server, name, URL)
    assert errors("server-card", card) == []
    assert card["name"] == name and card["version"] == server.info["version"]
    assert card["remotes"][0]["supportedProtocolVersions"] == list(server.versions)
    entry = server_json(server, name, URL, ("pypi:example-server", "npm:@example/server@2.0.0"))
    assert errors("server-json", entry) == []
    same = ("name", "version", "description", "title", "websiteUrl", "icons", "repository")
    assert {k: entry.get(k) for k in same} == {k: card.get(k) for k in same}
    document = manifest(server, "server.py:server")
    assert errors("mcpb-manifest", document) == []
    assert [tool["name"] for tool in document.get("tools", [])] == list(server.registry.tools)


def test_the_commands_print_what_the_functions_make() -> None:
    target = "docs/examples/publishing.py"
    server = _server(target)
    done = snodo("card", target, "--url", URL)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == server_card(server, url=URL)
    done = snodo("server-json", target, "--package", "pypi:forecasts-mcp")
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)
    assert entry == server_json(server, packages=("pypi:forecasts-mcp",))
    (package,) = entry["packages"]
    assert package["environmentVariables"] == [
        {
            "name": "API_KEY",
            "description": "Your forecast service's key.",
            "format": "string",
            "isRequired": True,
            "isSecret": True,
        },
        {
            "name": "UNITS",
            "description": "metric or imperial.",
            "format": "string",
            "isRequired": False,
            "isSecret": False,
            "default": "metric",
        },
    ]


def test_a_protected_server_says_which_header_it_requires() -> None:
    from tests.publishing.servers import protected as server

    card = server_card(server, url=URL)
    assert errors("server-card", card) == []
    (header,) = card["remotes"][0]["headers"]
    assert (header["name"], header["isRequired"], header["isSecret"]) == (
        "Authorization",
        True,
        True,
    )
    entry = server_json(server, url=URL)
    assert errors("server-json", entry) == [] and entry["remotes"][0]["headers"] == [header]


@pytest.mark.parametrize(
    ("server", "name", "says"),
    [
        (Server("bare", "1"), "com.example/bare", "has no description"),
        (Server("x", "1", description="x" * 101), "com.example/x", "101 characters"),
        (Server("x", "1", description="X."), "no-slash", "is not NAMESPACE/NAME"),
        (Server("x", "1", description="X."), None, "named NAMESPACE/NAME"),
        (
            Server("x", "1", description="X.", publishing=Publishing(repository="git@host:x")),
            "a/b",
            "a URL",
        ),
    ],
)
def test_what_cannot_be_published_is_said(server: Server, name: str | None, says: str) -> None:
    with pytest.raises(PublishingError, match=says):
        server_card(server, name)
    with pytest.raises(PublishingError, match=says):
        server_json(server, name)


def test_the_command_says_it_in_one_line() -> None:
    done = snodo("card", "tests/transports/beside_server.py:server", "--name", "a/b")
    assert done.returncode == 1
    assert done.stderr.startswith("snodo: ") and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("spec", "says"),
    [("pypi", "KIND:NAME"), ("cargo:x", "no package kind"), ("mcpb:https://x/b.mcpb", "SHA256")],
)
def test_a_bad_package_is_refused(spec: str, says: str) -> None:
    server = Server("x", "1", description="X.")
    with pytest.raises(PublishingError, match=says):
        server_json(server, "a/b", packages=(spec,))


def test_a_bundle_package_carries_its_digest() -> None:
    server = Server("x", "1.0.0", description="X.")
    digest = "ab" * 32
    entry = server_json(server, "a/b", packages=(f"mcpb:https://example.com/x.mcpb#{digest}",))
    assert errors("server-json", entry) == []
    assert entry["packages"][0]["fileSha256"] == digest


def test_an_ai_catalog_names_each_card() -> None:
    catalog = ai_catalog([("com.example/weather", "https://example.com/mcp/server-card")])
    assert catalog == {
        "specVersion": "1.0",
        "entries": [
            {
                "identifier": "urn:air:example.com:mcp:weather",
                "type": "application/mcp-server-card+json",
                "url": "https://example.com/mcp/server-card",
            }
        ],
    }
    assert identifier("io.github.user/x") == "urn:air:user.github.io:mcp:x"


class Settings(BaseModel):
    token: SecretStr = Field(description="A token.")
    retries: int = 3
    verbose: bool = False
    region: str = Field("eu", alias="APP_REGION")


def test_settings_are_read_from_the_environment() -> None:
    server = Server("x", "1", settings=Settings)
    found: Any = server.settings and declared(Settings)
    assert [(s.variable, s.kind, s.required, s.secret) for s in found] == [
        ("TOKEN", "string", True, True),
        ("RETRIES", "number", False, False),
        ("VERBOSE", "boolean", False, False),
        ("APP_REGION", "string", False, False),
    ]
    from snodo.server.settings import read

    settings = read(Settings, {"TOKEN": "t", "RETRIES": "5", "VERBOSE": "true"})
    assert (settings.token.get_secret_value(), settings.retries, settings.verbose) == ("t", 5, True)
    assert settings.region == "eu"
    with pytest.raises(SettingsError, match="TOKEN: field required; RETRIES"):
        read(Settings, {"RETRIES": "many"})


def test_a_setting_no_host_can_ask_for_is_refused_at_start() -> None:
    class Odd(BaseModel):
        when: list[int]

    with pytest.raises(TypeError, match="setting when"):
        Server("x", "1", settings=Odd)


def test_snodo_run_says_in_one_line_why_it_serves_no_card() -> None:
    done = snodo(
        "run", "tests/transports/beside_server.py:server", "--transport", "http",
        "--port", "0", "--card-name", "com.example/beside",
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "snodo: the server has no description: give it one, Server(..., description=...) "
        "(at most 100 characters)"
    ]
