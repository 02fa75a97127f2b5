"""SPEC §14 Observability (issue 15 item 4): counters per sieve and aggregated — blocks seen,
parsed by dialect, failed by reason, repaired by kind, calls, rejected by reason, characters
in and released, the hold-back high-water mark — readable as a plain dict, with the derived
rates; the process-wide aggregate is thread-safe; the Prometheus exporter is scraped as text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import DSML, INV, NATIVE_V31, ROOT, P, X, random_chunkings, stream_sieve

import callsieve
from callsieve import Metrics, Sieve, aggregate_metrics

REPLY = (
    "Hello "
    + DSML
    + " and "
    + NATIVE_V31
    + " then <tool_calls>oops</tool_calls> "  # a block that fails: text before its invoke
    + INV("g", P("x", "1"))
    + "</tool_calls>"  # the missing-wrapper repair
    + " bye <tool_calls>"
)  # the input ends inside a wrapper
TOOLS = [{"name": "read_file"}, {"name": "search"}]


def _counts(text: str, chunks: list[str] | None = None, **opts: Any) -> dict[str, Any]:
    _, sieve = stream_sieve(chunks or [text], metrics=True, **opts)
    snap: dict[str, Any] = sieve.metrics.snapshot()
    return snap


def test_s14_counts_a_reply() -> None:
    snap = _counts(REPLY, tools=TOOLS, policy="allowlist")
    assert snap["blocks_parsed"] == {"dsml": 1, "deepseek_native": 1, "xml": 1}
    assert snap["blocks_failed"] == {"unexpected_token": 1, "unclosed": 1}
    assert snap["blocks_seen"] == 5
    assert snap["repairs"] == {"missing_opener": 1}
    assert snap["blocks_repaired"] == 1
    assert snap["calls"] == 2 and snap["rejected"] == {"unknown_tool": 1}
    released = callsieve.parse(REPLY, tools=TOOLS, policy="allowlist").text
    assert snap["chars_in"] == len(REPLY) and snap["chars_released"] == len(released)
    assert snap["holdback_max"] == len("<tool_calls>")  # (one chunk: only its tail waited)
    per_char = _counts(REPLY, list(REPLY))
    # (the longest block, held until it closed: sampled when the machine runs, which it does
    # at each tag of the block)
    assert len(DSML) - len("</|DSML|tool_calls>") - 2 <= per_char["holdback_max"] < len(DSML)
    rates = snap["rates"]
    assert rates == {"success": 3 / 5, "malformed": 2 / 5, "repair": 1 / 3}
    json.dumps(snap)  # a plain dict


def test_s14_counts_do_not_depend_on_chunking() -> None:
    whole = _counts(REPLY)
    for chunks in random_chunkings(REPLY)[:3] + [list(REPLY)]:
        got = _counts(REPLY, chunks)
        assert {k: v for k, v in got.items() if k != "holdback_max"} == {
            k: v for k, v in whole.items() if k != "holdback_max"
        }


def test_s14_no_metrics_unless_asked() -> None:
    assert Sieve().metrics is None
    with pytest.raises(callsieve.ConfigurationError, match="metrics must be"):
        Sieve(metrics="yes")


def test_s14_repair_kinds_and_coercions() -> None:
    snap = _counts(X(INV("f", P("p", "<![CDATA[x"))))  # loose CDATA, repaired at the end
    assert snap["repairs"] == {"loose_cdata": 1} and snap["rates"]["repair"] == 1.0
    tools = [{"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}]
    snap = _counts(X(INV("f", P("n", "<![CDATA[4]]>"))), tools=tools)
    assert snap["coercions"] == 1 and snap["calls"] == 1


def test_s14_shared_metrics_and_aggregate_under_threads() -> None:
    shared = Metrics()
    before = aggregate_metrics().snapshot()
    text = "x " + X(INV("f")) + " y"

    def work() -> None:
        for _ in range(25):
            sieve = Sieve(metrics=shared)
            for ch in text:
                sieve.feed(ch)
            sieve.close()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = shared.snapshot()
    assert snap["calls"] == 100 and snap["blocks_parsed"] == {"xml": 100}
    assert snap["chars_in"] == 100 * len(text)
    after = aggregate_metrics().snapshot()
    assert after["calls"] - before["calls"] >= 100
    assert after["chars_in"] - before["chars_in"] >= 100 * len(text)


# ---------------------------------------------------------------- the Prometheus exporter
def test_s14_prometheus_text() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from callsieve.prometheus import PrometheusExporter

    registry = CollectorRegistry()
    source = Metrics()
    exporter = PrometheusExporter(registry, source=source)
    try:
        for _ in range(2):
            Sieve(metrics=source).parse_whole(REPLY)
        text = generate_latest(registry).decode()
    finally:
        exporter.close()
    assert 'callsieve_blocks_parsed_total{dialect="dsml"} 2.0' in text
    assert 'callsieve_blocks_failed_total{reason="unclosed"} 2.0' in text
    assert 'callsieve_repairs_total{kind="missing_opener"} 2.0' in text
    assert "callsieve_calls_total 6.0" in text
    assert f"callsieve_chars_in_total {2 * len(REPLY)}.0" in text
    assert "# TYPE callsieve_holdback_max_chars gauge" in text


_WORKER = """
import sys
from prometheus_client import CollectorRegistry
import callsieve
from callsieve.prometheus import PrometheusExporter
PrometheusExporter(CollectorRegistry())
callsieve.parse(sys.argv[1], metrics=True)
"""
_SCRAPE = """
from prometheus_client import CollectorRegistry, generate_latest, multiprocess
registry = CollectorRegistry()
multiprocess.MultiProcessCollector(registry)
print(generate_latest(registry).decode())
"""


def test_s14_prometheus_multiprocess(tmp_path: Path) -> None:
    env = dict(
        os.environ,
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    )
    for _ in range(3):
        subprocess.run([sys.executable, "-c", _WORKER, X(INV("f"))], env=env, check=True)
    out = subprocess.run(
        [sys.executable, "-c", _SCRAPE], env=env, check=True, capture_output=True, text=True
    ).stdout
    assert "callsieve_calls_total 3.0" in out
    assert 'callsieve_blocks_parsed_total{dialect="xml"} 3.0' in out


@pytest.mark.parametrize("early_emit", ["block", "invoke", "arguments"])
def test_s14_chars_released_under_a_policy(early_emit: str) -> None:
    text = "a " + X(INV("f") + INV("rm") + INV("f")) + " b"
    opts: dict[str, Any] = {
        "tools": [{"name": "f"}],
        "policy": "allowlist",
        "on_reject": "text",
        "early_emit": early_emit,
    }
    released = callsieve.parse(text, **opts).text
    for chunks in ([text], list(text)):
        assert _counts(text, chunks, **opts)["chars_released"] == len(released)


def test_s14_calls_aborted_after_they_began_to_stream() -> None:
    """SPEC §14: calls aborted after they started streaming, by ``CallAborted.reason``."""
    repeated = INV("f", P("p", "<![CDATA[a]]>") + P("p", "<![CDATA[b]]>")) + "</tool_calls>"
    cut = '<tool_calls><invoke name="g"><parameter name="x"><![CDATA[cut'
    reply = "<tool_calls>" + repeated + " then " + cut
    for chunks in ([reply], list(reply)):
        snap = _counts(reply, chunks, early_emit="arguments")
        assert snap["calls_aborted"] == {"repeated_name": 1, "cut_off": 1}
    assert _counts(reply)["calls_aborted"] == {}  # (only argument streaming aborts calls)
