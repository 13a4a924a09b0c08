"""Resources, a resource template with completion, and prompts: python notes.py"""

import asyncio

from snodo import MISSING, Client, Context, ResourceNotFound, Server
from snodo.client import RequestError
from snodo.client.transports import MemoryTransport

server = Server("notes", "1.0.0")
NOTES = {"groceries": "milk, eggs", "plans": "# Plans\n\nWorld domination."}
LOGO = bytes.fromhex("89504e470d0a1a0a")  # the first bytes of a PNG


@server.resource("notes://index", mime_type="text/plain")
def index() -> str:
    """The names of all notes, one a line."""
    return "\n".join(sorted(NOTES))


@server.resource("notes://logo", mime_type="image/png", extra={"size": len(LOGO)})
def logo() -> bytes:
    """Bytes are sent as a base64 blob."""
    return LOGO


@server.resource_template("notes://{name}", mime_type="text/markdown")
def note(name: str) -> str:
    """One note by name."""
    if name not in NOTES:
        raise ResourceNotFound(f"notes://{name}")
    return NOTES[name]


@server.completion("ref/resource", "notes://{name}")
def note_names(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [name for name in sorted(NOTES) if name.startswith(value)]


@server.prompt(description="Ask the model to summarise a note")
def summarise(ctx: Context, name: str, style: str = "short") -> list[dict[str, object]]:
    text = NOTES.get(name, "")
    return [
        {"role": "user", "content": {"type": "text", "text": f"Summarise, {style}:\n{text}"}},
        {"role": "assistant", "content": {"type": "text", "text": "Here is a summary:"}},
    ]


@server.prompt
def hello(name: str) -> str:
    """A str is one user message."""
    return f"Say hello to {name}."


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        print([r.uri for r in await client.list_resources()])
        print([t.uri_template for t in await client.list_resource_templates()])
        print((await client.read_resource("notes://index")).contents[0].text.split())
        blob = (await client.read_resource("notes://logo")).contents[0]
        print(blob.mime_type, blob.blob)
        plans = (await client.read_resource("notes://plans")).contents[0]
        print(plans.mime_type, repr(plans.text))
        try:
            await client.read_resource("notes://nothing")
        except RequestError as error:
            print(error.code, error.message, error.data)
        done = await client.complete({"type": "ref/resource", "uri": "notes://{name}"}, "name", "g")
        print(done.completion.values)
        prompts = {p.name: p for p in await client.list_prompts()}
        arguments = prompts["summarise"].arguments
        if arguments is not MISSING:  # a field left out is MISSING
            print(sorted(prompts), [(a.name, a.required) for a in arguments])
        prompt = await client.get_prompt("summarise", {"name": "groceries"})
        print([(m.role, m.content.text) for m in prompt.messages])
        print((await client.get_prompt("hello", {"name": "Ada"})).messages[0].content.text)


if __name__ == "__main__":
    asyncio.run(main())
