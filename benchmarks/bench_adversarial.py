"""Strategy: feed ``callsieve`` hostile input (the issue "Hostile input") at two sizes 8x apart,
three ways each, in a fresh process per measurement, and report time, peak memory and how
both grow, against the issue's targets.

What it measures. The inputs are in ``_adversarial_inputs.py`` (``--list`` prints them): loose
CDATA repair, bare invokes, unclosed wrappers and CDATA sections, many complete and many
failed blocks, prose mentions, runs of ``<`` and of ``<tool_calls>``, deeply nested values,
10 MB unclosed bodies, backtick/tilde runs, lone surrogates and NULs, a chat fed one character
at a time and 50 MB in one chunk; and for the opt-in families (``json``, ``llama3_json``,
``pythonic``, ``mistral``, ``hermes``, ``kimi_k2``, ``text_kv``, issue 32's families
(``hunyuan`` to ``llamacpp_generic``, ``lfm2``, ``kimi_k3``, ``minimax_m3``, ``hy_v3``,
``gemma4``, ``functiongemma``), ``dialects="all"``; SPEC §2, §19),
each run with its dialects, the entry that was the worst of its family's we tried, repeated (an
entry whose body is left open or nested, so every entry in prose begins a block that fails and
the text after its opener is read again). Each is fed streamed in 7-character chunks, streamed in
4096-character chunks, and whole (``parse``); the one-character row streams 1-character chunks
instead, the 50 MB rows have no 7-character column (the table says why). "Size" is always
``len(doc)`` in characters; MB is 10^6 characters.

How. Every measurement (case, feed, size) is a child process (this script with ``--child``),
so no case's heap, caches or RSS high-water mark can leak into another's. The child imports
``callsieve`` from this checkout's ``src/`` (or ``--src``), builds the document, compiles the
grammar (a warm-up parse and stream of a small block: a once-per-process cost, not the
input's), runs ``gc.collect()`` and times the case with ``time.perf_counter`` (a fresh
``Sieve`` or ``parse`` call; the collector stays on, as in a server). The first run is timed
alone (it is also the memory run, below); a later sample repeats the case often enough to last
20 ms and takes the mean, like ``timeit``. The figure is the best of ``--reps`` samples (3; 2
with ``--quick``), fewer once they add up to 4 s: a slow case is slow enough to need no
repeats. A streamed run slices each chunk from the document as it is fed (fresh strings, as
from a network) and passes every event through the conservation checker (below), which keeps
nothing but an offset and two SHA-1s, so no output is retained; its few comparisons per event
are inside the figure, a small part of any hostile case's cost.

Memory is peak RSS above a baseline, read from the first run only: just before it the child
writes ``5`` to ``/proc/self/clear_refs``, which resets the kernel's high-water mark
(``VmHWM``) to the current RSS, and takes ``VmRSS`` as the baseline; after the run ``VmHWM`` is
the peak. So neither the interpreter, the document, the grammar nor the warm-up's own peak is
counted, and the figure costs no slowdown (tracemalloc would slow Python code 2-3x and miss
memory allocated outside it), so time and memory come from the same run. Where the reset is
refused, the header says so and the figure is an upper bound (the setup's peak may be in it);
without ``/proc`` (not Linux) there are no memory figures. ``parse``'s peak includes its result (text and blocks); a streamed run's
does not, the checker keeps none. The child's address space is capped (8 GB, or half the RAM),
so a runaway case raises ``MemoryError`` (an error row) rather than waking the OOM killer.

Timeouts. The parent waits ``--timeout`` seconds (60; 20 with ``--quick``) for each run and
then kills the child: the cell reads TIMEOUT, and if the child had begun, its ``VmHWM`` read
just before the kill gives a lower bound on the peak. If the smaller size timed out, or took
more than 1/8 of the timeout (so the larger one cannot finish even if linear), the larger is
not run. A timed-out larger size still bounds the slope from below
(``log(timeout / t_small) / log(size ratio)``), which can already be a FAIL.

Checks, outside the figures' meaning but in the same runs: conservation - the ``Text`` events
and the ``ToolCalls`` blocks' ``raw``, in order, rebuild the input exactly, each block's
``span`` where its ``raw`` is (for ``parse``: ``text`` is the input with the non-failed blocks'
spans removed, every block's ``raw`` is ``input[span]``); and every feed of one size gives the
same calls (names and inputs) and block spans as ``parse``. A broken check, or an exception
out of the library, makes the row an error row; the run goes on.

Targets (PASS/FAIL per row and feed): time slope ``log(t_large / t_small) / log(n_large /
n_small)`` <= 1.2 (no verdict when the larger size ran under 20 ms: cache and timer effects
swamp it); at most 1 s per MB of input at either size; peak RSS above baseline at most
8x the input (characters) at either size, or under 8 MB (allocator granularity: below that the
multiple means nothing); memory linear in the input: a memory slope (reported where both
peaks are over 1 MB) at most 1.2. The first is stricter than the issue's "bounded, a small
documented multiple": a row can be linear with a larger constant (``parse`` records every
failed block; a block of many tiny calls holds each call's values), which README documents.

It is a report, not a test: it exits 0 whatever the targets say, 1 only if the harness itself
breaks (a child that dies without a result, a generator that fails). Usage:
``python benchmarks/bench_adversarial.py [--quick] [--only NAME[,NAME]] [--sizes SCALE]
[--timeout S] [--reps N] [--src DIR] [--list]``.
"""

