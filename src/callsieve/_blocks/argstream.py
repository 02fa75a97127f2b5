"""Strategy: argument streaming (``early_emit="arguments"``, SPEC §7) — a call's ``CallStarted``,
its arguments as ``ArgumentsDelta`` fragments as they arrive, ``CallFinished``/``CallAborted``.

What it does: one ``ArgStream`` per capture of a wrapped block. Its capture's parser hands
it the contract nodes below a call as they are reduced (``call_name``, ``call_id``,
``param_name``, ``attr``, ``param``: ``ParserTables.listening_parser``), and the capture
tells it the terminals it reads and the text of its runs. The call starts (``CallStarted``,
with its id: the model's, else the ``id_factory``'s) at the first terminal read after a name
that can belong to its arguments (``TerminalRoles.arg_terminals``, those below a
``param``, ``call_args`` or ``call_json``: in markup the invoke tag's ``>``, in DeepSeek's
native form the JSON), where its name is final in every dialect, or when it ends. Each
parameter goes out as ``"name":value`` when it is reduced, decoded as the call will decode
it; a CDATA body streams while it arrives when its value must be a string —
``string="true"``, a schema type ``string``, a raw-text field (SPEC §5), or a body whose
first character that is not white space is not ``<`` (only elements-only text can become
structured) — as JSON-escaped fragments; a plain body once it can only be a string
(trimmed, entities decoded); a JSON body (``call_args``, ``call_json``) rewritten compact as
it arrives (``_blocks.json_stream``). Anything else (a value the schema types: it may be coerced)
goes out when complete; then the rest of ``arguments`` and ``CallFinished`` (its ``ToolCall``).
What it guarantees: the concatenated deltas of a finished call are exactly its ``arguments``:
at the end, what was sent is checked to be their prefix. It is not when a parameter name
repeats (its values collect into an array at the first one's place, which was already
sent) or a later node renames the call; the call is then aborted (``CallAborted``) and sent
again, whole, under a new index. A block that fails aborts its started, unfinished call, and
so does a policy's rejection. Each abort says why (``CallAborted.reason``, one of
``_base.events.ABORT_REASONS``): what made the stream stop leading to the arguments is kept in
``broken``. Indexes count the calls of the whole response (``ArgContext.indexes``).
What it costs: one escape per chunk of a streaming body (none when it needs no escape), one
decode per parameter besides the call's own, the text sent, kept for the check at the end.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from lark import Tree

from .._base.events import (
    AbortReason,
    ArgumentsDelta,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    ToolCall,
)
from .._base.values import (
    RAW_TEXT_FIELDS,
    Structured,
    _is_string_type,
    decode_entities,
    decode_param,
    load_json,
)
from .._config.metrics import Metrics
from .._config.options import make_call_id
from .._config.policy import Policy, Settled, coerced
from .._grammar.directives import EnvelopeKeys, ValueReading
from .._grammar.names import CDATA_CLOSE, CDATA_OPEN
from .._grammar.patterns import compile as compile_pattern
from .assembler import Node, contract_value, param_schema, param_schema_type
from .json_stream import EnvelopeStream, JsonStream, NotStreamable, RepeatedKey

if TYPE_CHECKING:
    from .._grammar.compiled import CompiledGrammar
    from .._grammar.specs import StateSpec, TerminalSpec

__all__ = [
    "ArgContext",
    "ArgStream",
    "Built",
    "CdataGuard",
    "Failed",
    "Input",
    "Read",
    "RunStart",
    "escape",
]


_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]').search
# What is left to escape once the common five are: other control characters (rare).
_RARE_ESCAPE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]").search

# A parameter's body, as far as the stream is concerned.
_NONE = 0  # nothing read yet
_UNDECIDED = 1  # CDATA read, white space only so far: a string unless it is XML
_STREAM = 2  # a string: its CDATA goes out as it arrives
_HOLD = 3  # out when the parameter is complete
_PLAIN_WAIT = 4  # plain text read: a string unless it is a number, a literal, XML, an entity
_PLAIN = 5  # a string: its plain text goes out trimmed, entities decoded, as it is settled
_RAW = 6  # string="true": its plain text goes out exactly as it arrives
# The current run.
_NO_RUN = 0
_CDATA = 1
_TEXT = 2
_JSON = 3  # a JSON object of arguments (a ``call_args`` or ``call_json`` run)
_ENVELOPE = 4  # a call's JSON envelope, its name inside (``EnvelopeStream``)

#: Plain text still undecided after this many characters is held to the end (a number or
#: literal is short; the bound keeps deciding linear).
_DECIDE_WITHIN = 64
_LITERALS = ("true", "false", "null")
_NUMBER_PREFIX = re.compile(r"-?(?:0|[1-9][0-9]*)?(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?").fullmatch
# What may follow ``&`` in an entity not yet closed (at most 9 characters, no ``;``).
_ENTITY_HEAD = re.compile(r"[#0-9A-Za-z]{0,9}").fullmatch


def escape(text: str) -> str:
    """``text`` as it stands inside a JSON string (``json.dumps``, without the quotes):
    escaping is per character, so fragments escaped apart join to the whole escaped. Code
    in an argument holds quotes, backslashes, line breaks and tabs in many chunks: those are
    replaced in place: ``json.dumps`` for every chunk that needs escaping made streaming
    (d), 1 MB in 1-8-character chunks, take 151 ms instead of 122 (bench_arguments.py)."""
    if _NEEDS_ESCAPE(text) is None:
        return text
    if _RARE_ESCAPE(text) is not None:
        return json.dumps(text, ensure_ascii=False)[1:-1]
    return (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\t", "\\t")
        .replace("\r", "\\r")
    )


class CdataGuard:
    """Where in a CDATA string's text a tag that could close its parameter stands: the
    terminals its parser state accepts after ``]]>`` (``CompiledGrammar.after_cdata``, but
    ``CDATA_OPEN``), which are the places the loose-CDATA repair may cut the CDATA if the
    input ends before its ``]]>`` (``_repair``). Argument streaming sends a CDATA string's
    text only up to the first such place (SPEC §7.5): what went out is then the start of
    the value wherever the repair cuts, and a CDATA closed by ``]]>`` lets the rest go."""

    __slots__ = ("search", "lead", "others", "_by_first", "_anywhere")

    def __init__(self, after: StateSpec) -> None:
        terms = tuple(t for t in after.bounded if t.name != CDATA_OPEN)
        #: terminals that may start with any character (none in the default grammar): every
        #: character is a place to look at
        self._anywhere = tuple(t for t in terms if t.first is None)
        chars = frozenset().union(*(t.first for t in terms if t.first is not None))
        if self._anywhere:
            chars = frozenset()
        self._by_first = {
            c: tuple(t for t in terms if t.first is None or c in t.first) for c in chars
        }
        #: The one ASCII character the terminals start with, when the others are not ASCII
        #: (``"\0"``: none is ASCII; ``""``: more than one, or any: no hot half): an ASCII
        #: chunk without it holds no place to look at.
        ascii_chars = [c for c in chars if c.isascii()]
        self.lead = (
            ""
            if self._anywhere or len(ascii_chars) > 1
            else ascii_chars[0]
            if ascii_chars
            else "\0"
        )
        #: ... and a search for the others (what a chunk that is not ASCII is asked)
        wide = sorted(c for c in chars if not c.isascii())
        self.others: Any = (
            compile_pattern("[" + "".join(re.escape(c) for c in wide) + "]").search
            if wide
            else _nowhere
        )
        self.search: Any = (
            _EVERY_CHAR
            if self._anywhere
            else compile_pattern("[" + "".join(re.escape(c) for c in sorted(chars)) + "]").search
            if chars
            else _nowhere
        )

    def cut(self, text: str) -> tuple[int, bool]:
        """``(where, matched)``: the first place in ``text`` where one of the terminals
        matches (``matched``) or may still begin, the text there being cut by its end; else
        ``(len(text), False)``. (A search for their first characters; at each one found,
        the few terminals it can start.)"""
        found = self.search(text)
        while found is not None:
            j = found.start()
            for term in self._by_first.get(text[j], self._anywhere):
                if term.pattern.match(text, j) is not None:
                    return j, True
                if term.viable(text, j):
                    return j, False
            found = self.search(text, j + 1)
        return len(text), False


_EVERY_CHAR = re.compile(r"[\s\S]").search


def _nowhere(text: str, pos: int = 0) -> None:
    return None


@functools.lru_cache(maxsize=64)
def _guard(after: StateSpec) -> CdataGuard:
    """The guard of a state (a grammar has a state or two inside CDATA: a small cache of
    what the grammar determines)."""
    return CdataGuard(after)


class ArgContext(NamedTuple):
    """What an argument stream needs from the sieve that made it, given once: no reference
    back to the block lifecycle."""

    g: CompiledGrammar  # the terminal sets the stream reads runs and tokens by
    schemas: dict[str, dict[str, Any]]
    policy: Policy | None  # coercion, and the policy's early verdicts
    metrics: Metrics | None
    id_factory: Callable[[], str]
    #: The response's call indexes, shared by its blocks (``itertools.count``).
    indexes: Iterator[int]


class Read(NamedTuple):
    """Input: the capture read a terminal (a bounded token, or the start of a run)."""

    term: str
    value: str = ""  # a bounded token's value (its group ``v``, else its text)


class RunStart(NamedTuple):
    """Input: a run starts (see ``ArgStream._run``)."""

    run: TerminalSpec
    state: int | None  # the parser state inside the run (a CDATA string's guard); None: none
    reading: ValueReading  # how the block's dialect reads values


class Built(NamedTuple):
    """Input: the capture built a call (``Settled``: the policy has seen it)."""

    call: Settled
    dialect: str
    repairs: tuple[str, ...]
    closing: bool = False  # the input has ended (a difference then: the loose-CDATA repair)


class Failed(NamedTuple):
    """Input: the block failed; a started call is aborted."""

    closing: bool  # the input ended inside the call: ``"cut_off"``, else ``"failed"``


#: What ``ArgStream.feed`` takes: a contract node the parser reduced (a lark ``Tree``), the
#: text of the current run (a ``str``), or one of the named inputs above.
Input = Tree[Any] | str | Read | RunStart | Built | Failed


class _Started:
    """A call the stream started: its index, id and name as ``CallStarted`` gave them, and
    what of its arguments went out (``sent``: their start, checked when the call is built)."""

    __slots__ = ("index", "ident", "name", "via_envelope", "sent", "keys", "value_at")

    def __init__(self, index: int, ident: str, name: str, via_envelope: bool) -> None:
        self.index = index
        self.ident = ident
        self.name = name
        self.via_envelope = via_envelope  # the call started from its envelope's name
        self.sent: list[str] = []
        self.keys: set[str] = set()  # the parameters sent
        self.value_at = -1  # where in ``sent`` the current parameter's value began (-1: not yet)

    def open_string(self, pname: str) -> str:
        """A string value of ``pname`` begins to go out: the text before it."""
        self.value_at = len(self.sent) + 1  # (after the key and the opening quote)
        return ("," if self.keys else "{") + _key(pname) + '"'


class _Held:
    """A CDATA string's text from where a tag that could close its parameter may stand
    (``CdataGuard``): held, not sent, until the text after it rules the tag out, or the
    CDATA's ``]]>`` comes (then it is content after all)."""

    __slots__ = ("guard", "text", "closing_seen")

    def __init__(self, guard: CdataGuard) -> None:
        self.guard = guard
        self.text = ""
        self.closing_seen = False  # a whole tag is in it: hold it all to the ``]]>``

    def passes(self, text: str) -> str:
        """What of the CDATA's new ``text`` can go out: up to where a tag that could close
        the parameter matches or may begin; the rest is held."""
        if self.closing_seen:
            self.text += text
            return ""
        if self.text:
            text = self.text + text
        elif self.guard.search(text) is None:  # (most chunks)
            return text
        at, self.closing_seen = self.guard.cut(text)
        self.text = text[at:]
        return text[:at]


