"""Strategy: a ``Shape`` written as a grammar file and a spelling file (grammar/README.md).

What it does: ``grammar_text(name, shape)`` writes the dialect: every marker the renderings
showed becomes a terminal built from common.lark's alias layer (``_LT``, ``_CLOSE_END``,
``_HEAD_END``, ``_GT``), white space between markers a run of any length, a name written as an
attribute common.lark's ``NAME_ATTR`` beside ``ATTR``s in any order, a value a soft run, a
JSON body a balanced run. ``spelling_text(name, shape)`` writes the renderings' own text as
the writer's template (``ARGS`` raw, json or envelope).
What it guarantees: only markers from the shape are named; no rendering is copied as a
literal pattern.
What it costs: linear in the shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._extract import ARGS_ENVELOPE, ARGS_JSON, ARGS_MARKUP, Shape, Token
from ._probe import KEY1, NAME1, VAL1

__all__ = ["draft_files", "spelling_text"]

_NAME_RE = r"(?P<v>[^\s<>＜＞〈〉|｜=\"']{1,256})"
_LEAD = r"(?=[\s<＜〈])"
_WS = r"\s{0,32}"


def _inner(text: str, plural: bool = False) -> str:
    """A tag's inner text as a tolerant pattern: bars of either width, ``▁`` or ``_``."""
    out = re.escape(text)
    out = out.replace(r"\|", "|").replace("|", "[|｜]").replace("｜", "[|｜]")
    out = out.replace("[[|｜]｜]", "[|｜]").replace("[|[|｜]]", "[|｜]")
    out = out.replace("▁", "[▁_ ]").replace("=", r"\s{0,8}=\s{0,8}")
    if not plural:
        return out
    # a plural word's s may be dropped (Kimi's tool_calls_section_begin, tool_call_section_…)
    return re.sub(r"(?<=[A-Za-z]{3})s(?![A-Za-z?])", "s?", out)


def _regex(pattern: str) -> str:
    return "/" + pattern.replace("/", r"\/") + "/"


def _tag(text: str, slot: str = "", plural: bool = False) -> list[str]:
    """A tag as terminal parts; ``slot`` inside it becomes the group ``v``."""
    closing = text.startswith("</")
    inner = text[2 if closing else 1 : -1]
    body = _inner(inner, plural)
    if slot and slot in inner:
        pre, post = inner.split(slot, 1)
        body = _inner(pre, plural) + _NAME_RE + _inner(post, plural)
    parts = ["_LT"] + ([_regex("[/／]")] if closing else [])
    if inner.endswith(("|", "｜")):
        return [*parts, _regex(body.removesuffix("[|｜]") + "[|｜]"), "_GT"]
    return [*parts, _regex(body), "_CLOSE_END"]


def _text(text: str, slot: str = "") -> str:
    """A text token as a pattern; ``slot`` in it becomes the group ``v``. A namespace just
    before the slot (``functions.``) may be left out, as models do."""
    if slot and slot in text:
        pre, post = text.split(slot, 1)
        maybe = ""
        space = re.search(r"[A-Za-z_]\w*\.$", pre)
        if space is not None:
            pre, maybe = pre[: space.start()], f"(?:{re.escape(space.group())})?"
        return (
            re.sub(r"\d+", r"\\d{1,9}", re.escape(pre))
            + maybe
            + r"[ \t]{0,8}"
            + _NAME_RE
            + re.sub(r"\d+", r"\\d{1,9}", re.escape(post))
        )
    return re.escape(text)


@dataclass
class _Terminal:
    parts: list[str] = field(default_factory=list)
    slot: str = ""  # the contract node its group v stands for
    text: str = ""  # as the rendering wrote it (the slot as {})


@dataclass
class _Element:
    kind: str  # "literal", "slot", "attrs", "json", "value"
    terminal: _Terminal | None = None
    node: str = ""


def _attr_tag(t: Token, slot: str) -> bool:
    return t.kind == "tag" and re.search(r"\sname\s*=\s*[\"']" + slot + "[\"']", t.text) is not None


