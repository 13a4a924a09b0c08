"""A user agent for tests that follows redirects, keeps cookies and answers a consent
page (approving or denying) as a person at a browser would."""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin

import httpx

from snodo.oauth.errors import OAuthError

FORM = re.compile(r'<form method="post" action="([^"]+)">(.*?)</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


class ConsentingAgent:
    def __init__(self, *, decision: str = "allow") -> None:
        self.decision = decision
        self.cookies = httpx.Cookies()
        """Kept across sign-ins, as a browser's: consent is remembered in one."""
        self.pages: list[str] = []
        """The consent pages shown."""
        self.visited: list[str] = []

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        async with httpx.AsyncClient(
            timeout=10, follow_redirects=False, cookies=self.cookies
        ) as client:
            response = await client.get(authorization_url)
            for _ in range(10):
                self.cookies.update(response.cookies)
                self.visited.append(str(response.url))
                if response.is_redirect:
                    url = urljoin(str(response.url), response.headers["location"])
                    if url.startswith(redirect_uri):
                        return url
                    response = await client.get(url)
                    continue
                found = FORM.search(response.text) if response.status_code == 200 else None
                if found is None:
                    raise OAuthError(f"stuck at {response.url}: {response.status_code}")
                self.pages.append(response.text)
                fields = {html.unescape(k): html.unescape(v) for k, v in HIDDEN.findall(found[2])}
                fields["decision"] = self.decision
                response = await client.post(html.unescape(found[1]), data=fields)
        raise OAuthError("too many steps")
