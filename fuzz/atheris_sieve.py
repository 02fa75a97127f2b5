"""Strategy: a coverage-guided fuzzer (atheris, i.e. libFuzzer) for ``Sieve`` and ``parse``
that checks SPEC §Invariants 1, 2, 3 and 5 and a time bound on every input it tries.

What it does: each fuzzer input is decoded (``decode``) into options, chunk boundaries and a
text, laid out as
    byte 0   flags: bit 0 early_emit="invoke" (else "block"); bit 1 a small max_block_chars
             (else the 8 MiB default); bits 2-6 a subset of DEFAULT_DIALECTS (bit 2 + i
             enables DEFAULT_DIALECTS[i]; none set means all); bit 7 also a run fed one
             character at a time (texts up to PER_CHAR_MAX characters)
    byte 1   the small max_block_chars: 1 + 4 * byte (1 ... 1021)
    byte 2   amplification: below 0xF8 none; 0xF8 + k repeats the text 4 ** (k + 1) times
             (4 ... 65536), as far as AMPLIFIED_MAX characters, so that a short input can
             stand for the long repetitive documents on which a superlinear path shows
    byte 3   how many cut points follow (modulo 65)
    then     two bytes per cut point (big-endian, modulo len(text) + 1 of the amplified
             text; repeats give empty chunks)
    the rest the text, UTF-8 decoded with "surrogateescape", so every byte string is some
             str (lone surrogates included) and every str without them round-trips.
It runs ``parse(text, **opts)``, a ``Sieve`` over the chunks and, if bit 7 is set, a
``Sieve`` fed per character, and asserts:
  - §Inv 5: nothing raises (any exception is a finding, as is an assertion below);
  - §Inv 1: every run's coalesced (text, calls) equals ``parse()`` (calls compared by name
    and canonical JSON input);
  - §Inv 2/3: the Text events' text and the ToolCalls events' ``block.raw``, in event order,
    rebuild the input, each block's raw is the input at its span and starts where the text
    released before it ends (so no Text overlaps an emitted block); this holds for
    early_emit "block" and, per the README's early_emit row, "invoke"; and ``parse().text``
    is the input minus the blocks whose calls were emitted (status complete, or partial
    under "invoke");
  - time: each run takes at most BASE + PER_100 * len(text) / 100 seconds. Instrumented
    code is 3 to 15 times slower, so a run over the bound is timed again on an
    uninstrumented copy of the library, and only a confirmed one is a finding.
A slow input is recorded, not fatal (the fuzzer goes on): it is written to the findings
directory (fuzz/work/findings/, or the directory of ``-artifact_prefix``) as ``slow-<sha1>`` (the raw fuzzer bytes; replay with ``--show``) with a line in
``slow.log``. Assertion failures and exceptions stop the fuzzer the libFuzzer way: a
``crash-<sha1>`` file in the findings directory (``-artifact_prefix``, defaulted to it).
What it guarantees: nothing about the library; it is a tool, outside the pytest run
(pytest's testpaths is tests/). Findings and the corpus live under fuzz/work/, which it
creates with a ``.gitignore`` of ``*``.
What it costs: the checks run each input two or three times; about a thousand short
inputs a second, far fewer when amplified inputs are about. The grammar of each dialect
subset is compiled the first time it is drawn, untimed; start-up writes a dictionary of
tag pieces (fuzz/work/tags.dict, passed as ``-dict`` unless one is given).

Run ``python fuzz/atheris_sieve.py --help`` for the options; fuzz/README.md for more.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: Everything a run writes goes under fuzz/work/, which holds a ``.gitignore`` of ``*``.
WORK = HERE / "work"
FINDINGS = WORK / "findings"
CORPUS = WORK / "corpus"
#: The conformance cases, read at run time (never copied into the repository).
CASES = Path(
    os.environ.get("CALLSIEVE_CASES", ROOT.parent / "shared" / "conformance" / "cases.jsonl")
)

#: The time bound knobs (environment variables, so that libFuzzer's -jobs/-fork workers,
#: which do not get this script's own flags, inherit them).
ENV_BASE = "CALLSIEVE_FUZZ_BASE_S"
ENV_FINDINGS = "CALLSIEVE_FUZZ_FINDINGS"  # where slow inputs go: -artifact_prefix's directory
ENV_PER_100 = "CALLSIEVE_FUZZ_PER_100_MS"
#: Measured (see fuzz/README.md): once the grammars are compiled, a run on a short input
#: takes at most about 15 ms under instrumentation, and a long benign input about 0.1-0.4 ms
#: per 100 characters (fed per character; parse() and coarse chunks are faster).
DEFAULT_BASE_S = 0.5
DEFAULT_PER_100_MS = 1.0

USAGE = f"""usage: python fuzz/atheris_sieve.py [OPTIONS] [LIBFUZZER FLAGS] [CORPUS_DIR ...]

