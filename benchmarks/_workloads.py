"""The benchmarks' workloads: the documents, how they are chunked, and the check that the
sieve's output on them is right — shared by ``bench_stream.py`` (whose docstring describes
them) and the scripts that measure other things on the same inputs.

  (a) prose with no ``<``; (b) prose with a non-tag ``<`` every 30-80 characters; (c) chat:
  200 DSML blocks of one call each (CDATA code arguments) with prose between them; (d) one
  DSML call whose single CDATA argument is 10 kB, 100 kB or 1 MB long.
Every document is seeded (``DOC_SEED``), and so is the 1-8-character chunking
(``CHUNK_SEED``): the chunk-size sequence is the same for every workload.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from callsieve import Sieve, Text, ToolCall, ToolCalls

MB = 1_000_000
SIZE = MB  # (a)-(c): characters per document
N_CALLS = 200  # (c)
D_SIZES = (10_000, 100_000, 1_000_000)  # (d): argument lengths
E_SIZES = (100_000, 300_000, 1_000_000)  # one-chunk linearity guard: (a)-(c) at these sizes
CHUNK_SEED = 1234
DOC_SEED = 42

Args = dict[str, object]
Expected = tuple[str, list[tuple[str, Args]]]  # (text outside blocks, calls)


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
