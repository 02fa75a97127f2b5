"""One access-log line per request (issue 33, item 3), read from a real ``callsieve serve``
process's log with its default logging: every status, not only the 5xx; client text escaped
so no request can forge a line; ``/metrics`` on its own port behind the same Host and Origin
checks as the API."""

from __future__ import annotations

import re
import time

import httpx
import openai
import pytest
from gateway_probe_helpers import CHAT, raw_request, read_answer
from helpers import ROOT
from loopback import closed_port, openai_client, serving

from callsieve.server._wire import escape

TRANSCRIPT = str(ROOT / "examples" / "transcript.txt")
ASK = [{"role": "user", "content": "hi"}]
LINE = re.compile(
    r'^INFO: +(?P<client>127\.0\.0\.1:\d+) "(?P<method>[A-Z]+) (?P<path>\S+)" '
    r"(?P<status>\d{3}) (?P<outcome>[a-z_]+) (?P<code>\S+) (?P<ms>\d+\.\d)ms (?P<bytes>\d+)B$"
)


def access_lines(log: list[str], count: int, timeout: float = 10) -> list[re.Match[str]]:
    """The log's access lines, once there are ``count`` of them (the readiness probes'
    ``/healthz`` lines left out)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [m for line in list(log) if (m := LINE.match(line.rstrip("\n")))]
        found = [m for m in found if m["path"] != "/healthz"]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_escape_leaves_no_control_character_quote_or_backslash() -> None:
    assert escape("/v1/chat/completions") == "/v1/chat/completions"
    assert escape('a\nb"c\\d e\x7f\u2028') == "a\\x0ab\\x22c\\x5cd\\x20e\\x7f\\u2028"


def test_every_request_gets_one_line_whatever_its_status() -> None:
    with serving("--transcript", TRANSCRIPT, "--api-key", "k1", "--max-body-bytes", "2000") as gw:
        good = openai_client(gw.url, key="k1")
        assert good.chat.completions.create(model="m", messages=ASK).choices
        with pytest.raises(openai.AuthenticationError):
            openai_client(gw.url, key="wrong").chat.completions.create(model="m", messages=ASK)
        auth = {"Authorization": "Bearer k1"}
        json_auth = {**auth, "Content-Type": "application/json"}
        assert httpx.post(f"{gw.url}/v1/chat/completions", headers=json_auth, content=b"{").is_error
        assert httpx.get(f"{gw.url}/v1/nothing", headers=auth).status_code == 404
        big = {**CHAT, "messages": [{"role": "user", "content": "x" * 5000}]}
        assert (
            httpx.post(f"{gw.url}/v1/chat/completions", headers=auth, json=big).status_code == 413
        )
        plain = {**auth, "Content-Type": "text/plain"}
        assert (
            httpx.post(f"{gw.url}/v1/chat/completions", headers=plain, content=b"{}").status_code
            == 415
        )
        lines = access_lines(gw.log, 6)
        gw.stop()
    seen = [(m["method"], m["path"], m["status"], m["outcome"], m["code"]) for m in lines]
    assert seen == [
        ("POST", "/v1/chat/completions", "200", "ok", "-"),
        ("POST", "/v1/chat/completions", "401", "client_error", "invalid_api_key"),
        ("POST", "/v1/chat/completions", "400", "client_error", "invalid_json"),
        ("GET", "/v1/nothing", "404", "client_error", "-"),
        ("POST", "/v1/chat/completions", "413", "client_error", "body_too_large"),
        ("POST", "/v1/chat/completions", "415", "client_error", "unsupported_media_type"),
    ], seen
    assert int(lines[0]["bytes"]) > 100 and all(int(m["bytes"]) > 0 for m in lines)
    assert "k1" not in "".join(gw.log)


def test_a_newline_in_a_gemini_model_name_cannot_forge_a_line() -> None:
    forged = "x%0AINFO:%20%20%20%20%20127.0.0.1:1%20%22GET%20models%22%20200%20ok"
    with serving("--transcript", TRANSCRIPT) as gw:
        path = f"/v1beta/models/{forged}:generateContent"
        sock = raw_request(gw.url, path, {"contents": [{"parts": [{"text": "hi"}]}]})
        status, _ = read_answer(sock)
        lines = access_lines(gw.log, 1)
        gw.stop()
    assert status in (200, 400)
    assert len(lines) == 1, lines
    assert lines[0]["path"].startswith("/v1beta/models/x\\x0aINFO:\\x20")
    assert not any(line.startswith("INFO:     127.0.0.1:1 ") for line in gw.log)


def test_metrics_on_its_own_port_refuses_a_foreign_host_and_origin() -> None:
    pytest.importorskip("prometheus_client")
    port = closed_port()
    with serving("--transcript", TRANSCRIPT, "--metrics-port", str(port)) as gw:
        url = f"http://127.0.0.1:{port}/metrics"
        assert httpx.get(url).status_code == 200
        rebound = httpx.get(url, headers={"Host": f"attacker.example:{port}"})
        assert rebound.status_code == 400
        assert rebound.json()["error"]["code"] == "host_not_allowed"
        page = httpx.get(url, headers={"Origin": "http://attacker.example"})
        assert page.status_code == 403
        assert "callsieve_gateway" not in rebound.text + page.text
        gw.stop()
