"""A base revision's overlay carried into a new revision: what the two schemas show by
themselves is done, what they cannot show is asked.

``add-revision`` copies the base's overlay under the new name (``generator.add``) and
carries it here, against the base's schema and the new one:

- a definition the new schema renames (``diff``: removed, and added with the same
  schema) is renamed wherever the overlay names it, the input-required result included;
- an entry naming a definition the new schema removed (a method, an input or server
  request with its capability rules, an error code, a discriminator, an inline name, an
  excluded definition) is dropped, as is a reserved ``_meta`` key the schema no longer
  mentions and a patch whose target is gone or now holds what the patch said;
- a request new in the ``ClientRequest`` union gets a ``[methods]`` entry paired by its
  name, a method whose response now allows the input-required result (or no longer
  does) says so, and an inline object schema new in the revision gets a name made from
  where it stands (``Tool/properties/execution`` is ``ToolExecution``);
- what the schemas cannot decide is a question: a placeholder (``"?"``) where the
  answer goes, and ``[draft] asked`` lists each question; ``add-revision`` writes the
  overlay as a draft and its next run resumes from what was answered.

Each change is one line of the command's output. Run on an overlay already carried
(``old`` None), it only finds what is still unanswered.
"""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from generator.overlay import Overlay, OverlayError, parse_overlay
from generator.prepass import resolve_pointer, unnamed_inline
from generator.schemadiff import diff_definitions

JSON = Any
PLACEHOLDER = "?"
"""Where an answer goes: an overlay holding it is a draft until it is replaced."""

_HEADER = re.compile(r"(?m)^\[\[?([^\]\n]+?)\]\]?[ \t]*$")


@dataclass
class Carried:
    text: str
    lines: list[str] = field(default_factory=list)
    """What was carried, one line each."""
    questions: list[str] = field(default_factory=list)
    """What the schemas cannot decide, one question each."""


@dataclass(frozen=True, slots=True)
class _Block:
    header: str
    """The table's name: ``methods."tools/call"``, ``capability_rules`` (array)."""
    start: int
    own_end: int
    """Past the block's last entry line: comments after it introduce the next table."""
    end: int


def _blocks(text: str) -> list[_Block]:
    found = list(_HEADER.finditer(text))
    blocks = []
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(text)
        body = text[match.end() : end]
        own = match.end()
        offset = match.end()
        for line in body.splitlines(keepends=True):
            offset += len(line)
            if line.strip() and not line.lstrip().startswith("#"):
                own = offset
        blocks.append(_Block(match.group(1).strip(), match.start(), max(own, match.end()), end))
    return blocks


def _body(text: str, block: _Block) -> dict[str, Any]:
    """The keys of one table block."""
    inner = text[text.index("\n", block.start) + 1 : block.own_end]
    try:
        return tomllib.loads(inner)
    except tomllib.TOMLDecodeError:
        return {}


def _without(text: str, blocks: list[_Block]) -> str:
    """``text`` without the entries of ``blocks`` (their trailing comments stay)."""
    for block in sorted(blocks, key=lambda b: b.start, reverse=True):
        before, after = text[: block.start], text[block.own_end :]
        if before.endswith("\n\n") and after.startswith("\n"):
            after = after[1:]
        text = before + after
    return text


def _line_in(text: str, table: str, pattern: str) -> re.Match[str] | None:
    for block in _blocks(text):
        if block.header == table:
            return re.compile(pattern, re.M).search(text, block.start, block.own_end)
    return None


