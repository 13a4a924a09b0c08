"""One client for many servers: ``ClientGroup``, and the ``mcpServers`` configuration.

``ClientGroup({"weather": client, "notes": other})``, or
``ClientGroup.from_config(path_or_dict, **client_options)`` from the format hosts use
(``{"mcpServers": {"notes": {"command": ..., "args": [...], "env": {...}}, "weather":
{"url": ..., "headers": {...}}}}``). Each server keeps its own client, era and
handlers; the group lists their tools and prompts with the names a mounted server's
get (``PREFIX_NAME``, ``snodo.gateway.composite``), their resources as they are, and
sends each call to the server it names. A server's key becomes its prefix, made safe
(characters a prefix may not have become ``-``) and unique (``-2``, ``-3``, ...).

A server's prefix is the group's own label for it, never what the server calls
itself: what an extension keeps per server (``snodo.extensions.skills.GroupSkills``:
skills by server and URI) keeps it under that label.

``servers(config)`` reads the configuration into ``Connect`` functions by prefix, which
``snodo proxy --config`` serves as one server (``serve_group``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from snodo.client import Client
from snodo.client.errors import RequestError
from snodo.gateway.composite import SEPARATOR, Composite, check_prefix, served_name
from snodo.gateway.forwarding import Connect, Proxy
from snodo.gateway.front import GATEWAYS
from snodo.gateway.mounting import composite_of
from snodo.gateway.passing import Passing, halves
from snodo.gateway.shaping import Shape
from snodo.revisions.authoring import (
    CallToolResult,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Tool,
)
from snodo.server import Server

__all__ = ["ClientGroup", "safe_prefixes", "serve_group", "servers"]

_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


def safe_prefixes(keys: list[str]) -> dict[str, str]:
    """Each key's prefix: unsafe characters as ``-``, made unique in order."""
    chosen: dict[str, str] = {}
    used: set[str] = set()
    for key in keys:
        base = _UNSAFE.sub("-", key).strip("-.")[:60] or "server"
        prefix, n = base, 1
        while prefix in used:
            n += 1
            prefix = f"{base}-{n}"
        used.add(check_prefix(prefix))
        chosen[key] = prefix
    return chosen


def _read(config: str | Path | Mapping[str, Any]) -> Mapping[str, Any]:
    if not isinstance(config, Mapping):
        config = json.loads(Path(config).read_text(encoding="utf-8"))
    assert isinstance(config, Mapping)
    entries = config.get("mcpServers", config.get("servers"))
    if not isinstance(entries, Mapping) or not entries:
        raise ValueError("the configuration has no servers (an mcpServers object)")
    return entries


def _headers(headers: Mapping[str, str]) -> Any:
    def add(request: Any) -> Any:
        request.headers.update(headers)
        return request

    return add


def servers(config: str | Path | Mapping[str, Any]) -> dict[str, Connect]:
    """The servers of an ``mcpServers`` configuration, by prefix, as ``Connect``
    functions: ``url`` (with ``headers``) over HTTP, else ``command``/``args``/``env``
    over stdio."""
    entries = _read(config)
    prefixes = safe_prefixes(list(entries))
    found: dict[str, Connect] = {}
    for key, entry in entries.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"server {key!r}: not an object")
        found[prefixes[key]] = _connect(key, entry)
    return found


def _connect(key: str, entry: Mapping[str, Any]) -> Connect:
    url, command = entry.get("url"), entry.get("command")
    if isinstance(url, str):
        headers = dict(entry.get("headers") or {})
        auth = _headers(headers) if headers else None
        return lambda **options: Client.http(url, auth=auth, **options)
    if isinstance(command, str):
        argv = [command, *[str(arg) for arg in entry.get("args") or []]]
        env = {str(k): str(v) for k, v in (entry.get("env") or {}).items()} or None
        return lambda **options: Client.stdio(argv, env=env, **options)
    raise ValueError(f"server {key!r}: give a url, or a command (with args, env)")


