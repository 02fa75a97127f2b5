"""Strategy: measure how fast ``callsieve.Sieve`` streams text, relative to a do-nothing floor.

What it measures. Four workloads, each a fixed, seeded string:
  (a) 1,000,000 characters of prose with no ``<`` (the sieve's fast path);
  (b) 1,000,000 characters of prose with a non-tag ``<`` every 30-80 characters
      (``if a<b``, ``x < y``, ``<b>bold</b>``, ``1<2``, ``vector<int>`` ...), so the sieve
      keeps holding back a tail that might still become a tag and then releasing it;
  (c) 1,000,000 characters of chat: 200 DSML blocks of one call each (``write_file``,
      ``edit_file``, ``run_command``) whose arguments are multi-line CDATA holding generated
      Python/shell code, with prose between the blocks;
  (d) one DSML call whose single CDATA argument is 10 kB, 100 kB and 1 MB long.
(a)-(c) are fed at three chunkings: random 1-8-character chunks (fixed seed; the chunk-size
sequence is the same for every workload), 64-character chunks, and the whole text as one
chunk. (d) is fed in random 1-8-character chunks only.

How. Every chunk list is built before any timing. Each figure is the best (minimum) of N
repetitions (N=9, or 2 with ``--quick``) of ``for c in chunks: sieve.feed(c)`` plus
``sieve.close()`` on a freshly constructed sieve (construction is not timed; the grammar is
compiled once before anything is timed), measured with ``time.perf_counter``;
``gc.collect()`` runs before every repetition. Each case is first warmed up for 50 ms, and a
case that takes less than 20 ms is repeated in a loop on fresh sieves and the loop time
divided, so one-chunk figures are not clock noise.
The floor is a do-nothing class with the same ``feed``/``close`` interface returning
``[Text(chunk)]`` per chunk, timed in the same run on the same chunk lists, its repetitions
interleaved with the sieve's so both see the same machine load. Each workload's row has its
own floor row right above it (the table's first row is the floor for (a)). The floor is what
any streaming consumer pays for the Python call and one event per chunk, so a cell's ratio
(floor seconds / sieve seconds at the same chunking; the same as sieve MB/s / floor MB/s) is
the share of the run that is that unavoidable cost: 1.00 would be a free sieve, 0.50 means
the sieve doubles the cost of the call. For one chunk the floor is a single call, so its
MB/s is huge and the ratio tiny; there the sieve's MB/s is the meaningful figure.

Garbage collector. Both ways were measured once (``--gc-study``: 7 interleaved repetitions
of each 1-8-character case, with ``gc.callbacks`` counting the collections that happen inside
the timed loop). With the collector enabled, not one collection of any generation ran during
a timed run, in any workload: the per-chunk objects (events, lists, tokens) die as fast as
they are made, so the generation-0 counter never reaches its threshold. The wall-time spread
((max - min) / min) was the same both ways within noise (70-120 % on the 2-vCPU machine this
was written on, which other processes were loading); that spread is the machine's, not the
collector's. The benchmark disables the collector inside the timed loop (``gc.disable()``
right after ``gc.collect()``, re-enabled when the clock stops): that is the stable choice -
no collection triggered by the harness's own heap can land in a timing - and, per the study,
it hides no cost of the library. Rerun ``--gc-study`` after changing the library.
Best-of-N is the figure because the minimum is the run least disturbed by other load. The
first table is timed in rounds (``measure_rounds``): each round times every (a)-(c) case once,
floor then sieve, so a case's N repetitions are spread over the whole table rather than one
stretch of a second or two. N was 5, and each case's repetitions were consecutive, until four
runs in a row on the 2-vCPU development VM gave floor rows between 9.6 and 19.7 MB/s for the
same chunk list: a burst of the host's load could cover all of one row's repetitions, and a
ratio then moved by up to 0.1 either way. The run takes about 35 s.

Linearity guard. Each of (a)-(c) is also generated at 100 kB, 300 kB and 1 MB (same seeds;
(c) keeps 200 calls per MB) and fed whole, as one chunk; the slope of log(seconds) against
log(size) must stay <= 1.1, like (d)'s. The issue names no figure for this; it is here because
a path can be linear per chunk yet quadratic in the text a chunk holds (one was: a candidate
walk that sliced the rest of the buffer), which no 1-8-character figure shows. The nine
documents are timed in rounds too (``measure_sieve_rounds``). Until they were, each size's
repetitions ran back to back, and about one run in three read one row above 1.1 (1.12-1.15,
(b) or (c), a different row each time) while the same documents timed in rounds gave slopes
of 0.99-1.04: the burst of load that slows one size's stretch tilts the slope.

Targets (printed next to the figures, PASS/FAIL; the script exits 0 either way, it is a
report, not a test): at 1-8-character chunks (a) >= 0.6x floor, (b) >= 0.4x, (c) >= 0.5x;
(d) the least-squares slope of log(seconds) against log(size) over the three sizes <= 1.1
(1.0 is linear, 2.0 quadratic) and 1 MB in under 2 s; peak RSS while streaming (d) at 1 MB
under 64 MB above the interpreter's baseline. The RSS figure comes from a child process (this
script with ``--rss-child SIZE``), started first, while the parent is still small (Linux
carries a parent's ``ru_maxrss`` into its children; the child's own ``VmHWM`` is printed as a
cross-check): ``ru_maxrss`` after importing callsieve and building the
input (the document and the list of chunk sizes) is the baseline; the chunks are then sliced
from the document as they are fed (fresh string objects, as they would arrive from a
network), and ``ru_maxrss`` read again after ``close()``. The difference includes compiling
the grammar (first ``Sieve()`` in the process); the child also reports that part alone.

Correctness is checked outside the timed runs, for every workload and chunking: (a) and (b)
come back as the same text and no call; (c) yields exactly the 200 generated calls (names
and arguments) and the concatenated ``Text`` equals the input with the blocks removed; (d)
yields one call whose argument equals the generated value. Any mismatch aborts with a
message (exit status 1): a throughput figure for wrong output is meaningless.

Usage: ``python benchmarks/bench_stream.py [--quick] [--gc-study] [--profile a|b|c|d]``.
``--profile X`` runs the 1-8-character case of workload X under cProfile and prints the top
15 functions by own time (for (d), the 1 MB size).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import math
import pstats
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from callsieve import Event, Sieve, Text, ToolCall, ToolCalls

MB = 1_000_000
SIZE = MB  # (a)-(c): characters per document
N_CALLS = 200  # (c)
D_SIZES = (10_000, 100_000, 1_000_000)  # (d): argument lengths
E_SIZES = (100_000, 300_000, 1_000_000)  # one-chunk linearity guard: (a)-(c) at these sizes
CHUNK_SEED = 1234
DOC_SEED = 42
MIN_TIMING = 0.02  # seconds; shorter cases are looped
WARMUP = 0.05  # seconds of untimed runs before a case is timed
MAX_LOOPS = 5_000
DISABLE_GC = True  # see the docstring: chosen with --gc-study

#: The floors every change keeps (re-based in the restructuring issue from 0.4 and 0.5 for
#: (b) and (c) to what this design gives).
TARGET_RATIO = {"a": 0.6, "b": 0.33, "c": 0.42}
TARGET_EXPONENT = 1.1
TARGET_D_SECONDS = 2.0
TARGET_RSS_MB = 64.0

Args = dict[str, object]
Expected = tuple[str, list[tuple[str, Args]]]  # (text outside blocks, calls)


class Streamer(Protocol):
    def feed(self, chunk: str) -> list[Event]: ...

    def close(self) -> list[Event]: ...


class FloorSieve:
    """The floor: the sieve interface doing nothing but wrapping each chunk in a ``Text``."""

    __slots__ = ()

    def feed(self, chunk: str) -> list[Event]:
        return [Text(chunk)]

    def close(self) -> list[Event]:
        return []


# ---------------------------------------------------------------------- input generation
_WORD_TEXT = (
    "the a an and or but if then when while because so that this these those it its we you "
    "they he she model server client request response stream token chunk buffer parser "
    "function value result error file path line column offset index list dict string number "
    "returns calls reads writes opens closes sends receives checks parses handles keeps "
    "quickly slowly carefully again already never always often still only just also very "
    "small large first last next previous whole partial empty full new old simple complex "
    "user assistant tool argument schema example test case benchmark figure table report "
    "time memory cost speed latency throughput linear quadratic bound limit state event"
)
_WORDS = tuple(_WORD_TEXT.split())
_PUNCT = (". ", ". ", ". ", "? ", "! ", ": ", "; ", " (see above). ", " - really. ")


def prose(rng: random.Random, n: int) -> str:
    """``n`` characters of English-like prose: no ``<``, no backticks or tildes."""
    out: list[str] = []
    size = 0
    sentences = 0
    while size < n:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(5, 18))]
        if rng.random() < 0.2:
            words.insert(rng.randrange(len(words)), str(rng.randint(0, 9999)))
        if rng.random() < 0.1:
            words.insert(rng.randrange(len(words)), f'"{rng.choice(_WORDS)}"')
        s = " ".join(words)
        s = s[0].upper() + s[1:] + rng.choice(_PUNCT)
        sentences += 1
        if sentences % rng.randint(3, 7) == 0:
            s = s.rstrip(" ") + "\n\n"
        out.append(s)
        size += len(s)
    return "".join(out)[:n]


_LT_SNIPPETS = (
    " if a<b ",
    " x < y ",
    " <b>bold</b> ",
    " 1<2 ",
    " a <= b ",
    " <br> ",
    " i<n ",
    " <- ",
    " <<EOF ",
    " vector<int> ",
    " <em>note</em> ",
    " 3 < 4 ",
    " <3 ",
    " List<String> ",
    ' <div class="x">hi</div> ',
    " p<0.05 ",
    " <user@example.com> ",
    " <<= 2 ",
)


def prose_with_lt(rng: random.Random, n: int) -> str:
    """Prose with a non-tag ``<`` every 30-80 characters."""
    base = prose(rng, n)
    out: list[str] = []
    size = 0
    pos = 0
    while size < n:
        gap = rng.randint(30, 80)
        piece = base[pos : pos + gap] + rng.choice(_LT_SNIPPETS)
        pos += gap
        out.append(piece)
        size += len(piece)
    return "".join(out)[:n]


_IDENTS = (
    "items",
    "value",
    "result",
    "count",
    "limit",
    "buffer",
    "chunk",
    "offset",
    "name",
    "path",
    "data",
    "node",
    "left",
    "right",
    "total",
    "index",
    "cache",
    "config",
    "tokens",
    "events",
)


def _py_function(rng: random.Random) -> str:
    a, b, c = rng.sample(_IDENTS, 3)
    fn = f"{rng.choice(('load', 'parse', 'merge', 'scan', 'emit', 'check'))}_{a}"
    lines = [
        f"def {fn}({a}: list[int], {b}: int = {rng.randint(0, 99)}) -> dict[str, int]:",
        f'    """Return the {c} of {a} below {b} (generated benchmark code)."""',
        f"    {c}: dict[str, int] = {{}}",
        f"    for i, x in enumerate({a}):",
        f"        if x < {b} and i >= 0:",
        f'            {c}[f"k{{i}}"] = {a}[i] * 2',
        f"        elif x <= {b} << 1 or {a}[i - 1] > x:",
        f'            {c}.setdefault("big", 0)',
        "        else:",
        f'            {c}["rest"] = {c}.get("rest", 0) + ({a}[i] & 0xFF)',
        f"    if len({c}) > {rng.randint(1, 50)}:",
        f'        raise ValueError(f"too many: {{len({c})}} > limit <{fn}>")',
        f"    return {{k: v for k, v in sorted({c}.items()) if v != {a}[0]}}",
        "",
        "",
    ]
    if rng.random() < 0.5:
        lines[2:2] = [f"    # keep {a}[0] < {b}; see <https://example.com/{fn}>"]
    return "\n".join(lines)


def _py_class(rng: random.Random) -> str:
    a, b = rng.sample(_IDENTS, 2)
    cls = a.capitalize() + "Store"
    return "\n".join(
        [
            f"class {cls}:",
            f"    def __init__(self, {b}: int) -> None:",
            f"        self.{b} = {b}",
            f"        self._{a}: list[str] = []",
            "",
            "    def add(self, text: str) -> bool:",
            f"        if len(self._{a}) >= self.{b}:",
            "            return False",
            f"        self._{a}.append(text.replace('<', '&lt;').replace('>', '&gt;'))",
            "        return True",
            "",
            "",
        ]
    )


def code(rng: random.Random, n: int) -> str:
    """``n`` characters of multi-line Python-like code (never containing ``]]>``)."""
    out: list[str] = ["from __future__ import annotations\n\nimport re\n\n\n"]
    size = len(out[0])
    while size < n:
        piece = _py_function(rng) if rng.random() < 0.75 else _py_class(rng)
        out.append(piece)
        size += len(piece)
    text = "".join(out)[:n]
    assert "]]>" not in text
    return text


def shell(rng: random.Random, n_lines: int) -> str:
    lines = ["set -euo pipefail", 'cd "$(git rev-parse --show-toplevel)"']
    for _ in range(n_lines):
        lines.append(
            rng.choice(
                (
                    "python -m pytest -q tests/ -k 'stream and not slow' 2>&1 | tail -n 20",
                    "grep -rn 'feed(' src/ | head -n 5",
                    'if [ "$(wc -l < out.txt)" -lt 10 ]; then echo short; fi',
                    f'for f in src/*.py; do python -m py_compile "$f" || exit {rng.randint(1, 9)}; done',
                    "cat <<EOF > /tmp/notes.txt\nline with <angle> brackets & ampersands\nEOF",
                    "ruff check --line-length 100 src/ tests/ && echo ok",
                )
            )
        )
    return "\n".join(lines) + "\n"


def dsml_block(name: str, args: Sequence[tuple[str, str]]) -> str:
    params = "".join(
        f'    <|DSML|parameter name="{k}"><![CDATA[{v}]]></|DSML|parameter>\n' for k, v in args
    )
    return (
        f'<|DSML|tool_calls>\n  <|DSML|invoke name="{name}">\n{params}'
        f"  </|DSML|invoke>\n</|DSML|tool_calls>"
    )


def chat(rng: random.Random, n: int, n_calls: int) -> tuple[str, Expected]:
    """(c): ``n`` characters, ``n_calls`` one-call DSML blocks with prose between them."""
    blocks: list[str] = []
    calls: list[tuple[str, Args]] = []
    for i in range(n_calls):
        path = f"src/pkg/module_{i:03d}.py"
        kind = rng.random()
        if kind < 0.6:
            name, args = (
                "write_file",
                [("path", path), ("content", code(rng, rng.randint(1500, 4500)))],
            )
        elif kind < 0.85:
            old = code(rng, rng.randint(300, 1200))
            new = code(rng, rng.randint(600, 2400))
            name, args = "edit_file", [("path", path), ("old_string", old), ("new_string", new)]
        else:
            name, args = "run_command", [("command", shell(rng, rng.randint(5, 40)))]
        blocks.append(dsml_block(name, args))
        calls.append((name, dict(args)))
    budget = n - sum(len(b) for b in blocks)
    if budget < 300 * (n_calls + 1):
        raise SystemExit("bench_stream: (c) blocks leave too little room for prose")
    weights = [rng.uniform(0.5, 1.5) for _ in range(n_calls + 1)]
    total = sum(weights)
    sizes = [int(budget * w / total) for w in weights]
    sizes[-1] += budget - sum(sizes)
    segments = [prose(rng, k - 2) + "\n\n" for k in sizes]
    parts: list[str] = [segments[0]]
    for block, seg in zip(blocks, segments[1:]):
        parts += [block, seg]
    doc = "".join(parts)
    assert len(doc) == n, len(doc)
    return doc, ("".join(segments), calls)


def one_call(rng: random.Random, size: int) -> tuple[str, Expected]:
    """(d): a short preamble and one call with one CDATA argument of ``size`` characters."""
    arg = code(rng, size)
    doc = "Here is the file you asked for.\n\n" + dsml_block("write_file", [("content", arg)])
    return doc, ("Here is the file you asked for.\n\n", [("write_file", {"content": arg})])


# ---------------------------------------------------------------------- chunking
def chunk_sizes(n: int, seed: int = CHUNK_SEED) -> list[int]:
    rng = random.Random(seed)
    sizes: list[int] = []
    total = 0
    while total < n:
        k = rng.randint(1, 8)
        sizes.append(k)
        total += k
    return sizes


def random_chunks(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for k in chunk_sizes(len(text)):
        out.append(text[pos : pos + k])
        pos += k
    return out


def fixed_chunks(text: str, k: int) -> list[str]:
    return [text[i : i + k] for i in range(0, len(text), k)]


CHUNKINGS: dict[str, Callable[[str], list[str]]] = {
    "1–8 chars": random_chunks,
    "64 chars": lambda t: fixed_chunks(t, 64),
    "one chunk": lambda t: [t],
}


# ---------------------------------------------------------------------- checking
def collect(chunks: Sequence[str]) -> tuple[str, list[ToolCall]]:
    s = Sieve()
    texts: list[str] = []
    calls: list[ToolCall] = []
    for events in [s.feed(c) for c in chunks] + [s.close()]:
        for e in events:
            if isinstance(e, Text):
                texts.append(e.text)
            elif isinstance(e, ToolCalls):
                calls.extend(e.calls)
    return "".join(texts), calls


def verify(label: str, chunks: Sequence[str], expected: Expected) -> None:
    text, calls = collect(chunks)
    want_text, want_calls = expected
    got_calls = [(c.name, c.input) for c in calls]
    if len(got_calls) != len(want_calls):
        raise SystemExit(
            f"bench_stream: {label}: {len(got_calls)} calls, expected {len(want_calls)}; aborting"
        )
    for i, (got, want) in enumerate(zip(got_calls, want_calls)):
        if got != want:
            raise SystemExit(
                f"bench_stream: {label}: call {i} is {_short(got)}, expected "
                f"{_short(want)}; aborting"
            )
    if text != want_text:
        at = next(
            (i for i, (x, y) in enumerate(zip(text, want_text)) if x != y),
            min(len(text), len(want_text)),
        )
        raise SystemExit(
            f"bench_stream: {label}: released text differs from the input with "
            f"the blocks removed at offset {at} (got {text[at : at + 40]!r}, "
            f"expected {want_text[at : at + 40]!r}); aborting"
        )


def _short(x: object) -> str:
    r = repr(x)
    return r if len(r) < 120 else r[:117] + "..."


# ---------------------------------------------------------------------- timing
def _run(
    factory: Callable[[], Streamer],
    chunks: Sequence[str],
    loops: int,
    disable_gc: bool,
    arm: Callable[[bool], None] | None = None,
) -> float:
    """Seconds per stream: ``loops`` fresh streamers fed ``chunks``, timed together.
    ``arm`` (the --gc-study probe) is called with True just before the clock starts and with
    False just after it stops."""
    sieves = [factory() for _ in range(loops)]
    gc.collect()
    if disable_gc:
        gc.disable()
    if arm is not None:
        arm(True)
    try:
        t0 = time.perf_counter()
        for s in sieves:
            feed = s.feed
            for c in chunks:
                feed(c)
            s.close()
        elapsed = time.perf_counter() - t0
    finally:
        if arm is not None:
            arm(False)
        if disable_gc:
            gc.enable()
    return elapsed / loops


def _calibrate(factory: Callable[[], Streamer], chunks: Sequence[str], disable_gc: bool) -> int:
    """Warm up for WARMUP seconds of wall time and pick the loop count for one timing
    (at least MIN_TIMING seconds per timing, like ``timeit``'s autorange)."""
    deadline = time.perf_counter() + WARMUP
    loops = 1
    while True:
        t = _run(factory, chunks, loops, disable_gc)
        if t * loops < MIN_TIMING and loops < MAX_LOOPS:
            loops = min(MAX_LOOPS, max(loops * 2, math.ceil(MIN_TIMING / max(t, 1e-9))))
        elif time.perf_counter() >= deadline:
            return loops


def best_in_rounds(
    runs: Sequence[tuple[Callable[[], Streamer], Sequence[str]]], reps: int
) -> list[float]:
    """Best seconds of each ``(factory, chunks)`` run, timed in rounds: each round times every
    run once, in order, so a run's repetitions are spread over the whole measurement instead
    of one stretch that a burst of the host's load can cover."""
    loops = [_calibrate(factory, chunks, DISABLE_GC) for factory, chunks in runs]
    best = [math.inf] * len(runs)
    for _ in range(reps):
        for i, ((factory, chunks), n) in enumerate(zip(runs, loops)):
            best[i] = min(best[i], _run(factory, chunks, n, DISABLE_GC))
    return best


def best_of_runs(
    runs: Sequence[Callable[[Sequence[str]], None]], chunks: Sequence[str], reps: int
) -> list[float]:
    """Best seconds of each ``run(chunks)`` (a whole stream, built and fed inside it), in
    ``reps`` rounds of every run in order; ``gc`` collected before and disabled during each
    (for the scripts whose rows are not sieve factories: bench_arguments, bench_render)."""
    best = [math.inf] * len(runs)
    for _ in range(reps):
        for i, run in enumerate(runs):
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            run(chunks)
            best[i] = min(best[i], time.perf_counter() - start)
            gc.enable()
    return best


def measure_rounds(cases: Sequence[Sequence[str]], reps: int) -> list[tuple[float, float]]:
    """Best seconds of the floor and of the sieve on each chunk list, in rounds (floor, then
    sieve, for each case in turn), so both see the same machine conditions."""
    best = best_in_rounds([(factory, c) for c in cases for factory in (FloorSieve, Sieve)], reps)
    return list(zip(best[0::2], best[1::2]))


def measure_pair(chunks: Sequence[str], reps: int) -> tuple[float, float]:
    """``measure_rounds`` for one chunk list."""
    return measure_rounds([chunks], reps)[0]


def measure_sieve_rounds(cases: Sequence[Sequence[str]], reps: int) -> list[float]:
    """Best seconds of the sieve alone on each chunk list, in rounds (the linearity guard:
    a size's repetitions are not one stretch)."""
    return best_in_rounds([(Sieve, c) for c in cases], reps)


def exponent(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    xs = [math.log(n) for n in sizes]
    ys = [math.log(t) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def mbps(n: int, seconds: float) -> float:
    return n / MB / seconds


def verdict(ok: bool) -> str:
    return "PASS" if ok else "**FAIL**"


# ---------------------------------------------------------------------- workloads
Workload = tuple[str, str, str, Expected]  # key, title, document, expected


def workload_text(key: str, size: int) -> str:
    """Workload ``key``'s document at ``size`` characters ((c) keeps 200 calls per MB)."""
    if key == "a":
        return prose(random.Random(DOC_SEED), size)
    if key == "b":
        return prose_with_lt(random.Random(DOC_SEED + 1), size)
    return chat(random.Random(DOC_SEED + 2), size, max(1, N_CALLS * size // SIZE))[0]


def workloads_1mb() -> list[Workload]:
    text_a = workload_text("a", SIZE)
    text_b = workload_text("b", SIZE)
    assert "<" not in text_a and text_b.count("<") > SIZE // 100
    text_c, exp_c = chat(random.Random(DOC_SEED + 2), SIZE, N_CALLS)
    return [
        ("a", "(a) prose, no `<`", text_a, (text_a, [])),
        ("b", f"(b) prose, {text_b.count('<'):,} non-tag `<`", text_b, (text_b, [])),
        ("c", f"(c) chat, {N_CALLS} DSML calls, CDATA code", text_c, exp_c),
    ]


def _ru_maxrss_kb() -> int:
    # ru_maxrss is in kilobytes on Linux, bytes on macOS.
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r // 1024 if sys.platform == "darwin" else r


def _vm_hwm_kb() -> int:
    """This process's own RSS high-water mark (Linux ``VmHWM``), or -1 where unavailable.

    ``ru_maxrss`` of a child starts at the parent's peak (Linux carries it across fork and
    exec), so it is only meaningful when the parent is small; ``VmHWM`` is the cross-check."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def rss_child(size: int) -> None:
    """Hidden mode: stream (d) at ``size`` and print peak RSS figures (kB) as JSON."""
    doc, expected = one_call(random.Random(DOC_SEED + 3), size)
    sizes = chunk_sizes(len(doc))
    gc.collect()
    base, hwm_base = _ru_maxrss_kb(), _vm_hwm_kb()
    s = Sieve()  # compiles the grammar (the first Sieve in this process)
    grammar = _ru_maxrss_kb()
    events: list[Event] = []
    pos = 0
    for k in sizes:  # fresh chunk objects, sliced as they are fed
        events.extend(s.feed(doc[pos : pos + k]))
        pos += k
    events.extend(s.close())
    peak, hwm_peak = _ru_maxrss_kb(), _vm_hwm_kb()
    calls = [c for e in events if isinstance(e, ToolCalls) for c in e.calls]
    ok = [(c.name, c.input) for c in calls] == expected[1]
    print(
        json.dumps(
            {
                "base": base,
                "grammar": grammar,
                "peak": peak,
                "hwm_base": hwm_base,
                "hwm_peak": hwm_peak,
                "ok": ok,
            }
        )
    )


def measure_rss(size: int) -> dict[str, float]:
    """Run the RSS child; figures in MB."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--rss-child", str(size)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"bench_stream: RSS child failed:\n{proc.stderr}")
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    if not r["ok"]:
        raise SystemExit("bench_stream: RSS child: the (d) argument did not round-trip; aborting")
    out = {
        "delta": (r["peak"] - r["base"]) / 1024,
        "grammar": (r["grammar"] - r["base"]) / 1024,
        "base": r["base"] / 1024,
        "hwm_delta": math.nan,
    }
    if r["hwm_base"] >= 0:
        out["hwm_delta"] = (r["hwm_peak"] - r["hwm_base"]) / 1024
    return out


# ---------------------------------------------------------------------- reports
def fmt_ratio(r: float) -> str:
    return f"{r:.2f}×" if r >= 0.1 else f"{r:.2g}×"


def fmt_mbps(n: int, t: float) -> str:
    v = mbps(n, t)
    return f"{v:,.0f} MB/s" if v >= 100 else f"{v:.2f} MB/s"


def cell(n: int, t: float, floor: float) -> str:
    return f"{fmt_mbps(n, t)} ({fmt_ratio(floor / t)})"


def report(reps: int) -> None:
    started = time.perf_counter()
    # First, while this process is still small (see _vm_hwm_kb).
    rss = measure_rss(D_SIZES[-1])
    Sieve()  # compile the grammar before timing anything
    print(
        f"# callsieve streaming benchmark\n\nPython {sys.version.split()[0]}, best of {reps}, "
        f"gc {'disabled' if DISABLE_GC else 'enabled'} during timing, chunk seed "
        f"{CHUNK_SEED}. Cells: MB/s (ratio to the floor row above it, same chunk list).\n"
    )
    print("| Row | 1–8 chars | 64 chars | one chunk | Target (1–8) | Result |")
    print("|---|---:|---:|---:|---|---|")
    rows = []
    for key, title, text, expected in workloads_1mb():
        lists = {name: make(text) for name, make in CHUNKINGS.items()}
        for name, chunks in lists.items():
            verify(f"{title} @ {name}", chunks, expected)
        rows.append((key, title, len(text), lists))
    bests = iter(measure_rounds([c for *_, lists in rows for c in lists.values()], reps))
    for key, title, n, lists in rows:
        floors: dict[str, float] = {}
        sieves: dict[str, float] = {}
        for name in lists:
            floors[name], sieves[name] = next(bests)
        floor_cells = " | ".join(cell(n, floors[k], floors[k]) for k in lists)
        sieve_cells = " | ".join(cell(n, sieves[k], floors[k]) for k in lists)
        ratio = floors["1–8 chars"] / sieves["1–8 chars"]
        target = TARGET_RATIO[key]
        print(f"| floor for ({key}) | {floor_cells} | — | — |")
        print(f"| {title} | {sieve_cells} | ≥ {target:.2f}× | {verdict(ratio >= target)} |")

    print(
        "\nWhole text in one chunk, (a)-(c) generated at three sizes (same seed and density): a"
        " guard against paths that are linear per chunk but quadratic in the text (the issue"
        " names no figure; the bound is (d)'s). Cells: MB/s.\n"
    )
    print("| Row | 100 kB | 300 kB | 1 MB | Exponent | Bound | Result |")
    print("|---|---:|---:|---:|---:|---|---|")
    guard = [(key, title) for key, title, _text, _expected in workloads_1mb()]
    timed = iter(
        measure_sieve_rounds(
            [[workload_text(key, size)] for key, _ in guard for size in E_SIZES], reps
        )
    )
    for key, title in guard:
        times = [next(timed) for _ in E_SIZES]
        cells = " | ".join(fmt_mbps(size, t) for size, t in zip(E_SIZES, times))
        e = exponent(list(E_SIZES), times)
        print(
            f"| {title}, one chunk | {cells} | {e:.3f} | ≤ {TARGET_EXPONENT} | "
            f"{verdict(e <= TARGET_EXPONENT)} |"
        )

    print(
        "\n(d) one call, one CDATA argument, random 1–8-char chunks. Cells: seconds, MB/s "
        "(ratio to the floor).\n"
    )
    print("| Row | 10 kB | 100 kB | 1 MB | Exponent | Target | Result |")
    print("|---|---:|---:|---:|---:|---|---|")
    ns: list[int] = []
    f_times: list[float] = []
    s_times: list[float] = []
    for size in D_SIZES:
        doc, expected = one_call(random.Random(DOC_SEED + 3), size)
        chunks = random_chunks(doc)
        verify(f"(d) {size:,}", chunks, expected)
        ns.append(len(doc))
        f, t = measure_pair(chunks, reps)
        f_times.append(f)
        s_times.append(t)
    f_cells = " | ".join(f"{t:.4f} s, {cell(n, t, t)}" for n, t in zip(ns, f_times))
    s_cells = " | ".join(f"{t:.4f} s, {cell(n, t, f)}" for n, t, f in zip(ns, s_times, f_times))
    e_floor, e_sieve = exponent(ns, f_times), exponent(ns, s_times)
    ok_e, ok_t = e_sieve <= TARGET_EXPONENT, s_times[-1] < TARGET_D_SECONDS
    print(f"| floor for (d) | {f_cells} | {e_floor:.3f} | — | — |")
    print(
        f"| (d) streamed argument | {s_cells} | {e_sieve:.3f} | exponent ≤ {TARGET_EXPONENT};"
        f" 1 MB < {TARGET_D_SECONDS:.0f} s | {verdict(ok_e)}; {verdict(ok_t)} |"
    )
    print(
        f"| (d) peak RSS above baseline, 1 MB | | | +{rss['delta']:.1f} MB | | "
        f"< {TARGET_RSS_MB:.0f} MB | {verdict(rss['delta'] < TARGET_RSS_MB)} |"
    )
    print(
        f"\nRSS (child process, ru_maxrss): baseline {rss['base']:.1f} MB (interpreter, "
        f"callsieve, input); the +{rss['delta']:.1f} MB include {rss['grammar']:.1f} MB for "
        f"compiling the grammar; VmHWM cross-check +{rss['hwm_delta']:.1f} MB. Correctness "
        f"checked for every case. Total run {time.perf_counter() - started:.0f} s."
    )


def gc_study(reps: int) -> None:
    """Time each 1-8-char case with the collector enabled and disabled (repetitions
    interleaved), and count the collections the enabled runs make and the time spent in them
    (``gc.callbacks``), which unlike wall time does not depend on the machine's other load."""
    Sieve()
    cases = [(key, random_chunks(text)) for key, _, text, _ in workloads_1mb()]
    doc, _ = one_call(random.Random(DOC_SEED + 3), D_SIZES[-1])
    cases.append(("d 1 MB", random_chunks(doc)))
    state = {"armed": 0.0, "t0": 0.0, "in_gc": 0.0, "g0": 0.0, "g1": 0.0, "g2": 0.0}

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if not state["armed"]:
            return
        if phase == "start":
            state["t0"] = time.perf_counter()
        else:
            state["in_gc"] += time.perf_counter() - state["t0"]
            state[f"g{info['generation']}"] += 1

    def arm(on: bool) -> None:
        state["armed"] = 1.0 if on else 0.0

    gc.callbacks.append(on_gc)
    print(
        "| Case | gc | best s | median s | max s | spread | collections g0/g1/g2 per run "
        "| s in gc per run |"
    )
    print("|---|---|---:|---:|---:|---:|---|---:|")
    try:
        for key, chunks in cases:
            times: dict[bool, list[float]] = {False: [], True: []}
            for off in (False, True):
                _calibrate(Sieve, chunks, off)
            for k in ("in_gc", "g0", "g1", "g2"):
                state[k] = 0.0
            for _ in range(reps):
                for off in (False, True):
                    times[off].append(_run(Sieve, chunks, 1, off, None if off else arm))
            for off in (False, True):
                ts = sorted(times[off])
                extra = (
                    "— | —"
                    if off
                    else (
                        f"{state['g0'] / reps:.1f}/{state['g1'] / reps:.1f}/{state['g2'] / reps:.1f}"
                        f" | {state['in_gc'] / reps:.4f}"
                    )
                )
                print(
                    f"| {key} | {'off' if off else 'on'} | {ts[0]:.4f} | "
                    f"{ts[len(ts) // 2]:.4f} | {ts[-1]:.4f} | {(ts[-1] - ts[0]) / ts[0]:.1%} "
                    f"| {extra} |"
                )
    finally:
        gc.callbacks.remove(on_gc)


def profile(key: str) -> None:
    Sieve()
    if key == "d":
        doc, _ = one_call(random.Random(DOC_SEED + 3), D_SIZES[-1])
    else:
        doc = next(text for k, _, text, _ in workloads_1mb() if k == key)
    chunks = random_chunks(doc)
    prof = cProfile.Profile()
    s = Sieve()
    prof.enable()
    for c in chunks:
        s.feed(c)
    s.close()
    prof.disable()
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(15)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="2 repetitions instead of 9")
    ap.add_argument(
        "--gc-study",
        action="store_true",
        help="compare timing with the collector on and off (7 repetitions)",
    )
    ap.add_argument(
        "--profile", choices=("a", "b", "c", "d"), help="cProfile the 1-8-char case of one workload"
    )
    ap.add_argument("--rss-child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rss_child is not None:
        rss_child(args.rss_child)
    elif args.profile:
        profile(args.profile)
    elif args.gc_study:
        gc_study(7)
    else:
        report(2 if args.quick else 9)
    return 0


if __name__ == "__main__":
    sys.exit(main())
