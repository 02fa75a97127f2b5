"""Strategy: what stands between a block's fixed tags — a JSON value under a schema, a raw
string body — for each export target, so that the shapes (``_shapes``) say only where
things go.

What it does: a ``Target`` builds two kinds of node into a grammar. ``json(schema, …)``:
for ``"lark"``, llguidance's ``%json`` of the schema made safe for its context
(``_schema.safe_schema``), with ``json.dumps``'s separators (the space optional) and no
other white space; for ``"gbnf"``, our converter's rules (``_jsonir``). Lark takes those
too where the writer escapes what the context keeps out (native's fence: ``\\u0060``);
there only a subschema our rules refuse is ``%json``, for its value alone.
``raw_string(…)``: a string parameter's body as the parser reads it back verbatim —
``plain`` text without the characters at which the body's run would stop, or CDATA: in a
``Cdata`` context one or more sections, none holding the section's end (so any value can
be spelled: a ``]]>`` is split across two sections, as the prompt side writes it), or one
section where the schema constrains the value. The schema's string languages (``_values``)
are intersected with the context: for llguidance with ``&`` in one terminal, for GBNF by
the product of both automata (``_product``; past its bound a ``ConfigurationError``, or,
for a string the writer puts in the JSON object body, the section's last character kept
out); GBNF cannot intersect two languages of the schema itself (a ``ConfigurationError``).
What it guarantees: what the node accepts reads back, in its context, as a value the schema
allows. What it costs: linear in the schema; the JSON text of a ``%json`` is built once.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from .._base.errors import ConfigurationError
from ._ir import (
    ANY,
    Both,
    Chars,
    Grammar,
    Json,
    Lit,
    Node,
    Ref,
    alt,
    plus,
    seq,
    star,
)
from ._jsonir import Into, JsonRules, regular
from ._product import MAX_STATES, avoiding, intersect, too_many_states
from ._rawtext import RawText
from ._regex import restrict
from ._schema import Safety, check, safe_schema_text
from ._strings import avoid, split_units
from ._values import string_constraints

__all__ = ["Cdata", "Target", "with_defs"]

#: JSON text as ``json.dumps`` writes it (the space after separators optional), no other
#: white space: the same language as ``_jsonir``'s separators.
X_GUIDANCE = {"item_separator": ", ?", "key_separator": ": ?", "whitespace_flexible": False}


@dataclass(frozen=True)
class Cdata:
    """A CDATA section's spelling: its opener and its end (the sequence it cannot hold)."""

    open: str
    close: str

    def section(self, value: str) -> str:
        """``value`` in sections, a ``close`` inside split across two (as the writer does)."""
        split = self.close[:-1] + self.close + self.open + self.close[-1:]
        return self.open + value.replace(self.close, split) + self.close


