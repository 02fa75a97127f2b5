"""Loading a grammar: the per-user cache of derived tables (warm loads equal cold ones, bad
cache files and folders are no error), and every grammar problem reported as a
``GrammarError`` naming its file (a missing grammar folder: a ``ConfigurationError``)."""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import canon_calls

import callsieve._grammar.compiled as grammar_module
from callsieve import DEFAULT_DIALECTS, ConfigurationError, GrammarError, available_dialects, parse
from callsieve._base.re_internals import CompiledCode, pattern_from_code
from callsieve._grammar import cache, patterns
from callsieve._grammar.compiled import CompiledGrammar, grammar_dirs, load_grammar

BUILTIN = grammar_dirs()[-1]
DOCS = [
    (
        'Reading it.\n<|DSML|tool_calls>\n<|DSML|invoke name="read_file">\n<|DSML|parameter '
        'name="path"><![CDATA[README.MD]]></|DSML|parameter>\n</|DSML|invoke>\n'
        "</|DSML|tool_calls>"
    ),
    '1<2<tool_calls><invoke name="a"><parameter name="h">x</parameter></invoke></tool_calls>',
    "if a<b and c>d then <b>bold</b> 1 < 2 <",
]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_VAR, str(folder))
    return folder


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The dialects of every cold build (``_grammar._build``) while the test runs."""
    seen: list[tuple[str, ...]] = []
    lock = threading.Lock()
    real = grammar_module._build

    def counting(dialects: tuple[str, ...], parts: list[tuple[str, str]]) -> Any:
        with lock:
            seen.append(dialects)
        return real(dialects, parts)

    monkeypatch.setattr(grammar_module, "_build", counting)
    return seen


def _copy_builtin(folder: Path) -> str:
    folder.mkdir(parents=True)
    for f in BUILTIN.glob("*.lark"):
        shutil.copy(f, folder / f.name)
    return str(folder)


def _shape(g: CompiledGrammar) -> Any:
    """Everything the scanner reads from a grammar, as comparable data."""

    def rule(r: Any) -> Any:
        return None if r is None else (str(r.origin.name), tuple(str(s.name) for s in r.expansion))

    def fields(t: Any) -> tuple[Any, ...]:  # (every field a blueprint gives, of any kind)
        return (type(t).__name__, *(getattr(t, k, None) for k in TERMINAL_FIELDS))

    terms = {n: fields(t) for n, t in g.terminals.items()}
    states = {
        s: (
            tuple(t.name for t in spec.bounded),
            spec.run and spec.run.name,
            spec.end_ok,
            rule(spec.call_rule),
        )
        for s, spec in g.states.items()
    }
    table = {
        s: {k: (a.name, rule(v) if a.name == "Reduce" else v) for k, (a, v) in row.items()}
        for s, row in g.parser.table.states.items()
    }
    entries = [(e.terminal, e.dialect, e.synthetic) for e in g.entries]
    return (
        g.dialects,
        terms,
        states,
        table,
        entries,
        g.openers.lead_chars,
        g.openers.entry_tables["answer"].exact.pattern,
        g.openers.opener_dialect,
        g.parser.start_state,
        sorted(map(rule, g.parser.build_call)),
    )


#: What a terminal's spec holds from its blueprint record, of each kind (``_grammar.specs``).
TERMINAL_FIELDS = (
    "priority",
    "source",
    "is_run",
    "balanced",
    "soft",
    "stop_source",
    "tail_source",
    "tail_span",
    "stop_char",
    "end_chars",
    "width",
    "closure",
    "reach",
    "first",
    "closer",
    "lead_ws",
    "opened",
)


def _results(dirs: tuple[str, ...]) -> list[Any]:
    out = []
    for doc in DOCS:
        r = parse(doc, grammar_dirs=dirs)
        out.append((r.text, canon_calls(r.calls)))
    return out


# ---------------------------------------------------------------- the cache
def test_warm_load_equals_cold_and_parses_the_same(
    tmp_path: Path, cache_dir: Path, builds: list[tuple[str, ...]]
) -> None:
    a = _copy_builtin(tmp_path / "a")
    b = _copy_builtin(tmp_path / "b")  # same text, another key: read from the cache
    cold = load_grammar(DEFAULT_DIALECTS, (a,))
    assert builds == [DEFAULT_DIALECTS]
    assert len(list(cache_dir.glob("grammar-*.pickle"))) == 1
    warm = load_grammar(DEFAULT_DIALECTS, (b,))
    assert builds == [DEFAULT_DIALECTS]  # no second build
    assert warm is not cold
    assert _shape(warm) == _shape(cold)
    assert _results((b,)) == _results((a,))
    assert not list(cache_dir.glob("*.tmp"))


def _sealed(body: bytes) -> bytes:
    """A cache file's bytes for ``body`` (its sha-256 line, then the pickle)."""
    return hashlib.sha256(body).hexdigest().encode() + b"\n" + body


