"""Sieves in many threads and asyncio tasks at once share one grammar, its lazy entry
automaton and its caches of answers: every stream must give what ``parse()`` gives, with no
exception, however the threads interleave; and a grammar is compiled once however many
threads ask for it first.

Each test uses a grammar under a new key (the built-in files copied to ``tmp_path``), so its
automaton and caches start empty and fill while the threads race; ``sys.setswitchinterval``
is made tiny so that the interpreter switches threads every few bytecodes.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import canon_calls, drive

import callsieve._grammar.compiled as grammar_module
import callsieve._grammar.entry_tables as entry_tables_module
from callsieve import DEFAULT_DIALECTS, Sieve, parse
from callsieve._grammar import cache
from callsieve._grammar.automaton import DEAD, EntryAutomaton, nfa_table
from callsieve._grammar.compiled import CompiledGrammar, grammar_dirs, load_grammar

THREADS = 48
PER_THREAD = 2
ROUNDS = 4

_PIECES = [
    "Let me check that. ",
    "if a<b and c>d then ",
    "<b>bold</b> ",
    "1 < 2 <",
    "x<-y ",
    "<br>",
    "a <tool_calls> mention ",
    "`<tool_calls>` ",
    "<<EOF\n",
    "＜not a tag＞ ",
    "<|DSML|tool_callz> ",
    "<|DSML|",
    "\n",
    "done. ",
    "<function=f> ",
    (
        '<|DSML|tool_calls>\n<|DSML|invoke name="read_file">\n<|DSML|parameter name="path">'
        "<![CDATA[README.md]]></|DSML|parameter>\n</|DSML|invoke>\n</|DSML|tool_calls>"
    ),
    '<tool_calls><invoke name="a"><parameter name="p">v</parameter></invoke></tool_calls>',
    (
        '<function_calls><invoke name="b"><parameter name="n">42</parameter>'
        '<parameter name="s" string="true"> x </parameter></invoke></function_calls>'
    ),
    '<|DSML|invoke name="c"></|DSML|invoke>\n</|DSML|tool_calls>',
    (
        '<tool_calls><invoke name="a"><parameter name="q"><item><k>1</k></item></parameter>'
        "</invoke></tool_calls>"
    ),
    (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        '{"location": "Tokyo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
    '<tool_calls><invoke name="broken"><parameter name="p">v</invoke></tool_calls> ',
]


def _documents(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(3, 9))) for _ in range(count)]


@pytest.fixture
def fresh_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """A folder holding copies of the built-in grammar files: a key no other test loads."""
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    folder = tmp_path / "grammar"
    folder.mkdir()
    for f in grammar_dirs()[-1].glob("*.lark"):
        shutil.copy(f, folder / f.name)
    return (str(folder),)


@pytest.fixture
def fast_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _in_threads(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(k)`` for k < n, each in its own thread, all released at once; re-raise the
    first exception any of them met."""
    results: list[Any] = [None] * n
    errors: list[BaseException] = []
    gate = threading.Barrier(n)

    def run(k: int) -> None:
        try:
            gate.wait()
            results[k] = work(k)
        except BaseException as exc:  # noqa: BLE001 - reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _parsed(docs: list[str], dirs: tuple[str, ...]) -> list[Any]:
    """``parse()`` of each document, as ``drive`` spells a stream's result."""
    out = []
    for doc in docs:
        r = parse(doc, grammar_dirs=dirs)
        out.append((r.text, canon_calls(r.calls)))
    return out


def _stream(doc: str, dirs: tuple[str, ...]) -> Any:
    sieve = Sieve(grammar_dirs=dirs)
    events: list[Any] = []
    for ch in doc:
        events += sieve.feed(ch)
    events += sieve.close()
    return drive(events)


def test_threads_streaming_per_character_agree_with_parse(
    fresh_dirs: tuple[str, ...], tmp_path: Path, fast_switching: None
) -> None:
    """Rounds of threads, each round on a grammar of its own (a new key, read from the cache
    the first round wrote), so that each round's threads build its automaton together."""
    docs = _documents(THREADS * PER_THREAD, seed=1)
    reference = tmp_path / "reference"
    shutil.copytree(fresh_dirs[0], reference)
    want = _parsed(docs, (str(reference),))
    for r in range(ROUNDS):
        dirs = (str(shutil.copytree(fresh_dirs[0], tmp_path / f"round{r}")),)
        got = _in_threads(
            THREADS,
            lambda k, dirs=dirs: [
                _stream(docs[k * PER_THREAD + j], dirs) for j in range(PER_THREAD)
            ],
        )
        assert [x for xs in got for x in xs] == want


def test_asyncio_tasks_in_several_threads_agree_with_parse(
    fresh_dirs: tuple[str, ...], tmp_path: Path, fast_switching: None
) -> None:
    loops, tasks = 4, 12
    docs = _documents(loops * tasks, seed=2)
    reference = tmp_path / "reference"
    shutil.copytree(fresh_dirs[0], reference)
    want = _parsed(docs, (str(reference),))

    async def one(doc: str) -> Any:
        sieve = Sieve(grammar_dirs=fresh_dirs)
        events: list[Any] = []
        for ch in doc:
            events += sieve.feed(ch)
            await asyncio.sleep(0)
        events += sieve.close()
        return drive(events)

    async def many(k: int) -> list[Any]:
        return list(await asyncio.gather(*(one(docs[k * tasks + j]) for j in range(tasks))))

    got = _in_threads(loops, lambda k: asyncio.run(many(k)))
    assert [r for rs in got for r in rs] == want


