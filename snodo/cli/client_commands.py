"""``snodo list`` and ``snodo call``: a terminal client for any MCP server, either era.

SERVER is an ``http(s)://`` URL, a ``module:name`` / ``file.py:name`` target that
``snodo run`` serves over stdio, or with ``--stdio`` any command that speaks MCP on its
stdio (an official SDK server, say). ``list`` prints the tools (with their parameters),
resources, templates, prompts and skills; ``call`` calls a tool (``key=value`` arguments,
typed by the tool's input schema, or ``--json``), reads a resource (``--resource``) or
gets a prompt (``--prompt``), answering the server's questions on the terminal
(``snodo.cli.terminal``) and showing its result (``snodo.cli.printing``). An
OAuth-protected server takes a bearer token (``--auth TOKEN``, ``--auth-file PATH`` or
``SNODO_AUTH_TOKEN``: the command line is readable by every local user, the other two
are not), or the sign-in ``snodo auth login`` kept for it (``--oauth`` signs in in the
browser when none is kept: ``snodo.cli.sign_in``). Progress and log
messages go to stderr; ``--output json`` prints the raw result on stdout. Errors are
one ``snodo:`` line and exit status 1; a tool's ``isError`` result exits 1 too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import socket
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import MISSING, BaseModel

from snodo.cli.failures import unanswered
from snodo.cli.printing import show_log, show_progress, show_result
from snodo.cli.sign_in import browser_agent, is_kept, kept_auth, sign_in_failed
from snodo.cli.terminal import Terminal
from snodo.client import Client, ClientError, NotAuthorized, ProtocolViolation, TransportError
from snodo.extensions.skills import EXTENSION_ID as SKILLS_EXTENSION
from snodo.extensions.skills import SkillsClient
from snodo.extensions.tasks import TasksClient

__all__ = [
    "AUTH_ENV",
    "add_auth_options",
    "auth_token",
    "bearer",
    "browser_oauth",
    "http_auth",
    "main",
    "not_authorized",
    "register",
]

AUTH_ENV = "SNODO_AUTH_TOKEN"
"""Where a bearer token may come from instead of ``--auth``, which every local user can
read in the process list."""

LIST_EXAMPLE = """examples:
  snodo list examples/preferences.py:server
  snodo list http://127.0.0.1:8000/mcp --output json
  snodo list --stdio "python my_server.py\""""
CALL_EXAMPLE = """examples:
  snodo call examples/preferences.py:server preferences
  snodo call http://127.0.0.1:8000/mcp add a=2 b=3
  snodo call app.py:server search --json '{"query": "mcp", "limit": 5}'
  snodo call app.py:server --resource notes://today
  snodo call app.py:server --prompt review code='print(1)'
  snodo call app.py:server book --answers answers.json --no-input"""


def register(commands: Any) -> None:
    """Add ``list`` and ``call`` to the ``snodo`` command's sub-commands."""
    formatter = argparse.RawDescriptionHelpFormatter
    listing = commands.add_parser(
        "list",
        help="print a server's tools, resources, templates and prompts",
        epilog=LIST_EXAMPLE,
        formatter_class=formatter,
    )
    _server_options(listing)
    listing.set_defaults(reparse=listing.parse_intermixed_args)
    call = commands.add_parser(
        "call",
        help="call a tool (or read a resource, get a prompt), answering its questions",
        epilog=CALL_EXAMPLE,
        formatter_class=formatter,
    )
    _server_options(call)
    call.add_argument("tool", nargs="?", help="the tool to call")
    call.add_argument("arguments", nargs="*", metavar="key=value", help="its arguments")
    call.add_argument("--json", dest="json_arguments", help="the arguments as a JSON object")
    call.add_argument("--resource", metavar="URI", help="read this resource instead")
    call.add_argument("--prompt", metavar="NAME", help="get this prompt instead")
    call.add_argument("--answers", metavar="FILE", help="JSON: answers keyed by question")
    call.add_argument("--no-input", action="store_true", help="decline what is not answered")
    call.add_argument("--sampling-cmd", metavar="CMD", help="pipe sampling requests to CMD")
    call.add_argument("--root", action="append", default=[], help="a root to offer (repeat)")
    call.add_argument("--log-level", default="info", help="server log messages from this level")
    # Options anywhere, as people type them: `call SERVER --era legacy TOOL k=v` too.
    call.set_defaults(reparse=call.parse_intermixed_args)


