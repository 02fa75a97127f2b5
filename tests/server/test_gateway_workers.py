"""Scale out (issue 24, item 8), as real processes: ``--workers 2`` shares the port, and a
scrape of ``/metrics`` (on its own port here) sums what every worker counted; SIGTERM to
the parent stops them all, exit 0; while they drain, a new connection is refused at once
(issue 33, item 4)."""

from __future__ import annotations

import signal
import threading
import time

import httpx
from loopback import Script, closed_port, scripted, serving


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
        return [int(p) for p in f.read().split()]


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def served_count(text: str) -> float:
    return sum(
        float(line.split()[1])
        for line in text.splitlines()
        if line.startswith("callsieve_gateway_requests_total{")
        and 'outcome="ok"' in line
        and 'api="chat"' in line
    )


def test_two_workers_share_the_port_and_one_scrape_sums_them() -> None:
    metrics_port = closed_port()
    with (
        scripted(Script(text="hi " * 200, chunk=2)) as model,
        serving(
            "--upstream", model.url, "--workers", "2", "--metrics-port", str(metrics_port)
        ) as gw,
    ):
        deadline = time.monotonic() + 30
        while len(workers := children(gw.proc.pid)) < 2:  # (the multiprocessing tracker too)
            assert time.monotonic() < deadline
            time.sleep(0.1)
        before = {pid: cpu_ticks(pid) for pid in workers}
        for _ in range(40):
            response = httpx.post(
                f"{gw.url}/v1/chat/completions",
                headers={"Connection": "close"},
                json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]},
                timeout=30,
            )
            assert response.text.endswith("data: [DONE]\n\n")
        busy = [pid for pid in workers if cpu_ticks(pid) > before[pid] + 2]
        scrapes = [
            served_count(
                httpx.get(
                    f"http://127.0.0.1:{metrics_port}/metrics", headers={"Connection": "close"}
                ).text
            )
            for _ in range(6)
        ]
        assert httpx.get(f"{gw.url}/metrics").status_code == 404
        code = gw.stop()
    assert len(busy) >= 2, "only one worker served"
    assert scrapes == [40.0] * 6, scrapes
    assert code == 0, "".join(gw.log)


def knock(url: str) -> tuple[str, float]:
    """A new connection's fate while the gateway drains: ``refused`` (at once), or the
    status it was answered, or ``reset``/``closed``; and how long that took."""
    started = time.monotonic()
    try:
        response = httpx.get(f"{url}/healthz", headers={"Connection": "close"}, timeout=3)
        what = str(response.status_code)
    except httpx.ConnectError:
        what = "refused"
    except httpx.TimeoutException:
        what = "hung"
    except httpx.TransportError:
        what = "reset"
    return what, time.monotonic() - started


def test_during_a_drain_with_two_workers_new_connections_are_refused_at_once() -> None:
    """Issue 33, item 4: with a stream in flight, SIGTERM to the parent; every connection
    tried during the drain is refused or answered at once, never queued and left hanging."""
    with (
        scripted(Script(text="Hi", stall=True)) as model,
        serving("--upstream", model.url, "--workers", "2", "--shutdown-grace", "4") as gw,
    ):
        stream = threading.Thread(
            target=lambda: httpx.post(
                f"{gw.url}/v1/chat/completions",
                json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]},
                timeout=30,
            ),
            daemon=True,
        )
        stream.start()
        model.wait_requests(1)
        gw.proc.send_signal(signal.SIGTERM)
        time.sleep(1.0)  # (the supervisor reads its signals every 0.5 s)
        knocks = [knock(gw.url) for _ in range(6)]
        draining = stream.is_alive()
        code = gw.proc.wait(30)
        stream.join(10)
    assert all(what in ("refused", "503") and took < 1 for what, took in knocks), knocks
    assert draining, "the drain did not wait for the stream"
    assert code == 0, "".join(gw.log)
