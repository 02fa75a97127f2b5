"""Strategy: the layout of a tool block for each *shape* of dialect, read from the dialect's
spelling file (``grammar/spelling/<dialect>.lark``) and its parser terminals — never from
per-dialect Python — as grammar IR with holes for the values.

What it does: ``shape_of(dialect, dirs)`` picks the shape the spelling file has the pieces
for (a new family with such a file is exported with no code):
  - ``Markup`` (``CALLS_OPEN``/``CALLS_CLOSE``, ``INVOKE_OPEN``/``INVOKE_CLOSE``,
    ``PARAM_OPEN``/``PARAM_CLOSE``, ``NAME_ATTR``, ``ATTR``, ``TAG_END``, ``CDATA_OPEN``/
    ``CDATA_CLOSE``, ``STRING_BODY``): a wrapper line, one invoke per call, one line per
    parameter — ``string="true"`` and the raw value, or ``string="false"`` and JSON — or one
    JSON object as the invoke's body, exactly as ``callsieve.prompt.format_calls`` lays it
    out (``_prompt_write``); a plain body cannot hold the characters at which the body's run
    (the parser's ``TEXT_RUN``) stops, plain JSON not the character entities start with;
  - ``Native`` (``NATIVE_CALLS_BEGIN`` … ``NATIVE_CALLS_END``, ``NATIVE_NAME_LINE``,
    ``NATIVE_FENCE_END``, ``CALL_SEP``): the calls-begin marker, per call the call-begin
    marker, the head, the separator, the name line and fence, JSON that cannot hold the
    closing fence, the fence and the call-end marker; as ``callsieve.deepseek`` writes it.
A shape gives ``call(tool)``, ``arguments(tool)`` (what stands between a call's header and
its tail), ``free_call()`` (any name the dialect spells, any JSON object), and what stands
around calls: ``opener`` + ``lead``, calls parted by ``separator``, ``trail`` + ``closer``. Holes: ``JsonSlot`` (a JSON value under a schema, with the ``Safety`` its
context needs), ``RawSlot`` (a raw string body). ``lower`` fills them for a ``Target``.
What it guarantees: names are checked against the parser's own name terminal (a tool name
the dialect cannot spell is a ``ConfigurationError``); every layout is the writer's.
What it costs: one spelling read per dialect (cached by ``_spelling``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass
from typing import Any

from .._base.errors import CallsieveError, ConfigurationError
from .._facade.results import parse
from .._grammar.compiled import load_grammar
from .._grammar.names import QUOTED_GROUP, TEXT_RUN, VALUE_GROUP
from .._grammar.names import SPELLINGS as S
from .._grammar.prefix import first_chars
from .._grammar.spelling import SLOT, Spelling, spelling
from .._prompt.template import template_calls
from .._prompt.write import _FALSE, _TRUE, _attr, constrained_string, long_string
from ._bodies import Cdata, Target
from ._ir import Alt, Chars, Hole, Lit, Node, Rep, Seq, alt, opt, seq, star
from ._rawtext import RawText, raw_text
from ._schema import NO_SAFETY, Safety
from ._values import is_string_typed, string_schemas

__all__ = ["JsonSlot", "Markup", "Native", "RawSlot", "Template", "Tool", "lower", "shape_of"]

#: The characters a free name (``free_names=True``) may hold where the dialect spells them:
#: OpenAI's function-name alphabet, and ``.`` and ``:`` for namespaced names.
NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:"
NAME_MAX = 64
#: What XML character entities start with (a plain body's are decoded, SPEC §5).
_ENTITY = "&"
_WHITE = " \t\r\n"
_LINE = "\n"  # what the writers put between a block's lines and between native calls
MARKUP_NAMES = (
    S.CALLS_OPEN,
    S.CALLS_CLOSE,
    S.INVOKE_OPEN,
    S.INVOKE_CLOSE,
    S.PARAM_OPEN,
    S.PARAM_CLOSE,
    S.NAME_ATTR,
    S.ATTR,
    S.TAG_END,
    S.CDATA_OPEN,
    S.CDATA_CLOSE,
)
NATIVE_NAMES = (
    S.NATIVE_CALLS_BEGIN,
    S.NATIVE_CALLS_END,
    S.NATIVE_CALL_BEGIN,
    S.NATIVE_CALL_END,
    S.NATIVE_SEP,
    S.NATIVE_HEAD,
    S.NATIVE_NAME_LINE,
    S.NATIVE_FENCE_END,
    S.CALL_SEP,
)
#: The names of a call template's spelling (``callsieve.prompt``'s, ``_prompt.template``):
#: ``ARGS`` says how the arguments are written; the others may be absent (empty).
ARGS, ARGS_KEY, CALL_HEAD, CALL_TAIL = "ARGS", "ARGS_KEY", "CALL_HEAD", "CALL_TAIL"
ARG_OPEN, ARG_CLOSE = "ARG_OPEN", "ARG_CLOSE"
ARG_OPEN_LINES, ARG_CLOSE_LINES = "ARG_OPEN_LINES", "ARG_CLOSE_LINES"
BLOCK_OPEN, BLOCK_CLOSE, BLOCK_SEP, CALL_SEP = "BLOCK_OPEN", "BLOCK_CLOSE", "BLOCK_SEP", "CALL_SEP"
#: The ``ARGS`` kinds the template shape exports (``"python"``: Python literals, not).
TEMPLATE_ARGS = ("envelope", "json", "raw")


@dataclass(frozen=True, eq=False)
class Tool:
    name: str
    schema: dict[str, Any]
    where: str


@dataclass(frozen=True, eq=False)
class JsonSlot(Hole):
    schema: Any
    root: Any
    safety: Safety
    where: str
    #: our JSON rules under Lark too (``Target.json``): the sequence ``safety`` keeps out is
    #: spelled with ``\u`` escapes, which llguidance's ``%json`` cannot spell
    escaped: bool = False
    #: the writer writes no value here that needs a product past its bound (a parameter
    #: with a long string: ``_prompt.write.long_string``), so past it GBNF may narrow
    lenient: bool = False


@dataclass(frozen=True, eq=False)
class RawSlot(Hole):
    schema: dict[str, Any]
    plain: Chars | None
    cdata: Cdata | None
    where: str
    suffix: str = ""
    text: RawText | None = None
    #: the writer writes this string in the JSON object body, never in CDATA
    #: (``_prompt.write.long_string``): its CDATA form needs no product with the section
    narrow: bool = False


@dataclass(frozen=True, eq=False)
class NameSlot(Hole):
    """A name the dialect spells, free (``free_names``): ``chars`` 1 to ``NAME_MAX`` times."""

    chars: Chars


def shape_of(dialect: str, dirs: tuple[str, ...] = ()) -> Markup | Native | Template:
    """The shape ``dialect``'s spelling file fits (``ConfigurationError`` if none)."""
    return _shape(dialect, dirs)