Options (this script's own; everything else goes to libFuzzer):
  --write-seeds [DIR]   write the seed corpus from {CASES} into DIR (default {CORPUS}), exit
  --show FILE ...       decode fuzzer inputs (e.g. findings), print them, rerun the checks
                        with timings, exit
  --base-s=S            time bound: seconds per run, whatever the size (env {ENV_BASE},
                        default {DEFAULT_BASE_S})
  --per-100-ms=MS       time bound: milliseconds more per 100 characters (env {ENV_PER_100},
                        default {DEFAULT_PER_100_MS})
  --help                this text

Without --write-seeds/--show it fuzzes; -artifact_prefix defaults to {FINDINGS}/ and, if no
corpus directory is given, {CORPUS} is used (seeded first if empty). Typical:
  python fuzz/atheris_sieve.py -max_total_time=600 -jobs=2 -timeout=60 -max_len=8192 fuzz/corpus
"""

FLAG_INVOKE = 0x01
FLAG_SMALL_LIMIT = 0x02
DIALECT_SHIFT = 2
FLAG_PER_CHAR = 0x80
MAX_CUTS = 64
AMPLIFY = 0xF8  # one input in 32 is amplified: they cost most of the fuzzing time
AMPLIFIED_MAX = 1 << 17  # characters: a quadratic path shows there, a linear one does not
PER_CHAR_MAX = 1 << 14  # longer texts get no per-character run (it is linear overhead)
HEADER = 4


class Case(NamedTuple):
    text: str
    cuts: list[int]
    opts: dict[str, Any]
    per_char: bool
    repeat: int = 1  # how many copies of the fuzzer's text ``text`` is

    def chunks(self) -> list[str]:
        bounds = [0, *sorted(self.cuts), len(self.text)]
        return [self.text[a:b] for a, b in itertools.pairwise(bounds)]


def _dialects() -> tuple[str, ...]:
    import callsieve

    return tuple(callsieve.DEFAULT_DIALECTS)


def decode(data: bytes) -> Case:
    """The fuzzer's bytes as a case (see the module docstring for the layout)."""
    import atheris  # type: ignore[import-untyped]

    fdp = atheris.FuzzedDataProvider(data)
    head = fdp.ConsumeBytes(HEADER).ljust(HEADER, b"\0")
    flags, small, amplify, ncuts = head[0], head[1], head[2], head[3] % (MAX_CUTS + 1)
    raw_cuts = fdp.ConsumeBytes(2 * ncuts)
    text = fdp.ConsumeBytes(fdp.remaining_bytes()).decode("utf-8", "surrogateescape")
    repeat = 1
    if amplify >= AMPLIFY and text:
        repeat = min(4 ** (amplify - AMPLIFY + 1), max(1, AMPLIFIED_MAX // len(text)))
        text *= repeat
    cuts = [
        int.from_bytes(raw_cuts[i : i + 2], "big") % (len(text) + 1)
        for i in range(0, len(raw_cuts) - 1, 2)
    ]
    opts: dict[str, Any] = {"early_emit": "invoke" if flags & FLAG_INVOKE else "block"}
    if flags & FLAG_SMALL_LIMIT:
        opts["max_block_chars"] = 1 + 4 * small
    names = _dialects()
    chosen = tuple(d for i, d in enumerate(names) if flags >> (DIALECT_SHIFT + i) & 1)
    if chosen and chosen != names:
        opts["dialects"] = chosen
    return Case(text, cuts, opts, bool(flags & FLAG_PER_CHAR), repeat)


def encode(
    text: str,
    cuts: Sequence[int] = (),
    *,
    invoke: bool = False,
    small_limit: int | None = None,
    dialect_mask: int = 0,
    per_char: bool = False,
    amplify: int = 0,
) -> bytes:
    """The bytes ``decode`` turns into this case (for seeds and hand-written repros);
    ``amplify`` (1 ... 8) repeats ``text`` 4 ** amplify times."""
    flags = (FLAG_INVOKE if invoke else 0) | (FLAG_PER_CHAR if per_char else 0)
    flags |= (dialect_mask & 0x1F) << DIALECT_SHIFT
    small = 0
    if small_limit is not None:
        flags |= FLAG_SMALL_LIMIT
        small = max(0, min(255, (small_limit - 1) // 4))
    kept = list(cuts)[:MAX_CUTS]
    body = b"".join(c.to_bytes(2, "big") for c in kept)
    level = AMPLIFY + min(amplify, 8) - 1 if amplify > 0 else 0
    return bytes([flags, small, level, len(kept)]) + body + text.encode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------- the checks
def _canon(calls: Any) -> list[tuple[str, str]]:
    return [(c.name, json.dumps(c.input, sort_keys=True, ensure_ascii=False)) for c in calls]


def _library() -> Any:
    import callsieve

    return callsieve


_PLAIN: list[Any] = []  # the uninstrumented copy, once loaded


def _plain_library() -> Any:
    """A second, uninstrumented copy of callsieve (loaded from the same files under another
    name, so atheris's import hook, which instruments "callsieve*", leaves it alone): the
    time bound is confirmed on it, since instrumentation slows some paths ten times."""
    if not _PLAIN:
        import importlib.util

        init = Path(_library().__file__)
        spec = importlib.util.spec_from_file_location(
            "_plain_callsieve", init, submodule_search_locations=[str(init.parent)]
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["_plain_callsieve"] = module
        spec.loader.exec_module(module)
        _PLAIN.append(module)
    return _PLAIN[0]


def _run_stream(lib: Any, chunks: list[str], opts: dict[str, Any]) -> list[Any]:
    sieve = lib.Sieve(**opts)
    events: list[Any] = []
    for chunk in chunks:
        events.extend(sieve.feed(chunk))
    events.extend(sieve.close())
    return events


def _check_events(
    lib: Any, text: str, events: list[Any], want: tuple[str, Any], label: str
) -> None:
    text_event, calls_event = lib.Text, lib.ToolCalls
    out: list[str] = []
    calls: list[Any] = []
    pos = 0
    for e in events:
        if isinstance(e, text_event):
            assert text.startswith(e.text, pos), (
                f"{label}: Text {e.text!r} is not the input at {pos}"
            )
            out.append(e.text)
            pos += len(e.text)
        elif isinstance(e, calls_event):
            start, end = e.block.span
            assert start == pos, (
                f"{label}: block {e.block.span} does not start where the text released "
                f"before it ends ({pos})"
            )
            assert e.block.raw == text[start:end], (
                f"{label}: block.raw {e.block.raw!r} is not input[{start}:{end}]"
            )
            calls.extend(e.calls)
            pos = end
        else:
            raise TypeError(f"{label}: unexpected event {e!r}")
    assert pos == len(text), f"{label}: events cover {pos} of {len(text)} characters"
    got = ("".join(out), _canon(calls))
    assert got == want, f"{label}: coalesced {got!r} != parse() {want!r}"


def _bound(n: int) -> float:
    base = float(os.environ.get(ENV_BASE, DEFAULT_BASE_S))
    per_100 = float(os.environ.get(ENV_PER_100, DEFAULT_PER_100_MS)) / 1000.0
    return base + per_100 * n / 100.0


def check(case: Case, lib: Any = None) -> list[tuple[str, float]]:
    """Run every check on ``case`` with ``lib`` (callsieve unless given); return each run's
    (label, seconds)."""
    lib = lib or _library()
    text, opts = case.text, case.opts
    times: list[tuple[str, float]] = []
    t0 = time.perf_counter()
    result = lib.parse(text, **opts)
    times.append(("parse", time.perf_counter() - t0))
    want = (result.text, _canon(result.calls))
    emitted = ("complete", "partial") if opts["early_emit"] == "invoke" else ("complete",)
    rest, pos = [], 0
    for b in result.blocks:
        assert b.raw == text[b.span[0] : b.span[1]], f"parse: block raw is not its span: {b}"
        if b.status in emitted:
            assert b.span[0] >= pos, f"parse: emitted blocks overlap: {result.blocks}"
            rest.append(text[pos : b.span[0]])
            pos = b.span[1]
    rest.append(text[pos:])
    assert "".join(rest) == result.text, "parse: text is not the input minus its blocks"
    runs = [("chunked", case.chunks())]
    if case.per_char and len(text) <= PER_CHAR_MAX:
        runs.append(("per char", list(text)))
    for label, chunks in runs:
        t0 = time.perf_counter()
        events = _run_stream(lib, chunks, opts)
        times.append((label, time.perf_counter() - t0))
        _check_events(lib, text, events, want, label)
    return times


def _record_slow(
    data: bytes,
    case: Case,
    times: list[tuple[str, float]],
    instrumented: list[tuple[str, float]],
    bound: float,
) -> None:
    findings = Path(os.environ.get(ENV_FINDINGS, FINDINGS))
    _make_work_dir(findings)
    name = "slow-" + hashlib.sha1(data).hexdigest()
    path = findings / name
    if path.exists():
        return
    path.write_bytes(data)
    spent = ", ".join(f"{label} {t:.3f}s" for label, t in times)
    spent_i = ", ".join(f"{t:.3f}s" for _, t in instrumented)
    unit = case.text[: len(case.text) // case.repeat]
    line = (
        f"{name}: {len(case.text)} chars, opts={case.opts}, {len(case.cuts)} cuts, "
        f"bound {bound:.3f}s: {spent} (instrumented {spent_i}); text "
        f"{unit[:200]!r}{f' * {case.repeat}' if case.repeat > 1 else ''}\n"
    )
    with open(findings / "slow.log", "a", encoding="utf-8") as log:
        log.write(line)
    sys.stderr.write("SLOW INPUT " + line)


def test_one_input(data: bytes) -> None:
    case = decode(data)
    _warm_up(_library(), case.opts)
    times = check(case)
    bound = _bound(len(case.text))
    if max(t for _, t in times) > bound:  # instrumented: confirm on the plain copy
        plain = _plain_library()
        _warm_up(plain, case.opts)
        confirmed = check(case, plain)
        if max(t for _, t in confirmed) > bound:
            _record_slow(data, case, confirmed, times, bound)


# ---------------------------------------------------------------------------- tooling
def _make_work_dir(path: Path) -> None:
    """Create ``path``; if it is under fuzz/work/, make sure git ignores that directory."""
    path.mkdir(parents=True, exist_ok=True)
    if path.resolve().is_relative_to(WORK):
        marker = WORK / ".gitignore"
        if not marker.exists():
            marker.write_text("*\n", encoding="utf-8")


#: libFuzzer dictionary entries: the tag pieces that matter, so that mutations insert them.
TOKENS = (
    "<|DSML|tool_calls>",
    "</|DSML|tool_calls>",
    '<|DSML|invoke name="',
    "</|DSML|invoke>",
    '<|DSML|parameter name="',
    "</|DSML|parameter>",
    "<｜DSML｜",
    "</｜DSML｜",
    "<tool_calls>",
    "</tool_calls>",
    "<function_calls>",
    "</function_calls>",
    '<invoke name="',
    "</invoke>",
    '<parameter name="',
    "</parameter>",
    ' string="true"',
    ' string="false"',
    "<![CDATA[",
    "]]>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
    "function",
    "```",
    "~~~",
    "```xml\n",
    "`",
    "\n",
    "＜",
    "〈",
    "＞",
    "｜",
    "▁",
    "\u200b",
    "\ufeff",
    "&lt;",
    "&amp;",
    '"/>',
    '">',
    "/>",
)


def write_dict(path: Path) -> Path:
    """Write ``TOKENS`` as a libFuzzer dictionary (UTF-8 bytes, escaped) at ``path``."""
    _make_work_dir(path.parent)
    lines = []
    for i, token in enumerate(TOKENS):
        body = "".join(
            chr(b) if 0x20 <= b < 0x7F and chr(b) not in '"\\' else f"\\x{b:02X}"
            for b in token.encode("utf-8")
        )
        lines.append(f'tok{i}="{body}"\n')
    path.write_text("".join(lines), encoding="ascii")
    return path


_WARM: set[tuple[int, Any]] = set()


def _warm_up(lib: Any, opts: dict[str, Any]) -> None:
    """Compile ``lib``'s grammar for these options' dialects (about 0.15 s, once per subset
    and copy of the library) before anything is timed, so that the time bound measures the
    engine, not a first compile."""
    key = (id(lib), opts.get("dialects"))
    if key not in _WARM:
        lib.parse("<tool_calls><![CDATA[", **opts)
        _WARM.add(key)


def write_seeds(target: Path) -> int:
    """Each conformance case's input as four fuzzer inputs (whole; cut in three places
    under "invoke"; cut and per character; cut with a small max_block_chars) and, for one
    case in eight, a fifth cut and repeated 64 times (few: the fuzzer's descendants of an
    amplified input stay amplified, and those cost most of the time); returns how many
    files were written."""
    _make_work_dir(target)
    count = 0
    with open(CASES, encoding="utf-8") as f:
        texts = [json.loads(line)["input"] for line in f if line.strip()]
    for i, text in enumerate(texts):
        n = len(text)
        cuts = [n // 4, n // 2, 3 * n // 4] if n >= 4 else []
        seeds = [
            encode(text),
            encode(text, cuts, invoke=True),
            encode(text, cuts, per_char=True),
            encode(text, cuts, small_limit=64),
        ]
        if i % 8 == 0:
            seeds.append(encode(text, cuts, amplify=3))
        for seed in seeds:
            (target / ("seed-" + hashlib.sha1(seed).hexdigest()[:16])).write_bytes(seed)
            count += 1
    return count


def show(paths: list[str]) -> int:
    status = 0
    for p in paths:
        if p.endswith(".log") or Path(p).name.startswith("."):
            continue
        data = Path(p).read_bytes()
        case = decode(data)
        print(f"== {p}: {len(data)} bytes, {len(case.text)} characters")
        print(f"   opts={case.opts} per_char={case.per_char} cuts={sorted(case.cuts)}")
        unit = case.text[: len(case.text) // case.repeat]
        shown = f"{unit[:2000]!r}{' ...' if len(unit) > 2000 else ''}"
        print(f"   text={shown}" + (f" * {case.repeat}" if case.repeat > 1 else ""))
        try:
            times = check(case)
        except Exception as exc:  # noqa: BLE001 -- any exception is a finding: show it, go on
            print(f"   FAILS: {type(exc).__name__}: {exc}")
            status = 1
            continue
        bound = _bound(len(case.text))
        spent = ", ".join(f"{label} {t:.3f}s" for label, t in times)
        slow = max(t for _, t in times) > bound
        print(f"   {'SLOW' if slow else 'ok'} (bound {bound:.3f}s): {spent}")
        status |= slow
    return status


def main(argv: list[str]) -> int:
    args: list[str] = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--help", "-h"):
            print(USAGE)
            return 0
        if a == "--write-seeds":
            target = Path(argv[i + 1]) if i + 1 < len(argv) else CORPUS
            print(f"wrote {write_seeds(target)} seeds to {target}")
            return 0
        if a == "--show":
            return show(argv[i + 1 :])
        if a.startswith("--base-s="):
            os.environ[ENV_BASE] = a.split("=", 1)[1]
        elif a.startswith("--per-100-ms="):
            os.environ[ENV_PER_100] = a.split("=", 1)[1]
        else:
            args.append(a)
        i += 1
    _bound(0)  # a bad knob fails here, not in the first input
    import atheris

    with atheris.instrument_imports(include=["callsieve"]):
        import callsieve
    callsieve.parse("")  # import-time work done before libFuzzer starts
    if not any(a.startswith("-dict=") for a in args):
        args.append(f"-dict={write_dict(WORK / 'tags.dict')}")
    prefix = next((a.split("=", 1)[1] for a in args if a.startswith("-artifact_prefix=")), None)
    if prefix is None:
        _make_work_dir(FINDINGS)
        args.append(f"-artifact_prefix={FINDINGS}/")
    elif ENV_FINDINGS not in os.environ:  # slow inputs beside the crashes
        os.environ[ENV_FINDINGS] = str(
            Path(prefix if prefix.endswith("/") else os.path.dirname(prefix) or ".").resolve()
        )
    if not any(not a.startswith("-") for a in args):  # no corpus directory given
        if not CORPUS.exists() or not any(CORPUS.iterdir()):
            write_seeds(CORPUS)
        args.append(str(CORPUS))
    # libFuzzer's -jobs/-fork workers run argv[0] (plus the flags) through the shell: name the
    # interpreter too, so the script needs no execute bit.
    atheris.Setup([f"{sys.executable} {Path(__file__).resolve()}", *args], test_one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
