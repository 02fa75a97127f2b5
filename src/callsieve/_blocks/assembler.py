"""Strategy: map a call's parse tree to ``(name, input)`` with a Lark ``Transformer`` whose
methods are the rule-name contract (SPEC §12; the table is in grammar/README.md).

What it does: ``CallTransformer`` works bottom-up, one method per contract node (a rule's
own name or an alias ``-> name``): ``call_name`` and ``param_name`` read a name, ``attr`` a
``string="true|false"`` attribute, ``cdata`` and ``param_value`` a body's parts,
``call_args`` a JSON arguments text, ``call_json`` a JSON body (the arguments, or, in a call
with no ``call_name``, an envelope ``{"name", "arguments"}``), ``call_envelope`` a JSON object
that must be an envelope (JSON in prose), ``call_kwargs`` Python keyword arguments (literals
only, ``_base.values.python_kwargs``), ``call_id`` the model's id for
the call (a ``call_name`` inside it names the call too), ``param`` one parameter, ``call`` the
call (where the schemas decide each body's type). Each node but ``call`` becomes a tuple tagged with its
kind, and a method reads only the tags of its own direct children, so a contract node where
the contract does not put it (an ``attr`` directly in a ``call``) is ignored, and a rule
outside the contract is dropped with all that is below it (``__default__``). Attribute-like
tokens carry their value in the named group ``v`` (``k`` for the key) of their terminal's
pattern, a quoted one in ``q`` without its quotes. ``assemble_call`` is the entry point the
capture calls: ``(name, input)``, or ``(name, input, id)`` for a call that carries the model's
id.
What it guarantees: no dialect-specific Python; any grammar that follows the contract
assembles. The tree is not changed (its nodes may be shared with a parser snapshot). No
method raises: a ``call`` that cannot be built becomes its ``ValueError``, which
``transform`` raises for the root only (never wrapped in Lark's ``VisitError``; the block
then fails), so nothing the contract ignores can fail a call. A transformer holds nothing
but the schemas it was made with, so one serves every thread.
What it costs: linear in the call's nodes, once per call, on the hot path of tool-heavy
chat: the dispatch is one ``dict`` lookup per node (``_CONTRACT``, not Lark's ``getattr``
and ``VisitError`` guard per node), the nodes that read only tokens get their children as
they are, and the transformer is kept while the schemas stay the same object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Discard, Token, Transformer, Tree

from .._base.python_args import python_kwargs
from .._base.values import Structured, decode_param, load_json, parse_argument_object
from .._grammar import names as n
from .._grammar.directives import PLAIN_VALUES, EnvelopeKeys, ValueReading
from .value_nodes import BadValue, read_value

__all__ = [
    "CallTransformer",
    "Node",
    "assemble_call",
    "contract_value",
    "param_schema",
    "param_schema_type",
]


def _group(tok: Token, group: str) -> str:
    """A token's named group, as the scanner matched it in context (``GroupToken``); a token
    whose terminal has no such group stands for itself."""
    groups = getattr(tok, "groups", None)
    value = groups.get(group) if groups else None
    return str(tok).strip() if value is None else str(value)


def _value(tok: Token) -> str:
    """The value a name or attribute token stands for: its group ``q`` (a quoted value's
    text inside the quotes, which the pattern says) if that matched, else ``v``."""
    groups = getattr(tok, "groups", None)
    value = groups.get(n.QUOTED_GROUP) if groups else None
    return _group(tok, n.VALUE_GROUP) if value is None else str(value)


def _token_of(children: list[Any]) -> Token | None:
    """A node's first token."""
    for child in children:
        if isinstance(child, Token):
            return child
    return None


def _name_of(children: list[Any]) -> str | None:
    """The name a node's first token carries (``_value(tok)``, trimmed), or None.
    (Written out: it runs for every call and parameter.)"""
    for tok in children:
        if isinstance(tok, Token):
            groups = getattr(tok, "groups", None)
            if groups:
                value = groups.get(n.QUOTED_GROUP)
                if value is None:
                    value = groups.get(n.VALUE_GROUP)
            else:
                value = None
            return (str(tok) if value is None else str(value)).strip()
    return None