@functools.lru_cache(maxsize=64)
def _shape(dialect: str, dirs: tuple[str, ...]) -> Markup | Native | Template:
    sp = spelling(dialect, dirs)
    if all(n in sp for n in MARKUP_NAMES):
        return Markup(sp)
    if all(n in sp for n in NATIVE_NAMES):
        return Native(sp)
    if sp.get(ARGS) in TEMPLATE_ARGS:
        return Template(sp, dirs)
    raise ConfigurationError(
        f"dialect {dialect!r}: its spelling file fits no exported shape (markup needs "
        f"{', '.join(MARKUP_NAMES)}; native needs {', '.join(NATIVE_NAMES)}; template needs "
        f"ARGS one of {', '.join(TEMPLATE_ARGS)}, CALL_HEAD, CALL_TAIL, ARG_OPEN, ARG_CLOSE)",
        expected=("a markup, native or template spelling file",),
    )


class Markup:
    """Wrapper, invokes and parameters (the DSML and XML families)."""

    def __init__(self, sp: Spelling) -> None:
        self.sp = sp
        self.dialect = sp.dialect
        self.opener, self.closer = sp[S.CALLS_OPEN], sp[S.CALLS_CLOSE]
        run = sp.grammar.terminals.get(TEXT_RUN)
        stops = first_chars(run.stop_source) if run is not None and run.stop_source else None
        if not stops:
            raise ConfigurationError(
                f"dialect {self.dialect!r}: no plain body run (TEXT_RUN) "
                "with a stop of fixed characters"
            )
        self.stops = Chars.of("".join(sorted(stops)))
        self.cdata = Cdata(sp[S.CDATA_OPEN], sp[S.CDATA_CLOSE])
        self.cdata_strings = sp.get(S.STRING_BODY) == "cdata"
        self.names = _name_chars(self._spells)

    def _spells(self, name: str) -> bool:
        return _attr(self.sp, name) is not None

    def check_name(self, tool: Tool) -> None:
        if not self._spells(tool.name):
            raise ConfigurationError(
                f"{tool.where}: tool name {tool.name!r} cannot be written in {self.dialect}",
                expected=('a name name="…" holds',),
            )

    #: What stands between two calls, and after the opener and before the closer.
    separator = lead = trail = _LINE

    def call(self, tool: Tool) -> Node:
        sp = self.sp
        head = sp[S.INVOKE_OPEN] + sp.fill(S.NAME_ATTR, tool.name) + sp[S.TAG_END] + _LINE
        return seq(Lit(head), self.arguments(tool), Lit(sp[S.INVOKE_CLOSE]))

    def arguments(self, tool: Tool) -> Node:
        """The lines between an invoke's head and its close, each ending in a line break:
        one per declared parameter (required ones always, in the schema's order), or one
        JSON object (where the writer may write one)."""
        schema = tool.schema
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = set(schema.get("required") or [])
        extra = schema.get("additionalProperties", "properties" not in schema)
        forms: list[Node] = []
        if all(self._spells(k) for k in props) and required <= set(props):
            lines = [
                self._param(k, v, schema, f"{tool.where}.properties.{k}") for k, v in props.items()
            ]
            if not props and extra in (True, {}):
                forms.append(star(self._free_param()))
            else:
                forms.append(
                    seq(*(ln if k in required else opt(ln) for k, ln in zip(props, lines)))
                )
        # The JSON object body: the writer writes it for a call where a name cannot be
        # spelled, other keys come, a JSON value holds strings with both a tag lead and
        # ``]]>`` (no plain body and no one CDATA section holds it), or, under the tools,
        # a string-typed parameter is null, a constrained string holds ``]]>`` in CDATA, or
        # a string's length is past the product's bound (``_prompt.write.typed_body``).
        if (
            not forms
            or extra is not False
            or any(
                _nests_strings(p) or _typed_body(p) or long_string(p, len(self.cdata.close))
                for p in props.values()
            )
        ):
            forms.append(seq(JsonSlot(schema, schema, NO_SAFETY, tool.where), Lit(_LINE)))
        return alt(*forms)

    def _param(self, key: str, prop: Any, root: Any, where: str) -> Node:
        sp = self.sp
        head = sp[S.PARAM_OPEN] + sp.fill(S.NAME_ATTR, key)
        close = Lit(sp[S.PARAM_CLOSE] + _LINE)
        strings = [prop] if is_string_typed(prop) else string_schemas(prop)
        forms = [
            seq(
                Lit(head + sp.fill(S.ATTR, _TRUE) + sp[S.TAG_END]),
                self._raw(s, where, long_string(prop, len(self.cdata.close))),
                close,
            )
            for s in strings
        ]
        if not is_string_typed(prop):
            forms.append(
                seq(
                    Lit(head + sp.fill(S.ATTR, _FALSE) + sp[S.TAG_END]),
                    self._json(prop, root, where),
                    close,
                )
            )
        return alt(*forms)

    def _raw(self, schema: Any, where: str, narrow: bool = False) -> RawSlot:
        return RawSlot(
            schema if isinstance(schema, dict) else {},
            None if self.cdata_strings else self.stops,
            self.cdata,
            where,
            narrow=narrow,
        )

    def _json(self, schema: Any, root: Any, where: str) -> Node:
        plain = JsonSlot(schema, root, Safety(self.stops | Chars.of(_ENTITY)), where)
        # (a value of a parameter with a long string is never written in this section: the
        # writer puts it in the JSON object body, ``_prompt.write.markup_calls``)
        lenient = long_string(schema, len(self.cdata.close))
        cdata = JsonSlot(schema, root, Safety(seq=self.cdata.close), where, lenient=lenient)
        return alt(plain, seq(Lit(self.cdata.open), cdata, Lit(self.cdata.close)))

    def _free_param(self) -> Node:
        """A parameter line with any name the dialect spells and any value."""
        sp = self.sp
        before, _, after = sp[S.NAME_ATTR].partition("{}")
        head = seq(Lit(sp[S.PARAM_OPEN] + before), NameSlot(self.names), Lit(after))
        close = Lit(sp[S.PARAM_CLOSE] + _LINE)
        return alt(
            seq(head, Lit(sp.fill(S.ATTR, _TRUE) + sp[S.TAG_END]), self._raw({}, "*"), close),
            seq(head, Lit(sp.fill(S.ATTR, _FALSE) + sp[S.TAG_END]), self._json({}, {}, "*"), close),
        )

    def free_call(self) -> Node:
        sp = self.sp
        before, _, after = sp[S.NAME_ATTR].partition("{}")
        head = seq(
            Lit(sp[S.INVOKE_OPEN] + before),
            NameSlot(self.names),
            Lit(after + sp[S.TAG_END] + _LINE),
        )
        body = alt(
            star(self._free_param()),
            seq(JsonSlot({"type": "object"}, {}, NO_SAFETY, "*"), Lit(_LINE)),
        )
        return seq(head, body, Lit(sp[S.INVOKE_CLOSE]))


