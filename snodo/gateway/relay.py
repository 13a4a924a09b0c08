"""A legacy backend's open call answered from another proxy worker, over Redis.

A legacy backend's call stays open in the proxy process that made it (``open_calls``),
and the sealed state of its round names that process. A front client's retry may reach
another worker; with a relay (``proxy(..., relay="redis://...")``, ``snodo proxy
--notify redis://...``) that worker hands the answers to the holder over Redis pub/sub
and waits for what the call does next (its next questions, its result, or its error),
which it answers the front with, sealing the next round itself. Each process listens on
its own channel (``snodo:gateway:PROCESS``), for answers to the calls it holds and for
the replies to what it sent. A holder that does not reply within ``timeout`` (gone, or
Redis down) makes the retry an error that says so.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from snodo.core.errors import McpError
from snodo.stores.pubsub import RedisLink

__all__ = ["CHANNEL_PREFIX", "Relay"]

log = logging.getLogger("snodo.gateway")

CHANNEL_PREFIX = "snodo:gateway:"

Answer = Callable[[str, Mapping[str, Any]], Awaitable[dict[str, Any]]]
"""The holder's side: a flow's answers -> ``{"questions": ...}``, ``{"result": ...}`` or
``{"error": {"code", "message", "data"}}``."""


class RelayFailed(McpError):
    """The process holding the call did not reply."""

    default_message = "The proxy process holding this flow's backend call did not reply"


class Relay:
    """This process's end of the relay."""

    def __init__(self, url: str, process: str, answer: Answer, *, timeout: float = 30.0) -> None:
        self.process = process
        self.answer = answer
        self.timeout = timeout
        self.link = RedisLink(
            url, (CHANNEL_PREFIX + process,), timeout=2.0, name="gateway relay", logger=log
        )
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._handling: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await self.link.start(self._received)

    async def stop(self) -> None:
        for task in list(self._handling):
            task.cancel()
        await self.link.stop()

    async def send(self, holder: str, flow: str, responses: Mapping[str, Any]) -> dict[str, Any]:
        """The holder's reply to ``responses`` for ``flow``."""
        reply_id = secrets.token_urlsafe(9)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[reply_id] = future
        body = {
            "answer": {"flow": flow, "responses": dict(responses)},
            "reply": {"process": self.process, "id": reply_id},
        }
        try:
            if not self.link.publish(CHANNEL_PREFIX + holder, json.dumps(body)):
                raise RelayFailed()
            return await asyncio.wait_for(future, self.timeout)
        except TimeoutError:
            raise RelayFailed() from None
        finally:
            self.waiting.pop(reply_id, None)

    def _received(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            log.debug("gateway relay: not JSON, dropped")
            return
        if not isinstance(message, dict):
            return
        if "replied" in message:  # a reply to what this process sent
            future = self.waiting.get(str(message.get("id")))
            if future is not None and not future.done():
                future.set_result(message["replied"])
            return
        answer, reply = message.get("answer"), message.get("reply")
        if isinstance(answer, dict) and isinstance(reply, dict):
            task = asyncio.ensure_future(self._handle(answer, reply))
            self._handling.add(task)
            task.add_done_callback(self._handling.discard)

    async def _handle(self, answer: Mapping[str, Any], reply: Mapping[str, Any]) -> None:
        try:
            replied = await self.answer(str(answer.get("flow")), answer.get("responses") or {})
        except McpError as exc:
            replied = {"error": exc.to_error()}
        except Exception:
            log.exception("gateway relay: answering a flow from another worker failed")
            replied = {"error": {"code": -32603, "message": "Internal error"}}
        body = {"replied": replied, "id": reply.get("id")}
        self.link.publish(CHANNEL_PREFIX + str(reply.get("process")), json.dumps(body))