class Node:
    """What the contract nodes below ``call`` become: tuples tagged with a ``Node`` (told
    apart by type from what else a node's children are: tokens, ``Discard``, ``None``, and by
    the tag from a call's own ``(name, input)``). The argument stream reads the first five
    as they are reduced (``contract_value``). The tags are plain ints, read as class
    attributes (benchmarks/README.md, "Fast paths", "enum members as globals")."""

    CALL_NAME = 1  # (CALL_NAME, name)
    PARAM_NAME = 2  # (PARAM_NAME, name)
    STRING = 3  # (STRING, the value of a string="…" attribute, lower-cased)
    ID = 4  # (ID, the model's id for the call, the name a call_name inside it gave or None)
    PARAM = 5  # (PARAM, name or "" if it had none, body parts, string attribute, raw?)
    CDATA = 6  # (CDATA, verbatim content)
    BODY = 7  # (BODY, [(is_cdata, text), …])
    ARGS = 8  # (ARGS, JSON object text)
    JSON = 9  # (JSON, the JSON body's text)
    RAW = 10  # (RAW, a raw_value's text, verbatim)
    ENVELOPE = 11  # (ENVELOPE, the JSON text of an object that must be an envelope)
    KWARGS = 12  # (KWARGS, Python keyword arguments' text, up to the closing parenthesis)
    VALUE = 13  # (VALUE, the JSON value a value node gave, ``_blocks.value_nodes``)
    BAD_VALUE = 14  # (BAD_VALUE, why a value node, and so its call, cannot be read)


#: The nodes the argument stream reads (``contract_value``).
_STREAMED = frozenset((Node.CALL_NAME, Node.PARAM_NAME, Node.STRING, Node.ID, Node.PARAM))

Parts = list[tuple[bool, str]]
#: A parameter's body: its parts, or the value its value node gave.
Body = Parts | Structured