class Native:
    """Special-token calls with fenced JSON arguments (DeepSeek V3/R1)."""

    def __init__(self, sp: Spelling) -> None:
        self.sp = sp
        self.dialect = sp.dialect
        self.opener, self.closer = sp[S.NATIVE_CALLS_BEGIN], sp[S.NATIVE_CALLS_END]
        self.head = sp[S.NATIVE_CALL_BEGIN] + sp[S.NATIVE_HEAD] + sp[S.NATIVE_SEP]
        self.tail = sp[S.NATIVE_FENCE_END] + sp[S.NATIVE_CALL_END]
        self.safety = Safety(seq=sp[S.NATIVE_FENCE_END].strip())
        self.names = _name_chars(self._spells)

    def _spells(self, name: str) -> bool:
        line = self.sp.fill(S.NATIVE_NAME_LINE, name)
        m = self.sp.terminal(S.NATIVE_NAME_LINE).fullmatch(line)
        return (
            m is not None
            and (
                m.group(QUOTED_GROUP) if m.group(QUOTED_GROUP) is not None else m.group(VALUE_GROUP)
            )
            == name
        )

    def check_name(self, tool: Tool) -> None:
        if not self._spells(tool.name):
            raise ConfigurationError(
                f"{tool.where}: tool name {tool.name!r} cannot be written in {self.dialect}",
                expected=(("a name without white space, quotes, brackets or backticks"),),
            )

    lead = trail = ""

    @property
    def separator(self) -> str:
        return self.sp[S.CALL_SEP]

    def call(self, tool: Tool) -> Node:
        head = self.head + self.sp.fill(S.NATIVE_NAME_LINE, tool.name)
        return seq(Lit(head), self.arguments(tool), Lit(self.tail))

    def arguments(self, tool: Tool) -> Node:
        """The JSON between the fences. A tool with a string whose length's product with the
        fence is past the bound (``long_string``) takes the fence's character only as a
        ``\\u`` escape, as the writer spells it there (``prompt._native_calls``): no
        product is needed."""
        schema = tool.schema if tool.schema else {"type": "object"}
        safety = self.safety
        if long_string(schema, len(safety.seq)):
            safety = Safety(Chars.of(safety.seq[:1]))
        return JsonSlot(schema, schema, safety, tool.where, escaped=True)

    def free_call(self) -> Node:
        before, _, after = self.sp[S.NATIVE_NAME_LINE].partition("{}")
        return seq(
            Lit(self.head + before),
            NameSlot(self.names),
            Lit(after),
            JsonSlot({"type": "object"}, {}, self.safety, "*", escaped=True),
            Lit(self.tail),
        )


