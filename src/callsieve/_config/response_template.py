"""A model's own ``response_template`` (Hugging Face transformers) compiled into a dialect.

What it does: ``dialect_from_response_template(spec)`` reads the spec's fields and writes a
grammar file from them, as a user would write one by hand (grammar/README.md). The spec's
literal markers become terminals. The ``thinking`` field becomes the dialect's reasoning tags.
The ``content`` field's markers and the start anchors become framing (``-> frame``). The
``tool_calls`` field becomes a call rule: JSON envelopes (keys from its ``transform``), an
opener that carries the name with JSON arguments, XML-like parameter elements, or JSON with
bare keys and delimited strings (Gemma's) read by the contract's value nodes.

What it guarantees: the grammar is loaded once before it is handed out, so the engine's own
rules judge every pattern. What the compiler cannot say, or the loader refuses, is a
``ConfigurationError`` naming the spec's field (``fields.tool_calls.content_args``). Nothing
falls back in silence. docs/model-metadata.md lists what compiles and why the rest does not.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .._base.errors import ConfigurationError, GrammarError
from .._grammar.compiled import load_grammar

__all__ = ["ResponseTemplateDialect", "dialect_from_response_template"]

#: The longest repeat a pattern of the spec keeps: the engine's tokens are bounded.
REPEAT_BOUND = 256

_FIELD_KEYS = frozenset(
    {
        "open",
        "close",
        "open_pattern",
        "close_pattern",
        "content",
        "content_args",
        "repeats",
        "join",
        "transform",
        "transform_each",
    }
)
_TOP_KEYS = frozenset({"version", "defaults", "start_anchor", "start_anchor_pattern", "fields"})
_NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")


@dataclass(frozen=True)
class ResponseTemplateDialect:
    """A dialect compiled from a ``response_template``: its name and its grammar file's text.

    ``reasoning`` is the option a reply of this model is read with: ``"open"`` where the
    spec's thinking field may open at the reply's start (``^`` in its ``open_pattern``).
    ``write(folder)`` saves ``<name>.lark`` there and returns the folder, for
    ``Sieve(dialects=[d.name], grammar_dirs=[d.write(folder)])``.
    """

    name: str
    grammar_text: str
    reasoning: Literal["tags", "open"] = "tags"

    def write(self, folder: str | os.PathLike[str]) -> str:
        """Save the grammar file as ``<folder>/<name>.lark``; return the folder."""
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        (path / f"{self.name}.lark").write_text(self.grammar_text, encoding="utf-8")
        return str(path)


@dataclass
class _Draft:
    """The grammar file as it is written: its lines, and which spec field each line is for."""

    name: str
    lines: list[str] = field(default_factory=list)
    fields_at: dict[int, str] = field(default_factory=dict)
    terminals: dict[str, str] = field(default_factory=dict)

    def add(self, line: str, spec_field: str = "") -> None:
        self.lines.append(line)
        if spec_field:
            self.fields_at[len(self.lines)] = spec_field
            head = line.split(":", 1)[0].strip()
            if head.isupper() or head.startswith("_"):
                self.terminals[head.split(".")[0]] = spec_field


def dialect_from_response_template(
    spec: Mapping[str, Any] | str | os.PathLike[str], name: str | None = None
) -> ResponseTemplateDialect:
    """Compile a transformers ``response_template`` into a dialect the engine runs.

    ``spec`` is the template (a mapping), or the path of a ``tokenizer_config.json`` (or of a
    JSON file holding the template alone). ``name`` is the dialect's name (default
    ``response_template``). Raises ``ConfigurationError`` naming the field it cannot compile.
    """
    template = _read_spec(spec) if isinstance(spec, (str, os.PathLike)) else spec
    if not isinstance(template, Mapping):
        raise ConfigurationError("response_template: a spec is a mapping (or a file's path)")
    dialect = name if name is not None else "response_template"
    if not _NAME_RE.fullmatch(dialect) or dialect == "common":
        raise ConfigurationError(f"name: {dialect!r} is not a dialect name (a-z, 0-9, _)")
    draft, reasoning = _compile(template, dialect)
    text = "\n".join(draft.lines) + "\n"
    _check(draft, text)
    return ResponseTemplateDialect(dialect, text, reasoning)


def _read_spec(path: str | os.PathLike[str]) -> Mapping[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigurationError(f"{os.fspath(path)}: not a readable JSON file ({e})") from None
    if isinstance(data, dict) and "fields" not in data:
        data = data.get("response_template")
    if not isinstance(data, dict):
        raise ConfigurationError(f"{os.fspath(path)}: holds no response_template")
    return data


# ---------------------------------------------------------------------------- the compiler


def _compile(template: Mapping[str, Any], name: str) -> tuple[_Draft, Literal["tags", "open"]]:
    fields = _fields(template)
    draft = _Draft(name)
    draft.add(f"// dialect: {name} — compiled from a transformers response_template")
    calls = fields.get("tool_calls")
    body = [] if calls is None else _tool_calls(calls)
    for directive in [] if calls is None else _directives(calls):
        draft.add(directive, "fields.tool_calls")
    frames = _frames(template, fields)
    alternatives = (["rt_call"] if calls is not None else []) + (["rt_frame"] if frames else [])
    if not alternatives:
        raise ConfigurationError("fields: neither tool_calls nor any marker to read")
    draft.add(f"{name}: " + " | ".join(alternatives))
    for line in body:
        draft.add(*_split(line))
    if frames:
        names = [f"RT_FRAME_{i}" for i in range(len(frames))]
        draft.add("rt_frame: (" + " | ".join(names) + ") -> frame")
        for term, (source, where) in zip(names, frames.items()):
            draft.add(f"{term}: /{source}/", where)
    reasoning = _thinking(fields.get("thinking"), draft)
    return draft, reasoning


def _fields(template: Mapping[str, Any]) -> Mapping[str, Any]:
    """The template's fields, each checked to hold only keys callsieve reads."""
    _only(template, _TOP_KEYS, "")
    defaults = template.get("defaults", {})
    if not isinstance(defaults, dict) or set(defaults) - {"role"}:
        raise ConfigurationError("defaults: only a default 'role' is supported")
    fields = template.get("fields")
    if not isinstance(fields, dict):
        raise ConfigurationError("fields: the template needs a mapping of fields")
    for key, spec in fields.items():
        if key not in ("thinking", "content", "tool_calls"):
            raise ConfigurationError(f"fields.{key}: only thinking, content and tool_calls")
        if not isinstance(spec, dict):
            raise ConfigurationError(f"fields.{key}: a field is a mapping")
        _only(spec, _FIELD_KEYS, f"fields.{key}.")
    return fields