class ArgStream:
    """The argument stream of one capture (see the module's docstring). Its one input is
    ``feed``; its events go to its outbox, ``out``, which ``take`` empties. ``hot`` is
    ``feed``'s fast path for a chunk of a run that streams as it is (``streams_as_is``)."""

    __slots__ = (
        "ctx",
        "out",
        "made",
        "raw_strings",
        "name",
        "ident",
        "started",
        "broken",
        "stopped",
        "json",
        "envelope",
        "head",
        "pname",
        "pstring",
        "body",
        "waiting",
        "between",
        "plain_sent",
        "run_kind",
        "held",
    )

    def __init__(self, ctx: ArgContext) -> None:
        self.ctx = ctx
        #: The raw values of the block's dialect are strings without a schema
        #: (``ValueReading.raw_strings``): said as each run starts.
        self.raw_strings = False
        self.out: list[Event] = []  # the events not taken yet
        #: the block's calls, as CallFinished gave them (None: one the policy rejected)
        self.made: list[ToolCall | None] = []
        self._next_call()

    def _next_call(self) -> None:
        self.name = ""
        self.ident: str | None = None  # the model's id for the call
        self.started: _Started | None = None
        # Why what was sent is no longer known to lead to the arguments (None: it is): an
        # ``ABORT_REASONS`` entry, for the ``CallAborted`` that follows.
        self.broken: AbortReason | None = None
        # Nothing more goes out before the call is built (then the rest, checked): a value
        # the schema refused (the call will be rejected), or a list whose name may repeat.
        self.stopped = False
        self.json: JsonStream | None = None  # a JSON body streaming (``_blocks.json_stream``)
        #: a JSON envelope streaming (a call whose name is in its JSON), and the text of the
        #: tokens before its run that are part of it (an opener that read `{"name":`)
        self.envelope: EnvelopeStream | None = None
        self.head: list[str] = []
        self._next_param()

    def _next_param(self) -> None:
        self.pname: str | None = None
        self.pstring: str | None = None
        self.body = _NONE
        if self.started is not None:
            self.started.value_at = -1
        # Text read but not decided: white space, a tail of plain text (a list: white space
        # may come in many chunks, and is joined once, when text that decides comes).
        self.waiting: list[str] = []
        self.between: list[str] = []  # plain text after a CDATA (out if another CDATA follows)
        self.plain_sent = False  # plain (non-CDATA) text of this body went out
        self.run_kind = _NO_RUN  # the current run: none of this body's, CDATA or plain text
        self.held: _Held | None = None  # a CDATA string's text where a closing tag may stand

    # ------------------------------------------------------------------ the input
    def feed(self, what: object) -> None:
        """One input (``Input``): what it makes goes to ``out``."""
        kind = what.__class__
        if kind is str:
            self._text(what)  # type: ignore[arg-type]
        elif kind is Read:
            self._token(*what)  # type: ignore[misc]
        elif kind is RunStart:
            self._run(*what)  # type: ignore[misc]
        elif kind is Built:
            self._call(what)  # type: ignore[arg-type]
        elif kind is Failed:
            self._abort("cut_off" if what.closing else "failed")  # type: ignore[attr-defined]
        elif isinstance(what, Tree):  # (the listening parser hands over every node it built)
            self._node(what)

    def take(self) -> list[Event]:
        """The events so far, taken out of ``out``."""
        events = self.out[:]
        self.out.clear()
        return events

    # ------------------------------------------------------------------ from the parser
    def _node(self, tree: Tree[Any]) -> None:
        """A contract node was reduced (the listening parser's callback)."""
        value = contract_value(tree, self.ctx.schemas)
        if value is None:
            return
        kind = value[0]
        if kind == Node.CALL_NAME:
            if value[1]:
                self.name = value[1]
        elif kind == Node.ID:
            self.ident = value[1] or self.ident
            if value[2]:
                self.name = value[2]
        elif kind == Node.PARAM_NAME:
            self.pname = value[1]
        elif kind == Node.STRING:
            self.pstring = value[1]
        elif kind == Node.PARAM:
            self._param(value[1], value[2], value[3], value[4])

    def _param(
        self,
        pname: str,
        parts: list[tuple[bool, str]] | Structured,
        string_attr: str | None,
        raw: bool,
    ) -> None:
        st = self.started
        streamed = st is not None and st.value_at >= 0  # ('"' and what followed went out)
        sent = '"' + "".join(st.sent[st.value_at :]) if st is not None and streamed else ""
        self._next_param()
        if st is None or self.broken or self.stopped:
            return
        if pname in st.keys:  # a repeated name: an array where the first one went out
            self.broken = "repeated_name"
            return
        schemas = self.ctx.schemas
        kind = param_schema_type(schemas, self.name, pname)
        if not streamed and _may_be_array(kind):
            # A list, which a model may write as one parameter per item: its value is not
            # known before the call ends, nor where the parameters after it go (SPEC §5).
            self.stopped = True
            return
        policy = self.ctx.policy
        value = coerced(
            policy,
            self.name,
            pname,
            decode_param(pname, parts, string_attr, kind, raw, self._raw_strings(pname)),
        )
        if policy is not None and policy.refuses(self.name, pname, value):
            self.stopped = True  # (the call breaks its schema: no more of it goes out)
            return
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if streamed:
            if not text.startswith(sent):  # (not expected: the stream decodes as the call)
                self.broken = "rewritten"
                return
            self._send(text[len(sent) :])
        else:
            self._send(("," if st.keys else "{") + _key(pname) + text)
        st.keys.add(pname)

    # ------------------------------------------------------------------ from the capture
    def _token(self, term: str, value: str = "") -> None:
        """The capture read a terminal (a bounded token, or the start of a run); ``value``:
        a bounded token's value (its group ``v``, else its text)."""
        g = self.ctx.g
        if self.started is None and term in g.roles.arg_terminals:
            self._start()
            if value and not self.name and term in g.roles.envelope_terminals:
                self.head.append(value)  # (the start of an envelope: `{"name":`)
        elif term == CDATA_OPEN:
            self.run_kind = _NO_RUN  # (its run, if it has one, says CDATA)
        elif term == CDATA_CLOSE and self.run_kind != _CDATA:
            self._empty_cdata()
        elif term == CDATA_CLOSE and self.held is not None:
            # The CDATA closed with its "]]>": what its guard held is content after all.
            if self.held.text:
                self._send(escape(self.held.text))
            self.held = None

    def _empty_cdata(self) -> None:
        """A CDATA section with no run closed (``<![CDATA[]]>``): the body begins as at a
        CDATA's start, so the plain text after it is not trimmed (SPEC §5: read in order)."""
        if self.started is None or self.broken or self.stopped or self.pname is None:
            return
        self.run_kind = _CDATA
        self._cdata_starts()

    def _run(self, run: TerminalSpec, state: int | None, reading: ValueReading) -> None:
        """A run starts (its start is a terminal read, too): a JSON envelope (the call's name
        inside it), a JSON object of arguments, or in a parameter's body, CDATA, plain or raw
        text. ``state``: the parser state inside the run (a CDATA string's guard comes from
        it, ``CdataGuard``; None: no guard); ``reading``: how the block's dialect reads
        values."""
        self._token(run.name)
        self.raw_strings = reading.raw_strings
        self.run_kind = _NO_RUN
        st = self.started
        if self._envelope_run(run, reading.envelope) or st is None or self.broken or self.stopped:
            return
        g = self.ctx.g
        if run.name in g.roles.json_terminals:
            if not st.sent:  # (the object is all the arguments: none went out before)
                self.run_kind = _JSON
                self.json = JsonStream(self._json_holds, self._json_value)
            return
        if self.pname is None:
            return
        if run.name in g.roles.value_terminals:
            self.body = _HOLD  # (a value node's value: out whole, when its parameter is)
        elif run.name in g.roles.raw_terminals:
            self._raw_run()
        else:
            self._body_run(run, state)

    def _envelope_run(self, run: TerminalSpec, keys: EnvelopeKeys) -> bool:
        """A call whose name is in its JSON (an envelope) starts: the name once it closes,
        then the arguments (``EnvelopeStream``; a value the schema may coerce held as in a
        JSON body). Whether it was one."""
        if (
            self.started is not None
            or self.name
            or run.name not in self.ctx.g.roles.envelope_terminals
        ):
            return False
        self.run_kind = _ENVELOPE
        self.envelope = EnvelopeStream(self._named, self._json_holds, self._json_value, keys)
        if self.head:
            self._envelope("".join(self.head))
            self.head = []
        return True

    def _body_run(self, run: TerminalSpec, state: int | None) -> None:
        """A parameter body's CDATA or plain text starts: how it goes out (as it arrives, when
        it is decided, or when the parameter is complete). A run the body does not hold is
        not read: glm45's white space between ``</arg_key>`` and ``<arg_value>`` opened a
        plain body before its raw value, which then went out trimmed and decoded."""
        g = self.ctx.g
        if run.name not in g.roles.body_terminals:
            return
        if run.name in g.roles.cdata_terminals:  # (gemma4's <|"|> strings, too)
            self.run_kind = _CDATA
            self._cdata_starts()
            if state is not None:
                after = g.after_cdata(state)
                self.held = None if after is None else _Held(_guard(after))
        else:
            self.run_kind = _TEXT
            if self.body == _NONE:
                self._open_body(False)
            elif self.body == _UNDECIDED:  # CDATA of white space, then text: out at its end
                self.body = _HOLD
                self.waiting = []

    def _cdata_starts(self) -> None:
        """A CDATA run starts in the body. The value reads in the order written (SPEC §5),
        so the plain text before the CDATA goes out first — white space alone before it is
        trimmed, and the CDATA decides the body as if it came first."""
        body = self.body
        if body == _PLAIN_WAIT:  # plain text, undecided, none sent
            text = "".join(self.waiting)
            self.waiting = []
            if text.strip():  # (text beside CDATA: a string that begins with the text)
                self._open_string(_STREAM)
                self._send(escape(decode_entities(text)))
                return
            body = self.body = _NONE
        if body == _NONE:
            self._open_body(True)
        elif body == _PLAIN or body == _RAW:  # plain text went out: the rest of it first
            self._flush(self.waiting)
            self.waiting = []
            self.body = _STREAM
        elif body == _STREAM and self.between:  # text between two CDATA: inside the value
            self._flush(self.between)
            self.between = []

    def _raw_strings(self, pname: str) -> bool:
        """A raw value of ``pname`` is its text: the dialect says so and no schema speaks
        of the parameter (as the call reads it, ``CallTransformer._parameters``)."""
        return self.raw_strings and param_schema(self.ctx.schemas, self.name, pname) is None

    def _raw_run(self) -> None:
        """A raw_value's run starts: its text goes out as it is (``decode_raw``) where it is
        a string for sure (the schema says so, or ``string="true"``); else it may be JSON, and
        goes out when the parameter is complete."""
        self.run_kind = _TEXT
        if self.body != _NONE:
            return
        kind = param_schema_type(self.ctx.schemas, self.name, self.pname or "")
        if self._sent_key(self.pname) or not (self.pstring == "true" or _is_string_type(kind)):
            self.body = _HOLD
        else:
            self._open_string(_RAW)

    def _sent_key(self, pname: str | None) -> bool:
        """Whether a parameter of this name went out already (its name repeats)."""
        st = self.started
        return st is not None and pname in st.keys

    def _flush(self, texts: list[str]) -> None:
        """Plain text of the body, now known to stand inside the value: out as the value
        holds it (as written under ``string="true"``, else with its entities decoded)."""
        text = "".join(texts)
        if text:
            self._send(escape(text if self.pstring == "true" else decode_entities(text)))

    def _open_body(self, cdata: bool) -> None:
        """The first run of a body (but white space) decides how its value goes out."""
        pname = self.pname or ""
        kind = param_schema_type(self.ctx.schemas, self.name, pname)
        string = _is_string_type(kind)
        if self._sent_key(pname) or self.pstring == "false" or (kind is not None and not string):
            self.body = _HOLD  # (a typed value may be coerced: out when it is complete)
        elif self.pstring == "true":
            self._open_string(_STREAM if cdata else _RAW)
        elif string:
            self._open_string(_STREAM if cdata else _PLAIN)
        elif cdata:
            if pname in RAW_TEXT_FIELDS:
                self._open_string(_STREAM)
            else:
                self.body = _UNDECIDED
        else:
            self.body = _PLAIN_WAIT

    def wants_text(self) -> bool:
        """Whether the current run's text must be handed over (``feed``) as it is read."""
        kind = self.run_kind
        body = self.body
        if kind == _CDATA:
            return body == _STREAM or body == _UNDECIDED
        if kind == _JSON:
            return self.json is not None
        if kind == _ENVELOPE:
            return self.envelope is not None
        return kind == _TEXT and (body >= _PLAIN_WAIT or body == _STREAM)

    def streams_as_is(self) -> bool:
        """Whether the chunks of the current run may go out as they are, through the sieve's
        hot half (``hot``): escaped, a CDATA string's, or the plain text of a
        ``string="true"`` body or a raw_value known to be a string (``_RAW``: DeepSeek V3.2's
        raw strings, whose run stops at every ``<``, so no guard is asked); those inside one
        of its strings, of a streaming JSON body or envelope."""
        if self.stopped:
            return False
        kind = self.run_kind
        if kind == _TEXT:
            return self.body == _RAW
        if kind == _CDATA:
            held = self.held
            return self.body == _STREAM and (
                held is None or (not held.text and bool(held.guard.lead))
            )
        if kind == _JSON:
            return self.json is not None
        return kind == _ENVELOPE and self.envelope is not None

    def hot(self, chunk: str) -> list[Event]:
        """``feed``'s fast path (the sieve's hot half appended ``chunk`` to a run that
        ``streams_as_is``): its delta, returned (none for an empty chunk). The hot half
        hands over only chunks that hold none of a CDATA guard's leads (``hot_leads``). In a
        JSON body, a chunk that is not plain string content (``JsonStream.as_is``: a held
        value is not) is read as ``feed`` reads it (benchmarks/README.md, "Fast paths")."""
        if not chunk:
            return []
        st = self.started
        if self.run_kind == _CDATA or self.run_kind == _TEXT:
            piece = chunk if _NEEDS_ESCAPE(chunk) is None else escape(chunk)
        else:
            reader = self.json if self.run_kind == _JSON else self.envelope
            if reader is None or st is None or self.stopped or not reader.as_is(chunk):
                self._text(chunk)  # (structure, escapes, the envelope's name: read in full)
                return self.take() if self.out else []
            piece = chunk
        if st is None:  # (not expected: a body streams only in a started call)
            return []
        st.sent.append(piece)
        return [ArgumentsDelta(st.index, piece)]

    def hot_leads(self) -> tuple[str, Callable[[str], Any]]:
        """What the sieve's hot half tests a chunk for before it hands it to ``hot``: the
        guard's one ASCII lead (``"\0"`` without a guard) and a search for its others: a
        chunk that holds one, where a tag that could close the parameter may begin, goes
        through ``feed`` and the guard instead (benchmarks/README.md, "hot leads")."""
        held = self.held
        if held is None:
            return "\0", _nowhere
        return held.guard.lead, held.guard.others

    def _text(self, new: str) -> None:
        """More of the current run's text: sent, if it streams."""
        if not new or not self.wants_text():
            return
        if self.run_kind == _ENVELOPE:
            self._envelope(new)
            return
        if self.run_kind == _TEXT:
            self._plain(new)
            return
        if self.run_kind == _JSON:
            assert self.json is not None
            try:
                self._send(self.json.feed(new))
            except RepeatedKey:  # (its last value wins where the first one went out)
                self.broken = "repeated_key"
                self.json = None
            except NotStreamable:  # (the rest goes out when the call ends, checked)
                self.json = None
            return
        if self.body == _UNDECIDED:
            lead = new.lstrip()
            if not lead:  # (white space so far: it decides nothing)
                self.waiting.append(new)
                return
            if lead[0] == "<":  # it may be structured XML: out when complete
                self.body = _HOLD
                self.waiting = []
                return
            self._open_string(_STREAM)
            new = "".join(self.waiting) + new
            self.waiting = []
        if self.held is not None:
            new = self.held.passes(new)
        self._send(escape(new))

    def _json_holds(self, key: str) -> bool:
        """A JSON body's top-level ``key`` whose value the tool's schema may coerce (SPEC
        §9.2): its value goes out when it ends (``_json_value``), as the call holds it."""
        props = (self.ctx.schemas.get(self.name) or {}).get("properties")
        return isinstance(props, dict) and _may_coerce(props.get(key))

    def _json_value(self, key: str, text: str) -> str:
        """What goes out for a held value of a JSON body (``text``: its compact JSON): the
        value coerced as the call holds it; nothing more of the call if the schema policy
        refuses it (as for a parameter, ``_param``)."""
        try:
            value = load_json(text)
        except (ValueError, RecursionError):  # (not expected: the stream's own compact JSON)
            raise NotStreamable(f"the value of {key!r}") from None
        policy = self.ctx.policy
        value = coerced(policy, self.name, key, value)
        if policy is not None and policy.refuses(self.name, key, value):
            self.stopped = True
            return ""
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def _envelope(self, new: str) -> None:
        """More of a JSON envelope: the call starts once its name has closed, and its
        arguments go out as they come (``EnvelopeStream``)."""
        stream = self.envelope
        assert stream is not None
        delta = stream.feed(new)
        if delta and self.started is not None:
            self._send(delta)
        if stream.repeated:  # (its last value wins where the first one went out)
            self.broken = "repeated_key"
        if stream.dead:
            self.envelope = None  # (the rest goes out when the call is built, checked)

    def _named(self, name: str) -> None:
        """The envelope's name closed (``EnvelopeStream.on_name``): the call starts, before
        its arguments are read (their schema is the named tool's)."""
        assert self.envelope is not None
        self.name = name
        self.ident = self.envelope.ident or self.ident  # (an "id" before the name: OpenAI's)
        self._start(via_envelope=True)

    def _plain(self, new: str) -> None:
        """Plain body text: the body exactly (``string="true"``), else trimmed and its
        entities decoded — once it is known to be a string, not a number, literal or XML.
        After a CDATA, plain text waits: it stands inside the value if another CDATA
        follows, and else the value's end goes out with the parameter."""
        if self.body == _STREAM:
            self.between.append(new)
            return
        if self.body == _RAW:
            piece = escape(new)
            self.plain_sent = True
        else:
            if new.isspace() and (self.plain_sent or self.waiting):
                self.waiting.append(new)  # (decides nothing: trailing, or inner, white space)
                return
            text = "".join(self.waiting) + new if self.waiting else new
            if not self.plain_sent:
                text = text.lstrip()  # (leading white space is trimmed)
            if self.body == _PLAIN_WAIT:
                verdict = _plain_string(text)
                if verdict is None and len(text) <= _DECIDE_WITHIN:
                    self.waiting = [text] if text else []
                    return
                if not verdict:
                    self.body = _HOLD
                    self.waiting = []
                    return
                self._open_string(_PLAIN)
            cut = _settled(text)
            self.waiting = [text[cut:]] if cut < len(text) else []
            if not cut:
                return
            piece = escape(decode_entities(text[:cut]))
            self.plain_sent = True
        self._send(piece)

    def _call(self, built: Built) -> None:
        """The call built: its last deltas and ``CallFinished`` (``made`` gets its
        ``ToolCall``; None when the policy rejected it, which aborts it)."""
        name, args, ident, coercions, reason = built.call
        if reason is not None:  # the policy rejected it: aborted (``made`` keeps None)
            self._abort("rejected")
            self.made.append(None)
            return
        st = self.started
        if st is None:
            self.name = name
            if ident:
                self.ident = ident
            self._start()
            st = self.started
        elif st.via_envelope and ident and ident != st.ident:
            # The envelope named its id after the call had started (Mistral Nemo writes it
            # after the arguments): the call keeps the id it started with, not sent twice.
            ident = st.ident
        if st is None:  # (not expected: the policy would have rejected the name)
            self.made.append(None)
            self._next_call()
            return
        call = ToolCall(name, args, ident or st.ident, built.dialect, built.repairs, coercions)
        arguments = call.arguments
        sent = "".join(st.sent)
        if self.broken or name != st.name or call.id != st.ident or not arguments.startswith(sent):
            # What went out is not the start of these arguments: send the call again.
            self._aborted(st.index, self._resent_why(st, name, call.id, built.closing))
            self.started = None
            self.name = name
            self.ident = call.id
            self._start()
            st = self.started
            assert st is not None  # (its name was allowed a moment ago)
            sent = ""
        if len(arguments) > len(sent):
            self.out.append(ArgumentsDelta(st.index, arguments[len(sent) :]))
        self.out.append(CallFinished(st.index, call))
        self.made.append(call)
        self._next_call()

    def _abort(self, why: AbortReason) -> None:
        """The block failed (``"cut_off"`` when the input ended inside the call, else
        ``"failed"``) or the policy rejected the call (``"rejected"``): a started call is
        aborted."""
        if self.started is not None:
            self._aborted(self.started.index, why)
        self._next_call()

    def _aborted(self, index: int, why: AbortReason) -> None:
        self.out.append(CallAborted(index, why))
        if self.ctx.metrics is not None:
            self.ctx.metrics.count_label("calls_aborted", why)

    def _resent_why(self, st: _Started, name: str, ident: str, closing: bool) -> AbortReason:
        """Why a call built is sent again (``_call``): what broke the stream, a later name or
        id, a JSON body whose keys repeat (the last value wins, at the first one's place:
        the one difference between a JSON body that streamed to its end and ``arguments``),
        the loose-CDATA repair (at the end of the input: what streamed ran on to the end),
        or else ``"rewritten"`` (what streamed and the arguments differ otherwise)."""
        if self.broken:
            return self.broken
        if name != st.name or ident != st.ident:
            return "renamed"
        return "loose_cdata" if closing else "rewritten"

    # ------------------------------------------------------------------ sending
    def _start(self, via_envelope: bool = False) -> None:
        if self.started is not None or not self.name:
            return
        ctx = self.ctx
        if ctx.policy is not None and not ctx.policy.allows_name(self.name):
            return  # (no CallStarted for a name the allowlist refuses: it is rejected)
        st = self.started = _Started(
            next(ctx.indexes),
            self.ident or make_call_id(ctx.id_factory),
            self.name,
            via_envelope,
        )
        self.out.append(CallStarted(st.index, st.ident, st.name))

    def _open_string(self, body: int) -> None:
        self.body = body
        st = self.started
        assert st is not None  # (a body is read in a started call only)
        self._send(st.open_string(self.pname or ""))

    def _send(self, delta: str) -> None:
        st = self.started
        if delta and not self.stopped and st is not None:
            st.sent.append(delta)
            self.out.append(ArgumentsDelta(st.index, delta))