@pytest.mark.parametrize(
    "damage", ["garbage", "truncated", "flipped bit", "other key", "foreign global"]
)
def test_a_bad_cache_file_is_ignored_and_rebuilt(
    tmp_path: Path, cache_dir: Path, builds: list[tuple[str, ...]], damage: str
) -> None:
    load_grammar(("xml",), (_copy_builtin(tmp_path / "a"),))
    (path,) = cache_dir.glob("grammar-*.pickle")
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a pickle at all")
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "flipped bit":
        path.write_bytes(data[:-100] + bytes([data[-100] ^ 1]) + data[-99:])
    elif damage == "other key":
        payload = pickle.loads(data.partition(b"\n")[2])
        payload["key"] = "0" * 64
        path.write_bytes(_sealed(pickle.dumps(payload)))
    else:  # a global the cache never writes: refused before anything runs
        path.write_bytes(
            _sealed(pickle.dumps({"key": path.stem[len("grammar-") :], "value": shutil.rmtree}))
        )
    g = load_grammar(("xml",), (_copy_builtin(tmp_path / "b"),))
    assert builds == [("xml",), ("xml",)]
    assert (
        parse(
            '<tool_calls><invoke name="a"></invoke></tool_calls>',
            dialects=("xml",),
            grammar_dirs=(str(tmp_path / "b"),),
        )
        .calls[0]
        .name
        == "a"
    )
    assert g.dialects == ("xml",)
    load_grammar(("xml",), (_copy_builtin(tmp_path / "c"),))  # the rebuild rewrote the file
    assert builds == [("xml",), ("xml",)]


def test_an_unwritable_cache_folder_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[tuple[str, ...]]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv(cache.ENV_VAR, str(blocker / "cache"))  # (cannot be made, even as root)
    d = _copy_builtin(tmp_path / "g")
    assert parse(DOCS[1], grammar_dirs=(d,)).calls[0].name == "a"
    assert builds == [DEFAULT_DIALECTS]
    assert cache.read("0" * 64, {}) is None
    assert cache.write("0" * 64, lambda: {"x": 1}) is False


@pytest.mark.parametrize("value", ["", "off", "OFF", "0"])
def test_the_cache_can_be_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[tuple[str, ...]], value: str
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(cache.ENV_VAR, value)
    assert cache.cache_dir() is None
    load_grammar(("xml",), (_copy_builtin(tmp_path / "a"),))
    load_grammar(("xml",), (_copy_builtin(tmp_path / "b"),))
    assert builds == [("xml",), ("xml",)]
    assert not (tmp_path / "xdg").exists()


def test_the_cache_folder_is_per_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cache.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "callsieve"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "callsieve"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "callsieve"
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "mine"))
    assert cache.cache_dir() == tmp_path / "mine"
    load_grammar(("xml",), (_copy_builtin(tmp_path / "a"),))
    assert list((tmp_path / "mine").glob("grammar-*.pickle"))


def test_the_key_follows_the_grammar_text(
    tmp_path: Path, cache_dir: Path, builds: list[tuple[str, ...]]
) -> None:
    assert cache.digest("a: B\n") == cache.digest("a: B\n")
    assert cache.digest("a: B\n") != cache.digest("a: C\n")
    assert cache.digest("a: B\n", ("x",)) != cache.digest("a: B\n", ("y",))
    d = Path(_copy_builtin(tmp_path / "a"))
    load_grammar(("xml",), (str(d),))
    e = Path(_copy_builtin(tmp_path / "b"))
    with (e / "xml.lark").open("a", encoding="utf-8") as f:
        f.write("\n// an edit\n")
    load_grammar(("xml",), (str(e),))
    assert builds == [("xml",), ("xml",)]
    assert len(list(cache_dir.glob("grammar-*.pickle"))) == 2


