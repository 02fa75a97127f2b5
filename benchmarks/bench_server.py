"""Strategy: measure the gateway under load — what the sieve and the renderers add to a
streaming server's CPU per request, against the same server passing the text through.

What it measures. Three ``callsieve serve`` servers in replay mode, started here as
subprocesses on 127.0.0.1: one with the sieve on (the default), one with ``mode="off"``
(pass-through: the sieve releases every chunk as text, the renderer still frames it), and
the sieve on with ``--workers 2`` (two worker processes sharing the port). Each replays the
same reply: about 20 kB of prose with 5 DSML tool calls, in 4-character chunks (about 5,000
SSE events per request when passed through). 100 concurrent clients (one
``httpx.AsyncClient`` and connection each, one event loop in this process) each stream
``--requests`` chat completions with the reply's tools; the servers are loaded in alternating rounds so they
see the same machine. Per phase:
  - **CPU per request**: the server's user + system time (``/proc/<pid>/stat``, fields 14
    and 15, of the process and of its worker processes) over the phase, divided by its
    requests — the issue's figure, target: sieve on ≤ 1.20 × pass-through, with one worker
    and with two;
  - requests/s (wall), p50/p99 time to first byte (request sent to the first body bytes)
    and per-chunk latency (the gap between successive body reads a client receives);
  - errors (a status other than 200, a transport error, a stream without ``[DONE]``;
    target 0) and exact calls (the streamed calls, accumulated, equal ``parse()``'s;
    target 100 %; pass-through has none by design).
A warm-up request per server is not counted (the first request loads the grammar; with
two workers, a few, so that both have loaded it).

**Whole-request latency** (``--latency N``, default 200; 0 skips it; ``--only-latency``
runs it alone): the openai SDK's ``chat.completions.create()``, not streamed, N times
against the tests' fake upstream directly (a JSON answer) and N times through a gateway in
upstream mode in front of it (default settings; it asks the upstream for the same whole
JSON answer, which the row checks), alternating; the row is each one's p50, p90 and p99
and the difference of the medians (target: within 2 ms). ``--latency-runs R`` repeats it
and shows the run with the least overhead, and every run's overhead (the machine is
shared: the minimum is the least disturbed run, the spread says how much load moved it). ``--latency-before SRC`` adds a
gateway run from another ``src`` folder (e.g. /work/main/src: before issue 33 the accepted
connections had no TCP_NODELAY, and a whole request waited ~40 ms for the client's delayed
ACK).

**Freeze** (``--freeze-mb``, default 50; 0 skips it): a gateway in upstream mode in front of
the tests' fake upstream (``tests/loopback.py``) serves one whole reply of that many
megabytes while a stream beside it ticks every 10 ms; the row is the stream's longest gap
between two chunks while the whole reply is served (before issue 24: 0.41 s for 50 MB); a
second row has the upstream answer one JSON body of that size, as it does a whole request
(``--only-freeze`` runs both alone).

**Stall** (``--stall``, default 16; 0 skips it): a gateway in replay mode gets that many
concurrent bodies just under its 4 MiB limit (a chat of about 60,000 short messages each),
while a process of its own asks ``/healthz`` every 20 ms; the row is that probe's p50 / p99 /
longest latency while the bodies are parsed, against as long a stretch just before (issue 33:
16 bodies stalled every other request 4.9 s while they were parsed on the event loop).

It is a report, not a test: it prints a Markdown table and exits 0 whatever the figures;
1 only when the sieve server's calls are wrong. The client shares the machine with the
server: on a 2-core machine it slows the wall-clock figures of both phases alike, but not
the server's CPU time per request.

Usage: ``python benchmarks/bench_server.py [--clients 100] [--requests 2] [--rounds 2]
[--freeze-mb 50] [--stall 16]`` (needs the ``server`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import itertools

import httpx

import callsieve

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_note",
            "description": "Save a note.",
            "parameters": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
            },
        },
    }
]
PROSE = (
    "The gateway streams this paragraph four characters at a time, as a model would, "
    "and every chunk goes through the sieve and the renderer before it is framed as a "
    "server-sent event. Nothing here looks like a tag, so it is released at once. "
)


def transcript(calls: int = 5, size: int = 20_000) -> str:
    per = size // calls
    parts = []
    for i in range(calls):
        block = (
            '\n<|DSML|tool_calls>\n<|DSML|invoke name="write_note">\n'
            f'<|DSML|parameter name="title"><![CDATA[note {i}]]></|DSML|parameter>\n'
            f'<|DSML|parameter name="body"><![CDATA[{"body text " * 20}]]>'
            "</|DSML|parameter>\n</|DSML|invoke>\n</|DSML|tool_calls>\n"
        )
        prose = (PROSE * (per // len(PROSE) + 1))[: per - len(block)]
        parts += [prose, block]
    return "".join(parts) + "Done."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system time of ``pid`` and of its child processes, recursively."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(k) for k in kids)


class Server:
    def __init__(self, name: str, path: str, off: bool, workers: int = 1) -> None:
        self.name, self.port = name, free_port()
        self.workers = workers
        args = [
            sys.executable,
            "-m",
            "callsieve",
            "serve",
            "--transcript",
            path,
            "--port",
            str(self.port),
            "--chunk-size",
            "4",
            "--workers",
            str(workers),
        ]
        if off:
            args += ["--sieve-option", 'mode="off"']
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.proc = subprocess.Popen(
            args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1)
                return
            except httpx.TransportError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{name} server did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)


class Phase:
    def __init__(self) -> None:
        self.requests = self.errors = self.exact = 0
        self.why: dict[str, int] = {}
        self.ttfb: list[float] = []
        self.gaps: list[float] = []
        self.cpu = self.wall = 0.0


def calls_in(body: str) -> list[tuple[str, Any]]:
    """The calls a Chat Completions stream carries, accumulated by index."""
    calls: dict[int, list[Any]] = {}
    for line in body.split("\n"):
        if '"tool_calls"' not in line:
            continue
        for tc in json.loads(line[6:])["choices"][0]["delta"].get("tool_calls", []):
            entry = calls.setdefault(tc["index"], ["", ""])
            entry[0] += tc.get("function", {}).get("name", "")
            entry[1] += tc.get("function", {}).get("arguments", "")
    return [(name, json.loads(args)) for _, (name, args) in sorted(calls.items())]


async def one(client: httpx.AsyncClient, url: str, phase: Phase, expected: Any) -> None:
    body = {
        "model": "m",
        "stream": True,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "Take notes."}],
    }
    start = time.perf_counter()
    parts: list[bytes] = []
    try:
        async with client.stream("POST", url, json=body) as response:
            last = None
            async for data in response.aiter_raw():
                now = time.perf_counter()
                if last is None:
                    phase.ttfb.append(now - start)
                else:
                    phase.gaps.append(now - last)
                last = now
                parts.append(data)
            why = "" if response.status_code == 200 else f"HTTP {response.status_code}"
    except httpx.HTTPError as exc:
        why = type(exc).__name__
    text = b"".join(parts).decode("utf-8", "replace")
    phase.requests += 1
    if not why and not text.endswith("data: [DONE]\n\n"):
        why = "no [DONE]: " + text[-200:].replace("\n", " ")
    if why:
        phase.errors += 1
        phase.why[why] = phase.why.get(why, 0) + 1
    elif expected is not None and calls_in(text) == expected:
        phase.exact += 1


async def load(server: Server, clients: int, requests: int, phase: Phase, expected: Any) -> None:
    async def worker() -> None:
        # One client, one connection, kept alive between its requests (a pool shared by
        # all would hand a request a connection the server closed when it sat idle for the
        # server's keep-alive timeout: a client artefact, not the server's error).
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            for _ in range(requests):
                await one(client, server.url, phase, expected)

    cpu0, t0 = cpu_seconds(server.proc.pid), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    phase.wall += time.perf_counter() - t0
    phase.cpu += cpu_seconds(server.proc.pid) - cpu0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--requests", type=int, default=2, help="per client per round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--latency", type=int, default=200, help="whole requests (0: skip)")
    ap.add_argument("--latency-before", metavar="SRC", help="also time a gateway from SRC")
    ap.add_argument("--only-latency", action="store_true", help="run the latency row alone")
    ap.add_argument("--latency-runs", type=int, default=1, help="runs of the latency row")
    ap.add_argument(
        "--freeze-mb",
        type=int,
        default=50,
        help="size of the whole reply of the freeze row (0: skip it)",
    )
    ap.add_argument(
        "--stall", type=int, default=16, help="near-limit bodies of the stall row (0: skip it)"
    )
    ap.add_argument("--only-stall", action="store_true", help="run the stall row alone")
    ap.add_argument("--only-freeze", action="store_true", help="run the freeze rows alone")
    args = ap.parse_args()
    if args.only_stall:
        print_stall(args.stall)
        return 0
    if args.only_freeze:
        print_freeze(args.freeze_mb)
        return 0
    reply = transcript()
    expected = [(c.name, c.input) for c in callsieve.parse(reply, tools=TOOLS).calls]
    assert len(expected) == 5, expected
    if args.only_latency:
        latency_row(args.latency, args.latency_before, args.latency_runs)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "reply.txt")
        Path(path).write_text(reply, encoding="utf-8")
        servers = {
            "pass-through (mode=off)": Server("off", path, off=True),
            "sieve + renderer": Server("on", path, off=False),
            "sieve + renderer, --workers 2": Server("on2", path, off=False, workers=2),
        }
        phases = {name: Phase() for name in servers}
        try:
            for name, server in servers.items():  # warm-up: grammar load, first imports
                asyncio.run(load(server, 4 * server.workers, 1, Phase(), None))
            for _ in range(args.rounds):
                for name, server in servers.items():
                    exp = None if server.name == "off" else expected
                    asyncio.run(load(server, args.clients, args.requests, phases[name], exp))
        finally:
            for server in servers.values():
                server.stop()
    print(
        f"reply: {len(reply)} characters, {len(expected)} calls, 4-character chunks; "
        f"{args.clients} concurrent clients x {args.requests} requests x {args.rounds} "
        f"rounds per server\n"
    )
    print(
        "| server | requests | req/s | CPU ms/request | TTFB p50 / p99 ms | "
        "chunk gap p50 / p99 ms | errors | exact calls |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, p in phases.items():
        exact = "n/a" if name.startswith("pass") else f"{100 * p.exact / p.requests:.1f} %"
        print(
            f"| {name} | {p.requests} | {p.requests / p.wall:.1f} | "
            f"{1000 * p.cpu / p.requests:.1f} | {pct(p.ttfb, 0.5):.1f} / {pct(p.ttfb, 0.99):.1f}"
            f" | {pct(p.gaps, 0.5):.2f} / {pct(p.gaps, 0.99):.2f} | {p.errors} | {exact} |"
        )
    for name, p in phases.items():
        for why, n in p.why.items():
            print(f"error ({name}): {n} x {why}")
    off = phases["pass-through (mode=off)"]
    wrong = False
    for name in ("sieve + renderer", "sieve + renderer, --workers 2"):
        on = phases[name]
        ratio = (on.cpu / on.requests) / (off.cpu / off.requests)
        verdict = (
            "PASS"
            if ratio <= 1.20 and on.errors == off.errors == 0 and on.exact == on.requests
            else "FAIL"
        )
        print(
            f"\nCPU per request, {name} / pass-through: {ratio:.2f}x "
            f"(target <= 1.20x, 0 errors, 100 % exact calls): {verdict}"
        )
        wrong |= on.exact + on.errors != on.requests and not on.errors
    if args.latency:
        latency_row(args.latency, args.latency_before, args.latency_runs)
    if args.freeze_mb:
        print_freeze(args.freeze_mb)
    if args.stall:
        print_stall(args.stall)
    load1 = os.getloadavg()[0]
    print(f"load average (1 min) at the end: {load1:.2f} on {os.cpu_count()} cores")
    return 1 if wrong else 0


def print_freeze(megabytes: int) -> None:
    """The freeze rows (see the module's docstring)."""
    gap, control, wall = freeze(megabytes)
    print(
        f"\nfreeze: a stream's longest gap between two chunks while a whole "
        f"{megabytes} MB reply is served: {gap * 1000:.1f} ms; over as long a stretch "
        f"just before it: {control * 1000:.1f} ms (the whole reply took {wall:.2f} s; "
        f"before issue 24: 410 ms for 50 MB)"
    )
    gap, control, wall = freeze(megabytes, whole=True)
    print(
        f"freeze, the upstream's reply one {megabytes} MB JSON body: the stream's "
        f"longest gap {gap * 1000:.1f} ms; just before it: {control * 1000:.1f} ms (the "
        f"whole reply took {wall:.2f} s)"
    )
    longest, p99 = loop_steps(megabytes)
    print(
        f"event loop while a whole {megabytes} MB reply is served: its longest step "
        f"{longest * 1000:.1f} ms of CPU time, 99th percentile {p99 * 1000:.1f} ms"
    )


def start_gateway(upstream: str, src: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``callsieve serve --upstream URL`` from ``src``, once it answers."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "callsieve", "serve", "--upstream", upstream, "--port", str(port)],
        env={**os.environ, "PYTHONPATH": str(src)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"{base}/healthz", timeout=2)
            return proc, base
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the gateway did not start") from None
            time.sleep(0.1)


def latency_row(n: int, before: str | None, runs: int = 1) -> None:
    """The whole-request latency table (see the module's docstring)."""
    import openai
    from loopback import Script, scripted

    ask = [{"role": "user", "content": "What is the weather in Paris?"}]
    with scripted(Script(text="It is sunny in Paris today, 21 degrees.")) as model:
        gateways = {"through the gateway": start_gateway(model.url, ROOT / "src")}
        if before:
            gateways["through the gateway (before)"] = start_gateway(model.url, Path(before))
        clients = {"upstream directly": openai.OpenAI(base_url=model.url, api_key="x")}
        for name, (_, base) in gateways.items():
            clients[name] = openai.OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0)
        rounds: list[dict[str, list[float]]] = []
        try:
            for run in range(runs):
                times: dict[str, list[float]] = {name: [] for name in clients}
                for i in range(n + (10 if run == 0 else 0)):
                    for name, client in clients.items():
                        t0 = time.perf_counter()
                        reply = client.chat.completions.create(model="m", messages=ask)
                        took = time.perf_counter() - t0
                        assert reply.choices[0].message.content
                        if run or i >= 10:  # (warm-up: imports, the grammar, connections)
                            times[name].append(took)
                rounds.append(times)
        finally:
            for client in clients.values():
                client.close()
            for proc, _ in gateways.values():
                proc.terminate()
                proc.wait(30)
        # (the direct requests and the gateway's asked the upstream for a whole reply; a
        # gateway from before this change streams from it)
        whole = sum(1 for r in model.requests if "stream" not in r)
        assert whole >= 2 * n * runs, "not like with like"
    print(
        f"\nwhole-request latency, openai SDK create(), {n} requests each, alternating, "
        f"{runs} run(s); the run whose gateway overhead at the median is least:\n"
    )
    overheads = [
        pct(t["through the gateway"], 0.5) - pct(t["upstream directly"], 0.5) for t in rounds
    ]
    times = rounds[overheads.index(min(overheads))]
    direct = pct(times["upstream directly"], 0.5)
    print("| path | p50 ms | p90 ms | p99 ms | p50 - direct p50 ms |")
    print("|---|---|---|---|---|")
    for name, values in times.items():
        p50 = pct(values, 0.5)
        print(
            f"| {name} | {p50:.2f} | {pct(values, 0.9):.2f} | {pct(values, 0.99):.2f} | "
            f"{p50 - direct:+.2f} |"
        )
    if runs > 1:
        print(
            "\noverhead at the median per run (ms): "
            + ", ".join(f"{o:.2f}" for o in overheads)
            + f"; spread {max(overheads) - min(overheads):.2f} ms"
        )
    verdict = "PASS" if min(overheads) <= 2 else "FAIL"
    print(f"\ngateway overhead at the median: {min(overheads):.2f} ms (target <= 2 ms): {verdict}")


_TICKER = """
import sys, time, httpx
body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
with httpx.stream("POST", sys.argv[1], json=body, timeout=120) as response:
    for _ in response.iter_raw():
        print(time.time(), flush=True)
"""


def loop_steps(megabytes: int) -> tuple[float, float]:
    """The CPU time of the event loop's longest step, and its 99th percentile, while the
    gateway's whole-reply path (SSE reader, JSON, sieve, renderer, sliced encoding) serves a
    reply of ``megabytes`` MB of 1 MB events, in this process (CPU time: what the machine's
    load adds to a wall-clock gap does not count). Run twice; the second run is reported
    (the first one imports and warms up)."""

    from callsieve import Sieve
    from callsieve.server._json import dumps_sliced
    from callsieve.server._read.turns import ModelRequest, Turn
    from callsieve.server._reply.apis import CHAT
    from callsieve.server._reply.respond import ReplyEvents, whole_reply
    from callsieve.server._reply.sse import SSEDecoder
    from callsieve.server._reply.upstream import Piece

    frame = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"z" * 1_000_000
    frame += b'"}}]}\n\n'

    class Source:
        finish_reason: str | None = "stop"
        usage = None

        async def pieces(self) -> Any:
            decoder = SSEDecoder()
            for _ in range(megabytes):
                for j in range(0, len(frame), 65536):
                    await asyncio.sleep(0)
                    for event in decoder.feed(frame[j : j + 65536]):
                        yield Piece(json.loads(event.data)["choices"][0]["delta"]["content"])

        def calls(self) -> list[Any]:
            return []

        async def aclose(self) -> None:
            return None

    async def run() -> list[float]:
        steps: list[float] = []
        done = False

        async def ticker() -> None:
            while not done:
                t = time.thread_time()
                await asyncio.sleep(0.001)
                steps.append(time.thread_time() - t)

        task = asyncio.create_task(ticker())
        req = ModelRequest(model="m", turns=[Turn("user", "x")])
        reply, deferred = await whole_reply(CHAT, req, Source(), ReplyEvents(Sieve(mode="off")))
        for piece in dumps_sliced(reply, deferred):
            piece.encode()
            await asyncio.sleep(0)
        done = True
        await task
        return sorted(steps)

    asyncio.run(run())
    steps = asyncio.run(run())
    return steps[-1], steps[int(0.99 * len(steps))]


def freeze(megabytes: int, whole: bool = False) -> tuple[float, float, float]:
    """A ticking stream's longest gap between two chunks while a whole reply of
    ``megabytes`` MB is served by the same gateway (upstream mode, in front of the tests'
    fake upstream), the same over as long a stretch just before it (what the machine's
    load alone costs), and how long the whole reply took. The stream's client is a process
    of its own, so this one's threads do not hold it."""
    from loopback import Script, scripted

    size = megabytes * 1_000_000
    frames = [
        b'data: {"choices":[{"index":0,"delta":{"content":"' + b"z" * 1_000_000 + b'"}}]}\n\n'
        for _ in range(size // 1_000_000)
    ]
    frames.append(
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    big = Script(raw=frames)
    if whole:  # (one JSON body, as an upstream answers a whole request)
        content = b'{"choices":[{"index":0,"message":{"content":"' + b"z" * size
        big = Script(
            raw=[content + b'"},"finish_reason":"stop"}]}'], content_type="application/json"
        )
    ticking = Script(text="tick " * 4000, chunk=5, delay=0.01)
    with scripted(Script(text="warm"), ticking, big) as model:
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "callsieve",
                "serve",
                "--upstream",
                model.url,
                "--port",
                str(port),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30)
                    break
                except httpx.TransportError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the freeze gateway did not start") from None
                    time.sleep(0.1)
            ticker = subprocess.Popen(
                [sys.executable, "-c", _TICKER, f"{base}/v1/chat/completions"],
                stdout=subprocess.PIPE,
                text=True,
            )
            model.wait_requests(2)
            time.sleep(3)  # (the control stretch)
            t0 = time.time()
            reply = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=300)
            t1 = time.time()
            assert len(reply.json()["choices"][0]["message"]["content"]) == size
            ticker.kill()
            stamps = [float(line) for line in (ticker.communicate()[0] or "").split()]
        finally:
            proc.terminate()
            proc.wait(30)
    pairs = list(itertools.pairwise(stamps))
    during = [b - a for a, b in pairs if b >= t0 and a <= t1]
    before = [b - a for a, b in pairs if t0 - (t1 - t0) - 0.5 <= a and b < t0]
    return (
        max(during) if during else float("nan"),
        max(before) if before else float("nan"),
        t1 - t0,
    )


_PROBE = """
import sys, time, httpx
end = time.time() + float(sys.argv[2])
with httpx.Client(timeout=60) as client:
    while time.time() < end:
        t = time.time()
        client.get(sys.argv[1])
        print(t, time.time() - t, flush=True)
        time.sleep(0.02)
"""


def near_limit_body(limit: int = 4 * 1024 * 1024) -> bytes:
    """A chat request just under ``limit`` bytes: many short messages (what costs the most
    to read per byte)."""
    turn = {"role": "user", "content": "a short message of the conversation"}
    one = len(json.dumps(turn)) + 2
    body = {"model": "m", "messages": [turn] * ((limit - 200) // one)}
    data = json.dumps(body).encode()
    assert len(data) < limit, len(data)
    return data


def stall(bodies: int) -> tuple[list[float], list[float], float, list[int]]:
    """``/healthz``'s latencies while ``bodies`` near-limit bodies are parsed, and just
    before; how long the bodies took; their statuses."""
    data = near_limit_body()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "reply.txt")
        Path(path).write_text("ok", encoding="utf-8")
        server = Server("stall", path, off=False)
        try:
            base = f"http://127.0.0.1:{server.port}"
            httpx.post(f"{base}/v1/chat/completions", content=data, timeout=60)  # (warm)
            probe = subprocess.Popen(
                [sys.executable, "-c", _PROBE, f"{base}/healthz", "12"],
                stdout=subprocess.PIPE,
                text=True,
            )
            time.sleep(4)  # (the control stretch)

            async def send_all() -> list[int]:
                async with httpx.AsyncClient(timeout=120) as client:
                    answers = await asyncio.gather(
                        *[
                            client.post(
                                f"{base}/v1/chat/completions",
                                content=data,
                                headers={"Content-Type": "application/json"},
                            )
                            for _ in range(bodies)
                        ]
                    )
                return [a.status_code for a in answers]

            t0 = time.time()
            statuses = asyncio.run(send_all())
            t1 = time.time()
            rows = [line.split() for line in (probe.communicate()[0] or "").splitlines()]
        finally:
            server.stop()
    samples = [(float(a), float(b)) for a, b in rows]
    during = [lat for t, lat in samples if t0 <= t <= t1 or t < t0 < t + lat]
    before = [lat for t, lat in samples if t0 - 3.5 <= t < t0 and t + lat < t0]
    return during, before, t1 - t0, statuses


def print_stall(bodies: int) -> None:
    during, before, wall, statuses = stall(bodies)
    print(
        f"\nstall: /healthz every 20 ms while {bodies} bodies of "
        f"{len(near_limit_body()) / 2**20:.2f} MiB are parsed ({wall:.2f} s for all of them; "
        f"statuses {sorted(set(statuses))})\n"
    )
    print("| stretch | probes | p50 ms | p99 ms | longest ms |")
    print("|---|---|---|---|---|")
    for name, lat in (("before", before), ("while parsing", during)):
        print(
            f"| {name} | {len(lat)} | {pct(lat, 0.5):.1f} | {pct(lat, 0.99):.1f} "
            f"| {max(lat, default=float('nan')) * 1000:.1f} |"
        )


if __name__ == "__main__":
    sys.exit(main())
