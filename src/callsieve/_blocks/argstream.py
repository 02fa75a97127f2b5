"""Strategy: argument streaming (``early_emit="arguments"``, SPEC §7) — a call's ``CallStarted``,
its arguments as ``ArgumentsDelta`` fragments as they arrive, ``CallFinished``/``CallAborted``.

What it does: one ``ArgStream`` per capture of a wrapped block. Its capture's parser hands
it the contract nodes below a call as they are reduced (``call_name``, ``call_id``,
``param_name``, ``attr``, ``param``: ``CompiledGrammar.listening_parser``), and the capture
tells it the terminals it reads and the text of its runs. The call starts (``CallStarted``,
with its id: the model's, else the ``id_factory``'s) at the first terminal read after a name
that can belong to its arguments (``CompiledGrammar.arg_terminals``, those below a
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
``broken``. Indexes count the calls of the whole response (``BlockLife``).
What it costs: one escape per chunk of a streaming body (none when it needs no escape), one
decode per parameter besides the call's own, the text sent, kept for the check at the end.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from lark import Tree

from .._base.events import ArgumentsDelta, CallAborted, CallFinished, CallStarted, Event, ToolCall
from .._base.values import RAW_TEXT_FIELDS, _is_string_type, decode_entities, decode_param
from .._config.options import make_call_id
from .._config.policy import coerced
from .._grammar.names import CALL_NAME, CDATA_RUN, PARAM, PARAM_NAME
from .assembler import contract_value, param_schema_type
from .json_stream import JsonStream, NotStreamable

if TYPE_CHECKING:
    from .._grammar.specs import TerminalSpec
    from .lifecycle import BlockLife

__all__ = ["ArgStream", "escape"]


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


class ArgStream:
    """The argument stream of one capture (see the module's docstring). Its events go to
    ``out`` (``BlockLife.out``), which the sieve empties after each scan."""

    __slots__ = (
        "life",
        "schemas",
        "arg_terminals",
        "out",
        "made",
        "index",
        "name",
        "ident",
        "started_name",
        "sent",
        "keys",
        "broken",
        "pname",
        "pstring",
        "body",
        "value_at",
        "waiting",
        "plain_sent",
        "run_kind",
        "json_terminals",
        "json",
        "_id",
    )

    def __init__(self, life: BlockLife) -> None:
        self.life = life
        # (read from ``life`` once: they are read for every node and chunk)
        self.schemas = life.schemas
        self.arg_terminals = life.g.arg_terminals
        self.json_terminals = life.g.json_terminals
        self.out = life.out
        #: the block's calls, as CallFinished gave them (None: one the policy rejected)
        self.made: list[ToolCall | None] = []
        self._id = ""  # the started call's id
        self._next_call()

    def _next_call(self) -> None:
        self.index = -1  # not started
        self.name = ""
        self.ident: str | None = None  # the model's id for the call
        self.started_name = ""
        self.sent: list[str] = []
        self.keys: set[str] = set()
        # Why what was sent is no longer known to lead to the arguments ("": it is): an
        # ``ABORT_REASONS`` entry, for the ``CallAborted`` that follows.
        self.broken = ""
        self.json: JsonStream | None = None  # a JSON body streaming (``_blocks.json_stream``)
        self._next_param()

    def _next_param(self) -> None:
        self.pname: str | None = None
        self.pstring: str | None = None
        self.body = _NONE
        self.value_at = -1  # where in ``sent`` this parameter's value began (-1: not yet)
        # Text read but not decided: white space, a tail of plain text (a list: white space
        # may come in many chunks, and is joined once, when text that decides comes).
        self.waiting: list[str] = []
        self.plain_sent = False  # plain (non-CDATA) text of this body went out
        self.run_kind = _NO_RUN  # the current run: none of this body's, CDATA or plain text

    # ------------------------------------------------------------------ from the parser
    def node(self, tree: Any) -> None:
        """A contract node was reduced (the listening parser's callback)."""
        if not isinstance(tree, Tree):
            return
        value = contract_value(tree, self.schemas)
        if value is None:
            return
        kind = value[0]
        if kind == CALL_NAME:
            if value[1]:
                self.name = value[1]
        elif kind == "id":
            self.ident = value[1] or self.ident
            if value[2]:
                self.name = value[2]
        elif kind == PARAM_NAME:
            self.pname = value[1]
        elif kind == "string":
            self.pstring = value[1]
        elif kind == PARAM:
            self._param(value[1], value[2], value[3])

    def _param(self, pname: str, parts: list[tuple[bool, str]], string_attr: str | None) -> None:
        streamed = self.value_at >= 0  # (its value began to go out: '"' and what followed)
        sent = '"' + "".join(self.sent[self.value_at :]) if streamed else ""
        self._next_param()
        if self.index < 0 or self.broken:
            return
        if pname in self.keys:  # a repeated name: an array where the first one went out
            self.broken = "repeated_name"
            return
        value = coerced(
            self.life.policy,
            self.name,
            pname,
            decode_param(  # (as the call has it)
                pname, parts, string_attr, param_schema_type(self.schemas, self.name, pname)
            ),
        )
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if streamed:
            if not text.startswith(sent):  # (a CDATA the loose-CDATA repair cut short)
                self.broken = "loose_cdata" if self.life.closing else "rewritten"
                return
            self._send(text[len(sent) :])
        else:
            self._send(("," if self.keys else "{") + _key(pname) + text)
        self.keys.add(pname)

    # ------------------------------------------------------------------ from the capture
    def token(self, term: str) -> None:
        """The capture read a terminal (a bounded token, or the start of a run)."""
        if self.index < 0 and term in self.arg_terminals:
            self._start()

    def run(self, run: TerminalSpec) -> None:
        """A run starts (its start is a terminal read, too): in a parameter's body, CDATA
        or plain text."""
        self.token(run.name)
        self.run_kind = _NO_RUN
        if self.index < 0 or self.broken:
            return
        if run.name in self.json_terminals:
            if not self.sent:  # (the object is all the arguments: none went out before)
                self.run_kind = _JSON
                self.json = JsonStream()
            return
        if self.pname is None:
            return
        cdata = run.name == CDATA_RUN
        self.run_kind = _CDATA if cdata else _TEXT
        body = self.body
        if cdata and body in (_PLAIN_WAIT, _PLAIN) and not self.plain_sent:
            body = self.body = _NONE if body == _PLAIN_WAIT else _STREAM  # (white space only)
        if body != _NONE:
            if cdata and (body == _PLAIN or body == _RAW):
                self.broken = "text_before_cdata"  # plain text went out; CDATA goes first
            return
        pname = self.pname
        kind = param_schema_type(self.schemas, self.name, pname)
        string = _is_string_type(kind)
        if pname in self.keys or self.pstring == "false" or (kind is not None and not string):
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
        """Whether the current run's text must be handed over (``text``) as it is read."""
        kind = self.run_kind
        body = self.body
        if kind == _CDATA:
            return body == _STREAM or body == _UNDECIDED
        if kind == _JSON:
            return self.json is not None
        return kind == _TEXT and body >= _PLAIN_WAIT

    def streams_as_is(self) -> bool:
        """Whether each chunk of the current run goes out as it is, escaped — a CDATA string,
        or the plain text of a ``string="true"`` body (DeepSeek V3.2's raw strings): the
        sieve's hot half then sends it, ``hot``."""
        body = self.body
        kind = self.run_kind
        return (kind == _CDATA and body == _STREAM) or (kind == _TEXT and body == _RAW)

    def hot(self, chunk: str) -> list[Event]:
        """The sieve's hot half appended ``chunk`` to a string that streams as it is
        (``streams_as_is``): its delta (none for an empty chunk)."""
        if not chunk:
            return []
        piece = chunk if _NEEDS_ESCAPE(chunk) is None else escape(chunk)
        self.sent.append(piece)
        return [ArgumentsDelta(self.index, piece)]

    def text(self, new: str) -> None:
        """More of the current run's text: sent, if it streams."""
        if not new or not self.wants_text():
            return
        body = self.body
        if self.run_kind == _TEXT:
            self._plain(new)
            return
        if self.run_kind == _JSON:
            assert self.json is not None
            try:
                self._send(self.json.feed(new))
            except NotStreamable:  # (the rest goes out when the call ends, checked)
                self.json = None
            return
        if body == _UNDECIDED:
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
        piece = escape(new)
        self._send(piece)

    def _plain(self, new: str) -> None:
        """Plain body text: the body exactly (``string="true"``), else trimmed and its
        entities decoded — once it is known to be a string, not a number, literal or XML."""
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

    def call(
        self,
        name: str,
        args: dict[str, Any],
        ident: str | None,
        dialect: str,
        repairs: tuple[str, ...],
        coercions: tuple[str, ...] = (),
        reason: str | None = None,
    ) -> ToolCall | None:
        """The call built: its ``ToolCall``, after its last deltas and ``CallFinished``."""
        if reason is not None:  # the policy rejected it: aborted (``made`` keeps None)
            self.abort("rejected")
            self.made.append(None)
            return None
        if self.index < 0:
            self.name = name
            if ident:
                self.ident = ident
            self._start()
        call = ToolCall(name, args, ident or self._id, dialect, repairs, coercions)
        arguments = call.arguments
        sent = "".join(self.sent)
        if (
            self.broken
            or name != self.started_name
            or call.id != self._id
            or not arguments.startswith(sent)
        ):
            # What went out is not the start of these arguments: send the call again.
            self.out.append(CallAborted(self.index, self._resent_why(name, call.id)))
            self.index = -1
            self.name = name
            self.ident = call.id
            self._start()
            sent = ""
        if len(arguments) > len(sent):
            self.out.append(ArgumentsDelta(self.index, arguments[len(sent) :]))
        self.out.append(CallFinished(self.index, call))
        self.made.append(call)
        self._next_call()
        return call

    def abort(self, reason: str = "") -> None:
        """The block failed (or the policy rejected the call, ``reason="rejected"``): a
        started call is aborted — ``"cut_off"`` when the input ended inside it (the sieve is
        closing: only the end of the input fails a block then), else ``"failed"``."""
        if self.index >= 0:
            why = reason or ("cut_off" if self.life.closing else "failed")
            self.out.append(CallAborted(self.index, why))
        self._next_call()

    def _resent_why(self, name: str, ident: str) -> str:
        """Why a call built is sent again (``call``): what broke the stream, a later name or
        id, a JSON body whose keys repeat (the last value wins, at the first one's place:
        the one difference between a JSON body that streamed to its end and ``arguments``),
        the loose-CDATA repair (at the end of the input: what streamed ran on to the end),
        or else ``"rewritten"`` (what streamed and the arguments differ otherwise)."""
        if self.broken:
            return self.broken
        if name != self.started_name or ident != self._id:
            return "renamed"
        if self.json is not None:
            return "repeated_key"
        return "loose_cdata" if self.life.closing else "rewritten"

    # ------------------------------------------------------------------ sending
    def _start(self) -> None:
        if self.index >= 0 or not self.name:
            return
        if self.life.policy is not None and not self.life.policy.allows_name(self.name):
            return  # (no CallStarted for a name the allowlist refuses: it is rejected)
        self.index = self.life.next_index()
        self._id = self.ident or make_call_id(self.life.id_factory)
        self.started_name = self.name
        self.out.append(CallStarted(self.index, self._id, self.name))

    def _open_string(self, body: int) -> None:
        self.body = body
        self.value_at = len(self.sent) + 1  # (after the key and the opening quote)
        self._send(("," if self.keys else "{") + _key(self.pname or "") + '"')

    def _send(self, delta: str) -> None:
        if delta:
            self.sent.append(delta)
            self.out.append(ArgumentsDelta(self.index, delta))


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


def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False) + ":"