class CallTransformer(Transformer[Token, Any]):
    """The rule-name contract as a Lark ``Transformer``: ``transform`` on a ``call`` node
    gives ``(name, input)``, or raises ``ValueError`` (a call without a name, a parameter
    without one, arguments that are not a JSON object). ``schemas``: as
    ``_config.tools.schemas_of`` gives them, read only; ``envelope``: the keys a JSON
    envelope is read by (its dialect's, ``_grammar.directives``).

    Two departures from Lark's default, both invisible in the result: the method of a node
    is found in ``_CONTRACT`` (one ``dict`` lookup; a user rule named after some other
    attribute, such as ``transform``, is outside the contract like any other), and a node
    that reads tokens only (``_CONTRACT``'s ``False``), or a rule outside the contract, gets
    its children as they are: what its child nodes would become is ignored anyway, and
    transforming them has no effect, since no method raises or keeps state."""

    def __init__(
        self, schemas: dict[str, dict[str, Any]], reading: ValueReading = PLAIN_VALUES
    ) -> None:
        super().__init__(visit_tokens=False)
        self._schemas = schemas
        self._reading = reading  # (the dialect's: raw values as strings, the last value wins)

    def transform(self, tree: Tree[Token]) -> Any:
        """Lark's ``transform`` for a tree: what the root became (None if it is dropped);
        a ``call`` that cannot be built raises its ``ValueError``."""
        result = self._node(tree)
        if type(result) is ValueError:
            raise result
        return None if result is Discard else result

    def _node(self, tree: Tree[Token]) -> Any:
        entry = _CONTRACT.get(tree.data)
        if entry is None:
            return self.__default__(tree.data, tree.children, tree.meta)
        method, reads_nodes = entry
        if not reads_nodes:
            return method(self, tree.children)
        children = []  # (a loop, not a comprehension: cheaper on Python 3.11)
        for c in tree.children:
            children.append(self._node(c) if isinstance(c, Tree) else c)
        return method(self, children)

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        """A rule outside the contract: dropped, with all that is below it — except a
        ``body_<name>`` node, the parameter ``<name>`` (``body``)."""
        if str(data).startswith(n.BODY_PREFIX):
            return self.body(str(data)[len(n.BODY_PREFIX) :], children)
        return Discard

    def body(self, name: str, children: list[Any]) -> tuple[int, str, Parts, str | None, bool]:
        """A ``body_<name>`` node: the parameter ``name``, its tokens' text as written, a
        string whatever it looks like (a raw body: ``string="true"``)."""
        text = "".join(str(t) for t in children if isinstance(t, Token))
        return (Node.PARAM, name, [(False, text)], "true", True)

    # ------------------------------------------------------------------ the contract
    def call_name(self, children: list[Any]) -> Any:
        name = _name_of(children)
        return Discard if name is None else (Node.CALL_NAME, name)

    def param_name(self, children: list[Any]) -> Any:
        name = _name_of(children)
        return Discard if name is None else (Node.PARAM_NAME, name)

    def attr(self, children: list[Any]) -> Any:
        tok = _token_of(children)
        if tok is None or _group(tok, n.KEY_GROUP).strip().lower() != "string":
            return Discard  # (only `string` carries meaning, SPEC §2)
        return (Node.STRING, _value(tok).strip().lower())

    def cdata(self, children: list[Any]) -> tuple[int, str]:
        text = ""  # its run tokens; the delimiters are not content
        for tok in children:
            if isinstance(tok, Token) and tok.type.endswith(n.RUN_SUFFIX):
                text += tok
        return (Node.CDATA, str(text))

    def param_value(self, children: list[Any]) -> tuple[int, Parts]:
        parts: Parts = []
        for part in children:
            if isinstance(part, Token):
                parts.append((False, str(part)))
            elif type(part) is tuple and part[0] == Node.CDATA:
                parts.append((True, part[1]))
        return (Node.BODY, parts)

    def raw_value(self, children: list[Any]) -> tuple[int, str]:
        text = ""  # its tokens' text, as written
        for tok in children:
            if isinstance(tok, Token):
                text += tok
        return (Node.RAW, str(text))

    def value_object(self, children: list[Any]) -> tuple[int, Any]:
        return _value_node(n.VALUE_OBJECT, children)

    def value_array(self, children: list[Any]) -> tuple[int, Any]:
        return _value_node(n.VALUE_ARRAY, children)

    def value_string(self, children: list[Any]) -> tuple[int, Any]:
        return _value_node(n.VALUE_STRING, children)

    def value_scalar(self, children: list[Any]) -> tuple[int, Any]:
        return _value_node(n.VALUE_SCALAR, children)

    def call_args(self, children: list[Any]) -> tuple[int, str]:
        tok = _token_of(children)
        return (Node.ARGS, "" if tok is None else str(tok))

    def call_json(self, children: list[Any]) -> tuple[int, str]:
        return (Node.JSON, _joined(children))

    def call_envelope(self, children: list[Any]) -> tuple[int, str]:
        return (Node.ENVELOPE, _joined(children))

    def call_kwargs(self, children: list[Any]) -> tuple[int, str]:
        return (Node.KWARGS, _joined(children))

    def call_id(self, children: list[Any]) -> Any:
        """The id: the values of the tokens below it, in order (``v`` or the text, as for a
        name), joined; the name of a ``call_name`` directly inside it, if any."""
        parts: list[str] = []
        name = None
        for child in children:
            if isinstance(child, Token):
                parts.append(_name_of([child]) or "")
                continue
            if not isinstance(child, Tree):
                continue
            if child.data == n.CALL_NAME:
                named = _name_of(child.children)
                if named is not None:
                    name = named
            parts.extend(
                _name_of([t]) or "" for t in child.scan_values(lambda v: isinstance(v, Token))
            )
        ident = "".join(parts).strip()
        return Discard if not ident and name is None else (Node.ID, ident, name)

    def param(self, children: list[Any]) -> Any:
        name = ""  # (the last name wins; none: its call fails, see ``call``)
        string_attr: str | None = None
        parts: Parts | None = None  # (several bodies join in order)
        raw = False  # a raw_value body (``decode_raw``)
        structured: Structured | None = None  # a value node's value: it is the value
        for child in children:
            if type(child) is tuple:
                kind = child[0]
                if kind == Node.PARAM_NAME:
                    name = child[1]
                elif kind == Node.STRING:
                    string_attr = child[1]
                elif kind == Node.BODY:
                    parts = child[1] if parts is None else parts + child[1]
                elif kind == Node.RAW:
                    raw = True
                    parts = [(False, child[1])] if parts is None else [*parts, (False, child[1])]
                elif kind == Node.VALUE:
                    structured = Structured(child[1])
                elif kind == Node.BAD_VALUE:
                    return child  # (its call fails: ``_CallParts``)
        body: Body = [] if parts is None else parts
        return (Node.PARAM, name, body if structured is None else structured, string_attr, raw)

    def call(self, children: list[Any]) -> Any:
        """``(name, input)`` (``(name, input, id)`` if a ``call_id`` gave one), or the error
        that keeps it from being built (raised by ``transform`` for the root only: no node
        below it can fail it). Its children sorted (``_CallParts``), the JSON bodies read
        (an envelope may give the name and the id), then the input collected: the parameters,
        then the argument objects and keyword arguments, then the JSON bodies, each later one
        over the earlier."""
        try:
            parts = _CallParts(children)
            name, ident, json_args = _json_bodies(parts, self._reading.envelope)
            if not name:
                raise _NotBuilt("a call needs a non-empty name")
            collected = self._parameters(name, parts.params)
            for text in parts.args:
                obj = parse_argument_object(text)
                if obj is None:
                    raise _NotBuilt("call arguments are not a JSON object")
                collected.update(obj)
            for text in parts.kwargs:
                try:
                    collected.update(python_kwargs(text))
                except ValueError as exc:
                    raise _NotBuilt(
                        f"call arguments are not Python keyword arguments: {exc}"
                    ) from None
        except _NotBuilt as exc:
            return ValueError(*exc.args)  # (``transform`` raises a ValueError it gets)
        for obj in json_args:
            collected.update(obj)
        return (name, collected, ident) if ident else (name, collected)

    def _parameters(
        self, name: str, params: list[tuple[int, str, Body, str | None, bool]]
    ) -> dict[str, Any]:
        """The parameters' values by name, each decoded by its schema's type (a raw one as
        written, ``decode_raw``); a repeated name collects into an array, in order — or,
        where the dialect says so (``ValueReading.last_wins``), keeps its last value."""
        collected: dict[str, Any] = {}
        repeated: set[str] = set()
        strings, last_wins = self._reading.raw_strings, self._reading.last_wins
        for _, pname, parts, string_attr, raw in params:
            prop = param_schema(self._schemas, name, pname)
            schema_type = None if prop is None else prop.get("type")
            # (a raw value is its text only where no schema speaks of the parameter)
            value = decode_param(
                pname, parts, string_attr, schema_type, raw, strings and prop is None
            )
            if pname in collected and not last_wins:
                if pname not in repeated:
                    collected[pname] = [collected[pname]]
                    repeated.add(pname)
                collected[pname].append(value)
            else:
                collected[pname] = value
        return collected