from __future__ import annotations

import argparse
import fnmatch
import gc
import json
import math
import os
import resource
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _adversarial_inputs as inputs

ROOT = HERE.parent
MB = inputs.MB
SLOPE_MAX, S_PER_MB_MAX, MEM_MULT, MEM_SLACK_MB, MEM_RES_MB = 1.2, 1.0, 8.0, 8.0, 1.0
SETUP_TIMEOUT = 300.0  # seconds for a child to import, build its document and warm up
MIN_SAMPLE, REP_BUDGET, MAX_LOOPS = 0.02, 4.0, 1000  # seconds, seconds, runs
FEED_LABEL = {"1": "1-char", "7": "7-char", "4096": "4096-char", "whole": "parse"}
Result = dict[str, Any]


# ---------------------------------------------------------------------- child side
def _status_kb(field: str, pid: str = "self") -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _reset_peak() -> tuple[int, str]:
    """Baseline kB and the method; resets the high-water mark where the kernel allows."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return _status_kb("VmRSS"), "VmHWM reset via clear_refs"
    except OSError:
        return _status_kb("VmRSS"), "VmHWM, not reset: an upper bound"


def child(case_name: str, mode: str, param: int, reps: int, src: str) -> None:
    def say(**msg: Any) -> None:
        print(json.dumps(msg), flush=True)

    limit = min(8 << 30, os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # MemoryError, not the OOM killer
    sys.path.insert(0, src)
    import callsieve as cs

    case = inputs.BY_NAME[case_name]
    doc = case.make(param)
    options = case.options()
    warm = inputs.DSML_BLOCK + '<tool_calls><invoke name="f"></invoke></tool_calls>' + " <"
    cs.parse(warm, **options)
    inputs.run_stream(cs, warm, 7, **options)
    say(ready=True, n=len(doc), file=cs.__file__)
    total, done, loops = 0.0, 0, 1
    while done < reps and total < REP_BUDGET:
        gc.collect()
        if done == 0:
            base, method = _reset_peak()
            say(start=0, base_kb=base, method=method)
        try:
            t0 = time.perf_counter()
            for _ in range(loops):
                if mode == "whole":
                    r = cs.parse(doc, **options)
                else:
                    res = inputs.run_stream(cs, doc, int(mode), **options)
            dt = (time.perf_counter() - t0) / loops
            total += dt * loops
        except Exception as exc:  # noqa: BLE001 - the library raised: an error row, go on
            say(error=f"{type(exc).__name__}: {str(exc)[:200]}")
            return
        if done == 0:  # the measured run: memory, then the check, then the later samples' loop
            peak = _status_kb("VmHWM")
            first = inputs.check_parse(doc, r) if mode == "whole" else res
            loops = min(MAX_LOOPS, math.ceil(MIN_SAMPLE / dt)) if dt < MIN_SAMPLE else 1
        r = None
        done += 1
        say(
            rep=done,
            t=dt,
            **({"mem_kb": peak - base} if done == 1 and min(peak, base) >= 0 else {}),
        )
    say(done=True, **first)


# ---------------------------------------------------------------------- parent side
class HarnessError(Exception):
    pass


def _messages(proc: subprocess.Popen[bytes], state: dict[str, float]) -> Iterator[Result]:
    """The child's JSON lines; raises TimeoutError once ``state['deadline']`` passes."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    buf = b""
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield json.loads(line)
        left = state["deadline"] - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if sel.select(left):
            data = os.read(fd, 65536)
            if not data:
                return
            buf += data


