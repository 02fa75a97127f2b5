"""Strategy: the prompt side (SPEC §16) — what a gateway writes *into* the model's prompt so
multi-turn tool use works: the tools (``tool_instructions``), the model's past calls
(``format_calls``) and the tools' results (``format_results``), each in the dialect's own
format, every tag spelled by the grammar (``grammar/spelling/<dialect>.lark``).

What it does: accepts OpenAI-style and Anthropic-style tool definitions, assistant
messages with ``tool_calls`` (or ``tool_use`` blocks), ``tool`` / ``tool_result``
messages, ``ToolCall`` objects, ``(name, input)`` pairs and plain strings
(``_prompt.inputs``). Calls are written by ``_prompt.write`` (DSML and XML) or
``callsieve.deepseek`` (``deepseek_native``). docs/prompt.md shows each dialect's shapes
and what they are based on.

>>> from callsieve import parse
>>> text = format_calls([("get_weather", {"city": "Hangzhou", "days": 3})], dialect="dsml_v4")
>>> print(text)
<｜DSML｜tool_calls>
<｜DSML｜invoke name="get_weather">
<｜DSML｜parameter name="city" string="true">Hangzhou</｜DSML｜parameter>
<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
</｜DSML｜invoke>
</｜DSML｜tool_calls>
>>> parse(text, dialects=("dsml_v4",)).calls[0].input
{'city': 'Hangzhou', 'days': 3}
>>> format_results(["22°C, sunny"], dialect="dsml_v32")
'<function_results>\\n<result>22°C, sunny</result>\\n</function_results>'

What it guarantees: ``parse(format_calls(calls, dialect=d), dialects=(d,))`` gives back the
same names and inputs whatever the values hold, and so does
``parse(format_calls(calls, d, tools=T), dialects=(d,), tools=T)`` for calls whose values
have the types ``T``'s schemas give them (property-tested for every dialect with a writer;
``tools`` changes how the raw-text families write a string-typed parameter, see
``format_calls``); what cannot be written exactly is a ``FormatError``. ``tool_instructions``'s
example call is written by ``format_calls`` under its tools, so it parses as the call it shows.
What it costs: the dialect's spellings and grammar are loaded once per process; writing is
linear in the calls (a plain parameter body is checked against the grammar's terminals
where its run would stop, ``_prompt.write``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import deepseek
from ._base.errors import FormatError
from ._grammar.names import SPELLINGS
from ._grammar.spelling import SLOT, Spelling, spelling
from ._prompt.inputs import read_calls, read_result_ids, read_results, read_tools
from ._prompt.template import raw_strings, template_calls, templated
from ._prompt.write import long_string, markup_calls, name_attr

__all__ = ["DEFAULT_PROMPT_DIALECT", "format_calls", "format_results", "tool_instructions"]

#: The dialect written when none is named: the recommended prompt format (SPEC §2).
DEFAULT_PROMPT_DIALECT = "dsml"
_NATIVE = "deepseek_native"


def _spelling(dialect: str, grammar_dirs: Sequence[str]) -> Spelling:
    return spelling(dialect, tuple(str(d) for d in grammar_dirs))


def _native(sp: Spelling) -> bool:
    """Is this the DeepSeek native protocol (written by ``callsieve.deepseek``), not markup?"""
    return sp.dialect == _NATIVE and SPELLINGS.INVOKE_OPEN not in sp


def format_calls(
    calls: Any,
    dialect: str = DEFAULT_PROMPT_DIALECT,
    *,
    tools: Any = None,
    grammar_dirs: Sequence[str] = (),
) -> str:
    """Past assistant tool calls as the model writes them in ``dialect``: one block holding
    every call, in order (messages are flattened: all their calls go in one block);
    ``""`` for no calls.

    ``tools`` (the definitions ``parse`` and ``Sieve`` take) tell a raw-text family
    (qwen3_coder, glm45, minimax_m2, seed_oss) which parameters are typed ``string``: it
    writes their strings as they are, as its template does, and the parser reads them back
    as strings under the same tools. Without a schema a string that would read as another
    JSON value (``"42"``) is written as a JSON string. The other dialects carry a value's
    type in the value itself. Under ``tools`` a markup call whose string-typed parameter is
    ``null``, or whose constrained string (``pattern``, ``format``, a length) holds ``]]>``
    in CDATA, is one JSON object body: a parameter line cannot carry it. So is one with a
    string in CDATA whose length bound is past the constraint's product (``maxLength``
    over 84: docs/constrained-decoding.md). In ``deepseek_native`` such a tool's call
    spells every backtick ``\\u0060``.

    >>> print(format_calls([{"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}],
    ...                    dialect="xml"))
    <tool_calls>
    <invoke name="now">
    </invoke>
    </tool_calls>
    >>> tools = [{"name": "f", "input_schema": {"properties": {"s": {"type": "string"}}}}]
    >>> print(format_calls([("f", {"s": "42"})], "seed_oss", tools=tools))
    <seed:tool_call>
    <function=f>
    <parameter=s>42</parameter>
    </function>
    </seed:tool_call>
    """
    items = read_calls(calls)
    schemas = {name: schema for name, _, schema in read_tools(tools)} if tools is not None else {}
    sp = _spelling(dialect, grammar_dirs)
    if _native(sp):
        return _native_calls(sp, items, schemas)
    if templated(sp):
        return template_calls(sp, items, tuple(str(d) for d in grammar_dirs), schemas)
    return markup_calls(sp, items, schemas)


def _native_calls(
    sp: Spelling, items: list[tuple[str, dict[str, Any]]], schemas: dict[str, Any]
) -> str:
    """``deepseek.format_calls``, but a call whose tool has a string with a length past the
    product's bound in the fence (``long_string``) spells every fence character as a
    ``\\u`` escape: the constraint takes that tool's strings so, with no product."""
    fence = sp[SPELLINGS.NATIVE_FENCE_END].strip()
    long = {name for name, _ in items if long_string(schemas.get(name), len(fence))}
    if not long or not fence:
        return deepseek.format_calls(items)
    escaped = f"\\u{ord(fence[0]):04x}"  # (the character stands in JSON strings only)
    written = []
    for name, arguments in items:
        text = deepseek.format_arguments(arguments)
        written.append((name, text.replace(fence[0], escaped) if name in long else text))
    return deepseek.format_block(written)


def format_results(
    results: Any, dialect: str = DEFAULT_PROMPT_DIALECT, *, grammar_dirs: Sequence[str] = ()
) -> str:
    """Tool results as the dialect's chat template puts them in the prompt, in order (one
    turn's results together); ``""`` for none. The text of a result is written as it is
    (the templates do not escape it).

    >>> format_results([{"role": "tool", "tool_call_id": "call_1", "content": "ok"}], "dsml_v4")
    '<tool_result>ok</tool_result>'
    """
    texts = read_results(results)
    sp = _spelling(dialect, grammar_dirs)
    if not texts:
        return ""
    if _native(sp):
        return deepseek.format_results(texts)
    # (a RESULT_OPEN with a slot takes the id of the call the result answers, else its number)
    ids = read_result_ids(results)
    opens = [sp.get(SPELLINGS.RESULT_OPEN).replace(SLOT, i or str(k), 1) for k, i in enumerate(ids)]
    body = sp.get(SPELLINGS.RESULT_SEP).join(
        o + t + sp.get(SPELLINGS.RESULT_CLOSE) for o, t in zip(opens, texts)
    )
    return sp.get(SPELLINGS.RESULTS_OPEN) + body + sp.get(SPELLINGS.RESULTS_CLOSE)


def _example_value(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return "value"
    for key in ("enum", "examples"):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema[key][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return (
        {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}, "null": None}.get(
            kind, "value"
        )
        if isinstance(kind, str)
        else "value"
    )


def _example(tool: tuple[str, str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    name, _, schema = tool
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    listed = schema.get("required")
    required = (
        [k for k in listed if isinstance(k, str) and k in props] if isinstance(listed, list) else []
    )
    keys = required or list(props)[:2]
    return name, {k: _example_value(props[k]) for k in keys}


def _example_calls(
    tools: Any, tool: tuple[str, str, dict[str, Any]], dialect: str, grammar_dirs: Sequence[str]
) -> str:
    """The example call, written under the tools' schemas; one whose values the schema's types
    cannot carry in the dialect (an example or default of another type) as without them."""
    calls = [_example(tool)]
    try:
        return format_calls(calls, dialect, tools=tools, grammar_dirs=grammar_dirs)
    except FormatError:
        return format_calls(calls, dialect, grammar_dirs=grammar_dirs)


#: The placeholder calls a template dialect's skeleton is written with (and, where a family's
#: names must be identifiers, as in Python calls, the same without the ``$``).
_PLACEHOLDERS = [
    ("$TOOL_NAME", {"$PARAMETER_NAME": "$VALUE"}),
    ("$TOOL_NAME2", {"$PARAMETER_NAME": "$VALUE"}),
]
_IDENTIFIER_PLACEHOLDERS = [
    ("TOOL_NAME", {"PARAMETER_NAME": "$VALUE"}),
    ("TOOL_NAME2", {"PARAMETER_NAME": "$VALUE"}),
]


def _skeleton(sp: Spelling) -> str:
    if templated(sp):  # (written by the writer: a shape that parses)
        try:
            return template_calls(sp, _PLACEHOLDERS, ())
        except FormatError:
            return template_calls(sp, _IDENTIFIER_PLACEHOLDERS, ())
    if _native(sp):  # a block that parses (a failed one
        # would be text, and its line-start fences would open a code fence, SPEC §6)
        args = deepseek.format_arguments({"$PARAMETER_NAME": "$VALUE"})
        return (
            deepseek.TOOL_CALLS_BEGIN
            + deepseek.format_call_prefix("$TOOL_NAME")
            + args
            + deepseek.format_call_tail(False)
            + deepseek.format_call_prefix("$TOOL_NAME2")
            + args
            + deepseek.format_call_tail(True)
        )
    param = (
        sp[SPELLINGS.PARAM_OPEN]
        + sp.fill(SPELLINGS.NAME_ATTR, "$PARAMETER_NAME")
        + sp.fill(SPELLINGS.ATTR, "true|false")
        + sp[SPELLINGS.TAG_END]
        + "$VALUE"
        + sp[SPELLINGS.PARAM_CLOSE]
    )
    return "\n".join(
        (
            sp[SPELLINGS.CALLS_OPEN],
            sp[SPELLINGS.INVOKE_OPEN] + name_attr(sp, "$TOOL_NAME", "tool") + sp[SPELLINGS.TAG_END],
            param,
            "...",
            sp[SPELLINGS.INVOKE_CLOSE],
            sp[SPELLINGS.INVOKE_OPEN]
            + name_attr(sp, "$TOOL_NAME2", "tool")
            + sp[SPELLINGS.TAG_END],
            "...",
            sp[SPELLINGS.INVOKE_CLOSE],
            sp[SPELLINGS.CALLS_CLOSE],
        )
    )


def _template_rules(sp: Spelling) -> list[str]:
    together = "BLOCK_OPEN" in sp
    rules = [
        "Several calls go in one block, one after another; they run in order."
        if together
        else "Write each call in a block of its own, one after another; they run in order."
    ]
    if sp["ARGS"] == "python":
        rules.append(
            "Write the arguments as Python keyword arguments (name=value), each value a Python "
            "literal: a quoted string, a number, True, False, None, a list or a dict."
        )
    elif sp["ARGS"] == "raw":
        rules.append(
            "Write a string value as it is, without quotes or escaping; write numbers, "
            "booleans, null, arrays and objects as JSON."
            + (
                ""
                if raw_strings(sp)
                else ' Where a parameter is not of type "string", write a string that would '
                'read as JSON, such as "42", as a JSON string in quotes.'
            )
        )
    elif sp["ARGS"] == "values":
        quote = sp.get("STRING_OPEN") + "..." + sp.get("STRING_CLOSE")
        rules.append(
            f"Write a string as it is between {quote}, without escaping; write keys without "
            "quotes, numbers, booleans and null as JSON, and objects and lists in this same "
            "syntax."
        )
    else:
        rules.append("Write the arguments as one JSON object.")
    return rules


def _rules(sp: Spelling) -> list[str]:
    if templated(sp):
        return _template_rules(sp)
    if _native(sp):
        return [
            "Write the arguments as one JSON object between the fences.",
            "Several calls go in one block, one after another; they run in order.",
        ]
    cdata = sp[SPELLINGS.CDATA_OPEN] + "..." + sp[SPELLINGS.CDATA_CLOSE]
    rules = [
        "Several invokes go in one block; they run in order.",
        (
            'Set string="true" for a string and write it as it is, without quotes or '
            'escaping; set string="false" for numbers, booleans, null, arrays and objects '
            "and write them as JSON."
        ),
    ]
    if sp.get(SPELLINGS.STRING_BODY) == "cdata":
        rules.append(
            f"Wrap every string value in {cdata}; a value holding "
            f"{sp['CDATA_CLOSE']} is split across two sections."
        )
    else:
        rules.append(f"A value that holds markup which could end the parameter goes in {cdata}.")
    return rules


def tool_instructions(
    tools: Any, dialect: str = DEFAULT_PROMPT_DIALECT, *, grammar_dirs: Sequence[str] = ()
) -> str:
    """The system-prompt text that teaches a model to call ``tools`` in ``dialect``: the
    block's shape, the rules, one example call to the first tool (its required parameters,
    with values from the schema: an enum's first, a default, or one of the type), and the
    tools, one JSON Schema per line.

    >>> from callsieve import parse
    >>> text = tool_instructions([{"name": "now", "input_schema": {"type": "object"}}])
    >>> text.splitlines()[0], parse(text).calls[-1].name
    ('## Tools', 'now')
    """
    defs = read_tools(tools)
    sp = _spelling(dialect, grammar_dirs)
    opener = sp[SPELLINGS.CALLS_OPEN].replace(SLOT, "NAME").strip()  # (`>>>NAME\n`)
    parts = [
        "## Tools",
        "",
        (
            f"You can call the tools listed below. To call tools, write a {opener} block "
            "like this as part of your reply:"
        ),
        "",
        _skeleton(sp),
        "",
        "Rules:",
    ]
    parts += [f"- {r}" for r in _rules(sp)]
    parts.append(
        "- Write such a block only to call tools; to show one to the user, put it in a code fence."
    )
    if defs:
        parts += [
            "",
            f"For example, to call {defs[0][0]}:",
            "",
            _example_calls(tools, defs[0], dialect, grammar_dirs),
        ]
    parts += ["", "Here are the tools, one JSON Schema per line:"]
    lines = [
        json.dumps({"name": n, "description": d, "parameters": s}, ensure_ascii=False)
        for n, d, s in defs
    ]
    parts += [
        t
        for t in (sp.get(SPELLINGS.FUNCTIONS_OPEN), *lines, sp.get(SPELLINGS.FUNCTIONS_CLOSE))
        if t
    ]
    return "\n".join(parts) + "\n"
