"""Signed cookies and CSRF tokens of the dashboard (ADR 0023).

- **No DOMINUS_API_TOKEN** (loopback, like the API): no login and no cookie. Forms carry a
  CSRF token derived from a random key made when the app starts: only a page this server
  rendered knows it (another site's page can send a form here but cannot read ours), so a
  cross-site form post is refused. After a restart, a page rendered before it must be reloaded.
- **With a token**: the login form sets `dominus_session`, an HttpOnly, SameSite=Strict cookie
  (Secure over https) holding a random id, when it was issued, the session generation it was
  issued in and an HMAC of them under a key derived from the token, never the token itself;
  changing the token ends every session. The CSRF token of a session is an HMAC of its id (a
  synchronizer token the server recomputes, so it stores nothing). The login form has its own
  short-lived cookie and token, so logging in cannot be forced from another site either.
- **Logging out** ends the session on the server too, not only in the browser that clicked:
  the database keeps a session generation (session_generation.py), a cookie is valid only while
  its generation is the current one, and logging out moves it on. That ends every session of
  the token at once, on every process serving the dashboard: there is one operator and one
  token, so "log out" reads as "log out everywhere" (a cookie copied elsewhere dies with it).
- **The read-only token** (DOMINUS_API_READ_TOKEN, ADR 0055) opens a read-only session: its
  cookie is signed for another purpose under a key derived from the read token (changing that
  token ends those sessions), and the gate refuses every action of such a session but logging
  out (403).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

SESSION_COOKIE = "dominus_session"
LOGIN_COOKIE = "dominus_login"
SESSION_SECONDS = 12 * 3600
LOGIN_FORM_SECONDS = 30 * 60
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
# The purposes of a session cookie: opened with the full token, or with the read-only one.
SESSION = "session"
READ_SESSION = "read-session"
# v2 added the session generation: a v1 cookie (from before) is refused, its holder logs in once.
_VERSION = "v2"


@dataclass(frozen=True)
class Session:
    """A verified cookie: its random id, when it was issued (Unix seconds) and the session
    generation it was issued in (0 for the login form's cookie, which has none), and whether it
    was opened with the read-only token."""

    id: str
    issued_at: int
    generation: int = 0
    read_only: bool = False


class SessionKeys:
    """Signs and verifies the dashboard's cookies and derives CSRF tokens."""

    def __init__(self, token: str | None, read_token: str | None = None) -> None:
        self.login_required = token is not None
        # None: no read-only token, so no read-only session verifies.
        self._read_key = (
            None
            if read_token is None
            else hmac.new(
                read_token.encode("utf-8"), b"dominus dashboard read session key", hashlib.sha256
            ).digest()
        )
        if token is None:
            self._key = secrets.token_bytes(32)
        else:
            # A key derived from the token: the cookie proves the token was shown once,
            # without carrying it.
            self._key = hmac.new(
                token.encode("utf-8"), b"dominus dashboard session key", hashlib.sha256
            ).digest()

    def _mac(self, purpose: str, text: str) -> str:
        key = self._read_key if purpose == READ_SESSION else self._key
        if key is None:
            raise ValueError("no read-only token: no read-only session can be signed")
        message = f"{purpose}\x00{text}".encode()
        return hmac.new(key, message, hashlib.sha256).hexdigest()

    # --- cookies ----------------------------------------------------------------------------
    def issue(self, purpose: str, now: int, generation: int = 0) -> str:
        """A new cookie value for `purpose` (`session`, `read-session` or `login`), of session
        `generation`."""
        body = f"{_VERSION}.{secrets.token_urlsafe(18)}.{now}.{generation}"
        return f"{body}.{self._mac(purpose, body)}"

    def verify(self, purpose: str, value: str | None, now: int, max_age: int) -> Session | None:
        """The session a cookie value holds, or None if it is missing, forged or expired (its
        generation is the caller's to compare with the current one)."""
        if not value or (purpose == READ_SESSION and self._read_key is None):
            return None
        body, _, mac = value.rpartition(".")
        parts = body.split(".")
        if len(parts) != 4 or parts[0] != _VERSION or not all(map(_is_number, parts[2:])):
            return None
        if not hmac.compare_digest(mac.encode(), self._mac(purpose, body).encode()):
            return None
        issued_at = int(parts[2])
        if not (now - max_age <= issued_at <= now + 60):  # a minute of clock skew
            return None
        return Session(parts[1], issued_at, int(parts[3]), read_only=purpose == READ_SESSION)

    # --- CSRF -------------------------------------------------------------------------------
    def csrf_token(self, session: Session | None, purpose: str = "session") -> str:
        """The token forms of this session carry (without login: one per app)."""
        subject = "anonymous" if session is None else session.id
        return self._mac(f"csrf-{purpose}", subject)

    def csrf_matches(self, given: str, session: Session | None, purpose: str = "session") -> bool:
        expected = self.csrf_token(session, purpose)
        return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 20


def token_matches(given: str, token: str) -> bool:
    """The token typed into the login form is the API token (constant time)."""
    return hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8"))


def cookie_header(name: str, value: str, *, max_age: int, secure: bool) -> str:
    """A Set-Cookie value: HttpOnly, SameSite=Strict, whole site; Secure over https."""
    attributes = [f"{name}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Strict"]
    if secure:
        attributes.append("Secure")
    return "; ".join(attributes)
