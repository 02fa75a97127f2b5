"""A client's tool schema reaches nothing and holds no worker (issue 33, item 2): under
``--sieve-option policy="schema"``, references resolve only inside the request's schemas, a
cycle or a dangling reference is a 400, patterns run on RE2, one call's check has a step
budget, and near-limit bodies are parsed off the event loop. Real clients over 127.0.0.1."""

from __future__ import annotations

import concurrent.futures
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from loopback import Script, openai_client, running, scripted, serving

from callsieve import Sieve
from callsieve.prompt import format_calls
from callsieve.server import ServerConfig

pytest.importorskip("re2")
ASK = [{"role": "user", "content": "go"}]
#: The reply the gateway replays: one call of ``t`` whose ``x`` is ``a`` x 28 and ``!``.
EVIL = "a" * 28 + "!"


def tool(parameters: dict[str, Any], name: str = "t") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def with_x(schema: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": schema}, **more}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("schemas") / "reply.txt"
    path.write_text("Calling.\n" + format_calls([("t", {"x": EVIL})]), encoding="utf-8")
    config = ServerConfig.build(transcript=str(path), sieve={"policy": "schema"})
    with running(config) as base:
        yield base


def refused(url: str, parameters: dict[str, Any]) -> str:
    """The 400's message for a request with one tool of these parameters."""
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client(url).chat.completions.create(
            model="m", messages=ASK, tools=[tool(parameters)]
        )
    assert caught.value.status_code == 400
    body = caught.value.body
    assert isinstance(body, dict) and body["param"] == "tools"
    return str(body["message"])


# ---------------------------------------------------------------- references: nothing fetched
def test_a_remote_reference_is_a_400_naming_the_tool_and_the_reference(url: str) -> None:
    with scripted(Script(text="{}")) as other:
        ref = f"{other.url}/schema.json"
        message = refused(url, with_x({"$ref": ref}))
        assert other.requests == [], "the gateway fetched the client's reference"
    assert "'t'" in message and ref in message


@pytest.mark.parametrize("exists", [True, False])
def test_a_file_reference_is_the_same_400_whether_the_file_exists(
    url: str, tmp_path: Path, exists: bool
) -> None:
    target = tmp_path / "schema.json"
    if exists:
        target.write_text('{"type": "string"}', encoding="utf-8")
    message = refused(url, with_x({"$ref": target.as_uri()}))
    assert target.as_uri() in message and "only '#" in message


@pytest.mark.parametrize(
    "parameters",
    [
        {"$ref": "#"},
        with_x(
            {"$ref": "#/$defs/a"},
            **{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}},
        ),
        with_x({"allOf": [{"$ref": "#/properties/x"}]}),
    ],
    ids=["self", "a-b", "through-allOf"],
)
def test_a_cyclic_reference_is_a_400(url: str, parameters: dict[str, Any]) -> None:
    assert "cycle of references" in refused(url, parameters)


def test_an_unresolvable_reference_is_a_400(url: str) -> None:
    assert "'#/$defs/nowhere'" in refused(url, with_x({"$ref": "#/$defs/nowhere"}))


def test_a_recursive_schema_that_descends_is_served(url: str) -> None:
    """A reference back to the root below a property is a tree, not a cycle."""
    tree = {"type": "object", "properties": {"x": {"type": "string"}, "child": {"$ref": "#"}}}
    reply = openai_client(url).chat.completions.create(model="m", messages=ASK, tools=[tool(tree)])
    assert [c.function.name for c in reply.choices[0].message.tool_calls or []] == ["t"]


# ------------------------------------------------------------------------ patterns: RE2 only
def test_a_backtracking_pattern_runs_in_linear_time(url: str) -> None:
    """``^(a+)+$`` against ``a`` x 28 and ``!`` froze a worker 6.9 s on Python's ``re``."""
    started = time.perf_counter()
    reply = openai_client(url).chat.completions.create(
        model="m", messages=ASK, tools=[tool(with_x({"type": "string", "pattern": "^(a+)+$"}))]
    )
    assert time.perf_counter() - started < 2.0
    assert reply.choices[0].message.tool_calls is None  # (the value breaks the pattern)
    ok = openai_client(url).chat.completions.create(
        model="m", messages=ASK, tools=[tool(with_x({"type": "string", "pattern": "^a+!$"}))]
    )
    assert ok.choices[0].message.tool_calls is not None


@pytest.mark.parametrize("pattern", [r"^(a)\1$", "^(?=a)", "(?<!b)a"])
def test_a_pattern_re2_cannot_run_is_a_400_naming_it(url: str, pattern: str) -> None:
    message = refused(url, with_x({"type": "string", "pattern": pattern}))
    assert repr(pattern) in message and "'t'" in message
    keyed = refused(url, {"type": "object", "patternProperties": {pattern: {}}})
    assert repr(pattern) in keyed


