"""A model's folder (a Hugging Face checkpoint) read for the dialect its replies are in.

What it does: ``read_model_dir(folder, render=…)`` looks in five places, in order.

1. A ``response_template`` in ``tokenizer_config.json`` (or ``chat_template.json``) is
   compiled (``dialect_from_response_template``) and written to a grammar folder.
2. Otherwise the chat template's source is matched against each dialect's markers. The
   markers come from the dialect's spelling file and grammar file, never from Python: the
   literal pieces of its call spellings (``<tool_call>``, ``</function>``, …), split at white
   space, slots and tag edges. Its opener's pieces must all be in the template, and all but
   one of its other pieces. The most specific dialect wins: the most pieces found, then
   their length, then the share of its grammar's own literals found, then the listing order.
   A dialect that opens as the winner does, all its pieces among the winner's, is read
   too (Llama's JSON calls beside its built-in ones).
3. Otherwise ``render`` (``callsieve.draft``'s ``by_rendering``, given from above: it needs
   jinja2) renders a sample call with the template, and the dialect that reads it back wins.
4. Otherwise the pieces of each dialect's tool list (``FUNCTIONS_OPEN``,
   ``FUNCTIONS_CLOSE``) are looked for: all of them, one at least spelled by no other
   dialect (LFM2's ``<|tool_list_start|>``, Phi-4-mini's ``<|tool|>``).
5. Otherwise a ``ConfigurationError`` says what to do.

What it guarantees: the choice and its reasons are in ``ModelDirDialect.why`` and in the
``callsieve.model_dir`` log. A folder with no JSON to read, or no match, is a clear error; so
is a tie the rules cannot break (it names the candidates).
What it costs: reading a few files, and each dialect's spelling once per process.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._base.errors import CallsieveError, ConfigurationError
from .._grammar.files import dialects as listed_dialects
from .._grammar.files import grammar_dirs as search_dirs
from .._grammar.names import SPELLINGS
from .._grammar.spelling import SLOT, spelling_file
from .response_template import dialect_from_response_template

__all__ = [
    "ModelDirDialect",
    "Renderer",
    "choose_by_tool_list",
    "dialect_markers",
    "read_model_dir",
]

log = logging.getLogger("callsieve.model_dir")

#: The name a model folder's compiled ``response_template`` dialect gets.
RESPONSE_DIALECT = "model_response_template"
#: The spelling entries a reply holds (the others are the prompt's: results, tool lists).
_REPLY_SPELLINGS = frozenset(
    {
        SPELLINGS.CALLS_OPEN,
        SPELLINGS.CALLS_CLOSE,
        SPELLINGS.INVOKE_OPEN,
        SPELLINGS.INVOKE_CLOSE,
        SPELLINGS.PARAM_OPEN,
        SPELLINGS.PARAM_CLOSE,
        SPELLINGS.CDATA_OPEN,
        SPELLINGS.NATIVE_CALLS_BEGIN,
        SPELLINGS.NATIVE_CALLS_END,
        SPELLINGS.NATIVE_CALL_BEGIN,
        SPELLINGS.NATIVE_CALL_END,
        SPELLINGS.NATIVE_SEP,
        SPELLINGS.NATIVE_NAME_LINE,
        "BLOCK_OPEN",
        "BLOCK_CLOSE",
        "CALL_HEAD",
        "CALL_TAIL",
        "ARG_OPEN",
        "ARG_CLOSE",
        "ARG_OPEN_LINES",
        "ARG_CLOSE_LINES",
    }
)
#: The spelling entries around the tool list a prompt holds.
_TOOL_LIST_SPELLINGS = frozenset({SPELLINGS.FUNCTIONS_OPEN, SPELLINGS.FUNCTIONS_CLOSE})
#: Where a spelling's text is cut into pieces: white space, a slot, before a tag's ``<``,
#: after its ``>`` (when a word follows), and after an attribute's ``=``.
_CUT = re.compile(r"\s+|" + re.escape(SLOT) + r"|(?=<)|(?<=>)(?=\w)|(?<==)")
#: A grammar file's regex literals (``/…/``), left out when its string literals are read.
_REGEX_LITERAL = re.compile(r"/(?:[^/\\\n]|\\.)+/")
_STRING_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_SPELLING_LINE = re.compile(r'([A-Z][A-Z0-9_]*)\s*:\s*"((?:[^"\\\n]|\\.)*)"\s*$')


@dataclass(frozen=True)
class Markers:
    """A dialect's pieces: ``opener`` (all must be found), ``pieces`` (the call's spellings),
    ``extra`` (attribute names and the grammar file's other literals: evidence only)."""

    opener: frozenset[str]
    pieces: frozenset[str]
    extra: frozenset[str]


@dataclass(frozen=True)
class ModelDirDialect:
    """What a model folder says its replies are in.

    ``dialects`` are read, the first the model's own (the one a prompt teaches).
    ``grammar_dirs`` holds the compiled ``response_template``'s folder, else nothing.
    ``reasoning`` is the response template's reasoning setting, else ``None`` (the
    dialect's own). ``source`` is ``"response_template"`` or ``"chat_template"``. ``why``
    says how it was chosen, for the log.
    """

    dialects: tuple[str, ...]
    grammar_dirs: tuple[str, ...] = ()
    reasoning: Literal["tags", "open"] | None = None
    source: str = "chat_template"
    why: str = ""

    @property
    def dialect(self) -> str:
        return self.dialects[0]


#: The rendering step (``callsieve.draft``'s ``by_rendering``): the chat templates' sources
#: and the grammar folders to the dialect that reads a sample call's rendering, or None.
Renderer = Callable[[Sequence[str], tuple[str, ...]], ModelDirDialect | None]


def read_model_dir(
    folder: str | os.PathLike[str],
    *,
    grammar_dirs: tuple[str, ...] = (),
    write_to: str | os.PathLike[str] | None = None,
    render: Renderer | None = None,
) -> ModelDirDialect:
    """The dialect of the model in ``folder`` (see the module docstring).

    ``grammar_dirs`` adds dialects of your own to match against. ``write_to`` is where a
    compiled ``response_template`` is saved (default: a new temporary folder). ``render``
    is the rendering step; ``None`` skips it (jinja2 is not installed), and the error says so.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ConfigurationError(f"model folder {os.fspath(folder)!r} is not a folder")
    configs = _configs(root)
    spec = next((c["response_template"] for c in configs if "response_template" in c), None)
    if spec is not None:
        return _from_response_template(root, spec, write_to)
    sources = list(_chat_templates(root, configs))
    if not sources:
        raise ConfigurationError(
            f"{root}: no response_template and no chat template "
            f"(tokenizer_config.json, chat_template.jinja). {_WHAT_TO_DO}"
        )
    source = inline_constants("\n".join(sources))
    try:
        found = choose(source, grammar_dirs)
        if found is None and render is not None:
            found = render(sources, grammar_dirs)
        if found is None:
            found = choose_by_tool_list(source, grammar_dirs)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{root}: {exc}. {_WHAT_TO_DO}") from None
    if found is None:
        tried = _RENDERED if render is not None else _NOT_RENDERED
        raise ConfigurationError(
            f"{root}: no response_template; no dialect's markers are in its chat template, "
            f"{tried}, and its tool list names none. {_WHAT_TO_DO}"
        )
    log.info("%s: %s", root, found.why)
    return found


_RENDERED = "no dialect reads its rendering of a sample call"
_NOT_RENDERED = (
    "its rendering of a sample call was not tried (that needs jinja2: "
    "pip install 'callsieve[draft]'; the server extra installs it too)"
)
_WHAT_TO_DO = (
    "Name the dialect (callsieve serve --dialect D; callsieve dialects lists them), add a "
    "response_template to tokenizer_config.json (docs/model-metadata.md), or draft a "
    "dialect from the template with callsieve draft-dialect."
)


def _configs(root: Path) -> list[dict[str, Any]]:
    """The JSON files that may hold a ``response_template`` or a ``chat_template``."""
    out = []
    for name in ("tokenizer_config.json", "chat_template.json"):
        path = root / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConfigurationError(f"{path}: not a readable JSON file ({e})") from None
        if isinstance(data, dict):
            out.append(data)
    return out


def _from_response_template(
    root: Path, spec: Any, write_to: str | os.PathLike[str] | None
) -> ModelDirDialect:
    if not isinstance(spec, Mapping):
        raise ConfigurationError(f"{root}: response_template is not a JSON object")
    compiled = dialect_from_response_template(spec, name=RESPONSE_DIALECT)
    folder = compiled.write(
        write_to if write_to is not None else tempfile.mkdtemp(prefix="callsieve-model-")
    )
    why = f"the response_template of its tokenizer_config.json, compiled into {folder}"
    log.info("%s: %s", root, why)
    return ModelDirDialect(
        (compiled.name,), (folder,), compiled.reasoning, "response_template", why
    )


def _chat_templates(root: Path, configs: list[dict[str, Any]]) -> Iterator[str]:
    """Every chat template the folder holds: the configs' (one, or a list of named ones),
    ``chat_template.jinja`` and ``additional_chat_templates/*.jinja``."""
    for config in configs:
        template = config.get("chat_template")
        if isinstance(template, str):
            yield template
        elif isinstance(template, list):
            yield from (
                t["template"]
                for t in template
                if isinstance(t, dict) and isinstance(t.get("template"), str)
            )
    files = [root / "chat_template.jinja", *sorted(root.glob("additional_chat_templates/*.jinja"))]
    for path in files:
        if path.is_file():
            yield path.read_text(encoding="utf-8", errors="replace")


# ---------------------------------------------------------------------------- the template

_SET = re.compile(r"set\s+(\w+)\s*=\s*(['\"])([^'\"\n]*)\2\s*-?%\}")


def inline_constants(source: str) -> str:
    """The template's source with its string constants put where they are used.

    ``{% set t = '<x>' %}`` then ``'a' + t + 'b'`` reads ``'a<x>b'``. ``t + '['``,
    ``'a' ~ t``, ``{{ t }}`` and ``'<y{}>'.format(t)`` are read the same way.
    """
    for m in _SET.finditer(source):
        source = _inline(source, re.escape(m.group(1)), m.group(3))
    return source


def _inline(source: str, name: str, value: str) -> str:
    """``source`` with the constant ``name`` (a regex) replaced by its ``value``."""
    quote = r"(['\"])"
    source = re.sub(rf"{quote}\s*[+~]\s*{name}\s*[+~]\s*{quote}", lambda _: value, source)
    source = re.sub(rf"\b{name}\s*[+~]\s*{quote}", lambda x: x.group(1) + value, source)
    source = re.sub(rf"{quote}\s*[+~]\s*{name}\b", lambda x: value + x.group(1), source)
    source = re.sub(rf"\{{\{{-?\s*{name}\s*-?\}}\}}", lambda _: value, source)
    return re.sub(
        rf"{quote}([^'\"\n]*)\{{\}}([^'\"\n]*){quote}\.format\(\s*{name}\s*\)",
        lambda x: x.group(1) + x.group(2) + value + x.group(3) + x.group(4),
        source,
    )


# ---------------------------------------------------------------------------- the markers


def _pieces(text: str) -> Iterator[str]:
    for piece in _CUT.split(text):
        piece = re.split(r'\{?"', piece)[0]  # (a JSON key after it is the arguments')
        if len(piece) >= 3 and re.search(r"[^\W\d_]", piece) and re.search(r"[^\w]", piece):
            yield piece


@functools.cache
def dialect_markers(dialect: str, grammar_dirs: tuple[str, ...] = ()) -> Markers | None:
    """A dialect's markers, or ``None`` where it has no spelling file or no call markers
    (a JSON list, Python calls: nothing a template spells)."""
    texts = _spellings(dialect, grammar_dirs)
    spelled = {p for name, text in texts.items() if name in _REPLY_SPELLINGS for p in _pieces(text)}
    opener = {p for p in _pieces(texts.get(SPELLINGS.CALLS_OPEN, "")) if not _attribute(p)}
    pieces = {p for p in spelled if not _attribute(p)}
    if not opener or not pieces:
        return None
    extra = (spelled - pieces) | (_grammar_literals(dialect, grammar_dirs) - pieces)
    return Markers(frozenset(opener), frozenset(pieces), frozenset(extra))


def _spellings(dialect: str, grammar_dirs: tuple[str, ...]) -> dict[str, str]:
    """The spelling file's entries (``NAME: "text"``), read as text. (``spelling()`` would
    load each dialect's grammar to check them: seconds for all of them, at start-up.)"""
    try:
        path = spelling_file(dialect, grammar_dirs)
    except CallsieveError:
        return {}
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines() if path is not None else ():
        m = _SPELLING_LINE.match(line)
        if m is not None:
            try:
                out[m.group(1)] = json.loads(f'"{m.group(2)}"')
            except ValueError:
                continue
    return out


def _attribute(piece: str) -> bool:
    """An attribute's name (``name=``): templates often build these, so they are evidence
    only."""
    return piece.endswith("=") and not piece.startswith("<")


def _grammar_literals(dialect: str, grammar_dirs: tuple[str, ...]) -> set[str]:
    """The pieces of the dialect file's string literals (outside its regexes)."""
    path = next(
        (
            d / f"{dialect}.lark"
            for d in search_dirs(grammar_dirs)
            if (d / f"{dialect}.lark").is_file()
        ),
        None,
    )
    if path is None:
        return set()
    out: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("//"):
            continue
        for m in _STRING_LITERAL.finditer(_REGEX_LITERAL.sub("", line)):
            try:
                out.update(_pieces(json.loads(f'"{m.group(1)}"')))
            except ValueError:
                continue
    return out


@dataclass(frozen=True)
class _Match:
    dialect: str
    found: frozenset[str]
    markers: Markers
    rank: tuple[int, int, float, int]

    @property
    def complete(self) -> bool:
        return self.found == self.markers.pieces


def _match(source: str, dialect: str, order: int, grammar_dirs: tuple[str, ...]) -> _Match | None:
    markers = dialect_markers(dialect, grammar_dirs)
    if markers is None or not all(p in source for p in markers.opener):
        return None
    found = frozenset(p for p in markers.pieces if p in source)
    if len(markers.pieces) - len(found) > 1:
        return None
    evidence = sum(p in source for p in markers.extra)
    share = (len(found) + evidence) / (len(markers.pieces) + len(markers.extra))
    rank = (len(found), sum(len(p) for p in found), share, -order)
    return _Match(dialect, found, markers, rank)


def choose(source: str, grammar_dirs: tuple[str, ...] = ()) -> ModelDirDialect | None:
    """The dialect whose markers a chat template's source holds (see the module docstring),
    or ``None``."""
    names = list(listed_dialects(grammar_dirs))
    matches = [m for i, d in enumerate(names) if (m := _match(source, d, i, grammar_dirs))]
    if not matches:
        return None
    matches.sort(key=lambda m: m.rank, reverse=True)
    best, also, seen = matches[0], [], {matches[0].markers.pieces}
    for m in matches[1:]:
        opens_alike = m.markers.opener <= best.markers.opener
        if m.complete and opens_alike and m.found < best.found and m.markers.pieces not in seen:
            also.append(m.dialect)
            seen.add(m.markers.pieces)
    why = (
        f"dialect {best.dialect}: its markers {', '.join(sorted(best.found))} are in the "
        "chat template"
    )
    others = [f"{m.dialect} ({len(m.found)})" for m in matches[1:] if m.dialect not in also]
    if also:
        why += f"; {', '.join(also)} read too (their markers are among these)"
    if others:
        why += f"; also matched, less specific: {', '.join(others)}"
    return ModelDirDialect((best.dialect, *also), why=why)


# ---------------------------------------------------------------------------- the tool list


_TAG = re.compile(r"<[^<>\s]+>|\[/?[A-Z_]+\]")


@functools.cache
def _spelled(dialect: str, grammar_dirs: tuple[str, ...]) -> str:
    """Every entry of the dialect's spelling file, as one text."""
    return "\n".join(_spellings(dialect, grammar_dirs).values())


@dataclass(frozen=True)
class ToolList:
    """A dialect's tool-list markers: its ``tags`` (special tokens) and its ``phrases`` (the
    words between them, as ``List of tools:``)."""

    tags: frozenset[str]
    phrases: frozenset[str]


@functools.cache
def tool_list_markers(dialect: str, grammar_dirs: tuple[str, ...] = ()) -> ToolList:
    """The tags and phrases of the dialect's tool list (``FUNCTIONS_OPEN``,
    ``FUNCTIONS_CLOSE``)."""
    texts = [t for n, t in _spellings(dialect, grammar_dirs).items() if n in _TOOL_LIST_SPELLINGS]
    tags = {m.group() for t in texts for m in _TAG.finditer(t)}
    phrases = {
        p.strip()
        for t in texts
        for p in re.split(_TAG.pattern + r"|\n", t)
        if p and len(p.strip()) >= 3 and re.search(r"[^\W\d_]", p)
    }
    return ToolList(frozenset(tags), frozenset(phrases))


def _tool_list_found(
    source: str, dialect: str, names: list[str], grammar_dirs: tuple[str, ...]
) -> frozenset[str] | None:
    """The dialect's tool-list markers in ``source``: all of them, or all its phrases (a
    family's versions add or drop special tokens around the same words). None unless one
    found is spelled by no other dialect."""
    marks = tool_list_markers(dialect, grammar_dirs)
    every = marks.tags | marks.phrases
    if every and all(p in source for p in every):
        found = every
    elif marks.phrases and all(p in source for p in marks.phrases):
        found = marks.phrases
    else:
        return None
    others = [_spelled(o, grammar_dirs) for o in names if o != dialect]
    return found if any(all(p not in o for o in others) for p in found) else None


def choose_by_tool_list(source: str, grammar_dirs: tuple[str, ...] = ()) -> ModelDirDialect | None:
    """The dialect whose tool list the template writes (``_tool_list_found``); the most
    markers win, then their length. ``None``: no such dialect; a tie is a
    ``ConfigurationError`` naming the candidates."""
    names = list(listed_dialects(grammar_dirs))
    ranked: list[tuple[tuple[int, int], str, frozenset[str]]] = []
    for d in names:
        found = _tool_list_found(source, d, names, grammar_dirs)
        if found is not None:
            ranked.append(((len(found), sum(len(p) for p in found)), d, found))
    if not ranked:
        return None
    ranked.sort(key=lambda m: m[0], reverse=True)
    tied = [d for rank, d, _ in ranked if rank == ranked[0][0]]
    if len(tied) > 1:
        raise ConfigurationError(
            f"its chat template holds the tool-list markers of several dialects: {', '.join(tied)}"
        )
    _, best, found = ranked[0]
    why = (
        f"dialect {best}: its tool list's markers {', '.join(sorted(found))} are in the chat "
        "template (it writes no call the other steps read)"
    )
    return ModelDirDialect((best,), why=why)
