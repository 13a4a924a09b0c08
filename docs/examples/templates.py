"""Resource templates: the URI forms, typed values, and paths refused: python templates.py"""

import asyncio
from pathlib import Path
from typing import Literal

from snodo import Client, Server
from snodo.client import RequestError
from snodo.client.transports import MemoryTransport

server = Server("files", "1.0.0")
ROOT = Path("/srv/files")


@server.resource_template("files:///{+path}", mime_type="text/plain")
def file(path: str) -> str:
    """A file under ROOT. `{+path}` may span `/`; `..`, `/etc` and the like never arrive."""
    return f"would read {ROOT / path}"


@server.resource_template("orders://{id}{?fields,limit}")
def order(id: int, fields: Literal["short", "full"] = "short", limit: int = 10) -> str:
    """An order by number; query parameters are optional and come in any order."""
    return f"order {id}: {fields}, at most {limit} lines"


@server.resource_template("docs://manual{/chapters*}")
def manual(chapters: list[str]) -> str:
    """`{/chapters*}` takes any number of path segments, as a list."""
    return " > ".join(["manual", *chapters])


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        for uri in [
            "files:///reports/2026/q3.txt",
            "orders://42?limit=3&fields=full",
            "orders://42",
            "docs://manual/install/linux",
            "files:///reports/%2E%2E/%2E%2E/etc/passwd",
            "files:////etc/passwd",
            "orders://forty-two",
        ]:
            try:
                print((await client.read_resource(uri)).contents[0].text)
            except RequestError as error:
                print(error.code, error.message)


if __name__ == "__main__":
    asyncio.run(main())