class Target:
    """Builds bodies for one export format: ``"lark"`` or ``"gbnf"``."""

    def __init__(self, name: str, g: Grammar, cap: int = MAX_STATES) -> None:
        self.name = name
        self.g = g
        #: the most states a constrained string's product may have (``_product``)
        self.cap = cap
        self._rules: dict[tuple[int, Safety, bool, bool], JsonRules] = {}
        self._shared: dict[Safety, dict[str, Ref]] = {}
        #: the rules of constrained strings in their contexts (GBNF: ``_product``)
        self._products: dict[object, Ref] = {}

    def json(
        self,
        schema: Any,
        root: Any,
        safety: Safety,
        where: str,
        escaped: bool = False,
        lenient: bool = False,
    ) -> Node:
        """One JSON value under ``schema`` (``root``: the tool's schema, for ``$ref``).
        ``escaped``: the writer spells what ``safety`` keeps out with ``\\u`` escapes, so
        under Lark too our rules stand for ``%json``: a subschema they refuse is ``%json``
        for its value alone (the rest ours, as one whole when all of it fits them).
        ``lenient``: the writer writes nothing here (``JsonSlot.lenient``), so a string
        past the product's bound keeps the sequence's last character out."""
        granular = False
        if self.name == "lark" and not (escaped and _ours_fit(schema, root, safety)):
            if not escaped:
                return _json(schema, root, safety)
            granular = True  # (our rules, and %json for each subschema they refuse)
        key = (id(root), safety, lenient, granular)
        rules = self._rules.get(key)
        if rules is None:
            into = Into(
                self.g,
                lark=self.name == "lark",
                cap=self.cap,
                products=self._products,
                shared=self._shared.setdefault(safety, {}),
            )
            rules = self._rules[key] = JsonRules(
                into,
                root,
                safety,
                where,
                lenient=lenient,
                fallback=(lambda sub, _: _json(sub, root, safety)) if granular else None,
            )
        node = rules.value(schema, where)
        if self.name == "lark" and regular(node, self.g, set()):
            # (one lexeme: llguidance's lexer never backs up, so the literals of the rules,
            # as lexemes of their own, would part where a longer one fits: "-" and "-02-29")
            node = self.g.define("json_value", node, terminal=True)
        return node

    def raw_string(
        self,
        schema: dict[str, Any],
        plain: Chars | None,
        cdata: Cdata | None,
        where: str,
        suffix: str = "",
        text: RawText | None = None,
        narrow: bool = False,
    ) -> Node:
        """A string body: ``plain`` (the characters a plain body cannot hold; None: no plain
        form) and/or CDATA sections (``cdata``; None: no CDATA form). ``suffix``: text
        after a plain body, before the first character it cannot hold (the raw families'
        line break before ``</parameter>``), in the body's terminal: llguidance's lexer never
        backs up, so a body that may hold it would take it. ``text``: a raw family's value
        language (``_rawtext``), its closing tag in the same terminal, instead of ``plain``.
        ``narrow``: the writer never writes this string in CDATA (``_prompt.write.long_string``),
        so GBNF keeps the section's last character out instead of writing the product."""
        if suffix and cdata is not None:
            raise ValueError("a suffix is for plain bodies only")
        langs, values = string_constraints(schema, where)
        if text is not None:
            return self._raw_text(text, langs, values, where)
        forms: list[Node] = []
        if values is not None:
            if plain is not None:
                forms += [Lit(v + suffix) for v in values if not any(c in plain for c in v)]
            if cdata is not None:
                forms += [Lit(cdata.section(v)) for v in values]
            if not forms:
                raise ConfigurationError(
                    f"{where}: no enum value can be written here",
                    expected=("a value without markup",),
                )
            return alt(*forms)
        if plain is not None:
            forms.append(
                self._constrained(langs, star(ANY - plain), plain, "", where, ("", suffix))
            )
        if cdata is not None:
            inside = _without(cdata.close)
            if langs:  # (one terminal with its delimiters: a lexer that never backs up
                # would take the "]]" of "]]>" into the value)
                forms.append(
                    self._constrained(
                        langs,
                        inside,
                        Chars(()),
                        cdata.close,
                        where,
                        (cdata.open, cdata.close),
                        narrow,
                    )
                )
            else:
                section = self.g.define(
                    "cdata_section", seq(Lit(cdata.open), inside, Lit(cdata.close)), terminal=True
                )
                forms.append(plus(section))
        return alt(*forms)

    def _raw_text(
        self, text: RawText, langs: list[Node], values: list[str] | None, where: str
    ) -> Node:
        """A raw family's value and its closing tag, in one terminal: any value the parser
        reads back (``text``), within the schema's languages. GBNF cannot intersect a
        language with ``text``: there the product of both automata (``_product``) is written,
        and past its bound the export is a ``ConfigurationError``."""
        if values is not None:
            forms = [Lit(v + text.close) for v in values if text.reads_back(v)]
            if not forms:
                raise ConfigurationError(
                    f"{where}: no enum value can be written here",
                    expected=("a value without the family's closing tag",),
                )
            return alt(*forms)
        if not langs:
            return self.g.define("raw_text", text.body(self.name == "lark"), terminal=True)
        if self.name != "lark" and len(langs) > 1:
            raise ConfigurationError(
                f"{where}: pattern, format and minLength/maxLength "
                "together cannot be enforced in gbnf (use one)",
                expected=("one of them",),
            )
        bodies: list[Node] = []
        for head, form in text.forms():
            if self.name == "lark":  # (an intersection with the ``~`` form is one llguidance
                # cannot always tell empty: its lexeme then never ends)
                node: Node = form.node
                for lang in langs:
                    node = Both(seq(lang, Lit(form.close)), node)
            else:
                found = intersect(self.g, langs[0], form.context, self._products, self.cap)
                if found is None:
                    raise too_many_states(where, self.cap)
                node = seq(found, Lit(form.close))
            bodies.append(seq(Lit(head), node))
        return self.g.define("raw_value", alt(*bodies), terminal=True)

    def _constrained(
        self,
        langs: list[Node],
        context: Node,
        chars: Chars,
        sequence: str,
        where: str,
        around: tuple[str, str] = ("", ""),
        narrow: bool = False,
    ) -> Node:
        """The schema's languages within the context's, ``around`` the delimiters (one
        terminal). ``narrow``: no product with ``sequence`` (see ``raw_string``)."""
        if not langs:
            body = seq(Lit(around[0]), context, Lit(around[1])) if any(around) else context
            return self.g.define("raw_text", body, terminal=True)
        if self.name == "lark":
            node = context
            for lang in langs:
                node = Both(lang, node)
        elif len(langs) > 1:
            raise ConfigurationError(
                f"{where}: pattern, format and minLength/maxLength "
                "together cannot be enforced in gbnf (use one)",
                expected=("one of them",),
            )
        else:
            found = None
            if sequence and not narrow:
                ctx = avoiding(sequence, "cdata", "c")
                found = intersect(self.g, langs[0], ctx, self._products, self.cap)
                if found is None:
                    raise too_many_states(where, self.cap)
            if found is None:  # (plain, or narrow: keep out the sequence's last character)
                kept = Chars.of(sequence[-1]) if sequence else Chars(())
                found = restrict(langs[0], ANY - chars - kept)
            node = found
        return self.g.define("raw_value", seq(Lit(around[0]), node, Lit(around[1])), terminal=True)