def test_once_per_key_makes_each_value_once() -> None:
    memo: cache.OncePerKey[str, list[str]] = cache.OncePerKey(2)
    made: list[str] = []
    for key in ("a", "a", "b", "c"):
        memo.get_or_make(key, lambda k: made.append(k) or [k])
    assert made == ["a", "b", "c"]
    assert memo.get("a") is None and memo.get("c") == ["c"]  # the oldest was dropped

    def fail(key: str) -> list[str]:
        raise ValueError(key)

    with pytest.raises(ValueError, match="d"):
        memo.get_or_make("d", fail)
    assert memo.get_or_make("d", lambda k: [k]) == ["d"]  # a failure stores nothing


# ---------------------------------------------------------------- grammar errors
def _dialect(tmp_path: Path, name: str, text: str | bytes) -> str:
    f = tmp_path / f"{name}.lark"
    if isinstance(text, bytes):
        f.write_bytes(text)
    else:
        f.write_text(text, encoding="utf-8")
    return str(tmp_path)


def _refused(tmp_path: Path, name: str, text: str | bytes) -> str:
    d = _dialect(tmp_path, name, text)
    with pytest.raises(GrammarError) as info:
        parse("x", dialects=(name,), grammar_dirs=(d,))
    return str(info.value)


_HEAD = (
    "{n}: {N}_OPEN {n}_call {N}_CLOSE\n{n}_call: {n}_name {N}_END -> call\n"
    "{n}_name: {N}_NAME -> call_name\n"
    '{N}_OPEN: "<{n}>"\n{N}_CLOSE: "</{n}>"\n{N}_END: ";"\n'
)


def test_invalid_utf8_names_the_file(tmp_path: Path) -> None:
    message = _refused(
        tmp_path, "bin", _HEAD.format(n="bin", N="BIN").encode() + b'BIN_NAME: "\xff\xfe"\n'
    )
    assert str(tmp_path / "bin.lark") in message and "UTF-8" in message


def test_invalid_regex_is_reported_as_such(tmp_path: Path) -> None:
    message = _refused(
        tmp_path, "rx", _HEAD.format(n="rx", N="RX") + "RX_NAME: /(?P<v>[a-z]{1,9}(?=;)/\n"
    )
    assert "RX_NAME" in message and "not a valid regular expression" in message
    assert "looks before" not in message
    assert f"{tmp_path / 'rx.lark'}:7" in message  # the file and the line of the definition


def test_lark_syntax_error_gives_file_line_and_column(tmp_path: Path) -> None:
    message = _refused(
        tmp_path, "syn", 'syn: SYN_OPEN SYN_CLOSE\nSYN_OPEN: "<s>"\nSYN_CLOSE: "</s>" oops ]\n'
    )
    assert f"{tmp_path / 'syn.lark'}:3:" in message
    assert "line 3, column" in message and "of " + str(tmp_path / "syn.lark") in message


def test_lark_error_without_position_names_the_file(tmp_path: Path) -> None:
    message = _refused(
        tmp_path,
        "undef",
        'undef: UNDEF_OPEN missing_rule UNDEF_CLOSE\nUNDEF_OPEN: "<u>"\nUNDEF_CLOSE: "</u>"\n',
    )
    assert "missing_rule" in message and f"{tmp_path / 'undef.lark'}:1" in message


def test_contract_errors_name_file_and_terminal(tmp_path: Path) -> None:
    message = _refused(tmp_path, "unb", 'unb: O X C\nO: "<o>"\nC: "</o>"\nX: /x+>/\n')
    assert f"{tmp_path / 'unb.lark'}:4: terminal X" in message and "longer than" in message


_TWO = (
    "two: TWO_OPEN two_call+ TWO_CLOSE\n"
    "two_call: two_name TWO_END -> call\n"
    "        | two_alt TWO_END -> call\n"
    "two_name: TWO_NAME -> call_name\n"
    "two_alt: TWO_ALT -> call_name\n"
    'TWO_OPEN: "<two>"\nTWO_CLOSE: "</two>"\nTWO_END: "</c>"\n'
    "TWO_NAME: /<c name=(?P<v>[a-z_]{1,64})>/\n"
    "TWO_ALT: /<call fn=(?P<v>[a-z_]{1,64})>/\n"
)