class _Cutter:
    """Cuts tokens into elements: literal runs of markers, the slot, a JSON body, the value."""

    def __init__(self, slot: str, node: str, plural: bool) -> None:
        self.slot, self.node, self.plural = slot, node, plural
        self.out: list[_Element] = []
        self.cur = _Terminal()

    def flush(self) -> None:
        if self.cur.parts:
            kind = "slot" if self.cur.slot else "literal"
            self.out.append(_Element(kind, self.cur, self.cur.slot))
        self.cur = _Terminal()

    def gap(self) -> None:
        """White space of any length may stand between two markers, written or not."""
        parts, ws = self.cur.parts, _regex(_WS)
        if (parts and parts[-1] != ws) or (not parts and self.out and self.out[-1].kind != "value"):
            parts.append(ws)

    def attrs(self, t: Token) -> None:
        head = t.text[1:].split()[0]
        self.cur.parts += ["_LT", _regex(_inner(head, self.plural)), "_HEAD_END"]
        self.cur.text += "<" + head
        self.flush()
        self.out[-1].kind, self.out[-1].node = "attrs", self.node

    def tag(self, t: Token) -> None:
        slot = self.slot
        self.cur.parts += _tag(t.text, slot, self.plural)
        self.cur.text += t.text.replace(slot, "{}") if slot else t.text
        if slot and slot in t.text:
            self.cur.slot = self.node
            self.flush()

    def text(self, t: Token, after: Token | None) -> None:
        slot = self.slot
        self.cur.parts.append(_regex(_text(t.text, slot)))
        self.cur.text += t.text.replace(slot, "{}") if slot else t.text
        if slot and slot in t.text:
            self.cur.slot = self.node
            if after is not None and after.text.startswith("</"):
                return  # (the closing tag right after the name joins it)
            self.cur.parts.append(_regex(_LEAD))
            self.flush()
        elif self.cur.slot:
            self.flush()


def _elements(ts: tuple[Token, ...], slot: str, node: str, plural: bool = False) -> list[_Element]:
    """``ts`` as elements: literal runs of markers, the slot, a JSON body, the value.
    ``plural``: a plural word in a tag may lose its ``s``."""
    c = _Cutter(slot, node, plural)
    for i, t in enumerate(ts):
        after = ts[i + 1] if i + 1 < len(ts) else None
        is_value = t.kind == "text" and VAL1 in t.text and node == "param_name"
        if t.kind == "ws":
            c.cur.text += t.text
            continue
        if t.kind == "json" or is_value:
            c.flush()
            c.out.append(_Element("json" if t.kind == "json" else "value"))
            continue
        c.gap()
        if _attr_tag(t, slot):
            c.attrs(t)
        elif t.kind == "tag":
            c.tag(t)
        else:
            c.text(t, after)
    c.flush()
    return c.out


class _Writer:
    def __init__(self, name: str, shape: Shape, plural: bool = False) -> None:
        self.name = name
        self.shape = shape
        self.plural = plural
        self.rules: list[str] = []
        self.terminals: list[str] = []
        self.count = 0
        self.opener = ""
        self.opener_text = ""

    def terminal(self, t: _Terminal, base: str) -> str:
        self.count += 1
        label = f"{base}_{self.count}"
        self.terminals.append(f"{label}: {' '.join(t.parts)}")
        if not self.opener:
            self.opener, self.opener_text = label, t.text.strip()
        return label

    def symbols(self, elements: list[_Element], prefix: str) -> list[str]:
        out: list[str] = []
        for e in elements:
            if e.kind == "literal" and e.terminal is not None:
                out.append(self.terminal(e.terminal, prefix.upper()))
            elif e.kind == "slot" and e.terminal is not None:
                term = self.terminal(e.terminal, prefix.upper())
                rule = f"{prefix}_{self.count}"
                self.rules.append(f"{rule}: {term} -> {e.node}")
                out.append(rule)
            elif e.kind == "attrs" and e.terminal is not None:
                term = self.terminal(e.terminal, prefix.upper())
                attr, name = f"{prefix}_attr", f"{prefix}_name"
                self.rules.append(f"{attr}: ATTR -> attr")
                self.rules.append(f"{name}: NAME_ATTR -> {e.node}")
                out.append(f"{term} {attr}* {name} {attr}* TAG_END")
            elif e.kind == "json":
                self.count += 1
                self.terminals.append(f"JSON_{self.count}_RUN: /\\{{[\\s\\S]*\\}}/")
                self.rules.append(f"{prefix}_json: JSON_{self.count}_RUN -> call_json")
                out.append(f"{prefix}_json")
        return out


def _ws_bounded(ts: tuple[Token, ...]) -> tuple[Token, ...]:
    ts = tuple(ts)
    while ts and ts[0].kind == "ws":
        ts = ts[1:]
    while ts and ts[-1].kind == "ws":
        ts = ts[:-1]
    return ts


