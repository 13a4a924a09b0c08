"""A tool with an interactive view (MCP Apps), and what two hosts see of it.
python app_view.py
"""

import asyncio

from pydantic import BaseModel

from snodo import Client, Server
from snodo.client.transports import MemoryTransport
from snodo.extensions import apps

server = Server("weather", "1.0.0")

PAGE = """<!doctype html>
<html><body>
<h1 id="city">…</h1><p id="sky"></p><button id="refresh">Refresh</button>
<script type="module">
  // The view talks to its host in JSON-RPC over postMessage (the MCP Apps bridge).
  let next = 1;
  const call = (method, params) =>
    parent.postMessage({jsonrpc: "2.0", id: next++, method, params}, "*");
  addEventListener("message", ({data}) => {
    const result = data.method === "ui/notifications/tool-result" ? data.params : data.result;
    if (result?.structuredContent) {
      document.getElementById("city").textContent = result.structuredContent.city;
      document.getElementById("sky").textContent = result.structuredContent.sky;
    }
  });
  call("ui/initialize", {protocolVersion: "2026-01-26", appInfo: {name: "weather", version: "1"},
                         appCapabilities: {}});
  const city = () => document.getElementById("city").textContent;
  document.getElementById("refresh").onclick = () =>
    call("tools/call", {name: "refresh", arguments: {city: city()}});
</script>
</body></html>"""

view = apps.App(
    server,
    "ui://weather/view",
    PAGE,
    title="Weather",
    csp={"connectDomains": ["https://api.example.com"]},
    prefers_border=True,
)


class Weather(BaseModel):
    city: str
    sky: str


@view.tool
def forecast(city: str) -> Weather:
    """Today's weather in a city, shown in the weather view (as text to other hosts)."""
    return Weather(city=city, sky="sunny")


@view.tool(visibility=["app"])
def refresh(city: str) -> Weather:
    """Fetch the weather again: for the view's button, never for the model."""
    return Weather(city=city, sky="cloudy")


async def main() -> None:
    async with Client(MemoryTransport(server), extensions=apps.DECLARE) as host:
        print("extension offered:", apps.offered(await host.discover()))
        tools = await host.list_tools()
        for tool in tools:
            ui = apps.tool_ui(tool)
            print(tool.name, ui.resource_uri if ui else None, ui.visibility if ui else None)
        print("for the model:", [tool.name for tool in apps.model_tools(tools)])
        read = await host.read_resource("ui://weather/view")
        page = read.contents[0]
        print(page.mime_type, apps.view_ui(page).csp.connect_domains)  # type: ignore[union-attr]
        result = await host.call_tool("forecast", {"city": "Oslo"})
        print(result.structured_content)
    async with Client(MemoryTransport(server)) as plain:  # renders no views
        print("plain host:", [tool.name for tool in await plain.list_tools()])
        print((await plain.call_tool("forecast", {"city": "Oslo"})).content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
