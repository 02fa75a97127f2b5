"""Who may call (issue 24, item 2): API keys in each client's own header and 401 in each
API's shape, the refusal to listen beyond loopback without keys, the Host allow-list, CORS
when it is wanted."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest
from helpers import ROOT
from loopback import anthropic_client, openai_client, running

import callsieve
from callsieve.server import ServerConfig

TRANSCRIPT = str(ROOT / "examples" / "transcript.txt")
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
ASK = [{"role": "user", "content": "hi"}]


def test_keys_are_required_in_each_clients_own_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLSIEVE_API_KEYS", "env-key-1, env-key-2")
    config = ServerConfig.build(transcript=TRANSCRIPT, api_keys=["flag-key"])
    assert config.api_keys == ("flag-key", "env-key-1", "env-key-2")
    with running(config) as base:
        for key in ("flag-key", "env-key-2"):
            assert (
                openai_client(base, key=key)
                .chat.completions.create(model="m", messages=ASK)
                .choices[0]
                .message.content
            )
        assert (
            anthropic_client(base, key="env-key-1")
            .messages.create(model="m", max_tokens=5, messages=ASK)
            .content
        )
        with pytest.raises(openai.AuthenticationError) as info:
            openai_client(base, key="wrong").chat.completions.create(model="m", messages=ASK)
        assert info.value.code == "invalid_api_key"
        with pytest.raises(anthropic.AuthenticationError) as claude:
            anthropic_client(base, key="nope").messages.create(
                model="m", max_tokens=5, messages=ASK
            )
        assert claude.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]
        missing = httpx.post(f"{base}/v1/chat/completions", json=CHAT)
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        assert httpx.get(f"{base}/v1/models").status_code == 401
        assert httpx.get(f"{base}/healthz").status_code == 200  # (load balancers' probes)
        gemini = httpx.post(
            f"{base}/v1beta/models/g:generateContent",
            json={"contents": []},
            headers={"x-goog-api-key": "nope"},
        )
        assert gemini.json()["error"]["status"] == "UNAUTHENTICATED"


def test_a_bind_beyond_loopback_needs_keys_or_an_explicit_yes() -> None:
    with pytest.raises(callsieve.ConfigurationError, match="--api-key"):
        ServerConfig.build(transcript=TRANSCRIPT, host="0.0.0.0")
    assert ServerConfig.build(transcript=TRANSCRIPT, host="0.0.0.0", api_keys=["k"])
    config = ServerConfig.build(transcript=TRANSCRIPT, host="0.0.0.0", allow_unauthenticated=True)
    assert config.allowed_hosts == ("localhost", "127.0.0.1", "::1")
    assert ServerConfig.build(transcript=TRANSCRIPT, host="::1").api_keys == ()
    named = ServerConfig.build(transcript=TRANSCRIPT, host="10.1.2.3", api_keys=["k"])
    assert "10.1.2.3" in named.allowed_hosts


def test_allowed_hosts_and_cors_origins_when_asked() -> None:
    config = ServerConfig.build(
        transcript=TRANSCRIPT, allowed_hosts=["gw.example"], cors_origins=["https://app.example"]
    )
    with running(config) as base:
        port = base.rsplit(":", 1)[1]
        ok = httpx.post(
            f"{base}/v1/chat/completions",
            json=CHAT,
            headers={"Host": f"gw.example:{port}", "Origin": "https://app.example"},
        )
        assert ok.status_code == 200
        assert ok.headers["access-control-allow-origin"] == "https://app.example"
        local = httpx.post(f"{base}/v1/chat/completions", json=CHAT)
        assert local.status_code == 400  # (the list replaces the loopback names)
        preflight = httpx.options(
            f"{base}/v1/chat/completions",
            headers={
                "Host": "gw.example",
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-headers"] == "authorization, content-type"
        other = httpx.options(
            f"{base}/v1/chat/completions",
            headers={
                "Host": "gw.example",
                "Origin": "https://evil.example",
                "Access-Control-Request-Method": "POST",
            },
        )
        assert other.status_code == 403 and "access-control-allow-origin" not in other.headers