def _plain_string(text: str) -> bool | None:
    """Whether a plain body that begins with ``text`` (trimmed on the left) is a string
    (SPEC §5: not a JSON literal and not elements-only XML); None: it cannot yet tell."""
    if not text:
        return None
    c = text[0]
    if c in "<[{&":  # XML, a JSON array or object, an entity that may decode to anything
        return False
    head = text.rstrip()
    if c in "tfn":
        return not any(lit.startswith(head) for lit in _LITERALS) or None
    if c == "-" or c.isdigit():
        return _NUMBER_PREFIX(head) is None or None
    return True


def _settled(text: str) -> int:
    """How much of plain ``text`` no later text can change: all but its trailing white space
    (trimmed if the body ends there), or but an entity it ends in that is not closed yet.
    (No regex anchored at the end: searched, one backtracks over every run of white space.)"""
    end = len(text.rstrip())
    if end < len(text):
        return end
    amp = text.rfind("&", max(0, end - 10))
    return amp if amp >= 0 and _ENTITY_HEAD(text, amp + 1) else end


def _may_coerce(schema: Any) -> bool:
    """A property's schema under which coercion may change a value (``_policy.coerce``): a
    type that is not a string's, or ``properties`` or ``items`` to follow."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind is not None and not _is_string_type(kind):
        return True
    return "properties" in schema or "items" in schema


def _may_be_array(kind: Any) -> bool:
    """A schema ``type`` (a name or a list of names) that admits an array."""
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False) + ":"