def test_a_grammar_is_compiled_once_however_many_threads_ask(
    fresh_dirs: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, fast_switching: None
) -> None:
    counted: list[str] = []
    lock = threading.Lock()
    real_build, real_load = grammar_module._build, grammar_module._load

    def build(dialects: tuple[str, ...], parts: list[tuple[str, str]]) -> Any:
        with lock:
            counted.append("build")
        time.sleep(0.05)  # a slow compile: the others arrive while it runs
        return real_build(dialects, parts)

    def load(key: Any) -> CompiledGrammar:
        with lock:
            counted.append("load")
        return real_load(key)

    monkeypatch.setattr(grammar_module, "_build", build)
    monkeypatch.setattr(grammar_module, "_load", load)
    grammars = _in_threads(32, lambda k: load_grammar(grammar_module.DEFAULT_DIALECTS, fresh_dirs))
    assert counted == ["load", "build"]
    assert all(g is grammars[0] for g in grammars)
    # Another key for the same text: read from the cache that compile wrote, once.
    other = Path(fresh_dirs[0]).parent / "again"
    shutil.copytree(fresh_dirs[0], other)
    again = _in_threads(16, lambda k: Sieve(grammar_dirs=(str(other),))._g)
    assert counted == ["load", "build", "load"]
    assert all(g is again[0] for g in again) and again[0] is not grammars[0]


# ---------------------------------------------------------------- the entry automaton
class _CheckedIds(dict[frozenset[int], int]):
    """``EntryAutomaton._ids`` that checks, as each id is published, that every per-state
    list already holds its entry (the race: an id visible before its ``accepting``)."""

    def __init__(self, auto: EntryAutomaton) -> None:
        super().__init__(auto._ids)
        self.auto = auto

    def __setitem__(self, key: frozenset[int], i: int) -> None:
        a = self.auto
        assert min(len(a.trans), len(a.onward), len(a.accepting), len(a.rank), len(a._sets)) > i, (
            f"state {i} published before its lists were filled"
        )
        super().__setitem__(key, i)


def _sources() -> list[str]:
    g = load_grammar()
    return [g.terminals[e.terminal].source or "" for e in g.entries]


def _walks(auto: EntryAutomaton, texts: list[str]) -> list[tuple[frozenset[int] | None, int]]:
    out = []
    for text in texts:
        state, j = auto.walk(auto.step(0, text[0]), text, 1, len(text))
        out.append((auto._sets[state] if state != DEAD else None, j))
    return out


def test_a_state_id_is_published_only_after_its_lists_are_filled() -> None:
    auto = EntryAutomaton(_sources())
    auto._ids = _CheckedIds(auto)
    _walks(auto, [p for p in _PIECES if p.startswith(("<", "＜"))])
    assert len(auto._ids) == len(auto.accepting) > 10


def test_threads_building_one_automaton_agree_with_one_thread(fast_switching: None) -> None:
    """Sixteen threads walk the same texts over a new automaton, forty times: they race to
    build the same states. (Without the lock and the publication order, most rounds raise
    IndexError or give some walk another state.)"""
    table = nfa_table(_sources())
    rng = random.Random(3)
    leads = [p for p in _PIECES if p.startswith(("<", "＜"))]
    texts = [rng.choice(leads)[: rng.randint(2, 60)] for _ in range(64)]
    want = _walks(EntryAutomaton(table=table), texts)
    for _ in range(40):
        auto = EntryAutomaton(table=table)
        assert _in_threads(16, lambda k, auto=auto: _walks(auto, texts)) == [want] * 16
        # one id per state, each with all of its entries
        n = len(auto._sets)
        assert (
            len(auto._ids)
            == len(auto.trans)
            == len(auto.onward)
            == len(auto.accepting)
            == len(auto.rank)
            == n
        )
        assert all(auto._ids[auto._sets[i]] == i for i in range(n))
        assert all(auto.accepting[i] == bool(auto._sets[i] & auto._final) for i in range(n))


def test_threads_storing_answers_keep_the_caches_bounded(
    fresh_dirs: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, fast_switching: None
) -> None:
    g = load_grammar(DEFAULT_DIALECTS, fresh_dirs)
    monkeypatch.setattr(grammar_module, "DECISION_LIMIT", 50)
    monkeypatch.setattr(entry_tables_module, "DECISION_LIMIT", 50)
    memos = [spec.decisions for spec in g.states.values()][:8]

    def store(k: int) -> None:
        for j in range(500):
            g.remember(memos[j % len(memos)], f"{k}/{j}", (None, "", None, False, None))
            g.openers.entry_tables["answer"].settle(f"{k}/{j}", (-1, 0))

    _in_threads(16, store)
    assert sum(len(m) for m in memos) <= 50
    assert len(g.openers.entry_tables["answer"].settlements) <= 50
