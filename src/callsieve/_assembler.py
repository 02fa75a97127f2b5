"""Strategy: map a parse tree to calls through the small rule-name contract (SPEC §12).

The contract (also in grammar/README.md): a tree node named ``call`` (a rule or an alias) is
one call; inside it ``call_name`` gives the name (the last one wins), ``param`` a parameter
(``param_name``, optional ``attr`` ``string="true|false"``, ``param_value`` made of text runs
and ``cdata`` nodes), ``call_args`` a JSON object of arguments. Attribute-like tokens carry
their value in the named group ``v`` (and ``k`` for the key) of their terminal's pattern.
What it guarantees: no dialect-specific Python; any grammar that follows the contract
assembles. Raises ``ValueError`` for a call that cannot be built (the block then fails).
What it costs: linear in the call's tokens, once per call.
"""

from __future__ import annotations

from typing import Any

from lark import Token, Tree

from ._values import decode_param, parse_argument_object

__all__ = ["assemble_call", "schemas_from_tools"]

_QUOTES = "\"'“”‘’"


def schemas_from_tools(tools: Any) -> dict[str, dict[str, Any]]:
    """``{tool name: parameters schema}`` from OpenAI-style
    ``{"type": "function", "function": {"name", "parameters"}}``, flat ``{"name",
    "parameters"}`` or Anthropic-style ``{"name", "input_schema"}`` entries (a ``None``
    schema counts as absent; no schema reads as ``{}``; a later tool of the same name wins).
    Lenient: an entry it cannot read is skipped — ``SieveOptions`` (``_options``) validates
    and normalises the definitions before they get here."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools or ():
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        spec: dict[str, Any] = fn if isinstance(fn, dict) else tool
        name = spec.get("name")
        if not isinstance(name, str):
            continue
        schema = spec.get("parameters")
        if schema is None:
            schema = spec.get("input_schema")
        out[name] = schema if isinstance(schema, dict) else {}
    return out


def _group(tok: Token, group: str) -> str:
    """A token's named group, as the scanner matched it in context (``GroupToken``); a token
    whose terminal has no such group stands for itself."""
    groups = getattr(tok, "groups", None)
    value = groups.get(group) if groups else None
    return str(tok).strip() if value is None else str(value)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] in _QUOTES and value[-1] in _QUOTES:
        return value[1:-1]
    return value


def _token_of(node: Any) -> Token | None:
    for child in node.children:
        if isinstance(child, Token):
            return child
    return None


def assemble_call(tree: Tree[Token],
                  schemas: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """``(name, input)`` for one ``call`` node."""
    name = ""
    params: list[tuple[str, list[tuple[bool, str]], str | None]] = []
    args: list[str] = []
    for child in tree.children:
        if not isinstance(child, Tree):
            continue
        kind = str(child.data)  # rule names may be lark Tokens, whose == is Python code
        if kind == "call_name":
            tok = _token_of(child)
            if tok is not None:
                name = _unquote(_group(tok, "v")).strip()
        elif kind == "param":
            params.append(_param(child))
        elif kind == "call_args":
            tok = _token_of(child)
            args.append(str(tok) if tok is not None else "")
    if not name:
        raise ValueError("a call needs a non-empty name")
    props = (schemas.get(name) or {}).get("properties")
    props = props if isinstance(props, dict) else {}
    collected: dict[str, Any] = {}
    repeated: set[str] = set()
    for pname, parts, string_attr in params:
        prop = props.get(pname)
        schema_type = prop.get("type") if isinstance(prop, dict) else None
        value = decode_param(pname, parts, string_attr, schema_type)
        if pname in collected:
            if pname not in repeated:
                collected[pname] = [collected[pname]]
                repeated.add(pname)
            collected[pname].append(value)
        else:
            collected[pname] = value
    for text in args:
        obj = parse_argument_object(text)
        if obj is None:
            raise ValueError("call arguments are not a JSON object")
        collected.update(obj)
    return name, collected


def _param(tree: Tree[Token]) -> tuple[str, list[tuple[bool, str]], str | None]:
    name = ""
    string_attr: str | None = None
    parts: list[tuple[bool, str]] = []
    for child in tree.children:
        if not isinstance(child, Tree):
            continue
        kind = str(child.data)  # rule names may be lark Tokens, whose == is Python code
        if kind == "param_name":
            tok = _token_of(child)
            if tok is not None:
                name = _unquote(_group(tok, "v")).strip()
        elif kind == "attr":
            tok = _token_of(child)
            if tok is not None and _group(tok, "k").strip().lower() == "string":
                string_attr = _unquote(_group(tok, "v")).strip().lower()
        elif kind == "param_value":
            for part in child.children:
                if isinstance(part, Token):
                    parts.append((False, str(part)))
                elif isinstance(part, Tree) and str(part.data) == "cdata":
                    parts.append((True, "".join(
                        str(t) for t in part.children
                        if isinstance(t, Token) and t.type.endswith("_RUN"))))
    if not name:
        raise ValueError("a parameter needs a name")
    return name, parts, string_attr
