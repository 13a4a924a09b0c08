"""Progress and log messages from a slow tool, awaited or not: python progress.py"""

import asyncio
from collections.abc import Mapping
from typing import Any

from snodo import Client, Context, Server
from snodo.client.transports import MemoryTransport

server = Server("exports", "1.0.0")


@server.tool
async def export(ctx: Context, pages: int = 3) -> str:
    """An async tool: awaiting report_progress and log works, as in other SDKs."""
    await ctx.log("info", f"exporting {pages} pages", logger="export")
    for page in range(1, pages + 1):
        await asyncio.sleep(0.01)  # the slow part
        await ctx.report_progress(page, pages, f"page {page}")
    return f"exported {pages} pages"


@server.tool
def count(ctx: Context, up_to: int = 2) -> int:
    """A plain def: the same calls, not awaited, send the same notifications."""
    for step in range(1, up_to + 1):
        ctx.report_progress(step, up_to)
    ctx.log("debug", "counted")  # below the level the client asked for: not sent
    ctx.log("warning", {"counted": up_to})
    return up_to


def progress(done: float, total: float | None, message: str | None) -> None:
    print(f"progress {done:g}/{total:g} {message or ''}".rstrip())


def logged(params: Mapping[str, Any]) -> None:
    print(f"log [{params['level']}] {params.get('logger') or '-'}: {params['data']}")


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        # A progress callback sends a progress token; log_level asks for log messages.
        done = await client.call_tool(
            "export", {"pages": 2}, on_progress=progress, on_log=logged, log_level="info"
        )
        print(done.content[0].text)
        counted = await client.call_tool(
            "count", on_progress=progress, on_log=logged, log_level="info"
        )
        print(counted.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