def _nests_strings(prop: Any) -> bool:
    """May a JSON value under ``prop`` hold a string inside it (an object, an array, any
    value)? A string value itself goes in a ``string="true"`` body."""
    if not isinstance(prop, dict) or any(k in prop for k in ("$ref", "allOf", "not")):
        return prop is not False
    branches = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(branches, list):
        return any(_nests_strings(b) for b in branches)
    kind = prop.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return kind is None or bool({"object", "array"} & set(kinds))


def _typed_body(prop: Any) -> bool:
    """May the writer write a value of ``prop`` in the JSON object body
    (``_prompt.write.typed_body``): a string-typed parameter that admits null, or one whose
    text a keyword constrains (in ``prop`` or a branch)?"""
    if constrained_string(prop):
        return True
    if not is_string_typed(prop):
        return False
    kind = prop["type"]
    return isinstance(kind, list) and "null" in kind


def _name_chars(spells: Any) -> Chars:
    """The characters of ``NAME_ALPHABET`` a name may hold in this dialect."""
    return Chars.of("".join(c for c in NAME_ALPHABET if spells(f"a{c}a") and spells(c)))


def lower(node: Node, target: Target) -> Node:
    """``node`` with its holes filled for ``target``."""
    if isinstance(node, JsonSlot):
        return target.json(
            node.schema, node.root, node.safety, node.where, node.escaped, node.lenient
        )
    if isinstance(node, RawSlot):
        return target.raw_string(
            node.schema, node.plain, node.cdata, node.where, node.suffix, node.text, node.narrow
        )
    if isinstance(node, NameSlot):
        return target.g.define("free_name", Rep(node.chars, 1, NAME_MAX), terminal=True)
    if isinstance(node, Seq):
        return seq(*(lower(i, target) for i in node.items))
    if isinstance(node, Alt):
        return alt(*(lower(i, target) for i in node.items))
    if isinstance(node, Rep):
        return Rep(lower(node.item, target), node.lo, node.hi)
    return node