def _split(line: str) -> tuple[str, str]:
    """A body line and the field it is for (after a tab)."""
    text, _, where = line.partition("\t")
    return text, where


def _only(spec: Mapping[str, Any], known: frozenset[str], at: str) -> None:
    for key in spec:
        if key not in known:
            raise ConfigurationError(f"{at}{key}: not a response_template key callsieve reads")


def _strings(value: Any, where: str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise ConfigurationError(f"{where}: a marker is a non-empty string or a list of them")
    return list(values)


def _literal(text: str) -> str:
    """A regex (in a Lark ``/…/`` literal) that matches ``text`` only."""
    out = []
    for ch in text:
        if ch.isalnum() and ch.isascii():
            out.append(ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch.isascii() and ch.isprintable():
            out.append(ch if ch in " _-,:;=<>'\"!@%&~`#" else "\\" + ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return "".join(out)


def _markers(spec: Mapping[str, Any], kind: str, at: str) -> list[str]:
    """The regexes of a field's ``open`` or ``close`` (literal) and ``…_pattern`` markers."""
    out = [_literal(s) for s in _strings(spec[kind], f"{at}.{kind}")] if kind in spec else []
    pattern = spec.get(f"{kind}_pattern")
    if pattern is not None:
        out.append(_pattern(pattern, f"{at}.{kind}_pattern", ()))
    return out


_GROUP = re.compile(r"\(\?P<(?P<g>\w+)>")


def _pattern(pattern: Any, where: str, groups: tuple[str, ...]) -> str:
    """The spec's regex as a terminal may hold it: repeats bounded (``*`` → ``{0,256}``), the
    named ``groups`` renamed to the contract's ``v`` (first) and ``k``, nothing else allowed
    that looks before the match or at the text's ends."""
    if not isinstance(pattern, str) or not pattern:
        raise ConfigurationError(f"{where}: a pattern is a non-empty string")
    try:
        re.compile(pattern)
    except re.error as e:
        raise ConfigurationError(f"{where}: not a regular expression ({e})") from None
    for g in _GROUP.findall(pattern):
        if g not in groups:
            raise ConfigurationError(f"{where}: the group (?P<{g}>…) means nothing here")
    pattern = _optional_head(pattern)
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if pattern[i + 1 : i + 2] in ("A", "Z", "b", "B", "z"):
                raise ConfigurationError(f"{where}: \\{pattern[i + 1]} looks outside the match")
            out.append(_lark_safe(pattern[i : i + 2]))
            i += 2
        elif ch == "[":
            end = _class_end(pattern, i)
            out.append(_lark_safe(pattern[i:end]))
            i = end
        elif ch in "^$":
            raise ConfigurationError(f"{where}: {ch} ties a marker to the text's ends")
        elif pattern.startswith(("(?<=", "(?<!"), i):
            raise ConfigurationError(f"{where}: a look-behind looks before the match")
        elif ch == ".":  # (transformers compiles its patterns with DOTALL)
            out.append("[\\s\\S]")
            i += 1
        elif ch in "*+":
            out.append(f"{{{0 if ch == '*' else 1},{REPEAT_BOUND}}}")
            i += 1
        elif ch == "{" and re.match(r"\{\d*,\}", pattern[i:]):
            low = pattern[i + 1 : pattern.index(",", i)] or "0"
            out.append(f"{{{low},{REPEAT_BOUND}}}")
            i = pattern.index("}", i) + 1
        else:
            out.append(_lark_safe(ch))
            i += 1
    text = "".join(out)
    for g, contract in zip(groups, ("v", "k")):
        text = text.replace(f"(?P<{g}>", f"(?P<{contract}>")
    return text


_OPTIONAL_HEAD = re.compile(
    r"\(\?:(?P<lit>(?:[^()\\\[\]*+?{}|^$.]|\\.)+)\)\?(?P<run>\[(?:[^\]\\]|\\.)+\])\*"
)


def _optional_head(pattern: str) -> str:
    """``(?:L)?[C]*`` at a pattern's start becomes ``(?:L[C]{0,256})?``: the run is read only
    after the literal. A marker must begin with a fixed set of characters, and a run of
    ``[^<]`` begins with almost any (Inkling's ``(?:<|message_model|>)?[^<]*<|content_…|>``).
    Without the literal, text before the marker stays text."""
    m = _OPTIONAL_HEAD.match(pattern)
    if m is None:
        return pattern
    return f"(?:{m['lit']}{m['run']}{{0,{REPEAT_BOUND}}})?" + pattern[m.end() :]


def _lark_safe(piece: str) -> str:
    """A piece of a regex as a Lark ``/…/`` literal holds it: ``/`` and line breaks escaped."""
    if piece.startswith("\\") and len(piece) == 2:
        return piece
    return piece.replace("/", "\\/").replace("\n", "\\n").replace("\r", "\\r")


def _class_end(pattern: str, start: int) -> int:
    i = start + 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _frames(template: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, str]:
    """The framing a reply drops: the start anchors, and the content field's markers."""
    frames: dict[str, str] = {}
    if "start_anchor" in template:
        for s in _strings(template["start_anchor"], "start_anchor"):
            frames.setdefault(_literal(s), "start_anchor")
    content = fields.get("content")
    if content is not None:
        if content.get("content", "text") != "text":
            raise ConfigurationError("fields.content.content: only 'text' content is read")
        _text_args(content, "fields.content")
        for kind in ("open", "close"):
            where = f"fields.content.{kind}"
            for source in _markers(content, kind, "fields.content"):
                frames.setdefault(source, where)
    thinking = fields.get("thinking") or {}
    for kind in ("open", "close"):  # (a reasoning tag is read as one, not as framing)
        for s in _strings(thinking.get(kind, []), f"fields.thinking.{kind}"):
            frames.pop(_literal(s), None)
    return frames


def _text_args(spec: Mapping[str, Any], at: str) -> None:
    args = spec.get("content_args", {})
    if not isinstance(args, dict) or set(args) - {"strip"}:
        raise ConfigurationError(f"{at}.content_args: a text field takes only 'strip'")
    if spec.get("join", "") != "":
        raise ConfigurationError(f"{at}.join: the pieces of a field are joined with nothing")
    if spec.get("transform") is not None or spec.get("transform_each"):
        raise ConfigurationError(f"{at}.transform: a text field is not transformed")


def _thinking(spec: Mapping[str, Any] | None, draft: _Draft) -> Literal["tags", "open"]:
    """The thinking field as the dialect's reasoning tags (grammar/README.md)."""
    if spec is None:
        return "tags"
    if spec.get("content", "text") != "text":
        raise ConfigurationError("fields.thinking.content: only 'text' thinking is read")
    _text_args(spec, "fields.thinking")
    reasoning: Literal["tags", "open"] = "tags"
    pattern = spec.get("open_pattern")
    if isinstance(pattern, str) and pattern.startswith("(?:^|") and pattern.endswith(")"):
        # (the reply may start inside the thought: ERNIE's `(?:^|<think>\s*)`)
        reasoning = "open"
        spec = {**spec, "open_pattern": pattern[len("(?:^|") : -1]}
    for kind, term in (("open", "THINK_OPEN"), ("close", "THINK_CLOSE")):
        sources = [_trailing_space_dropped(s) for s in _markers(spec, kind, "fields.thinking")]
        if not sources:
            raise ConfigurationError(f"fields.thinking.{kind}: thinking needs an {kind} marker")
        where = f"fields.thinking.{kind}" + ("_pattern" if f"{kind}_pattern" in spec else "")
        draft.add(f"{term}: /" + "|".join(f"(?:{s})" for s in sources) + "/", where)
    return reasoning


def _trailing_space_dropped(source: str) -> str:
    """An opener's trailing white space is left to the field's text (transformers strips it)."""
    for tail in (f"\\s{{0,{REPEAT_BOUND}}}", f"\\s{{1,{REPEAT_BOUND}}}"):
        if source.endswith(tail) and len(source) > len(tail):
            return source[: -len(tail)]
    return source


# ---------------------------------------------------------------------------- tool calls

_PLACEHOLDER = re.compile(r"\{(?P<key>[A-Za-z_][\w.]*)\}")


def _placeholder(value: Any, where: str) -> str:
    m = _PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        raise ConfigurationError(f"{where}: a value of the transform is one '{{key}}' placeholder")
    return m.group("key")


def _shape(spec: Mapping[str, Any]) -> tuple[str, tuple[str, str] | None]:
    """What the tool_calls field's transform says: ``("envelope", keys)`` (the content is a
    JSON object naming the call, under ``keys`` or the defaults), ``("list", keys)`` (a list
    of such objects) or ``("opener", None)`` (the opener names the call, the content is its
    arguments)."""
    at = "fields.tool_calls.transform"
    transform = spec.get("transform")
    if not isinstance(transform, dict) or transform.get("type", "function") != "function":
        raise ConfigurationError(f"{at}: a transform {{'type': 'function', 'function': …}}")
    if set(transform) - {"type", "function"}:
        raise ConfigurationError(f"{at}: only 'type' and 'function' are read")
    function = transform.get("function")
    if function == "{content}" and not spec.get("transform_each"):
        return "envelope", None
    if not isinstance(function, dict) or set(function) != {"name", "arguments"}:
        raise ConfigurationError(f"{at}.function: '{{content}}' or {{'name', 'arguments'}}")
    name = _placeholder(function["name"], f"{at}.function.name")
    args = _placeholder(function["arguments"], f"{at}.function.arguments")
    if spec.get("transform_each"):
        if "." in name + args or "content" in (name, args):
            raise ConfigurationError(f"{at}: with transform_each, keys of each item")
        return "list", (name, args)
    if name == "name" and args == "content":
        return "opener", None
    if name.startswith("content.") and args.startswith("content."):
        keys = (name.removeprefix("content."), args.removeprefix("content."))
        if "." not in keys[0] + keys[1]:
            return "envelope", keys
    raise ConfigurationError(f"{at}.function: placeholders callsieve cannot place ({name}, {args})")


def _envelope_directives(spec: Mapping[str, Any]) -> list[str]:
    if spec.get("content") != "json":
        return []
    kind, keys = _shape(spec)
    if kind == "opener" or keys is None:
        return []
    return [f"//%envelope_name {keys[0]}", f"//%envelope_arguments {keys[1]}"]


def _directives(spec: Mapping[str, Any]) -> list[str]:
    """The dialect's traits the tool_calls field implies (grammar/README.md, directives)."""
    if spec.get("content") == "xml-inline":  # (a key named twice keeps its last value there)
        args = spec.get("content_args")
        typed = isinstance(args, dict) and args.get("value_parser") is not None
        # (with no value parser, transformers keeps each value's text)
        return ["//%repeated_parameter_keeps_last"] + (
            [] if typed else ["//%raw_values_are_strings"]
        )
    return _envelope_directives(spec)


def _tool_calls(spec: Mapping[str, Any]) -> list[str]:
    """The call rule's lines (each with the spec field it is for, after a tab)."""
    at = "fields.tool_calls"
    content = spec.get("content")
    if content not in ("json", "xml-inline"):
        raise ConfigurationError(f"{at}.content: {content!r} is not read (json, xml-inline are)")
    kind, _ = _shape(spec)
    named = kind == "opener"
    if "open_pattern" in spec and "open" in spec:
        raise ConfigurationError(f"{at}: one of open and open_pattern")
    if "open_pattern" in spec:
        opener = _pattern(spec["open_pattern"], f"{at}.open_pattern", ("name",) if named else ())
        if named and "(?P<v>" not in opener:
            raise ConfigurationError(f"{at}.open_pattern: the transform needs a (?P<name>…) group")
        open_where = f"{at}.open_pattern"
    elif "open" in spec and not named:
        opener = "|".join(_literal(s) for s in _strings(spec["open"], f"{at}.open"))
        open_where = f"{at}.open"
    else:
        raise ConfigurationError(f"{at}.open_pattern: the call needs an opener (with its name)")
    closers = _markers(spec, "close", at)
    if not closers:
        raise ConfigurationError(f"{at}.close: a call needs a closing marker")
    close_where = f"{at}.close" + ("_pattern" if "close_pattern" in spec else "")
    close = "|".join(f"(?:{c})" for c in closers)
    lines = [
        f"RT_CALL_OPEN: /(?:{_trailing_space_dropped(opener)})/\t{open_where}",
        f"RT_CALL_CLOSE: /\\s{{0,64}}(?:{close})/\t{close_where}",
    ]
    if content == "xml-inline":
        if not named:
            raise ConfigurationError(f"{at}.transform: xml-inline calls are named by the opener")
        return lines + _xml_inline(spec.get("content_args"), f"{at}.content_args")
    if spec.get("content_args"):
        if not named:
            raise ConfigurationError(
                f"{at}.content_args: JSON options are read where the opener names the call"
            )
        return _lax_json(spec["content_args"], f"{at}.content_args", opener, open_where, close)
    if kind == "list":
        return [
            "rt_call: RT_CALL_OPEN RT_LIST_OPEN rt_item (RT_COMMA rt_item)* RT_LIST_CLOSE RT_CALL_CLOSE",
            "rt_item: rt_json -> call",
            "rt_json: RT_JSON_RUN -> call_json",
            "RT_LIST_OPEN: /\\s{0,64}\\[/",
            "RT_COMMA: /\\s{0,64},/",
            "RT_LIST_CLOSE: /\\s{0,64}\\]/",
            "RT_JSON_RUN: /\\s*\\{[\\s\\S]*\\}/",
            *lines,
        ]
    if named:
        return [
            "rt_call: rt_head rt_args RT_CALL_CLOSE -> call",
            "rt_head: RT_CALL_OPEN -> call_name",
            "rt_args: RT_JSON_RUN -> call_args",
            "RT_JSON_RUN: /\\s*\\{[\\s\\S]*\\}/",
            *lines,
        ]
    return [
        "rt_call: RT_CALL_OPEN rt_json RT_CALL_CLOSE -> call",
        "rt_json: RT_JSON_RUN -> call_json",
        "RT_JSON_RUN: /\\s*\\{[\\s\\S]*\\}/",
        *lines,
    ]


#: A JSON number, ``true``, ``false`` or ``null``, ended by what may follow it.
_JSON_SCALAR = r"(?:-?\d{1,64}(?:\.\d{1,64})?(?:[eE][+\-]?\d{1,8})?|true|false|null)(?=[\s,}\]])"


def _lax_json(args: Any, at: str, opener: str, open_where: str, close: str) -> list[str]:
    """The arguments as JSON with bare keys and strings between delimiters (Gemma's
    ``{city:<|"|>Paris<|"|>,days:3}``), read by the contract's value nodes.

    A delimited string is verbatim text. Other values are JSON scalars, objects and lists.
    """
    if not isinstance(args, dict) or set(args) - {"unquoted_keys", "string_delims"}:
        raise ConfigurationError(f"{at}: JSON takes unquoted_keys and string_delims here")
    if args.get("unquoted_keys") is not True:
        raise ConfigurationError(f"{at}.unquoted_keys: only bare keys are read (true)")
    delims = args.get("string_delims")
    if not (
        isinstance(delims, list)
        and len(delims) == 1
        and isinstance(delims[0], list)
        and len(delims[0]) == 2
        and all(isinstance(d, str) and d for d in delims[0])
    ):
        raise ConfigurationError(f"{at}.string_delims: one [open, close] pair of strings")
    quote, unquote = (_literal(d) for d in delims[0])
    where = f"\t{at}"
    lines = [
        "rt_call: rt_head (rt_param (RT_COMMA rt_param)*)? RT_ARGS_END -> call",
        "rt_head: RT_CALL_OPEN -> call_name",
        "rt_param: rt_key (rt_string | rt_scalar | rt_object | rt_list) -> param",
        "rt_key: RT_KEY -> param_name",
        "rt_string: rt_text -> param_value",
        "rt_text: RT_QUOTE RT_STRING_RUN? RT_UNQUOTE -> cdata",
        "rt_scalar: RT_SCALAR -> raw_value",
        "rt_object: RT_LBRACE (rt_member (RT_COMMA rt_member)*)? RT_RBRACE -> value_object",
        "rt_member: rt_member_key _rt_value -> value_member",
        "rt_member_key: RT_KEY -> value_key",
        "rt_list: RT_LBRACKET (_rt_value (RT_COMMA _rt_value)*)? RT_RBRACKET -> value_array",
        "_rt_value: rt_vstring | rt_vscalar | rt_object | rt_list",
        "rt_vstring: RT_QUOTE RT_VSTRING_RUN? RT_UNQUOTE -> value_string",
        "rt_vscalar: RT_SCALAR -> value_scalar",
        f"RT_CALL_OPEN: /(?:{_trailing_space_dropped(opener)})\\s{{0,64}}\\{{/\t{open_where}",
        f"RT_ARGS_END.2: /\\s{{0,64}}\\}}\\s{{0,64}}(?:{close})/\tfields.tool_calls.close",
        "RT_KEY: /\\s{0,64}(?P<v>\\w{1,128})\\s{0,64}:/" + where,
        "RT_COMMA: /\\s{0,64},/",
        f"RT_QUOTE: /\\s{{0,64}}{quote}/{where}",
        f"RT_STRING_RUN: /(?:(?!{unquote})[\\s\\S])+/{where}",
        f"RT_VSTRING_RUN: /(?:(?!{unquote})[\\s\\S])+/{where}",
        f"RT_SCALAR: /\\s{{0,64}}{_JSON_SCALAR}/",
        "RT_LBRACE: /\\s{0,64}\\{/",
        "RT_RBRACE: /\\s{0,64}\\}/",
        "RT_LBRACKET: /\\s{0,64}\\[/",
        "RT_RBRACKET: /\\s{0,64}\\]/",
    ]
    return [*lines, f"RT_UNQUOTE: /{unquote}/{where}"]  # (no white space: the string's)


#: An xml-inline ``tag_pattern`` callsieve reads: literal text, the key group, literal text,
#: the lazy value group (white space around it optional), literal text.
_LITERAL = r"(?:[^()\\\[\]*+?{}|^$.]|\\s\*|\\.)"
_TAG_SHAPE = re.compile(
    rf"(?P<pre>{_LITERAL}+)\(\?P<key>(?P<cls>[^()]+)\)(?P<mid>{_LITERAL}*?)"
    rf"(?:\\s\*)?\(\?P<value>\.\*\?\)(?:\\s\*)?(?P<post>{_LITERAL}+)"
)


def _xml_inline(args: Any, at: str) -> list[str]:
    if not isinstance(args, dict) or set(args) - {"tag_pattern", "value_parser"}:
        raise ConfigurationError(f"{at}: xml-inline takes tag_pattern and value_parser")
    parser = args.get("value_parser")
    if parser is not None and parser != {"name": "json", "args": {"allow_non_json": True}}:
        raise ConfigurationError(
            f"{at}.value_parser: only JSON with allow_non_json (a value is JSON where it is one)"
        )
    pattern = args.get("tag_pattern")
    m = _TAG_SHAPE.fullmatch(pattern) if isinstance(pattern, str) else None
    if m is None:
        raise ConfigurationError(
            f"{at}.tag_pattern: callsieve reads LITERAL(?P<key>…)LITERAL\\s*(?P<value>.*?)"
            "\\s*LITERAL only"
        )
    key = _pattern(m.group("cls"), f"{at}.tag_pattern", ())
    pre, mid, post = (_pattern(m.group(g), f"{at}.tag_pattern", ()) for g in ("pre", "mid", "post"))
    where = f"\t{at}.tag_pattern"
    return [
        "rt_call: rt_head (rt_param | _RT_SKIP_RUN)* RT_CALL_CLOSE -> call",
        "rt_head: RT_CALL_OPEN -> call_name",
        "rt_param: rt_key rt_value? RT_PARAM_CLOSE -> param",
        "rt_key: RT_PARAM_OPEN -> param_name",
        "rt_value: RT_VALUE_RUN -> raw_value",
        f"RT_PARAM_OPEN: /\\s{{0,64}}{pre}(?P<v>{key}){mid}\\s{{0,64}}(?=\\S)/{where}",
        f"RT_PARAM_CLOSE: /\\s{{0,64}}{post}/{where}",
        f"RT_VALUE_RUN: /(?:(?!\\s{{0,64}}{post})[\\s\\S])+/{where}",
        "_RT_SKIP_RUN: /(?:(?!\\s{0,64}<)[\\s\\S])+/",
    ]


# ---------------------------------------------------------------------------- the check


def _check(draft: _Draft, text: str) -> None:
    """Load the grammar as ``Sieve`` would; a refusal names the spec's field it came from."""
    with tempfile.TemporaryDirectory(prefix="callsieve-rt-") as folder:
        (Path(folder) / f"{draft.name}.lark").write_text(text, encoding="utf-8")
        try:
            load_grammar((draft.name,), (folder,))
        except GrammarError as e:
            why = str(e).replace(str(Path(folder)) + os.sep, "")
            raise ConfigurationError(
                f"{_blame(draft, why)}: the engine refuses it: {why}"
            ) from None


def _blame(draft: _Draft, message: str) -> str:
    line = re.search(re.escape(draft.name) + r"\.lark:(\d+)", message)
    if line is not None and int(line.group(1)) in draft.fields_at:
        return draft.fields_at[int(line.group(1))]
    for term, where in draft.terminals.items():
        if term in message:
            return where
    return "response_template"