def _json_lookahead(elements: list[_Element]) -> None:
    """The terminal before a JSON body looks ahead to its ``{`` (as hermes's opener does)."""
    for k, e in enumerate(elements):
        if e.kind == "json" and k > 0 and elements[k - 1].terminal is not None:
            term = elements[k - 1].terminal
            assert term is not None
            if term.parts and term.parts[-1] == _regex(_LEAD):
                term.parts.pop()
            term.parts.append(_regex(r"\s{0,64}(?=\{)"))


def _line_before(elements: list[_Element], shape: Shape) -> None:
    """Where a value stands on lines of its own, the line break before the tag that follows
    a value is the tag's: the next key's, or the call's end where a value was left open."""
    if shape.value_lines and elements and elements[0].terminal is not None:
        elements[0].terminal.parts.insert(0, _regex(r"\n?"))


def _param(w: _Writer, shape: Shape, repair: bool) -> str:
    elements = _elements(_ws_bounded(shape.param), KEY1, "param_name", w.plural)
    at = next(k for k, e in enumerate(elements) if e.kind == "value")
    _line_before(elements, shape)
    before = w.symbols(elements[:at], "d_param")
    if shape.value_lines and before:
        last = w.terminals[-1]
        w.terminals[-1] = last + " " + _regex(r"(?:\n|(?=[^\n]))")
    stop = r"\n?[<＜〈]" if shape.value_lines else r"[<＜〈]"
    run = _regex("(?:(?!" + stop + r")[\s\S])+")
    w.terminals.append(f"VALUE_RUN: {run}")
    w.rules.append("d_value: VALUE_RUN -> raw_value")
    after = w.symbols(elements[at + 1 :], "d_close")
    if shape.value_lines and after:
        first = next(i for i, t in enumerate(w.terminals) if t.startswith(after[0] + ":"))
        label, parts = w.terminals[first].split(": ", 1)
        w.terminals[first] = f"{label}: {_regex(chr(92) + 'n?')} {parts}"
    # A value left open is closed where the call reads its next tag (the next key, or the
    # call's end), and the repair recorded, as SPEC §4 closes a markup parameter.
    head = " ".join(before)
    if not repair:
        w.rules.append(f"d_param: {head} d_value? {' '.join(after)} -> param")
        return "d_param"
    w.rules.append(f"d_param: {head} (d_value? {' '.join(after)} | d_value d_unclosed) -> param")
    w.rules.append("d_unclosed: -> repair_unclosed_parameter")
    return "d_param"


def _json_section(w: _Writer, name: str, shape: Shape, section: list[str]) -> str:
    """A section of bare JSON calls (a list): its opener looks ahead to the first ``{``, the
    separator and the closer take the white space around them (a parser state reads one run:
    the balanced JSON one)."""
    ahead = _regex(r"\s{0,64}(?=\{)")
    first = next(i for i, t in enumerate(w.terminals) if t.startswith(section[-1] + ":"))
    w.terminals[first] += " " + ahead
    sep = shape.separator.strip()
    w.count += 1
    label = f"D_SEP_{w.count}"
    if sep:
        w.terminals.append(f"{label}: {_regex(_WS + re.escape(sep))} {ahead}")
    else:
        w.terminals.append(label + ": " + _regex(r"\s{1,64}(?=\{)"))
    end = _elements(shape.section_end, "", "", w.plural)
    if end and end[0].terminal is not None:
        end[0].terminal.parts.insert(0, _regex(_WS))
    section_end = w.symbols(end, "d_section_end")
    return f"{name}: {' '.join(section)} d_call ({label} d_call)* {' '.join(section_end)}"