class _NotBuilt(ValueError):
    """What keeps a call from being built (``CallTransformer.call`` returns it)."""


class _CallParts:
    """A call node's children, sorted: the name (the last wins: DeepSeek V3 says `function`
    first, then the name), the parameters, argument objects, keyword arguments, JSON bodies
    (each with whether it must be a whole envelope, ``call_envelope``) and the id."""

    __slots__ = ("name", "params", "args", "kwargs", "bodies", "ident")

    def __init__(self, children: list[Any]) -> None:
        self.name = ""
        self.params: list[tuple[int, str, Body, str | None, bool]] = []
        self.args: list[str] = []
        self.kwargs: list[str] = []
        self.bodies: list[tuple[str, bool]] = []
        self.ident = ""
        for child in children:
            if type(child) is not tuple:
                continue
            kind = child[0]
            if kind == Node.CALL_NAME:
                self.name = child[1]
            elif kind == Node.PARAM:
                if not child[1]:
                    raise _NotBuilt("a parameter needs a name")
                self.params.append(child)
            elif kind == Node.ARGS:
                self.args.append(child[1])
            elif kind == Node.JSON or kind == Node.ENVELOPE:
                self.bodies.append((child[1], kind == Node.ENVELOPE))
            elif kind == Node.KWARGS:
                self.kwargs.append(child[1])
            elif kind == Node.ID:
                self.ident = child[1] or self.ident
                if child[2] is not None:
                    self.name = child[2]
            elif kind == Node.BAD_VALUE:
                raise _NotBuilt(child[1])


