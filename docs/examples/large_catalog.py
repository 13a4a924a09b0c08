"""Many tools behind one search: what a host lists, what a search finds, how it calls.
python large_catalog.py
"""

import asyncio

from snodo import Client, Server
from snodo.client.transports import MemoryTransport
from snodo.search import ToolSearch

server = Server("office", "1.0.0", tool_search=ToolSearch(always_visible=["whoami"]))


@server.tool
def whoami() -> str:
    """The signed-in user's name and email address."""
    return "Ada <ada@example.com>"


@server.tool
def send_email(to: list[str], subject: str, body: str) -> str:
    """Send an email message."""
    return f"sent {subject!r} to {', '.join(to)}"


@server.tool
def create_invoice(customer_id: str, amount_cents: int) -> str:
    """Create a draft invoice for a customer."""
    return f"draft invoice of {amount_cents} cents for {customer_id}"


@server.tool
def refund_payment(payment_id: str, amount_cents: int | None = None) -> str:
    """Refund a payment, fully or partially."""
    return f"refunded {payment_id}"


@server.tool
def get_weather_forecast(city: str, days: int = 3) -> str:
    """Daily weather forecast for a city, up to ten days."""
    return f"{days} days of sun in {city}"


@server.tool
def restart_deployment(namespace: str, deployment: str) -> str:
    """Restart the pods of a Kubernetes deployment."""
    return f"restarted {namespace}/{deployment}"


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        print("listed:", [tool.name for tool in await client.list_tools()])
        # What a model does with the listed tool: it searches, in its own words.
        found = await client.call_tool("search_tools", {"query": "bounce the api pods"})
        print("found:", [tool["name"] for tool in found.structured_content["tools"]])
        # snodo's client does the same in one call, through whatever the server offers.
        for query in (
            "give the customer their money back",
            "prévisions météo pour Lyon demain",
            "order a pepperoni pizza",
        ):
            print(f"{query}:", [tool.name for tool in await client.search_tools(query)])
        refund = {"name": "refund_payment", "arguments": {"payment_id": "pi_42"}}
        print("through call_tool:", (await client.call_tool("call_tool", refund)).content[0].text)
        sent = await client.call_tool(
            "send_email", {"to": ["bo@example.com"], "subject": "Hi", "body": "!"}
        )
        print("by its own name:", sent.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
