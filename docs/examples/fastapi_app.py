"""examples/preferences.py's server inside a FastAPI app, beside the app's own routes.

From the checkout:

    PYTHONPATH=examples uvicorn --app-dir docs/examples fastapi_app:app --port 8000

The MCP endpoint is the mount's path, http://127.0.0.1:8000/mcp (with or without the
slash); the app's own route is /hello.
"""

from fastapi import FastAPI
from preferences import server  # examples/preferences.py: any Server will do

from snodo.transports import HttpApp

mcp = HttpApp(server, path="/")  # "/": the endpoint is where the app is mounted

# The server's lifespans, notification bus and legacy sessions start with the app, and
# /mcp itself is routed to mcp (FastAPI alone would redirect it to /mcp/).
app = FastAPI(lifespan=mcp.lifespan)


@app.get("/hello")
def hello() -> dict[str, str]:
    return {"hello": "from FastAPI"}


app.mount("/mcp", mcp)