def _json_bodies(parts: _CallParts, keys: EnvelopeKeys) -> tuple[str, str, list[dict[str, Any]]]:
    """The JSON bodies as objects, and the call's name and id: the parts' own, or, if it has
    none, those an envelope body gives (``_envelope``, by ``keys``: its arguments are then
    the body); a ``call_envelope`` body must be a whole envelope."""
    name, ident = parts.name, parts.ident
    json_args: list[dict[str, Any]] = []
    for text, strict in parts.bodies:
        body = _json_object(text)
        if body is None:
            raise _NotBuilt("a JSON body is not a JSON object")
        if strict or not name:
            read = _envelope(body, strict, keys)
            if isinstance(read, ValueError):
                raise _NotBuilt(*read.args)
            if read is not None:
                named, body, their_id = read
                name = name or named
                ident = ident or their_id
        json_args.append(body)
    return name, ident, json_args


def _value_node(kind: str, children: list[Any]) -> tuple[int, Any]:
    """What a value node becomes: ``(Node.VALUE, its JSON value)``, or ``(Node.BAD_VALUE, why)``."""
    try:
        return (Node.VALUE, read_value(kind, children))
    except BadValue as exc:
        return (Node.BAD_VALUE, str(exc))


def _joined(children: list[Any]) -> str:
    """The values of a node's tokens, joined: a token's group ``v`` where its terminal has one
    (the part of the token that belongs to the value), else its text."""
    parts: list[str] = []
    for tok in children:
        if isinstance(tok, Token):
            groups = getattr(tok, "groups", None)
            value = groups.get("v") if groups else None
            parts.append(str(tok) if value is None else str(value))
    return parts[0] if len(parts) == 1 else "".join(parts)


def _envelope(
    body: dict[str, Any], strict: bool, keys: EnvelopeKeys
) -> tuple[str, dict[str, Any], str] | ValueError | None:
    """What a JSON envelope says (grammar/README.md, ``call_json``), read by ``keys``:
    ``(name, arguments, id)``; None if ``body`` is no envelope (it is then the arguments),
    or, ``strict`` (``call_envelope``), the error that it is not a whole one."""
    ident = _first(body, keys.ident)
    inner = body
    if _first_key(body, keys.name) is None and isinstance(body.get(keys.function), dict):
        inner = body[keys.function]
        if not isinstance(ident, str):
            ident = _first(inner, keys.ident)
    name_key = _first_key(inner, keys.name)
    key = _first_key(inner, keys.arguments)
    if strict and (
        name_key is None
        or key is None
        or not body.keys() <= keys.known
        or not inner.keys() <= keys.known
    ):
        return ValueError("a JSON object in prose is no call envelope")
    if name_key is None:
        return None
    named = inner[name_key]
    if not isinstance(named, str):
        return ValueError("a JSON body's name is not a string")
    args: Any = {} if key is None else inner[key]
    if isinstance(args, str):  # (OpenAI's wire form: the object as a string)
        args = _json_object(args)
    if not isinstance(args, dict):
        return ValueError("a JSON body's arguments are not a JSON object")
    return named.strip(), args, ident.strip() if isinstance(ident, str) else ""


