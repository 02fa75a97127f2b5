"""Strategy: measure the gateway under load — what the sieve and the renderers add to a
streaming server's CPU per request, against the same server passing the text through.

What it measures. Two ``callsieve serve`` processes in replay mode, started here as
subprocesses on 127.0.0.1: one with the sieve on (the default), one with ``mode="off"``
(pass-through: the sieve releases every chunk as text, the renderer still frames it). Each
replays the same reply: about 20 kB of prose with 5 DSML tool calls, in 4-character chunks
(about 5,000 SSE events per request when passed through). 100 concurrent clients
(one ``httpx.AsyncClient`` and connection each, one event loop in this process) each stream ``--requests`` chat
completions with the reply's tools; the two servers are loaded in alternating rounds so they
see the same machine. Per phase:
  - **CPU per request**: the server process's user + system time (``/proc/<pid>/stat``,
    fields 14 and 15) over the phase, divided by its requests — the issue's figure, target:
    sieve on ≤ 1.20 × pass-through;
  - requests/s (wall), p50/p99 time to first byte (request sent to the first body bytes)
    and per-chunk latency (the gap between successive body reads a client receives);
  - errors (a status other than 200, a transport error, a stream without ``[DONE]``;
    target 0) and exact calls (the streamed calls, accumulated, equal ``parse()``'s;
    target 100 %; pass-through has none by design).
A warm-up request per server is not counted (the first request loads the grammar).

It is a report, not a test: it prints a Markdown table and exits 0 whatever the figures;
1 only when the sieve server's calls are wrong. The client shares the machine with the
server: on a 2-core machine it slows the wall-clock figures of both phases alike, but not
the server's CPU time per request.

Usage: ``python benchmarks/bench_server.py [--clients 100] [--requests 2] [--rounds 2]``
(needs the ``server`` extra).
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

import httpx

import callsieve

TOOLS = [{"type": "function", "function": {
    "name": "write_note", "description": "Save a note.",
    "parameters": {"type": "object", "properties": {"title": {"type": "string"},
                                                    "body": {"type": "string"}}}}}]
PROSE = ("The gateway streams this paragraph four characters at a time, as a model would, "
         "and every chunk goes through the sieve and the renderer before it is framed as a "
         "server-sent event. Nothing here looks like a tag, so it is released at once. ")


def transcript(calls: int = 5, size: int = 20_000) -> str:
    per = size // calls
    parts = []
    for i in range(calls):
        block = ("\n<|DSML|tool_calls>\n<|DSML|invoke name=\"write_note\">\n"
                 f"<|DSML|parameter name=\"title\"><![CDATA[note {i}]]></|DSML|parameter>\n"
                 f"<|DSML|parameter name=\"body\"><![CDATA[{'body text ' * 20}]]>"
                 "</|DSML|parameter>\n</|DSML|invoke>\n</|DSML|tool_calls>\n")
        prose = (PROSE * (per // len(PROSE) + 1))[:per - len(block)]
        parts += [prose, block]
    return "".join(parts) + "Done."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, name: str, path: str, off: bool) -> None:
        self.name, self.port = name, free_port()
        args = [sys.executable, "-m", "callsieve", "serve", "--transcript", path,
                "--port", str(self.port), "--chunk-size", "4"]
        if off:
            args += ["--sieve-option", 'mode="off"']
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
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
    body = {"model": "m", "stream": True, "tools": TOOLS,
            "messages": [{"role": "user", "content": "Take notes."}]}
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


async def load(server: Server, clients: int, requests: int, phase: Phase,
               expected: Any) -> None:
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
    args = ap.parse_args()
    reply = transcript()
    expected = [(c.name, c.input) for c in callsieve.parse(reply, tools=TOOLS).calls]
    assert len(expected) == 5, expected
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "reply.txt")
        Path(path).write_text(reply, encoding="utf-8")
        servers = {"pass-through (mode=off)": Server("off", path, off=True),
                   "sieve + renderer": Server("on", path, off=False)}
        phases = {name: Phase() for name in servers}
        try:
            for name, server in servers.items():  # warm-up: grammar load, first imports
                asyncio.run(load(server, 1, 1, Phase(), None))
            for _ in range(args.rounds):
                for name, server in servers.items():
                    exp = None if server.name == "off" else expected
                    asyncio.run(load(server, args.clients, args.requests, phases[name], exp))
        finally:
            for server in servers.values():
                server.stop()
    print(f"reply: {len(reply)} characters, {len(expected)} calls, 4-character chunks; "
          f"{args.clients} concurrent clients x {args.requests} requests x {args.rounds} "
          f"rounds per server\n")
    print("| server | requests | req/s | CPU ms/request | TTFB p50 / p99 ms | "
          "chunk gap p50 / p99 ms | errors | exact calls |")
    print("|---|---|---|---|---|---|---|---|")
    for name, p in phases.items():
        exact = "n/a" if name.startswith("pass") else f"{100 * p.exact / p.requests:.1f} %"
        print(f"| {name} | {p.requests} | {p.requests / p.wall:.1f} | "
              f"{1000 * p.cpu / p.requests:.1f} | {pct(p.ttfb, .5):.1f} / {pct(p.ttfb, .99):.1f}"
              f" | {pct(p.gaps, .5):.2f} / {pct(p.gaps, .99):.2f} | {p.errors} | {exact} |")
    for name, p in phases.items():
        for why, n in p.why.items():
            print(f"error ({name}): {n} x {why}")
    off, on = phases["pass-through (mode=off)"], phases["sieve + renderer"]
    ratio = (on.cpu / on.requests) / (off.cpu / off.requests)
    verdict = "PASS" if ratio <= 1.20 and on.errors == off.errors == 0 and \
        on.exact == on.requests else "FAIL"
    print(f"\nCPU per request, sieve + renderer / pass-through: {ratio:.2f}x "
          f"(target <= 1.20x, 0 errors, 100 % exact calls): {verdict}")
    return 0 if on.exact + on.errors == on.requests or on.errors else 1


if __name__ == "__main__":
    sys.exit(main())