def draft_files(
    name: str,
    shape: Shape,
    source: str,
    priority: int = 0,
    repair: bool = True,
    plural: bool = False,
) -> tuple[str, str]:
    """The draft dialect ``name``: its grammar file and its spelling file. ``plural``: a
    plural word in a tag may lose its ``s`` (where the draft still loads beside the others)."""
    w = _Writer(name, shape, plural)
    section = w.symbols(_elements(shape.section, "", "", w.plural), "d_section")
    head_el = _elements(_ws_bounded(shape.head), NAME1, "call_name", w.plural)
    _json_lookahead(head_el)
    head = w.symbols(head_el, "d_call")
    body = ""
    if shape.args == ARGS_MARKUP:
        body = f" WS_RUN? ({_param(w, shape, repair)} WS_RUN?)*"
    tail_el = _elements(_ws_bounded(shape.tail), "", "", w.plural)
    _line_before(tail_el, shape)
    tail = w.symbols(tail_el, "d_tail")
    if head and head[-1].endswith("_json") and tail:
        body = " WS_RUN?"
    w.rules.insert(0, f"d_call: {' '.join(head)}{body} {' '.join(tail)} -> call")
    if section and head_el and head_el[0].kind == "json":
        block = _json_section(w, name, shape, section)
    elif section:
        section_end = w.symbols(_elements(shape.section_end, "", "", w.plural), "d_section_end")
        block = f"{name}: {' '.join(section)} WS_RUN? (d_call WS_RUN?)+ {' '.join(section_end)}"
    else:
        block = f"{name}: d_call"
    if priority and w.opener:
        w.terminals = [
            t.replace(f"{w.opener}:", f"{w.opener}.{priority}:", 1)
            if t.startswith(w.opener + ":")
            else t
            for t in w.terminals
        ]
    lines = [
        f"// dialect: {name} — drafted by callsieve draft-dialect from {source}; review it",
        "// Drafted from the chat template's renderings: every marker below is one the template",
        "// wrote; the report beside this file lists what the renderings could not tell.",
    ]
    if shape.args == ARGS_MARKUP:  # (the template writes a mapping: each key once, as JSON)
        lines += [
            "// The template writes the arguments from a mapping, so a key it never repeats",
            "// keeps its last value when a model repeats it, as in a JSON object.",
            "//%repeated_parameter_keeps_last",
        ]
    if shape.args == ARGS_ENVELOPE and shape.envelope_keys != ("name", "arguments"):
        lines += [
            f"//%envelope_name {shape.envelope_keys[0]}",
            f"//%envelope_arguments {shape.envelope_keys[1]}",
        ]
    lines += [block, "", *dict.fromkeys(w.rules), "", *w.terminals]
    if shape.think and shape.think != ("<think>", "</think>"):
        lines += [
            f"THINK_OPEN: {' '.join(_tag(shape.think[0], plural=w.plural))}",
            f"THINK_CLOSE: {' '.join(_tag(shape.think[1], plural=w.plural))}",
        ]
    return "\n".join(lines) + "\n", spelling_text(name, shape, w.opener_text)


def _lit(ts: tuple[Token, ...]) -> str:
    return "".join(t.text for t in ts)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _call_head(shape: Shape) -> tuple[str, str]:
    """``CALL_HEAD`` and ``CALL_TAIL``: the name's slot, then the index's."""
    head = _lit(shape.head)
    if shape.args != ARGS_MARKUP:
        cut = next(i for i, t in enumerate(shape.head) if t.kind == "json")
        head = _lit(shape.head[:cut])
    head = re.sub(re.escape(NAME1) + r"(\W{0,2})\d+", NAME1 + r"\1{}", head, count=1)
    head = head.replace(NAME1, "{}", 1)
    tail = _lit(shape.tail)
    if shape.args == ARGS_MARKUP:
        tail = tail.lstrip()
    return head, tail


def spelling_text(name: str, shape: Shape, opener_text: str) -> str:
    """The renderings' text as ``spelling/<name>.lark``: the writer's template."""
    head, tail = _call_head(shape)
    lines = [f"// Spelling of the {name} dialect, drafted from the chat template's renderings."]
    lines.append(f"CALLS_OPEN: {_quote(opener_text)}")
    if shape.section:
        lines.append(f"BLOCK_OPEN: {_quote(shape.block_open)}")
        lines.append(f"BLOCK_CLOSE: {_quote(shape.block_close)}")
        lines.append(f"CALL_SEP: {_quote(shape.separator)}")
    else:
        lines.append(f"BLOCK_SEP: {_quote(shape.separator)}")
    lines.append(f"CALL_HEAD: {_quote(head)}")
    args = {ARGS_MARKUP: "raw", ARGS_JSON: "json", ARGS_ENVELOPE: "envelope"}[shape.args]
    lines.append(f"ARGS: {_quote(args)}")
    if shape.args == ARGS_ENVELOPE and shape.envelope_keys[1] != "arguments":
        lines.append(f"ARGS_KEY: {_quote(shape.envelope_keys[1])}")
    if shape.args == ARGS_MARKUP:
        text = _lit(_ws_bounded(shape.param))
        open_, close = text.split(VAL1, 1)
        if shape.typed_tags:  # (an attribute that follows the value's type: left out)
            open_ = re.sub(r"\s+(?!name\b)[\w:-]+\s*=\s*\"[^\"]*\"", "", open_)
        lines.append(f"ARG_OPEN: {_quote(open_.replace(KEY1, '{}'))}")
        lines.append(f"ARG_CLOSE: {_quote(close.replace(KEY1, '{}') + shape.param_separator)}")
    lines.append(f"CALL_TAIL: {_quote(tail)}")
    lines = [line for line in lines if not line.endswith(': ""')]
    return "\n".join(lines) + "\n"
