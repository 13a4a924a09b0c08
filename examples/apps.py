"""A week of weather as an interactive chart (MCP Apps), served over either transport.

    snodo run examples/apps.py:server --transport http --port 8000

``week`` is linked to the view ``ui://week/chart``: a host that renders MCP Apps shows
its result as a bar chart, any other client gets the same figures as text. In the view,
a form asks the host to call ``week`` again for another city, and a click on a bar asks
for ``day``, a tool only the view may call (hidden from the model), whose answer the
view shows under the chart. The view speaks the extension's JSON-RPC over
``postMessage`` by hand, in a few lines of script, so the page needs nothing to load.
"""

from __future__ import annotations

import zlib

from pydantic import BaseModel

from snodo import Server, ToolError
from snodo.extensions.apps import App

server = Server(
    "week-chart",
    "1.0.0",
    instructions="week(city) shows a week of weather; hosts that render MCP Apps chart it.",
)

DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
SKIES = ("sunny", "cloudy", "light rain", "showers", "windy")

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Week</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 12px; }
  #bars { display: flex; gap: 6px; align-items: flex-end; height: 160px; }
  #bars button { width: 36px; background: #4a7bd0; color: #fff; border: 0;
                 border-radius: 3px 3px 0 0; font-size: 11px; cursor: pointer; }
</style>
</head>
<body>
<h2 id="city">Waiting for the host...</h2>
<div id="bars"></div>
<p id="detail"></p>
<form id="other"><input id="where" name="city" placeholder="Another city" required>
<button>Show</button></form>
<script type="module">
  // The view's side of MCP Apps: JSON-RPC 2.0 with the host over postMessage.
  const pending = new Map();
  let next = 1;
  const send = (message) => parent.postMessage({jsonrpc: "2.0", ...message}, "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = next++;
    pending.set(id, {resolve, reject});
    send({id, method, params});
  });
  const $ = (id) => document.getElementById(id);

  function show(result) {
    const week = result.structuredContent;
    if (!week) return;
    $("city").textContent = week.city;
    $("bars").replaceChildren(...week.days.map(({day, high}) => {
      const bar = document.createElement("button");
      bar.textContent = `${day} ${high}`;
      bar.dataset.day = day;
      bar.style.height = `${high * 6}px`;
      bar.onclick = async () => {
        const args = {city: week.city, day};
        const answer = await request("tools/call", {name: "day", arguments: args});
        $("detail").textContent = answer.content[0].text;
      };
      return bar;
    }));
  }

  addEventListener("message", ({source, data}) => {
    if (source !== parent || data?.jsonrpc !== "2.0") return;
    if (data.method === undefined) {  // an answer to one of our requests
      const waiting = pending.get(data.id);
      pending.delete(data.id);
      if (data.error) waiting?.reject(data.error); else waiting?.resolve(data.result);
    } else if (data.method === "ui/notifications/tool-result") {
      show(data.params);
    } else if (data.id !== undefined) {  // ping, teardown: nothing to do but answer
      send({id: data.id, result: {}});
    }
  });

  $("other").onsubmit = async (event) => {
    event.preventDefault();
    show(await request("tools/call", {name: "week", arguments: {city: $("where").value}}));
  };

  await request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: {name: "week-chart", version: "1.0.0"},
    appCapabilities: {availableDisplayModes: ["inline"]},
  });
  send({method: "ui/notifications/initialized", params: {}});
</script>
</body>
</html>
"""

chart = App(server, "ui://week/chart", PAGE, title="A week of weather", prefers_border=True)


class Day(BaseModel):
    day: str
    high: int
    """The day's highest temperature, in degrees Celsius."""


class Week(BaseModel):
    city: str
    days: list[Day]


def _high(city: str, day: str) -> int:
    """A made-up but steady forecast: the same city and day give the same figure."""
    return 5 + zlib.crc32(f"{city.lower()}/{day}".encode()) % 20


@chart.tool
def week(city: str) -> Week:
    """The highest temperature of each day this week in a city."""
    return Week(city=city, days=[Day(day=day, high=_high(city, day)) for day in DAYS])


@chart.tool(visibility=["app"])
def day(city: str, day: str) -> str:
    """One day's forecast in words: for the chart's bars, never for the model."""
    if day not in DAYS:
        raise ToolError(f"day must be one of {', '.join(DAYS)}")
    sky = SKIES[zlib.crc32(f"{city.lower()}/{day}/sky".encode()) % len(SKIES)]
    return f"{city} on {day}: {_high(city, day)} °C, {sky}"