def _server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("server", help="URL, module:name / file.py:name, or with --stdio a command")
    parser.add_argument("--stdio", action="store_true", help="SERVER is a command to start")
    parser.add_argument("--era", choices=["auto", "modern", "legacy"], default="auto")
    add_auth_options(parser, "an OAuth bearer token for HTTP")
    parser.add_argument(
        "--oauth",
        action="store_true",
        help="sign in in the browser unless signed in (snodo auth login); the tokens are kept",
    )
    parser.add_argument("--output", choices=["text", "json"], default="text")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole call")


def add_auth_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--auth TOKEN`` and ``--auth-file PATH``; ``auth_token`` reads them."""
    parser.add_argument(
        "--auth",
        metavar="TOKEN",
        help=f"{what}; other local users can read it in the process list: prefer"
        f" --auth-file or the {AUTH_ENV} environment variable",
    )
    parser.add_argument(
        "--auth-file",
        metavar="PATH",
        help=f"a file holding the bearer token (its first line); without --auth or this,"
        f" {AUTH_ENV} is used when set",
    )


def auth_token(args: argparse.Namespace) -> str | None:
    """The bearer token: ``--auth``, else ``--auth-file``'s, else ``SNODO_AUTH_TOKEN``'s."""
    if args.auth is not None and args.auth_file is not None:
        raise ValueError("give --auth or --auth-file, not both")
    if args.auth is not None:
        token: str | None = args.auth
    elif args.auth_file is not None:
        try:
            text = Path(args.auth_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"--auth-file {args.auth_file}: {exc.strerror}") from None
        lines = text.strip().splitlines()
        token = lines[0].strip() if lines else ""
        if not token:
            raise ValueError(f"--auth-file {args.auth_file} holds no token")
    else:
        token = os.environ.get(AUTH_ENV) or None
    return token


def main(args: argparse.Namespace) -> int:
    """Run ``snodo list`` or ``snodo call``; the exit status."""
    # A stdio server's own stderr (its logging) is kept aside, and shown when it failed.
    with tempfile.TemporaryFile("w+") as server_log:
        args.server_log = server_log
        try:
            return asyncio.run(_main(args))
        except NotAuthorized as exc:
            error = f"snodo: {not_authorized(args.server, exc)}"
        except ClientError as exc:
            error = f"snodo: {unanswered(args.server, exc) or f'{type(exc).__name__}: {exc}'}"
        except (ValueError, OSError) as exc:
            error = f"snodo: {exc}"
        except Exception as exc:  # snodo[auth]'s OAuthError, raised through httpx
            if type(exc).__name__ != "OAuthError":
                raise
            error = f"snodo: {sign_in_failed(args.server, exc)}"
        server_log.seek(0)
        tail = _tail(server_log.read())
        if tail[-1:] and tail[-1].startswith("snodo: "):
            print(tail[-1], file=sys.stderr)  # the server's own one-line error says it all
        elif tail:
            print(error, "snodo: the server's stderr ended with:", sep="\n", file=sys.stderr)
            print(*(f"  {line}" for line in tail), sep="\n", file=sys.stderr)
        else:
            print(error, file=sys.stderr)
        return 1


def not_authorized(url: str, refused: NotAuthorized) -> str:
    """What a 401 or 403 means for the person at the terminal, and what to do."""
    body = refused.body if isinstance(refused.body, dict) else {}
    said = body.get("error_description") or body.get("error") or refused.body or ""
    detail = f"HTTP {refused.status}{f': {said}' if said else ''}"
    if refused.status == 401:
        return (
            f"{url} needs a sign-in ({detail}): snodo auth login {url}, or a bearer token"
            f" (--auth-file PATH or {AUTH_ENV})"
        )
    return f"{url} refused the credentials sent ({detail}): they do not allow this request"


def _tail(log: str) -> list[str]:
    """The end of a stdio server's stderr, each line once where it repeats in a row (a
    server started again to find out its era says the same again)."""
    lines: list[str] = []
    for line in log.strip().splitlines():
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines[-20:]


def _client(args: argparse.Namespace, handlers: Mapping[str, Any]) -> Client:
    """The terminal's client: it declares tasks (``TasksClient``), so a task tool's call
    is followed to its result as any other."""
    options: dict[str, Any] = {"era": args.era, "deadline": args.timeout, **handlers}
    if args.server.startswith(("http://", "https://")):
        client = Client.http(args.server, auth=http_auth(args), **options)
    else:
        argv = shlex.split(args.server) if args.stdio else _snodo_run(args.server)
        client = Client.stdio(argv, stderr=args.server_log, **options)
    TasksClient(client)
    return client


def http_auth(args: argparse.Namespace) -> Any:
    """How an HTTP server is called: with the token given (``--auth``, ``--auth-file``,
    ``SNODO_AUTH_TOKEN``), else with the sign-in kept for it (``snodo auth login``;
    ``--oauth`` signs in in the browser when none is), else as nobody."""
    token = auth_token(args)
    if token is not None:
        if args.oauth:
            raise ValueError("give --oauth or a bearer token, not both")
        return bearer(token)
    if args.oauth or is_kept(args.server):
        return kept_auth(args.server, browser=args.oauth)
    return None


def _snodo_run(target: str) -> list[str]:
    if ":" not in target and not target.endswith(".py"):
        raise ValueError(f"{target!r} is not a URL or a module:name target (or use --stdio)")
    # -P: the current folder is not searched before the package (a clone named snodo
    # there would be taken for it); the target is still found there (load).
    return [sys.executable, "-P", "-m", "snodo", "run", target, "--transport", "stdio"]


def browser_oauth(open_page: Any = None, transport: Any = None) -> Any:
    """An OAuth client that registers itself, sends the person to the authorization page
    in their browser (the address printed too, for a terminal with no browser) and
    listens for the way back on a free loopback port; its tokens in memory (``--oauth``
    keeps them: ``snodo.cli.sign_in``)."""
    try:
        from snodo.oauth import OAuth  # snodo[auth]: on demand
    except ModuleNotFoundError as exc:
        raise ValueError("--oauth needs the snodo[auth] extra: pip install 'snodo[auth]'") from exc

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return OAuth(
        user_agent=browser_agent(open_page),
        redirect_uri=f"http://127.0.0.1:{port}/callback",
        client_name="snodo call",
        transport=transport,
    )


def bearer(token: str) -> Any:
    def authorize(request: Any) -> Any:
        request.headers["authorization"] = f"Bearer {token}"
        return request

    return authorize


async def _main(args: argparse.Namespace) -> int:
    if args.command == "list":
        card = await _card(args)
        async with _client(args, {}) as client:
            return await _list(client, args.output, card)
    _what_to_call(args)
    answers = json.loads(Path(args.answers).read_text()) if args.answers else None
    if answers is not None and not isinstance(answers, dict):
        raise ValueError("--answers: the file must hold a JSON object")
    terminal = Terminal(
        answers=answers,
        no_input=args.no_input,
        sampling_command=args.sampling_cmd,
        roots=args.root,
    )
    async with _client(args, terminal.handlers()) as client:
        status = await _call(client, args)
    if terminal.input_ended:
        print("snodo: standard input ended during a question, which was cancelled", file=sys.stderr)
        return 1
    return status


async def _card(args: argparse.Namespace) -> dict[str, Any] | None:
    """An HTTP server's Server Card, when it publishes one: a card is public, yet a
    server that guards every path gets the bearer token given (not an OAuth sign-in's).
    What is no card is said on stderr, and the listing goes on."""
    if not args.server.startswith(("http://", "https://")):
        return None
    token = None if args.oauth else auth_token(args)
    headers = {} if token is None else {"authorization": f"Bearer {token}"}
    try:
        card = await Client.server_card(args.server, headers=headers)
    except ProtocolViolation as exc:
        print(f"snodo: no Server Card read: {exc}", file=sys.stderr)
        return None
    except TransportError:  # no card there (401, 405, ...): nothing to show
        return None
    return None if card is None else card.model_dump(mode="json")


async def _list(client: Client, output: str, card: dict[str, Any] | None = None) -> int:
    capabilities = (await client.discover()).capabilities
    # A kind the server does not declare is not asked for (it would answer -32601).
    tools = await client.list_tools() if capabilities.tools is not MISSING else []
    resources = await client.list_resources() if capabilities.resources is not MISSING else []
    templates = (
        await client.list_resource_templates() if capabilities.resources is not MISSING else []
    )
    prompts = await client.list_prompts() if capabilities.prompts is not MISSING else []
    offers_skills = await client.server_supports(SKILLS_EXTENSION)
    skills = await SkillsClient(client).list_skills() if offers_skills else []
    if output == "json":
        listed = {
            "tools": tools,
            "resources": resources,
            "resourceTemplates": templates,
            "prompts": prompts,
        }
        dumped: dict[str, Any] = {
            key: [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in items]
            for key, items in listed.items()
            if isinstance(items, list)
        }
        if offers_skills:  # a frontmatter field written empty (null) is the author's too
            dumped["skills"] = [s.model_dump(mode="json", by_alias=True) for s in skills]
        if isinstance(capabilities.extensions, dict) and capabilities.extensions:
            dumped["extensions"] = dict(capabilities.extensions)
        if card is not None:
            dumped["card"] = card
        print(json.dumps(dumped, indent=2, ensure_ascii=False))
        return 0
    if card is not None:
        named = f"{card['name']} {card['version']}" + (
            f" ({card['title']})" if "title" in card else ""
        )
        _section("server card", [(named, card["description"])])
    _section(
        "tools", [(f"{t.name}({_signature(_plain(t.input_schema))})", t.description) for t in tools]
    )
    _section("resources", [(str(r.uri), r.description or r.name) for r in resources])
    _section("resource templates", [(t.uri_template, t.description or t.name) for t in templates])
    rows = []
    for prompt in prompts:
        declared = prompt.arguments if isinstance(prompt.arguments, list) else []
        names = [a.name + ("" if a.required else "?") for a in declared]
        rows.append((f"{prompt.name}({', '.join(names)})", prompt.description))
    _section("prompts", rows)
    if offers_skills:  # by the URI of its SKILL.md: skill names need not be unique
        _section("skills", [(s.uri, s.frontmatter.description) for s in skills])
    extensions = _extensions(capabilities)
    if extensions:
        _section("extensions", extensions)
    return 0


def _plain(schema: Any) -> dict[str, Any]:
    """An input schema as the JSON it came as (the wire model keeps what it does not
    name, ``$defs`` included)."""
    if isinstance(schema, BaseModel):
        dumped: dict[str, Any] = schema.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped
    return dict(schema) if isinstance(schema, Mapping) else {}


def _section(title: str, rows: list[tuple[str, Any]]) -> None:
    print(f"{title} ({len(rows)})")
    for head, description in rows:
        line = str(description).strip().splitlines()[0] if description else ""
        print(f"  {head}" + (f"  {line}" if line else ""))


def _signature(schema: Mapping[str, Any]) -> str:
    """``name: type, other?: type`` of an input schema: each argument, ``?`` when it is
    optional, its type (``a|b`` for several, an enum's values, ``any`` when unsaid)."""
    required = set(schema.get("required") or [])
    properties = schema.get("properties")
    parts = []
    for name, prop in (properties if isinstance(properties, dict) else {}).items():
        parts.append(f"{name}{'' if name in required else '?'}: {_type_of(prop, schema)}")
    return ", ".join(parts)


def _type_of(prop: Any, schema: Mapping[str, Any]) -> str:
    choices = _choices(prop, schema)
    if choices:
        return "|".join(json.dumps(c) if not isinstance(c, str) else c for c in choices)
    return "|".join(_kinds(prop, schema)) or "any"


_DEEPEST = 8
"""How many ``$ref`` and ``anyOf`` steps into a schema are followed: a loop ends there."""


def _resolved(
    prop: Any, schema: Mapping[str, Any], depth: int = 0
) -> tuple[Mapping[str, Any] | None, int]:
    """``prop``, or what its chain of local ``$ref`` (``#/...``) ends at, with the depth
    reached; None where the chain ends in no schema or goes past ``_DEEPEST``."""
    while isinstance(prop, Mapping) and depth <= _DEEPEST:
        ref = prop.get("$ref")
        if not (isinstance(ref, str) and ref.startswith("#/")):
            return prop, depth
        target: Any = schema
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        prop, depth = target, depth + 1
    return None, depth


def _choices(prop: Any, schema: Mapping[str, Any]) -> list[Any]:
    """An enum's values (through a local ``$ref``), or none."""
    found, _ = _resolved(prop, schema)
    enum = found.get("enum") if found is not None else None
    return list(enum) if isinstance(enum, list) else []


def _extensions(capabilities: Any) -> list[tuple[str, Any]]:
    """What the server declares beyond the core: each extension (``capabilities.
    extensions``, skills or apps or tasks) and experimental capability, with its settings."""
    rows = []
    for field in ("extensions", "experimental"):
        declared = getattr(capabilities, field, None)
        for name, settings in (declared if isinstance(declared, dict) else {}).items():
            shown = json.dumps(settings, ensure_ascii=False) if settings else ""
            rows.append((name + (" (experimental)" if field == "experimental" else ""), shown))
    return rows


def _what_to_call(args: argparse.Namespace) -> None:
    """With ``--prompt`` or ``--resource`` no tool is named, so a first ``key=value``
    that argparse took for the tool's name is the first argument; checked before the
    server is reached, as any other mistake on the command line."""
    if args.prompt and args.resource:
        raise ValueError("give --prompt NAME or --resource URI, not both")
    if not (args.prompt or args.resource):
        return
    if args.tool is not None:
        if "=" not in args.tool:
            chosen = "--prompt" if args.prompt else "--resource"
            raise ValueError(f"{args.tool!r}: name a tool or use {chosen}, not both")
        args.arguments = [args.tool, *args.arguments]
        args.tool = None
    if args.resource and (args.arguments or args.json_arguments):
        raise ValueError("--resource URI takes no arguments: the URI says what to read")


async def _call(client: Client, args: argparse.Namespace) -> int:
    scope: dict[str, Any] = {
        "on_progress": show_progress,
        "on_log": show_log,
        "log_level": args.log_level,
    }
    if args.resource:
        result = await client.read_resource(args.resource, **scope)
    elif args.prompt:
        arguments = {k: str(v) for k, v in _arguments(args, None).items()}
        result = await client.get_prompt(args.prompt, arguments, **scope)
    else:
        if not args.tool:
            raise ValueError("name a tool (or --resource URI, --prompt NAME)")
        tools = {tool.name: tool for tool in await client.list_tools()}
        if args.tool not in tools:
            raise ValueError(f"the server has no tool {args.tool!r}: {', '.join(sorted(tools))}")
        schema = _plain(tools[args.tool].input_schema)
        result = await client.call_tool(args.tool, _arguments(args, schema), **scope)
    raw = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    print(file=sys.stderr, end="")  # the progress line, if any, ends here
    if args.output == "json":
        print(json.dumps(raw, indent=2, ensure_ascii=False))
    else:
        show_result(raw)
    return 1 if raw.get("isError") else 0


def _arguments(args: argparse.Namespace, schema: Any) -> dict[str, Any]:
    """``--json`` and ``key=value`` arguments, each value converted as the tool's input
    schema says (``typed_value``); with no schema (a prompt's arguments) strings."""
    arguments: dict[str, Any] = json.loads(args.json_arguments) if args.json_arguments else {}
    if not isinstance(arguments, dict):
        raise ValueError("--json: the arguments must be a JSON object")
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    for pair in args.arguments:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise ValueError(f"{pair!r}: arguments are key=value")
        arguments[key] = typed_value(key, value, properties.get(key), schema)
    return arguments


def _kinds(prop: Any, schema: Mapping[str, Any], depth: int = 0) -> list[str]:
    """The JSON types a property allows, through ``type`` (one or a list), ``anyOf`` /
    ``oneOf`` members, a local ``$ref``, and the values of an ``enum`` or ``const``."""
    found, depth = _resolved(prop, schema, depth)
    if found is None:
        return []
    kinds: list[str] = []
    declared = found.get("type")
    kinds += [declared] if isinstance(declared, str) else list(declared or [])
    for member in [*(found.get("anyOf") or []), *(found.get("oneOf") or [])]:
        kinds += _kinds(member, schema, depth + 1)
    for choice in [*(found.get("enum") or []), *([found["const"]] if "const" in found else [])]:
        kinds.append(_json_kind(choice))
    return list(dict.fromkeys(str(kind) for kind in kinds))


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "string"


def typed_value(key: str, value: str, prop: Any, schema: Mapping[str, Any]) -> Any:
    """What ``key=value`` sends: a string where the property takes one (or says nothing
    of its type), else the first of its other types that ``value`` reads as; a value
    that reads as none of them is one ``snodo:`` line before anything is sent."""
    kinds = _kinds(prop, schema)
    others = [kind for kind in kinds if kind != "string"]
    if not others or (kinds and set(others) <= {"null"} and "string" in kinds):
        return value
    for kind in others:
        try:
            read = json.loads(value)
        except ValueError:
            break
        if _json_kind(read) == kind or (kind == "number" and _json_kind(read) == "integer"):
            return read
    if "string" in kinds:
        return value
    raise ValueError(f"{key}={value!r}: {key} takes {' or '.join(kinds)}")