def test_two_entry_terminals_may_share_a_group_name(tmp_path: Path) -> None:
    """Both terminals a wrapper accepts first are entries (the missing-wrapper repair), and
    both carry a ``v`` group: their alternation renames the groups apart."""
    d = _dialect(tmp_path, "two", _TWO)
    opts: dict[str, Any] = {"dialects": ("two",), "grammar_dirs": (d,)}
    g = load_grammar(("two",), (d,))
    assert {e.terminal for e in g.entries} >= {"TWO__TWO_OPEN", "TWO__TWO_NAME", "TWO__TWO_ALT"}
    whole = parse("a <two><c name=f></c><call fn=g></c></two> b", **opts)
    assert (whole.text, [c.name for c in whole.calls]) == ("a  b", ["f", "g"])
    repaired = parse("a <call fn=g></c><c name=f></c></two> b", **opts)
    assert (repaired.text, len(repaired.calls), repaired.calls[1].name) == ("a  b", 2, "f")


def test_a_repaired_entry_token_keeps_its_value_group(tmp_path: Path) -> None:
    d = _dialect(tmp_path, "two", _TWO)
    repaired = parse("a <call fn=g></c></two> b", dialects=("two",), grammar_dirs=(d,))
    assert [c.name for c in repaired.calls] == ["g"]


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_bad_grammar_folder_is_a_configuration_error(tmp_path: Path, kind: str) -> None:
    bad = tmp_path / "nope"
    if kind == "file":
        bad.write_text("not a folder")
    for call in (
        lambda: parse("x", grammar_dirs=(str(bad),)),
        lambda: load_grammar(DEFAULT_DIALECTS, (str(bad),)),
        lambda: available_dialects((str(bad),)),
    ):
        with pytest.raises(ConfigurationError, match="nope"):
            call()


@pytest.fixture(autouse=True)
def _no_stray_threads() -> Iterator[None]:
    before = threading.active_count()
    yield
    assert threading.active_count() == before


def test_old_tables_and_stray_temporary_files_are_pruned(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "KEEP_FILES", 3)
    for k in range(5):
        assert cache.write(f"{k}" * 64, lambda k=k: {"k": k})
    stray = cache_dir / ".grammar-0000-x.tmp"
    stray.write_bytes(b"half")
    os.utime(stray, (1, 1))
    assert cache.write("9" * 64, lambda: {"k": 9})
    names = sorted(p.name for p in cache_dir.iterdir())
    assert len(names) == 3 and f"grammar-{'9' * 64}.pickle" in names
    assert cache.read("9" * 64, {}) == {"k": 9}


def test_frozen_patterns_equal_compiled_ones() -> None:
    """Every pattern of the built-in grammar, rebuilt from its frozen form, is the pattern
    ``re.compile`` makes; a form the engine refuses falls back to the source."""
    sources = sorted(load_grammar().pattern_sources())
    frozen = [patterns.freeze(s) for s in sources]
    if None in frozen:
        pytest.skip("frozen patterns are not usable on this Python")
    for source, form in zip(sources, frozen):
        assert form is not None
        assert pattern_from_code(source, CompiledCode(*form)) == re.compile(source)
    form = frozen[0]
    assert form is not None
    patterns.learn({"ab+c": (form[0], b"\xff\xff\x00\x00" * 3, 0, {}, (None,))})
    assert patterns.compile("ab+c") == re.compile("ab+c")
    assert "ab+c" not in patterns._known


def test_an_entry_the_automaton_cannot_follow_names_its_terminal(tmp_path: Path) -> None:
    message = _refused(
        tmp_path, "ent", 'ent: ENT_OPEN ENT_CLOSE\nENT_OPEN: /<e(?:x){300}>/\nENT_CLOSE: "</e>"\n'
    )
    assert f"{tmp_path / 'ent.lark'}:2: terminal ENT_OPEN" in message
    assert "repetition too long" in message


def test_renaming_groups_leaves_escapes_and_classes_alone() -> None:
    from callsieve._grammar.derive import rename_groups

    source = r"(?P<v>a)\(?P<w>[(?P<x>\]](?P=v)"
    renamed = rename_groups(source, "_e0_")
    assert renamed == r"(?P<_e0_v>a)\(?P<w>[(?P<x>\]](?P=_e0_v)"
    assert re.compile(renamed).match("a(P<w>]a") is not None
