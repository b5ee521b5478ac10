"""Headers that tell the browser what a page may do, on every answer (pages, the API, errors).

- **No framing.** `frame-ancestors 'none'` and `X-Frame-Options: DENY` (for browsers that know
  only the older header): on the tokenless loopback default another site could otherwise show a
  dashboard page in a hidden frame and trick a click on Purge or Requeue (clickjacking).
- **A strict Content-Security-Policy.** The pages need nothing from another origin (htmx is
  served from /static/) and hold no inline script, style or event handler, so the policy allows
  this origin only: an injected `<script>` or `style` would not run, and forms can post only
  here. `data:` images are allowed for the empty favicon.
- `X-Content-Type-Options: nosniff` (a JSON or CSV answer is never run as a script) and
  `Referrer-Policy: same-origin` (page addresses, which carry job and run ids, stay here).

The Swagger UI page (`/api/v1/docs`) loads its script, style and icon from this origin (the copy
shipped in the package, docs_page.py) and starts with an inline script: it gets a policy of its
own that allows exactly that inline script (by its hash) and the inline styles Swagger UI sets,
still nothing from another origin and no framing.

An ASGI middleware, outermost, so that the guards' own refusals carry the headers too.
"""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
ALWAYS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_policy(html: bytes) -> str:
    """The docs page's policy: this origin, and its own inline scripts by their hashes."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'self'; script-src 'self' {hashes}; "
        "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


class SecurityHeadersMiddleware:
    """Adds the headers above to every HTTP answer that does not set them itself."""

    def __init__(self, app: ASGIApp, *, docs_path: str) -> None:
        self.app = app
        self.docs_path = docs_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == self.docs_path:
            await self._docs(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                _add(message, PAGE_POLICY)
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _docs(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The docs page is small and whole: hold it back to hash its inline script."""
        start: Message | None = None
        body: list[bytes] = []

        async def hold(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] == "http.response.body":
                body.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
            if start is not None:
                html = b"".join(body)
                _add(start, docs_policy(html))
                await send(start)
                start = None
                await send({"type": "http.response.body", "body": html, "more_body": False})
                return
            await send(message)

        await self.app(scope, receive, hold)


def _add(start: Message, policy: str) -> None:
    headers = MutableHeaders(scope=start)
    headers.setdefault("Content-Security-Policy", policy)
    for name, value in ALWAYS.items():
        headers.setdefault(name, value)