def _ours_fit(schema: Any, root: Any, safety: Safety) -> bool:
    """Do our JSON rules (``_jsonir``) take ``schema``? Under a Lark grammar they stand for
    ``%json`` where the JSON must not hold a sequence (deepseek_native's fence): llguidance
    spells a backtick raw only, so its JSON would keep out a run the writer spells
    ``\\u0060``. Where they do not fit (llguidance's wider subset), only the subschemas
    they refuse stay ``%json`` (``JsonRules.fallback``)."""
    try:
        check(with_defs(schema, root), "gbnf", "")
        JsonRules(Into(Grammar(), lark=True), root, safety, "").value(schema, "")
    except ConfigurationError:
        return False
    return True


def _json(schema: Any, root: Any, safety: Safety) -> Node:
    """llguidance's ``%json`` of ``schema`` (``root``'s definitions with it), made safe."""
    text = safe_schema_text(json.dumps(with_defs(schema, root), ensure_ascii=False), safety)
    return Json(_with_guidance(text))


@functools.lru_cache(maxsize=4096)
def _with_guidance(schema_json: str) -> str:
    """The schema's JSON with llguidance's formatting options at its top level."""
    if not schema_json.startswith("{"):  # (a boolean schema)
        schema_json = "{}" if schema_json == "true" else '{"not": {}}'
    body = schema_json[1:-1].strip()
    return "{" + body + (", " if body else "") + '"x-guidance": ' + _GUIDANCE + "}"


_GUIDANCE = json.dumps(X_GUIDANCE)


@functools.lru_cache(maxsize=16)
def _without(sequence: str) -> Node:
    """Any text that does not hold ``sequence`` (a CDATA section's content)."""
    return avoid(split_units(ANY, sequence, []), sequence)


def with_defs(schema: Any, root: Any) -> Any:
    """``schema`` carrying the tool schema's ``$defs``/``definitions``, so that its local
    references resolve inside its own ``%json``."""
    if not isinstance(schema, dict) or schema is root or not isinstance(root, dict):
        return schema
    defs = {k: root[k] for k in ("$defs", "definitions") if k in root}
    return {**defs, **schema} if defs else schema
