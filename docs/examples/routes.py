"""A route of the server's own beside the endpoint, the probes, and CORS for a browser app.
python routes.py
"""

import asyncio

import httpx

from snodo import Server
from snodo.server import Request, Response
from snodo.transports import HttpApp

server = Server("notes", "1.0.0")


@server.tool
def count() -> int:
    return 3


@server.route("/version")
def version(request: Request) -> dict[str, str]:
    return {"version": "1.0.0"}


@server.route("/hooks/build", methods=["POST"])
async def build_hook(request: Request) -> Response:
    return Response(202, b"queued " + request.body)


# What `snodo run app.py:server --transport http --cors-origin https://app.example` serves.
app = HttpApp(
    server,
    cors_origins=["https://app.example"],
    health_path="/healthz",
    ready_path="/readyz",
)


async def main() -> None:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app), base_url="http://localhost"
    ) as http:
        for method, path in [("GET", "/version"), ("POST", "/hooks/build"), ("GET", "/healthz")]:
            answer = await http.request(method, path, content=b"main")
            print(method, path, answer.status_code, answer.text)
        preflight = await http.options(
            "/mcp",
            headers={"origin": "https://app.example", "access-control-request-method": "POST"},
        )
        print("preflight", preflight.status_code, preflight.headers["access-control-allow-origin"])
        stranger = await http.options("/mcp", headers={"origin": "https://evil.example"})
        print("another origin", stranger.status_code)


if __name__ == "__main__":
    asyncio.run(main())