# --------------------------------------------------------------- a bounded check per call
def test_one_calls_check_stops_at_its_step_budget() -> None:
    """A call whose check would take more than ``MAX_STEPS`` steps is rejected, in about
    the time those steps take (docs/safety.md states the bound)."""
    items = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    schema = with_x({"type": "array", "items": items})
    text = format_calls([("t", {"x": [{"a": i} for i in range(20_000)]})])
    sieve = Sieve(tools=[tool(schema)], policy="schema")
    started = time.perf_counter()
    sieve.feed(text)
    sieve.close()
    assert [r.reason for r in sieve.rejections] == [
        "schema: /: the check took more than 20000 steps"
    ]
    small = Sieve(tools=[tool(schema)], policy="schema")
    small.feed(format_calls([("t", {"x": [{"a": i} for i in range(100)]})]))
    small.close()
    assert small.rejections == ()
    assert time.perf_counter() - started < 5.0


def test_exponential_reference_fanout_is_a_400(url: str) -> None:
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(20)}
    defs["d20"] = {"type": "string"}
    message = refused(url, with_x({"$ref": "#/$defs/d0"}, **{"$defs": defs}))
    assert "more than 1000 schemas" in message


# -------------------------------------------------------- near-limit bodies, off the loop
def near_limit(limit: int) -> bytes:
    turn = {"role": "user", "content": "a short message of the conversation"}
    body = {"model": "m", "messages": [turn] * ((limit - 200) // (len(json.dumps(turn)) + 2))}
    data = json.dumps(body).encode()
    assert limit - 200 < len(data) + 100 and len(data) < limit
    return data


def test_near_limit_bodies_do_not_stall_other_requests(tmp_path: Path) -> None:
    """Eight bodies just under 4 MiB at once: ``/healthz`` answers meanwhile in well under
    the time one body takes to read (on the event loop, 8 bodies stalled it for seconds)."""
    reply = tmp_path / "reply.txt"
    reply.write_text("ok", encoding="utf-8")
    data = near_limit(4 * 1024 * 1024)
    with serving("--transcript", str(reply)) as served:
        url = f"{served.url}/v1/chat/completions"
        headers = {"Content-Type": "application/json"}
        one = time.perf_counter()
        assert httpx.post(url, content=data, headers=headers, timeout=60).status_code == 200
        one = time.perf_counter() - one
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            posts = [
                pool.submit(httpx.post, url, content=data, headers=headers, timeout=120)
                for _ in range(8)
            ]
            time.sleep(0.2)
            gaps = []
            while not all(p.done() for p in posts):
                t = time.perf_counter()
                httpx.get(f"{served.url}/healthz", timeout=60)
                gaps.append(time.perf_counter() - t)
                time.sleep(0.02)
            assert [p.result().status_code for p in posts] == [200] * 8
    assert len(gaps) >= 3 and max(gaps) < max(0.5, 0.75 * one), (one, gaps)


def test_a_large_schema_is_checked_off_the_event_loop(tmp_path: Path) -> None:
    """Checking a 60 kB schema (a body under the 64 KiB parsed in line) against the
    meta-schema takes about half a second: other requests are answered meanwhile."""
    props = {f"p{i}": {"type": "string", "pattern": f"^a{i}b+$"} for i in range(1150)}
    schema = {"type": "object", "properties": props}
    assert 50_000 < len(json.dumps(schema)) < 60_000
    reply = tmp_path / "reply.txt"
    reply.write_text("ok", encoding="utf-8")
    policy = ("--sieve-option", 'policy="schema"')
    with serving("--transcript", str(reply), *policy) as served:
        ask = {"model": "m", "messages": ASK, "tools": [tool(schema)]}
        url = f"{served.url}/v1/chat/completions"
        one = time.perf_counter()
        assert httpx.post(url, json=ask, timeout=60).status_code == 200
        one = time.perf_counter() - one
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            posts = [pool.submit(httpx.post, url, json=ask, timeout=60) for _ in range(3)]
            time.sleep(0.1)
            gaps = []
            while not all(p.done() for p in posts):
                t = time.perf_counter()
                httpx.get(f"{served.url}/healthz", timeout=60)
                gaps.append(time.perf_counter() - t)
                time.sleep(0.02)
            assert [p.result().status_code for p in posts] == [200] * 3
    assert gaps and max(gaps) < max(0.25, 0.5 * one), (one, gaps)