def _first_key(obj: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of ``keys`` that ``obj`` has (None: none)."""
    return next((k for k in keys if k in obj), None)


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The value under the first of ``keys`` that ``obj`` has (None: none)."""
    key = _first_key(obj, keys)
    return None if key is None else obj[key]


def _json_object(text: str) -> dict[str, Any] | None:
    """``text`` as a JSON object (white space around it is fine), or None."""
    try:
        value = load_json(text.strip())
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


#: Contract node → (its method, whether it reads child nodes: only then are its children
#: transformed first).
_CONTRACT: dict[str, tuple[Callable[[CallTransformer, list[Any]], Any], bool]] = {
    n.CALL: (CallTransformer.call, True),
    n.CALL_NAME: (CallTransformer.call_name, False),
    n.CALL_ARGS: (CallTransformer.call_args, False),
    n.CALL_JSON: (CallTransformer.call_json, False),
    n.CALL_ENVELOPE: (CallTransformer.call_envelope, False),
    n.CALL_KWARGS: (CallTransformer.call_kwargs, False),
    n.CALL_ID: (CallTransformer.call_id, False),
    n.PARAM: (CallTransformer.param, True),
    n.PARAM_NAME: (CallTransformer.param_name, False),
    n.ATTR: (CallTransformer.attr, False),
    n.PARAM_VALUE: (CallTransformer.param_value, True),
    n.CDATA: (CallTransformer.cdata, False),
    n.RAW_VALUE: (CallTransformer.raw_value, False),
    # (a value node reads the nodes below it itself, ``_blocks.value_nodes``: depth-bounded)
    n.VALUE_OBJECT: (CallTransformer.value_object, False),
    n.VALUE_ARRAY: (CallTransformer.value_array, False),
    n.VALUE_STRING: (CallTransformer.value_string, False),
    n.VALUE_SCALAR: (CallTransformer.value_scalar, False),
}

#: The transformer of the schemas and value reading last asked for (one slot, replaced
#: whole: safe under threads; a sieve passes the same schemas for every call).
_last: tuple[dict[str, dict[str, Any]], ValueReading, CallTransformer] = (
    {},
    PLAIN_VALUES,
    CallTransformer({}),
)


Built = tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]


def param_schema(schemas: dict[str, dict[str, Any]], call: str, param: str) -> Any:
    """The schema the tool ``call`` gives its property ``param`` (None: none)."""
    props = (schemas.get(call) or {}).get("properties")
    prop = props.get(param) if isinstance(props, dict) else None
    return prop if isinstance(prop, dict) else None


def param_schema_type(schemas: dict[str, dict[str, Any]], call: str, param: str) -> Any:
    """The ``type`` the tool ``call``'s schema gives its property ``param`` (None: none)."""
    prop = param_schema(schemas, call, param)
    return None if prop is None else prop.get("type")


def contract_value(tree: Tree[Token], schemas: dict[str, dict[str, Any]]) -> tuple[Any, ...] | None:
    """What a contract node below ``call`` becomes, for the argument stream
    (``_blocks.argstream``), which reads a call's nodes as they are reduced: one of the
    ``Node``-tagged tuples it reads (``CALL_NAME``, ``PARAM_NAME``, ``STRING``, ``ID``,
    ``PARAM``: ``decode_param`` makes a parameter's value as ``call`` will), else None."""
    result = _transformer(schemas)._node(tree)
    if type(result) is tuple and result[0] in _STREAMED:
        return result
    return None


def _transformer(
    schemas: dict[str, dict[str, Any]], reading: ValueReading = PLAIN_VALUES
) -> CallTransformer:
    global _last
    held, read, transformer = _last
    if held is not schemas or read is not reading:
        transformer = CallTransformer(schemas, reading)
        _last = (schemas, reading, transformer)
    return transformer


def assemble_call(
    tree: Tree[Token], schemas: dict[str, dict[str, Any]], reading: ValueReading = PLAIN_VALUES
) -> Built:
    """``(name, input)`` for one ``call`` node, ``(name, input, id)`` if it carries the
    model's id (``call_id``); ``ValueError`` if it cannot be built. ``reading``: how the
    block's dialect reads values (``DialectMap.value_reading_of``)."""
    transformer = _transformer(schemas, reading)
    if tree.data != n.CALL:
        raise ValueError(f"not a call node: {tree.data}")
    result: Built = transformer.transform(tree)
    return result