def measure(case: inputs.Case, mode: str, param: int, args: argparse.Namespace) -> Result:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        case.name,
        mode,
        str(param),
        "--reps",
        str(args.reps),
        "--src",
        args.src,
    ]
    out: Result = {"status": "error", "param": param}
    state = {"deadline": time.monotonic() + SETUP_TIMEOUT}
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        times: list[float] = []
        try:
            for msg in _messages(proc, state):
                state["deadline"] = time.monotonic() + args.timeout
                out.update({k: v for k, v in msg.items() if k not in ("rep", "t")})
                if "t" in msg:
                    times.append(msg["t"])
            proc.wait(timeout=SETUP_TIMEOUT)
        except (TimeoutError, subprocess.TimeoutExpired):
            hwm = _status_kb("VmHWM", str(proc.pid))
            if "start" in out and hwm >= 0:  # the run had begun: its peak so far bounds it
                out["mem_kb"], out["mem_lower"] = hwm - out["base_kb"], True
            proc.kill()  # the child this call started, by its own handle
            proc.wait()
            out["status"] = "timeout"
        finally:
            proc.stdout.close()  # type: ignore[union-attr]
        if out["status"] == "timeout" or "error" in out:
            return out
        if out.get("done"):
            out["status"], out["t"], out["reps"] = "ok", min(times), len(times)
        elif proc.returncode < 0 and "start" in out:  # e.g. the kernel's OOM killer mid-run
            out["error"] = f"child killed by signal {-proc.returncode} during the run"
        else:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-3000:]
            raise HarnessError(
                f"child {case.name} {mode} {param} died (exit "
                f"{proc.returncode}) without a result:\n{tail}"
            )
    return out


def run_case(
    case: inputs.Case,
    mode: str,
    results: dict[tuple[str, str], list[Result]],
    args: argparse.Namespace,
    log: Any,
) -> list[Result]:
    small_p, large_p = inputs.scaled_sizes(case, args.scale)
    gate = results.get((case.gate, mode)) if case.gate else None
    if gate is not None and not (gate[1]["status"] == "ok" and gate[1]["t"] < 1.0):
        why = f"not run: {case.gate} at the larger size did not finish under 1 s"
        return [{"status": "skipped", "why": why, "param": p} for p in (small_p, large_p)]
    rows: list[Result] = []
    for p in (small_p, large_p):
        prev = rows[-1] if rows else None
        if prev is not None and prev["status"] != "ok":
            rows.append({"status": "skipped", "param": p, "why": "smaller size did not finish"})
            continue
        if prev is not None and prev["t"] * 8 > args.timeout:
            rows.append(
                {
                    "status": "skipped",
                    "param": p,
                    "why": "8x the smaller size's time exceeds the timeout",
                }
            )
            continue
        t0 = time.monotonic()
        r = measure(case, mode, p, args)
        rows.append(r)
        print(
            f"  {case.name:18s} {FEED_LABEL[mode]:9s} {case.param} {p:>10,}: {r['status']:7s}"
            f" {r.get('t', time.monotonic() - t0):8.3f} s",
            file=log,
            flush=True,
        )
    return rows


def _mb(r: Result) -> float:
    """The cell's peak above baseline in MB (10^6 bytes; VmHWM counts KiB)."""
    return float(r["mem_kb"]) * 1024 / MB


