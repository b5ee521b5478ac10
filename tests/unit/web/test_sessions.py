"""Signed session cookies and CSRF tokens (ADR 0023)."""

from __future__ import annotations

from dominus.web.sessions import SessionKeys, cookie_header, token_matches

NOW = 2_000_000_000
TOKEN = "a-token-of-enough-length"


def test_a_cookie_verifies_until_it_expires() -> None:
    keys = SessionKeys(TOKEN)
    value = keys.issue("session", NOW)
    session = keys.verify("session", value, NOW + 100, max_age=3600)
    assert session is not None and (session.issued_at, session.generation) == (NOW, 0)
    assert keys.verify("session", value, NOW + 3601, max_age=3600) is None
    assert keys.verify("session", value, NOW - 3600, max_age=3600) is None  # from the future


def test_the_cookie_holds_no_token_and_cannot_be_altered() -> None:
    keys = SessionKeys(TOKEN)
    value = keys.issue("session", NOW, generation=4)
    assert TOKEN not in value
    version, session_id, issued, generation, mac = value.split(".")
    assert generation == "4"
    for forged in (
        f"{version}.{session_id}.{NOW + 1}.{generation}.{mac}",  # a later issue time
        f"{version}.other{session_id}.{issued}.{generation}.{mac}",
        f"{version}.{session_id}.{issued}.5.{mac}",  # a later generation
        f"{version}.{session_id}.{issued}.{chr(0x2074)}.{mac}",  # a superscript 4
        f"v3.{session_id}.{issued}.{generation}.{mac}",
        f"v1.{session_id}.{issued}.{mac}",  # before generations
        f"{version}.{session_id}.{issued}.{generation}.{mac[:-1]}",
        "",
        "garbage",
    ):
        assert keys.verify("session", forged, NOW, max_age=3600) is None, forged


def test_a_cookie_is_valid_only_for_its_purpose_and_its_token() -> None:
    keys = SessionKeys(TOKEN)
    login = keys.issue("login", NOW)
    assert keys.verify("session", login, NOW, max_age=3600) is None
    assert SessionKeys(TOKEN + "x").verify("login", login, NOW, max_age=3600) is None
    # The same token (another process, a restart) accepts it.
    assert SessionKeys(TOKEN).verify("login", login, NOW, max_age=3600) is not None


def test_csrf_tokens_are_per_session_and_purpose() -> None:
    keys = SessionKeys(TOKEN)
    one = keys.verify("session", keys.issue("session", NOW), NOW, 3600)
    two = keys.verify("session", keys.issue("session", NOW), NOW, 3600)
    assert one is not None and two is not None and one.id != two.id
    assert keys.csrf_matches(keys.csrf_token(one), one)
    assert not keys.csrf_matches(keys.csrf_token(two), one)
    assert not keys.csrf_matches(keys.csrf_token(one, "login"), one)
    assert not keys.csrf_matches("", one)


def test_without_a_token_the_csrf_token_is_the_process_own() -> None:
    first, second = SessionKeys(None), SessionKeys(None)
    assert not first.login_required
    assert first.csrf_token(None) == first.csrf_token(None)
    assert first.csrf_token(None) != second.csrf_token(None)  # a random key per app


def test_cookie_attributes() -> None:
    plain = cookie_header("dominus_session", "v", max_age=60, secure=False)
    assert plain == "dominus_session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Strict"
    assert cookie_header("n", "v", max_age=60, secure=True).endswith("; Secure")


def test_token_matching() -> None:
    assert token_matches(TOKEN, TOKEN)
    assert not token_matches(TOKEN[:-1], TOKEN)
    assert token_matches("zähler-token", "zähler-token")