def serve_group(
    config: str | Path | Mapping[str, Any],
    *,
    answer_timeout: float = 300.0,
    relay: str | None = None,
    calls_per_client: int = 16,
    backend_sessions: int = 32,
    backend_idle: float = 300.0,
    passing: Iterable[Passing] = (),
    **server_options: Any,
) -> Server:
    """One server serving every server of the configuration, each under its prefix (an
    entry's ``"shape"`` object, ``Shape.from_json``, says what is taken of it);
    ``answer_timeout``, ``relay``, ``calls_per_client``, ``backend_sessions``,
    ``backend_idle`` and ``passing`` are ``proxy``'s, for each member."""
    entries = _read(config)
    prefixes = safe_prefixes(list(entries))
    shapes = {
        prefixes[key]: Shape.from_json(entry["shape"])
        for key, entry in entries.items()
        if isinstance(entry, Mapping) and entry.get("shape") is not None
    }
    server = Server(
        server_options.pop("name", "snodo-gateway"),
        server_options.pop("version", "1.0.0"),
        **server_options,
    )
    composite: Composite = composite_of(server)
    composite.passing = halves(passing, composite.passing)
    for prefix, connect in servers({"mcpServers": entries}).items():
        member = Proxy(
            connect,
            answer_timeout=answer_timeout,
            relay=relay,
            calls_per_client=calls_per_client,
            backend_sessions=backend_sessions,
            backend_idle=backend_idle,
            shape=shapes.get(prefix),
        )
        composite.add(prefix, member, {})
    GATEWAYS.add(server)
    return server


class ClientGroup:
    """Clients of several servers used as one (see the module docstring)."""

    def __init__(self, clients: Mapping[str, Client]) -> None:
        prefixes = safe_prefixes(list(clients))
        self.clients: dict[str, Client] = {prefixes[key]: c for key, c in clients.items()}
        """Each server's own client, by prefix."""
        self._uris: dict[str, str] = {}

    @classmethod
    def from_config(cls, config: str | Path | Mapping[str, Any], **options: Any) -> ClientGroup:
        """A group of the configuration's servers; ``options`` go to every client."""
        return cls({prefix: connect(**options) for prefix, connect in servers(config).items()})

    async def __aenter__(self) -> ClientGroup:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every client."""
        for client in self.clients.values():
            await client.close()

    def client(self, server: str) -> Client:
        """The client of the server the group calls ``server`` (its prefix)."""
        if server not in self.clients:
            raise ValueError(f"{server!r} is no server of this group ({', '.join(self.clients)})")
        return self.clients[server]

    def route(self, name: str) -> tuple[Client, str]:
        """The client a served name belongs to, and the name its server knows."""
        prefix, separator, inner = name.partition(SEPARATOR)
        if separator and prefix in self.clients:
            return self.clients[prefix], inner
        raise ValueError(f"{name!r} names no server of this group ({', '.join(self.clients)})")

    async def list_tools(self) -> list[Tool]:
        """Every server's tools, named ``PREFIX_NAME``."""
        found: list[Tool] = []
        for prefix, client in self.clients.items():
            for tool in await client.list_tools():
                found.append(tool.model_copy(update={"name": served_name(prefix, tool.name)}))
        return found

    async def list_prompts(self) -> list[Prompt]:
        """Every server's prompts, named ``PREFIX_NAME``."""
        found: list[Prompt] = []
        for prefix, client in self.clients.items():
            for prompt in await client.list_prompts():
                named = served_name(prefix, prompt.name)
                found.append(prompt.model_copy(update={"name": named}))
        return found

    async def list_resources(self) -> list[Any]:
        """Every server's resources, as they are; a read goes to the server listing it."""
        found: list[Any] = []
        for prefix, client in self.clients.items():
            for resource in await client.list_resources():
                self._uris.setdefault(resource.uri, prefix)
                found.append(resource)
        return found

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> CallToolResult:
        """``PREFIX_NAME`` called at its server, with ``call_tool``'s options."""
        client, inner = self.route(name)
        result: CallToolResult = await client.call_tool(inner, arguments, **options)
        return result

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, **options: Any
    ) -> GetPromptResult:
        """``PREFIX_NAME`` got from its server, with ``get_prompt``'s options."""
        client, inner = self.route(name)
        result: GetPromptResult = await client.get_prompt(inner, arguments, **options)
        return result

    async def read_resource(self, uri: str, **options: Any) -> ReadResourceResult:
        """The server that listed ``uri`` reads it; an unlisted URI is tried on each
        server in turn, the first that answers without an error answering (servers
        disagree on the code for an unknown resource: -32602, -32002, even 0); when
        none does, the last error is raised."""
        owner = self._uris.get(uri)
        if owner is not None:
            result: ReadResourceResult = await self.clients[owner].read_resource(uri, **options)
            return result
        missing: RequestError | None = None
        for client in self.clients.values():
            try:
                result = await client.read_resource(uri, **options)
            except RequestError as exc:
                missing = exc
                continue
            return result
        assert missing is not None
        raise missing