def _drop_line(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[:start] + text[end + 1 if end != -1 else len(text) :]


def _branches(defs: dict[str, JSON], union: str) -> list[str]:
    node = defs.get(union) or {}
    return [
        b["$ref"].rsplit("/", 1)[-1]
        for b in node.get("anyOf") or node.get("oneOf") or []
        if isinstance(b, dict) and "$ref" in b
    ]


def _resolves(doc: JSON, pointer: str) -> tuple[bool, JSON]:
    try:
        parent, key = resolve_pointer(doc, pointer)
        return True, parent[key]
    except (KeyError, IndexError, ValueError, TypeError):
        return False, None


def _path_exists(defs: dict[str, JSON], path: str) -> bool:
    return _resolves(defs, path)[0]


def _camel(part: str) -> str:
    return part[:1].upper() + part[1:]


def inline_name(path: str) -> str:
    """A class name for the inline schema at ``path`` (``Tool/properties/execution``):
    the definition's name and each property's, ``items`` singular, branches numbered
    by the word ``Branch`` (no class name ends in a digit)."""
    parts = path.split("/")
    name = parts[0]
    for previous, part in itertools.pairwise(parts):
        if part in ("properties", "anyOf", "oneOf", "allOf"):
            continue
        if part == "items":
            name += "Item"
        elif part == "additionalProperties":
            name += "Value"
        elif part.isdigit() and previous in ("anyOf", "oneOf"):
            name += f"Branch{chr(ord('A') + int(part))}"
        else:
            name += _camel(part.replace("~1", "/").replace("~0", "~").replace("_", ""))
    return re.sub(r"[^A-Za-z0-9]", "", name)


def carry(text: str, old: JSON | None, new: JSON, revision: str) -> Carried:
    """The overlay ``text`` (of the base revision, whose schema is ``old``; None: of
    ``revision`` itself, being resumed) fitted to ``new``, the schema of ``revision``."""
    carried = Carried(text)
    defs: dict[str, JSON] = new["$defs"]
    if old is not None:
        _renames(carried, old, new, revision)
        _meta_keys(carried, new, revision)
    _dropped(carried, defs, revision)
    _patches(carried, new, revision)
    _methods(carried, defs, revision)
    _input_requests(carried, defs)
    _protocol(carried, defs, revision)
    _capability_rules(carried, defs)
    _placeholders(carried)
    if not carried.questions:
        _inline_names(carried, new, revision)
    return carried


def _renames(carried: Carried, old: JSON, new: JSON, revision: str) -> None:
    for before, after in diff_definitions(old, new).renamed:
        word = re.compile(rf"\b{re.escape(before)}\b")
        entries = [
            line
            for line in carried.text.splitlines()
            if word.search(line) and not line.lstrip().startswith("#")
        ]
        if not entries:
            continue
        carried.text = word.sub(after, carried.text)
        for line in entries:
            key = line.split("=", 1)[0].strip() if "=" in line else line.strip()
            where = _table_of(carried.text, word.sub(after, line))
            carried.lines.append(
                f"carried: {where}{key}: {before} -> {after} ({before} is renamed in "
                f"{revision}, the same schema)"
            )


def _table_of(text: str, line: str) -> str:
    at = text.find(line)
    header = ""
    for block in _blocks(text):
        if block.start <= at:
            header = block.header
    return f"[{header}] " if header else ""


def _meta_keys(carried: Carried, new: JSON, revision: str) -> None:
    written = json.dumps(new)
    data = tomllib.loads(carried.text)
    for name, key in data.get("protocol", {}).get("meta_keys", {}).items():
        if key in written:
            continue
        match = _line_in(carried.text, "protocol.meta_keys", rf"^{re.escape(name)}\s*=.*$")
        if match is not None:
            carried.text = _drop_line(carried.text, match)
            carried.lines.append(
                f"dropped: [protocol.meta_keys] {name}: {key} is nowhere in {revision}"
            )


def _dropped(carried: Carried, defs: dict[str, JSON], revision: str) -> None:
    """Entries naming a definition ``revision`` does not define, or no longer lists."""
    unions = {
        "methods": "ClientRequest",
        "input_requests": "InputRequest",
        "server_requests": "ServerRequest",
    }
    gone_requests: set[str] = set()
    doomed: list[_Block] = []
    for block in _blocks(carried.text):
        kind = block.header.split(".", 1)[0]
        if kind not in unions:
            continue
        body = _body(carried.text, block)
        request, result = body.get("request"), body.get("result")
        method = block.header.split(".", 1)[1].strip('"') if "." in block.header else ""
        missing = [n for n in (request, result) if n not in (None, PLACEHOLDER) and n not in defs]
        if missing:
            why = f"{missing[0]} is not in {revision}"
        elif request is not None and request not in _branches(defs, unions[kind]):
            why = f"{request} is no longer in the {unions[kind]} union"
        else:
            continue
        doomed.append(block)
        gone_requests.add(method)
        carried.lines.append(f"dropped: [{block.header}]: {why}")
    for block in _blocks(carried.text):
        if block.header == "capability_rules":
            asked = _body(carried.text, block).get("method")
            if asked in gone_requests:
                doomed.append(block)
                carried.lines.append(f"dropped: a [[capability_rules]] entry of {asked}")
    carried.text = _without(carried.text, doomed)
    _drop_entries(carried, "errors", defs, revision, lambda value: value.get("definition"))
    _drop_entries(carried, "discriminators", defs, revision, None)
    _drop_entries(carried, "inline_names", defs, revision, None)
    data = tomllib.loads(carried.text)
    excluded = data.get("excluded", {}).get("definitions", [])
    kept = [name for name in excluded if name in defs]
    if kept != excluded:
        match = _line_in(carried.text, "excluded", r"^definitions\s*=.*$")
        if match is not None:
            carried.text = (
                carried.text[: match.start()]
                + f"definitions = {json.dumps(kept)}"
                + carried.text[match.end() :]
            )
            for name in sorted(set(excluded) - set(kept)):
                carried.lines.append(f"dropped: [excluded] {name}: it is not in {revision}")


def _drop_entries(
    carried: Carried, table: str, defs: dict[str, JSON], revision: str, named: Any
) -> None:
    """Drop each ``key = value`` of ``table`` whose definition (``named(value)``, else
    the key: a definition or a path in one) ``revision`` does not have."""
    data = tomllib.loads(carried.text).get(table, {})
    for key, value in data.items():
        target = named(value) if named is not None else key
        if not isinstance(target, str):
            continue
        exists = target in defs if "/" not in target else _path_exists(defs, target)
        if exists:
            continue
        quoted = json.dumps(key) if not re.fullmatch(r"[A-Za-z0-9_-]+", key) else key
        match = _line_in(carried.text, table, rf"^{re.escape(quoted)}\s*=.*$")
        if match is not None:
            carried.text = _drop_line(carried.text, match)
            carried.lines.append(f"dropped: [{table}] {key}: {target} is not in {revision}")


def _patches(carried: Carried, new: JSON, revision: str) -> None:
    doomed = []
    for block in _blocks(carried.text):
        if block.header != "patches":
            continue
        patch = _body(carried.text, block)
        pointer = str(patch.get("pointer"))
        found, current = _resolves(new, pointer)
        if not found:
            doomed.append(block)
            carried.lines.append(f"dropped: the patch at {pointer}: {revision} has no such place")
        elif current == patch.get("value"):
            doomed.append(block)
            carried.lines.append(
                f"dropped: the patch at {pointer}: {revision} says what the patch said"
            )
        elif current != patch.get("expect"):
            carried.questions.append(
                f"the patch at {pointer} expects {patch.get('expect')!r}; {revision} has "
                f"{current!r}: update its expect and value, or delete it"
            )
    carried.text = _without(carried.text, doomed)


def _response_allows(defs: dict[str, JSON], result: str, asks: str | None) -> bool | None:
    response = defs.get(f"{result}Response")
    if response is None or asks is None:
        return None
    return f'"#/$defs/{asks}"' in json.dumps(response)


def _methods(carried: Carried, defs: dict[str, JSON], revision: str) -> None:
    data = tomllib.loads(carried.text)
    asks = data.get("protocol", {}).get("input_required_result")
    if asks == PLACEHOLDER:
        asks = None  # asked about: nothing to pair the responses with until answered
    declared = {
        fact.get("request") for fact in data.get("methods", {}).values() if isinstance(fact, dict)
    }
    excluded = set(data.get("excluded", {}).get("definitions", []))
    for method, fact in data.get("methods", {}).items():
        if fact.get("result") == PLACEHOLDER:
            carried.questions.append(_result_question(method, str(fact.get("request")), revision))
            continue
        allows = _response_allows(defs, str(fact.get("result")), asks)
        if allows is None or allows == bool(fact.get("input_required", False)):
            continue
        block = next(
            b for b in _blocks(carried.text) if b.header == f"methods.{json.dumps(method)}"
        )
        match = re.compile(r"(?m)^input_required\s*=.*$").search(
            carried.text, block.start, block.own_end
        )
        line = f"input_required = {str(allows).lower()}"
        if match is None:
            carried.text = (
                carried.text[: block.own_end] + line + "\n" + carried.text[block.own_end :]
            )
        else:
            carried.text = carried.text[: match.start()] + line + carried.text[match.end() :]
        carried.lines.append(
            f"carried: [methods.{json.dumps(method)}] {line} (its response "
            f"{'now allows' if allows else 'no longer allows'} {asks})"
        )
    added = []
    for request in _branches(defs, "ClientRequest"):
        if request in declared or request in excluded:
            continue
        props = defs.get(request, {}).get("properties", {})
        name = props.get("method", {}).get("const")
        if not isinstance(name, str):
            carried.questions.append(
                f"{request} is new in the ClientRequest union and fixes no method name: "
                "add it to [excluded] definitions, or a [methods] entry for it"
            )
            continue
        result = request[: -len("Request")] + "Result" if request.endswith("Request") else ""
        paired = result in defs
        allows = _response_allows(defs, result, asks) if paired else False
        added.append(
            f"\n# Inferred by add-revision: {request} is new in the ClientRequest union.\n"
            f"[methods.{json.dumps(name)}]\n"
            f"request = {json.dumps(request)}\n"
            f"result = {json.dumps(result if paired else PLACEHOLDER)}\n"
            f"input_required = {str(bool(allows)).lower()}\n"
        )
        if paired:
            carried.lines.append(
                f"added: [methods.{json.dumps(name)}] {request} answered by {result}"
            )
        else:
            carried.questions.append(_result_question(name, request, revision))
    carried.text = carried.text.rstrip("\n") + "\n" + "".join(added)


def _result_question(method: str, request: str, revision: str) -> str:
    paired = request[: -len("Request")] + "Result" if request.endswith("Request") else "result"
    return (
        f'[methods."{method}"] result: {revision} names no {paired} for {request}: which '
        "definition answers it?"
    )


def _input_requests(carried: Carried, defs: dict[str, JSON]) -> None:
    data = tomllib.loads(carried.text)
    for table, union in (("input_requests", "InputRequest"), ("server_requests", "ServerRequest")):
        if union not in defs:
            continue
        declared = {fact.get("request") for fact in data.get(table, {}).values()}
        for request in _branches(defs, union):
            if request in declared or request in data.get("excluded", {}).get("definitions", []):
                continue
            method = defs.get(request, {}).get("properties", {}).get("method", {}).get("const")
            carried.questions.append(
                f"{request} ({method}) is new in the {union} union: add its [{table}] entry "
                "(request, result, and for an input request deprecated) and the "
                "[[capability_rules]] of the client capability it needs, if any"
            )


def _protocol(carried: Carried, defs: dict[str, JSON], revision: str) -> None:
    protocol = tomllib.loads(carried.text).get("protocol", {})
    asks = protocol.get("input_required_result")
    if asks is not None and asks not in defs:
        match = _line_in(carried.text, "protocol", r"^input_required_result\s*=.*$")
        if match is not None:
            carried.text = (
                carried.text[: match.start()]
                + f'input_required_result = "{PLACEHOLDER}"'
                + carried.text[match.end() :]
            )
        carried.questions.append(
            f"[protocol] input_required_result: {revision} does not define the result that "
            "asks the client for input by its old name, and no definition has its schema: "
            "which result is it?"
        )
    fields = {name for node in defs.values() if isinstance(node, dict) for name in _props(node)}
    for name in protocol.get("cache_fields", []):
        if name not in fields:
            carried.questions.append(
                f"[protocol] cache_fields: no definition of {revision} has {name}: which "
                "fields make a result cacheable now?"
            )


def _props(node: JSON) -> set[str]:
    found = set(node.get("properties", {}))
    for part in node.get("allOf", []):
        if isinstance(part, dict):
            found |= _props(part)
    return found


def _capability_rules(carried: Carried, defs: dict[str, JSON]) -> None:
    for block in _blocks(carried.text):
        if block.header != "capability_rules":
            continue
        rule = _body(carried.text, block)
        node: JSON = defs.get("ClientCapabilities", {})
        for part in str(rule.get("requires", "")).split("."):
            node = node.get("properties", {}).get(part) if isinstance(node, dict) else None
            while isinstance(node, dict) and "$ref" in node:
                node = defs.get(node["$ref"].rsplit("/", 1)[-1])
            if node is None:
                carried.questions.append(
                    f"the [[capability_rules]] entry of {rule.get('method')} requires "
                    f"{rule.get('requires')}, which ClientCapabilities no longer has: name "
                    "the capability it needs now, or delete the entry"
                )
                break


def _placeholders(carried: Carried) -> None:
    """A placeholder still in an entry is a question not yet answered (every question
    is found again from the overlay and the schema: ``[draft] asked`` only shows them)."""
    if f'= "{PLACEHOLDER}"' in carried.text and not carried.questions:
        carried.questions.append(f'an entry still holds "{PLACEHOLDER}": replace it')


def _inline_names(carried: Carried, new: JSON, revision: str) -> None:
    try:
        overlay: Overlay = parse_overlay(carried.text)
        unnamed = unnamed_inline(new, overlay)
    except (OverlayError, KeyError, TypeError):
        return  # generation names what is wrong
    taken = set(new["$defs"]) | set(overlay.inline_names.values())
    named = []
    for path in unnamed:
        name = inline_name(path)
        while name in taken:
            name += "Object"
        taken.add(name)
        named.append(f"{json.dumps(path)} = {json.dumps(name)}")
        carried.lines.append(f"named: [inline_names] {path} = {name} (new in {revision})")
    if not named:
        return
    block = next((b for b in _blocks(carried.text) if b.header == "inline_names"), None)
    lines = "".join(f"{line}\n" for line in named)
    if block is None:
        carried.text = carried.text.rstrip("\n") + "\n\n[inline_names]\n" + lines
    else:
        carried.text = carried.text[: block.own_end] + lines + carried.text[block.own_end :]