class Template:
    """Calls written from a call template (``CALL_HEAD``, the arguments as ``ARGS`` says,
    ``CALL_TAIL``): the JSON envelope (hermes, llama3_json, json), JSON arguments after a
    head (mistral, gpt_oss, the legacy element formats) and raw parameters (qwen3_coder,
    glm45, minimax_m2, seed_oss). Calls stand in one block (``BLOCK_OPEN`` … ``BLOCK_CLOSE``,
    parted by ``CALL_SEP``) or each in a block of its own (parted by ``BLOCK_SEP``), as
    ``callsieve.prompt`` writes them (``_prompt.template``)."""

    def __init__(self, sp: Spelling, dirs: tuple[str, ...]) -> None:
        self.sp, self.dirs = sp, dirs
        self.dialect = sp.dialect
        self.kind = sp[ARGS]
        self.head = sp.get(CALL_HEAD)
        self.tail = sp.get(CALL_TAIL)
        if self.head.count(SLOT) > 1 or (self.kind != "envelope" and SLOT not in self.head):
            raise ConfigurationError(
                f"dialect {self.dialect!r}: CALL_HEAD {self.head!r} must hold the name's slot "
                "once and no other (a call's index cannot be constrained)",
                expected=("a CALL_HEAD with one slot",),
            )
        if self.kind == "raw" and sp.get(ARG_OPEN).count(SLOT) != 1:
            raise ConfigurationError(
                f"dialect {self.dialect!r}: ARG_OPEN must hold the key's slot once",
                expected=("an ARG_OPEN with one slot",),
            )
        if "ARG_SEP" in sp:
            raise ConfigurationError(
                f"dialect {self.dialect!r}: ARG_SEP (a separator between raw arguments) is not "
                "exported: optional parameters would need it only between those written",
                expected=("a spelling without ARG_SEP",),
            )
        if SLOT in sp.get(ARG_CLOSE):
            raise ConfigurationError(
                f"dialect {self.dialect!r}: ARG_CLOSE holds the key's slot (an element named by "
                "its key), which no exported shape constrains",
                expected=("an ARG_CLOSE without a slot",),
            )
        if BLOCK_OPEN in sp:
            self.opener, self.closer = sp[BLOCK_OPEN], sp.get(BLOCK_CLOSE)
            self.separator = sp.get(CALL_SEP)
        else:  # (each call a block of its own)
            self.opener = self.closer = ""
            self.separator = sp.get(BLOCK_SEP)
        # The characters at which a raw value's run may end (a tag may begin there): the
        # parser's tag leads; a raw value holds none of them, nor does a JSON string in it.
        g = load_grammar((self.dialect,), dirs)
        if g.openers.start_lead_chars != g.openers.lead_chars:
            raise ConfigurationError(
                f"dialect {self.dialect!r}: its anchored openers (/^…/, the reply's start) are "
                "not exported: the free text before a block could begin one",
                expected=("a dialect without anchored terminals",),
            )
        self.stops = Chars.of(g.openers.lead_chars)
        self.names = _name_chars(self._spells)
        # A raw string body holds no white space the family's tags trim off it (seed_oss's
        # line breaks around a value): each is tried at both ends of a value, as written.
        self.body_stops = self.stops
        self.raw: RawText | None = None
        if self.kind == "raw":
            trimmed = "".join(c for c in _WHITE if not self._raw_reads_back(c + "x" + c))
            self.body_stops = self.stops | Chars.of(trimmed)
            # Any value the parser reads back, tag leads included (``_rawtext``); the white
            # space the opening tag takes off a value's start kept out there.
            lead_trim = "".join(c for c in _WHITE if not self._raw_reads_back(c + "x"))
            self.raw = raw_text(g, sp.get(ARG_CLOSE), lead_trim)
            self.raw = self._with_lines(g, self.raw)

    lead = trail = ""

    def _spells(self, name: str) -> bool:
        return self._reads_back(name, {})

    def _reads_back(self, name: str, args: dict[str, Any]) -> bool:
        """Does a call to ``name`` with ``args`` read back as written (the writer parses
        what it writes and refuses what does not)?"""
        try:
            template_calls(self.sp, [(name, args)], self.dirs)
        except CallsieveError:
            return False
        return True

    def check_name(self, tool: Tool) -> None:
        if not self._spells(tool.name):
            raise ConfigurationError(
                f"{tool.where}: tool name {tool.name!r} cannot be written in {self.dialect}",
                expected=("a name the family's call template carries",),
            )

    def _with_lines(self, g: Any, raw: RawText | None) -> RawText | None:
        """``raw``, or the value on lines of its own (``ARG_OPEN_LINES``, seed_oss), as the
        writer writes a value with a line break at either end."""
        sp = self.sp
        open_, lines = sp.get(ARG_OPEN), sp.get(ARG_OPEN_LINES)
        if raw is None or not lines.startswith(open_) or lines == open_:
            return raw
        trim = "".join(c for c in _WHITE if not self._raw_reads_back(c + "x", lines=True))
        other = raw_text(g, sp.get(ARG_CLOSE_LINES), trim)
        rest, rest_lines = sp.get(ARG_CLOSE), sp.get(ARG_CLOSE_LINES)
        if other is None or rest[len(raw.close) :] != rest_lines[len(other.close) :]:
            return raw
        return dataclasses.replace(raw, other=(lines[len(open_) :], other))

    def _raw_reads_back(self, value: str, lines: bool = False) -> bool:
        """Does a string parameter written as ``value`` (raw; ``lines``: in the tags that put
        it on lines of its own) read back as it is?"""
        sp = self.sp
        open_, close = (ARG_OPEN_LINES, ARG_CLOSE_LINES) if lines else (ARG_OPEN, ARG_CLOSE)
        call = sp.fill(CALL_HEAD, "f") + sp.fill(open_, "s") + value + sp.get(close)
        text = sp.get(BLOCK_OPEN) + call + self.tail + sp.get(BLOCK_CLOSE)
        tools = [{"name": "f", "parameters": {"properties": {"s": {"type": "string"}}}}]
        got = parse(text, dialects=(self.dialect,), tools=tools, grammar_dirs=self.dirs).calls
        return len(got) == 1 and got[0].input == {"s": value}

    def _head(self, name: Node) -> Node:
        before, _, after = self.head.partition(SLOT)
        return seq(Lit(before), name, Lit(after)) if SLOT in self.head else Lit(self.head)

    def call(self, tool: Tool) -> Node:
        return self._call(Lit(_name_text(self, tool.name)), self.arguments(tool))

    def _call(self, name: Node, arguments: Node) -> Node:
        if self.kind == "envelope":
            key = json.dumps(self.sp.get(ARGS_KEY) or "arguments")
            body = seq(Lit('{"name": "'), name, Lit(f'", {key}: '), arguments, Lit("}"))
            return seq(self._head(name), body, Lit(self.tail))
        return seq(self._head(name), arguments, Lit(self.tail))

    def arguments(self, tool: Tool) -> Node:
        """What stands between a call's head and its tail: one JSON object (the envelope's
        arguments, or ``ARGS "json"``), or one raw parameter per declared property (required
        ones always, in the schema's order; other keys are not offered)."""
        schema = tool.schema if tool.schema else {"type": "object"}
        if self.kind != "raw":
            return JsonSlot(schema, schema, NO_SAFETY, tool.where)
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = set(schema.get("required") or [])
        if not required <= set(props):
            raise ConfigurationError(
                f"{tool.where}: required keys {sorted(required - set(props))} are not declared "
                f"properties; {self.dialect} writes declared parameters only",
                expected=("required keys among the properties",),
            )
        extra = schema.get("additionalProperties", "properties" not in schema)
        if not props and extra in (True, {}):
            return star(self._free_param())
        lines = []
        for k, v in props.items():
            where = f"{tool.where}.properties.{k}"
            if not self._reads_back("f", {k: "x"}):
                raise ConfigurationError(
                    f"{where}: key {k!r} cannot be written in {self.dialect}",
                    expected=("a key the family's parameter tag carries",),
                )
            lines.append(seq(Lit(self.sp.fill(ARG_OPEN, k)), self._value(v, schema, where)))
        return seq(*(ln if k in required else opt(ln) for k, ln in zip(props, lines)))

    def _value(self, prop: Any, root: Any, where: str) -> Node:
        """A raw value: a string as it is (any the parser reads back; where the family's
        value run is beyond ``_rawtext``, none holding a tag lead), anything else JSON whose
        strings hold no tag lead."""
        strings = [prop] if is_string_typed(prop) else string_schemas(prop)
        pre, rest = self._close
        forms: list[Node] = [self._string(s if isinstance(s, dict) else {}, where) for s in strings]
        if not is_string_typed(prop):
            # (our JSON rules under Lark too: the writer spells a tag lead ``\u003c``, which
            # llguidance's ``%json`` cannot spell)
            slot = JsonSlot(prop, root, Safety(self.stops), where, escaped=True)
            forms.append(seq(slot, Lit(pre), rest))
        return alt(*forms)

    def _string(self, schema: dict[str, Any], where: str) -> Node:
        """A raw string value and its closing tag."""
        if self.raw is None:
            pre, rest = self._close
            return seq(RawSlot(schema, self.body_stops, None, where, pre), rest)
        close = self.sp.get(ARG_CLOSE)
        after = Lit(close[len(self.raw.close) :])
        return seq(RawSlot(schema, None, None, where, self.raw.close, self.raw), after)

    @property
    def _close(self) -> tuple[str, Node]:
        """``ARG_CLOSE`` parted before its first tag lead: the text a raw body's terminal
        takes with it, and the rest."""
        close = self.sp.get(ARG_CLOSE)
        cut = next((i for i, c in enumerate(close) if c in self.stops), len(close))
        return close[:cut], Lit(close[cut:])

    def _free_param(self) -> Node:
        before, _, after = self.sp.get(ARG_OPEN).partition(SLOT)
        return seq(Lit(before), NameSlot(self.names), Lit(after), self._value({}, {}, "*"))

    def free_call(self) -> Node:
        args: Node = (
            star(self._free_param())
            if self.kind == "raw"
            else JsonSlot({"type": "object"}, {}, NO_SAFETY, "*")
        )
        return self._call(NameSlot(self.names), args)


def _name_text(shape: Template, name: str) -> str:
    """A name as the template writes it: inside a JSON string for the envelope."""
    return json.dumps(name, ensure_ascii=False)[1:-1] if shape.kind == "envelope" else name