def _num(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _fmt_t(r: Result, timeout: float) -> str:
    if r["status"] == "ok":
        return f"{r['t'] * 1000:.3g} ms" if r["t"] < 1 else f"{_num(r['t'])} s"
    return {"timeout": f"TIMEOUT (>{timeout:.0f} s)", "skipped": "not run"}.get(
        r["status"], "ERROR"
    )


def _fmt_mem(r: Result) -> str:
    if "mem_kb" not in r:
        return "—"
    ge = "≥ " if r.get("mem_lower") else ""
    return f"{ge}+{_mb(r):.1f} MB ({_num(_mb(r) * MB / max(r['n'], 1))}×)"


def verdicts(small: Result, large: Result, timeout: float) -> tuple[str, ...]:
    """Cells: slope, s/MB, memory slope, and the four verdicts."""
    ok = [r for r in (small, large) if r["status"] == "ok"]
    slope, v_slope = "—", "—"
    if len(ok) == 2:
        e = math.log(large["t"] / small["t"]) / math.log(large["n"] / small["n"])
        slope, v_slope = f"{e:.2f}", "PASS" if e <= SLOPE_MAX else "**FAIL**"
        if large["t"] < MIN_SAMPLE:  # cache and timer effects: no verdict (see the note)
            slope, v_slope = slope + "*", "—"
    elif small["status"] == "ok" and large["status"] == "timeout":
        e = math.log(timeout / small["t"]) / math.log(large["n"] / small["n"])
        slope, v_slope = f"≥ {e:.2f}", "**FAIL**" if e > SLOPE_MAX else "**TIMEOUT**"
    elif "timeout" in (small["status"], large["status"]):
        v_slope = "**TIMEOUT**"
    spm = [r["t"] / (r["n"] / MB) for r in ok]
    worst = max(spm, default=0.0)
    s_mb = _num(worst) if spm else "—"
    v_spm = ("PASS" if worst <= S_PER_MB_MAX else "**FAIL**") if spm else "—"
    bounds = [timeout / (r["n"] / MB) for r in (small, large) if r["status"] == "timeout"]
    if bounds and max(bounds) > worst:
        s_mb = f"≥ {_num(max(bounds))}"
        v_spm = "**FAIL**" if max(bounds) > S_PER_MB_MAX else "**TIMEOUT**"
    mems = [r for r in (small, large) if "mem_kb" in r]
    mem_ok = [_mb(r) <= max(MEM_SLACK_MB, MEM_MULT * r["n"] / MB) for r in mems]
    v_mem = "—" if not mems else "PASS" if all(mem_ok) else "**FAIL**"
    if v_mem == "PASS" and any(r.get("mem_lower") for r in mems):
        v_mem = "—"
    m_slope = "—"
    v_linear = "—" if not mems or any(r.get("mem_lower") for r in mems) else "PASS"
    if len(ok) == 2 and min(_mb(small), _mb(large)) >= MEM_RES_MB:
        m = math.log(_mb(large) / _mb(small)) / math.log(large["n"] / small["n"])
        m_slope = f"{m + 0.0:.2f}".replace("-0.00", "0.00")
        v_linear = "PASS" if m <= SLOPE_MAX else "**FAIL**"
    return slope, s_mb, m_slope, v_slope, v_spm, v_mem, v_linear


def check_cell(case_rows: dict[str, list[Result]], mode: str, i: int) -> str:
    """The row's check for size ``i``: errors, conservation, and calls equal to parse()'s."""
    r = case_rows[mode][i]
    if r["status"] == "error":
        return f"**ERROR** (raised {r.get('error', '?')})"
    if r["status"] != "ok":
        return ""
    if r.get("problem"):
        return f"**ERROR** {r['problem']}"
    ref = case_rows.get("whole", [None, None])[i]
    if (
        mode != "whole"
        and ref is not None
        and ref["status"] == "ok"
        and (r["calls"], r["spans"]) != (ref["calls"], ref["spans"])
    ):
        return (
            f"**ERROR** differs from parse(): {r['n_calls']} calls in "
            f"{r['n_blocks']} blocks vs {ref['n_calls']} in {ref['n_blocks']}"
        )
    return f"ok, {r['n_calls']:,} call{'s' * (r['n_calls'] != 1)}"


def report(cases: list[inputs.Case], args: argparse.Namespace) -> int:
    started = time.monotonic()
    results: dict[tuple[str, str], list[Result]] = {}
    try:
        for case in cases:
            for mode in case.modes:
                results[(case.name, mode)] = run_case(case, mode, results, args, sys.stderr)
    except HarnessError as exc:
        print(f"bench_adversarial: {exc}", file=sys.stderr)
        return 1
    firsts = [r for rows in results.values() for r in rows if "method" in r]
    method = firsts[0]["method"] if firsts else "—"
    where = next((r["file"] for rows in results.values() for r in rows if "file" in r), "?")
    print(
        f"# callsieve hostile-input benchmark\n\nPython {sys.version.split()[0]}, callsieve "
        f"from `{Path(where).parent}`, best of up to {args.reps} samples, timeout "
        f"{args.timeout:.0f} s per run, size scale {args.scale:g}, memory: peak RSS above "
        f"baseline ({method}), one fresh process per size. Time and memory cells: "
        f"smaller → larger size.\n"
    )
    print(
        f"| Input | Feed | Size (chars) | Time | Slope | s/MB | Peak RSS (× input) | Mem slope "
        f"| Slope ≤ {SLOPE_MAX} | ≤ {S_PER_MB_MAX:g} s/MB | RSS ≤ {MEM_MULT:g}× "
        f"| Mem slope ≤ {SLOPE_MAX} | Check |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|---|")
    notes: list[str] = []
    tally = {"PASS": 0, "FAIL": 0, "TIMEOUT": 0, "ERROR": 0}
    for case in cases:
        case_rows = {m: results[(case.name, m)] for m in case.modes}
        for mode in [m for m in inputs.STREAM_MODES + ("1",) if m in case.not_run]:
            print(
                f"| {case.name} | {FEED_LABEL[mode]} | | not run | | | | | — | — | — | — | "
                f"{case.note} |"
            )
        for mode, (small, large) in case_rows.items():
            for r, p in ((small, small["param"]), (large, large["param"])):
                r.setdefault("n", len(case.make(p)) if r["status"] != "ok" else r["n"])
            size = f"{small['n']:,} → {large['n']:,}"
            if case.param not in ("chars",):
                size += f" ({case.param} {small['param']:,} → {large['param']:,})"
            times = f"{_fmt_t(small, args.timeout)} → {_fmt_t(large, args.timeout)}"
            mems = f"{_fmt_mem(small)} → {_fmt_mem(large)}"
            slope, s_mb, m_slope, *vs = verdicts(small, large, args.timeout)
            checks = [check_cell(case_rows, mode, i) for i in (0, 1)]
            check = next((c for c in checks if c.startswith("**ERROR")), checks[1] or checks[0])
            whys = sorted({r["why"] for r in (small, large) if "why" in r})
            check = "; ".join([check] * bool(check) + whys) or "—"
            for v in vs:
                if v != "—":
                    tally[v.strip("*")] += 1
            tally["ERROR"] += check.startswith("**ERROR")
            print(
                f"| {case.name} | {FEED_LABEL[mode]} | {size} | {times} | {slope} | {s_mb} "
                f"| {mems} | {m_slope} | {' | '.join(vs)} | {check} |"
            )
        if case.note and not case.not_run:
            notes.append(f"{case.name}: {case.note}.")
    print(
        f"\nTarget cells: {tally['PASS']} PASS, {tally['FAIL']} FAIL, {tally['TIMEOUT']} "
        f"TIMEOUT; {tally['ERROR']} error rows. * The larger size ran under "
        f"{MIN_SAMPLE * 1000:.0f} ms: too short for a slope verdict. "
        + "".join(n + " " for n in notes)
        + f"Inputs: `--list`. Total run {time.monotonic() - started:.0f} s."
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes / 8, 2 samples, timeout 20 s")
    ap.add_argument("--only", help="comma-separated case names (shell patterns allowed)")
    ap.add_argument(
        "--sizes",
        type=float,
        metavar="SCALE",
        help="scale every size by this factor (1; 1/8 with --quick)",
    )
    ap.add_argument("--timeout", type=float, help="seconds per run (60; 20 with --quick)")
    ap.add_argument("--reps", type=int, help="best of this many samples (3; 2 with --quick)")
    ap.add_argument("--src", default=str(ROOT / "src"), help="tree to import callsieve from")
    ap.add_argument("--list", action="store_true", help="list the inputs and exit")
    ap.add_argument("--child", nargs=3, metavar=("CASE", "MODE", "PARAM"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.scale = args.sizes if args.sizes else (1 / 8 if args.quick else 1.0)
    args.timeout = args.timeout or (20.0 if args.quick else 60.0)
    args.reps = args.reps or (2 if args.quick else 3)
    args.src = str(Path(args.src).resolve())
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]), args.reps, args.src)
        return 0
    cases = list(inputs.CASES)
    if args.only:
        pats = [p.strip() for p in args.only.split(",") if p.strip()]
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.name, p) for p in pats)]
        if not cases:
            ap.error(
                f"--only {args.only!r} matches none of: " + ", ".join(c.name for c in inputs.CASES)
            )
    if args.list:
        for c in cases:
            small, large = inputs.scaled_sizes(c, args.scale)
            print(
                f"{c.name:18s} {c.title} ({c.param} {small:,} and {large:,}; "
                f"{', '.join(FEED_LABEL[m] for m in c.modes)})"
            )
        return 0
    return report(cases, args)


if __name__ == "__main__":
    sys.exit(main())
