"""SPEC §12: the parse tree becomes calls through ``CallTransformer``, a Lark ``Transformer``
whose methods are the rule-name contract (grammar/README.md, "The contract").

Part one: the transformer on hand-built trees, node by node, and against the hand walk it
replaced (kept below as ``reference_assemble``, the oracle for random trees). Part two: a
scratch dialect in a temporary folder whose rules carry the contract's names themselves
(no aliases, its own ``common.lark``), parsed whole and chunked every way."""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers import run_all_ways
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Token, Tree

from callsieve import parse
from callsieve._base.values import decode_param, parse_argument_object
from callsieve._blocks.assembler import CallTransformer, assemble_call
from callsieve._scan.decide import GroupToken

_QUOTES = "\"'“”‘’"  # the built-in grammar's quotes (common.lark's _NAME_VALUE)


# ---------------------------------------------------------------------------- tree builders
def tok(kind: str, text: str, **groups: str) -> Token:
    """A token as the scanner makes it: with its pattern's named groups, if it has any (a
    quoted ``v`` with the text inside its quotes in ``q``, as the built-in patterns have it)."""
    if not groups:
        return Token(kind, text)
    v = groups.get("v")
    if v is not None and "q" not in groups and len(v) >= 2 and v[0] in _QUOTES and v[-1] in _QUOTES:
        groups["q"] = v[1:-1]
    t = GroupToken(kind, text)
    t.groups = dict(groups)
    return t


def name_tok(name: str, quote: str = '"') -> Token:
    return tok("NAME_ATTR", f" name={quote}{name}{quote}", v=f"{quote}{name}{quote}")


def attr(key: str, value: str) -> Tree[Token]:
    return Tree("attr", [tok("ATTR", f' {key}="{value}"', k=key, v=f'"{value}"')])


def cdata(text: str) -> Tree[Token]:
    return Tree(
        "cdata", [tok("CDATA_OPEN", "<![CDATA["), tok("CDATA_RUN", text), tok("CDATA_CLOSE", "]]>")]
    )


def body(*parts: str | Tree[Token]) -> Tree[Token]:
    """``param_value``: a ``str`` is a text run, a tree a ``cdata`` node."""
    return Tree("param_value", [tok("TEXT_RUN", p) if isinstance(p, str) else p for p in parts])


def param(
    name: str | None, *parts: str | Tree[Token], attrs: tuple[Tree[Token], ...] = ()
) -> Tree[Token]:
    head: list[Any] = [tok("PARAM_OPEN", "<parameter")]
    if name is not None:
        head.append(Tree("param_name", [name_tok(name)]))
    return Tree(
        "param",
        [*head, *attrs, tok("TAG_END", ">"), body(*parts), tok("PARAM_CLOSE", "</parameter>")],
    )


def call(name: str | None, *children: Any) -> Tree[Token]:
    head: list[Any] = [tok("INVOKE_OPEN", "<invoke")]
    if name is not None:
        head.append(Tree("call_name", [name_tok(name)]))
    return Tree(
        "call",
        [
            *head,
            tok("TAG_END", ">"),
            tok("WS_RUN", "\n"),
            *children,
            tok("INVOKE_CLOSE", "</invoke>"),
        ],
    )


def native(*names: str, args: str) -> Tree[Token]:
    """A deepseek_native call as its aliases build it: ``call_name`` per name, ``call_args``."""
    return Tree(
        "call",
        [
            tok("NATIVE_CALL_BEGIN", "<｜tool▁call▁begin｜>"),
            *(Tree("call_name", [tok("NATIVE_HEAD", n, v=n)]) for n in names),
            tok("NATIVE_SEP", "<｜tool▁sep｜>"),
            Tree("call_args", [tok("NATIVE_JSON_RUN", args)]),
            tok("NATIVE_CALL_END", "<｜tool▁call▁end｜>"),
        ],
    )


# ---------------------------------------------------------------------------- the oracle
def _ref_value(node: Tree[Token], group: str) -> str | None:
    """A node's first token's group (for ``v``: ``q`` if it matched, the quotes being the
    grammar's to say), or its text."""
    for t in node.children:
        if isinstance(t, Token):
            groups = getattr(t, "groups", None)
            value = groups.get(group) if groups else None
            if group == "v" and groups and groups.get("q") is not None:
                value = groups["q"]
            return str(t).strip() if value is None else str(value)
    return None


# (over the complexity budget on purpose: the old code kept as it was, to compare against)
def reference_assemble(  # noqa: C901
    tree: Tree[Token], schemas: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The hand walk over ``child.data`` that ``CallTransformer`` replaced (callsieve 1.x's
    ``_assembler.assemble_call``, condensed): the behaviour it must keep."""
    name = ""
    params: list[tuple[str, list[tuple[bool, str]], str | None]] = []
    args: list[str] = []
    for child in tree.children:
        if not isinstance(child, Tree):
            continue
        kind = str(child.data)
        if kind == "call_name":
            v = _ref_value(child, "v")
            if v is not None:
                name = v.strip()
        elif kind == "param":
            pname, string_attr, parts = "", None, []
            for c in child.children:
                if not isinstance(c, Tree):
                    continue
                k = str(c.data)
                if k == "param_name":
                    v = _ref_value(c, "v")
                    if v is not None:
                        pname = v.strip()
                elif k == "attr":
                    key = _ref_value(c, "k")
                    if key is not None and key.strip().lower() == "string":
                        string_attr = (_ref_value(c, "v") or "").strip().lower()
                elif k == "param_value":
                    for part in c.children:
                        if isinstance(part, Token):
                            parts.append((False, str(part)))
                        elif isinstance(part, Tree) and str(part.data) == "cdata":
                            parts.append(
                                (
                                    True,
                                    "".join(
                                        str(t)
                                        for t in part.children
                                        if isinstance(t, Token) and t.type.endswith("_RUN")
                                    ),
                                )
                            )
            if not pname:
                raise ValueError("a parameter needs a name")
            params.append((pname, parts, string_attr))
        elif kind == "call_args":
            first = next((t for t in child.children if isinstance(t, Token)), None)
            args.append(str(first) if first is not None else "")
    if not name:
        raise ValueError("a call needs a non-empty name")
    props = (schemas.get(name) or {}).get("properties")
    props = props if isinstance(props, dict) else {}
    collected: dict[str, Any] = {}
    repeated: set[str] = set()
    for pname, parts, string_attr in params:
        prop = props.get(pname)
        value = decode_param(
            pname, parts, string_attr, prop.get("type") if isinstance(prop, dict) else None
        )
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


def outcome(f: Any, tree: Tree[Token], schemas: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", f(tree, schemas)
    except ValueError as exc:
        return "error", str(exc)


def both(tree: Tree[Token], schemas: dict[str, Any] | None = None) -> tuple[str, Any]:
    """The transformer's outcome, checked against the oracle's (and the tree unchanged)."""
    schemas = {} if schemas is None else schemas
    before = copy.deepcopy(tree)
    got = outcome(assemble_call, tree, schemas)
    assert tree == before, "the transformer changed the tree"
    assert got == outcome(reference_assemble, tree, schemas)
    return got


# ---------------------------------------------------------------------------- node by node
def test_a_call_with_a_name_and_params() -> None:
    tree = call(
        "read_file", param("path", cdata("README.md")), tok("WS_RUN", "\n"), param("limit", " 10 ")
    )
    assert both(tree) == ("ok", ("read_file", {"path": "README.md", "limit": 10}))
    assert CallTransformer({}).transform(tree) == ("read_file", {"path": "README.md", "limit": 10})


def test_a_call_without_params_and_quoted_names() -> None:
    tree: Tree[Token] = Tree(
        "call", [Tree("call_name", [name_tok("f", "“")]), tok("EMPTY_END", "/>")]
    )
    assert both(tree) == ("ok", ("f", {}))


def test_repeated_params_collect_into_an_array_in_order() -> None:
    tree = call("f", param("tag", "a"), param("n", "1"), param("tag", "[1]"), param("tag", "c"))
    assert both(tree) == ("ok", ("f", {"tag": ["a", [1], "c"], "n": 1}))
    # a real array value stays one value; two of them make an array of arrays
    assert both(call("f", param("x", "[1]"), param("x", "[2]"))) == ("ok", ("f", {"x": [[1], [2]]}))


def test_cdata_and_text_mix() -> None:
    # CDATA is verbatim and sections concatenate; the text beside it keeps its place, its
    # entities decoded, the body's plain white space trimmed at both ends (SPEC §5)
    tree = call("f", param("p", "  ", cdata(" a<b "), cdata("&amp;"), " &amp; x "))
    assert both(tree) == ("ok", ("f", {"p": " a<b &amp; & x"}))
    # a plain body: trimmed, entities decoded, a JSON literal becomes its value
    assert both(call("f", param("p", " &lt;b&gt; "), param("q", " true ")))[1] == (
        "f",
        {"p": "<b>", "q": True},
    )
    # structured XML in CDATA becomes an object, except in raw-text fields
    xml = "<a>1</a><b>x</b>"
    assert both(call("f", param("p", cdata(xml)), param("content", cdata(xml))))[1] == (
        "f",
        {"p": {"a": 1, "b": "x"}, "content": xml},
    )
    # an empty cdata and an empty body
    assert both(
        call(
            "f",
            param("p", Tree("cdata", [tok("CDATA_OPEN", "<![CDATA["), tok("CDATA_CLOSE", "]]>")])),
            param("q"),
        )
    )[1] == ("f", {"p": "", "q": ""})


@pytest.mark.parametrize(
    ("attrs", "want"),
    [
        ((), 42),
        ((attr("string", "true"),), " 42 "),  # the raw string, not even trimmed
        ((attr("string", "false"),), 42),
        ((attr("String", "TRUE"),), " 42 "),  # key and value are read case-blind
        ((attr("type", "true"),), 42),  # only `string` carries meaning
        ((attr("string", "true"), attr("string", "false")), 42),  # the last one wins
    ],
)
def test_the_string_attribute(attrs: tuple[Tree[Token], ...], want: Any) -> None:
    assert both(call("f", param("n", " 42 ", attrs=attrs))) == ("ok", ("f", {"n": want}))


def test_string_false_parses_json_or_keeps_the_string() -> None:
    false = (attr("string", "false"),)
    assert both(
        call("f", param("a", cdata('{"k": [1]}'), attrs=false), param("b", "not json", attrs=false))
    )[1] == ("f", {"a": {"k": [1]}, "b": "not json"})


@pytest.mark.parametrize("schema_type", ["string", ["string", "null"]])
def test_a_schema_string_type_keeps_a_string(schema_type: Any) -> None:
    schemas = {
        "f": {
            "type": "object",
            "properties": {"n": {"type": schema_type}, "m": {"type": "integer"}},
        }
    }
    tree = call("f", param("n", "42"), param("m", "42"), param("c", cdata("<a>1</a><b/>")))
    assert both(tree, schemas)[1] == ("f", {"n": "42", "m": 42, "c": {"a": 1, "b": ""}})
    tree = call("f", param("n", cdata("<a>1</a><b/>"), attrs=(attr("string", "false"),)))
    assert both(tree, schemas)[1] == ("f", {"n": "<a>1</a><b/>"})
    # another tool's schema, or a schema without properties, changes nothing
    assert both(call("g", param("n", "42")), schemas)[1] == ("g", {"n": 42})
    assert both(call("f", param("n", "42")), {"f": {"properties": "?"}})[1] == ("f", {"n": 42})


def test_native_call_args_and_the_last_name() -> None:
    tree = native("function", "get_weather", args='{"city": "Paris", "days": 3}')
    assert both(tree) == ("ok", ("get_weather", {"city": "Paris", "days": 3}))
    # a fence is the grammar's to read (deepseek_native's tokens): call_args is JSON only
    fenced = native("f", args='```json\n{"a": [1, 2]}\n```')
    assert both(fenced) == ("error", "call arguments are not a JSON object")
    assert both(native("f", args="  ")) == ("ok", ("f", {}))
    assert both(Tree("call", [Tree("call_name", [tok("N", "f")]), Tree("call_args", [])])) == (
        "ok",
        ("f", {}),
    )
    # arguments merge after the parameters and win over them
    mixed = call("f", param("a", "1"), param("b", "2"), Tree("call_args", [tok("X", '{"a": 9}')]))
    assert both(mixed) == ("ok", ("f", {"a": 9, "b": 2}))


@pytest.mark.parametrize("args", ["[1, 2]", "{not json", '"text"'])
def test_call_args_that_are_not_an_object_fail_the_call(args: str) -> None:
    assert both(native("f", args=args)) == ("error", "call arguments are not a JSON object")


def test_a_call_without_a_name_fails_as_before() -> None:
    no_name = ("error", "a call needs a non-empty name")
    assert both(call(None, param("p", "1"))) == no_name
    assert both(call("", param("p", "1"))) == no_name  # name="" counts as none
    assert both(call("  ")) == no_name
    # the last name wins even when it is empty; a call_name without a token changes nothing
    assert both(native("f", "", args="{}")) == no_name
    assert both(Tree("call", [Tree("call_name", [tok("N", "f")]), Tree("call_name", [])])) == (
        "ok",
        ("f", {}),
    )
    with pytest.raises(ValueError, match="a call needs a non-empty name"):
        assemble_call(call(None), {})
    with pytest.raises(ValueError, match="a call needs a non-empty name"):
        CallTransformer({}).transform(call(None))


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ('{"a":}', "a JSON body is not a JSON object"),
        ("[1]", "a JSON body is not a JSON object"),
        ('{"name": 1}', "a JSON body's name is not a string"),
        ('{"name": "f", "arguments": "[1]"}', "a JSON body's arguments are not a JSON object"),
    ],
)
def test_a_json_body_that_cannot_be_read_fails_its_call(body: str, why: str) -> None:
    """(The hand walk had no JSON bodies: these are checked on their own.)"""
    tree = Tree("call", [Tree("call_json", [tok("JSON_RUN", body)])])
    with pytest.raises(ValueError, match=why):
        assemble_call(tree, {})
    assert assemble_call(Tree("call", [Tree("call_json", [tok("J", '{"name": "f"}')])]), {}) == (
        "f",
        {},
    )


def test_a_parameter_without_a_name_fails_its_call_first() -> None:
    assert both(call("f", param(None, "1"))) == ("error", "a parameter needs a name")
    assert both(call(None, param(None, "1"))) == ("error", "a parameter needs a name")


def test_nodes_outside_the_contract_are_ignored() -> None:
    """Rules the contract does not name are dropped with what is below them (a nameless
    param in one fails nothing), and contract nodes where the contract does not put them
    are ignored: as the hand walk did."""
    tree = call(
        "f",
        Tree("wrapper", [param("hidden", "1"), param(None, "x")]),  # unknown rule
        Tree("transform", [param("t", "1")]),  # named like a Transformer method
        attr("string", "true"),  # an attr directly in a call
        Tree("param_name", [name_tok("loose")]),  # a param_name outside a param
        body("loose body"),
        cdata("loose cdata"),
        param(
            "p",
            "1",
            Tree("extra", [tok("TEXT_RUN", "2")]),
            cdata("3"),
            Tree("param_name", [name_tok("inner")]),
            Tree("call_args", [tok("X", "9")]),
            attr("string", "true"),
        ),
        Tree(
            "param",
            [
                Tree("param_name", [name_tok("q")]),
                cdata("direct"),
                param("nested", "1"),
                body(" 5 "),
            ],
        ),
        None,  # what a nested call's rule leaves in the tree (its callback is discarded)
        call("inner", param("z", "1")),
    )
    assert both(tree) == ("ok", ("f", {"p": "13", "q": 5}))


def test_rule_names_may_be_tokens_and_the_root_must_be_a_call() -> None:
    tree = Tree(
        Token("RULE", "call"),
        [
            Tree(Token("RULE", "call_name"), [name_tok("f")]),
            Tree(
                Token("RULE", "param"),
                [
                    Tree(Token("RULE", "param_name"), [name_tok("a")]),
                    Tree(Token("RULE", "param_value"), [tok("T", "1")]),
                ],
            ),
        ],
    )
    assert both(tree) == ("ok", ("f", {"a": 1}))
    with pytest.raises(ValueError, match="not a call node"):
        assemble_call(Tree("param", []), {})
    assert CallTransformer({}).transform(Tree("unknown", [])) is None


def test_one_transformer_serves_many_threads() -> None:
    trees = [call(f"f{k}", *(param(f"p{j}", str(j)) for j in range(k % 5))) for k in range(40)]
    want = [reference_assemble(t, {}) for t in trees]
    shared = CallTransformer({})
    results: list[list[Any]] = []
    barrier = threading.Barrier(4)

    def work() -> None:
        barrier.wait()
        results.append([shared.transform(t) for t in trees * 25][: len(trees)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4


def test_assemble_call_keeps_one_transformer_per_schemas() -> None:
    import callsieve._blocks.assembler as asm

    s1: dict[str, Any] = {"f": {"properties": {"n": {"type": "string"}}}}
    s2: dict[str, Any] = {}
    tree = call("f", param("n", "1"))
    assert assemble_call(tree, s1) == ("f", {"n": "1"})
    first = asm._last[-1]
    assert assemble_call(tree, s1) == ("f", {"n": "1"}) and asm._last[-1] is first
    assert assemble_call(tree, s2) == ("f", {"n": 1}) and asm._last[-1] is not first


# ---------------------------------------------------------------------------- random trees
_LEAF_TEXT = st.sampled_from(
    [
        "",
        " ",
        "x",
        " 1 ",
        "[1]",
        "true",
        "&amp;",
        "<a>1</a><b>2</b>",
        '{"k": 1}',
        "''",
        '"q"',
        " name ",
    ]
)
_tokens = st.builds(
    lambda kind, text, grouped: tok(kind, text, v=text, k=text) if grouped else tok(kind, text),
    st.sampled_from(["TEXT_RUN", "CDATA_RUN", "NAME_ATTR", "ATTR", "X"]),
    _LEAF_TEXT,
    st.booleans(),
)
_tokens |= st.builds(
    lambda key, v: tok("ATTR", f" {key}={v}", k=key, v=v),
    st.sampled_from(["string", " String ", "type"]),
    st.sampled_from(['"true"', "false", "TRUE", "'false'", "x"]),
)
_NAMES = st.sampled_from(
    [
        "call_name",
        "param",
        "param_name",
        "param_value",
        "cdata",
        "attr",
        "call_args",
        "other",
        "transform",
        "call",
    ]
)
_nodes = st.recursive(
    _tokens | st.none(),
    lambda kids: st.builds(Tree, _NAMES, st.lists(kids, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(children=st.lists(_nodes, max_size=8), schema_type=st.sampled_from([None, "string"]))
def test_random_trees_assemble_as_the_hand_walk_did(children: list[Any], schema_type: Any) -> None:
    """Any tree — contract nodes in any place, unknown rules, tokens of any kind, with and
    without named groups — gives the same result or the same error as before."""
    props = {p: {"type": schema_type} for p in ("x", "1", "name", "true")}
    schemas = {n: {"properties": props} for n in ("x", "1", "name", "true")}
    both(Tree("call", children), schemas)


# ---------------------------------------------------------------------------- a scratch dialect
# Its rules carry the contract's names themselves, so it brings its own `common.lark` (the
# built-in one defines rules of those names for the markup dialects).
SCRATCH_COMMON = r"""
WS_RUN: /[\s]+/
CDATA_OPEN: "<![CDATA["
CDATA_RUN: /(?:(?!\]\]>)[\s\S])+/
CDATA_CLOSE: "]]>"
"""

SCRATCH = r"""
// [[calls]] [call name=f] [param name=p string=true]v[/param] [args]{…}[/args] [/call] [[/calls]]
sq: SQ_OPEN WS_RUN? (call WS_RUN?)+ SQ_CLOSE

call: SQ_CALL call_name+ attr* SQ_END WS_RUN? (param WS_RUN?)* (SQ_ARGS call_args SQ_ARGS_END WS_RUN?)? SQ_CALL_END
call_name: SQ_NAME
call_args: SQ_ARGS_RUN
param: SQ_PARAM param_name attr* SQ_END param_value SQ_PARAM_END
param_name: SQ_NAME
attr: SQ_ATTR
param_value: (SQ_TEXT_RUN | cdata)*
cdata: CDATA_OPEN CDATA_RUN? CDATA_CLOSE

SQ_OPEN: "[[calls]]"
SQ_CLOSE: "[[/calls]]"
SQ_CALL: /\[call(?= )/
SQ_CALL_END: "[/call]"
SQ_PARAM: /\[param(?= )/
SQ_PARAM_END: "[/param]"
SQ_END: "]"
SQ_NAME.2: / name=(?P<v>"(?P<q>[a-z_]{0,64})"|[a-z_]{1,64})(?=[ \]])/
SQ_ATTR: / (?P<k>[a-z]{1,16})=(?P<v>[a-z]{1,16})(?=[ \]])/
SQ_ARGS: "[args]"
SQ_ARGS_END: "[/args]"
SQ_ARGS_RUN: /(?:(?!\[\/args\])[\s\S])+/
SQ_TEXT_RUN: /(?:(?![\[<])[\s\S])+/
"""

SCRATCH_TEXT = (
    "Looking it up.\n[[calls]]\n"
    "[call name=function name=get_weather]\n"
    "[param name=city]Paris[/param]\n"
    "[param name=days string=false] 3 [/param]\n"
    "[param name=raw string=true] 3 [/param]\n"
    "[param name=zip]75001[/param]\n"
    "[param name=tag]a[/param][param name=tag]<![CDATA[b]]> &amp; c[/param]\n"
    "[param name=note]<![CDATA[x [y] <z>]]>[/param]\n"
    '[args]{"unit": "C"}[/args]\n'
    "[/call]\n"
    "[call name=ping][/call]\n"
    "[[/calls]] Done."
)

WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"zip": {"type": "string"}}},
}


@pytest.fixture
def scratch(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "common.lark").write_text(SCRATCH_COMMON, encoding="utf-8")
    (tmp_path / "sq.lark").write_text(SCRATCH, encoding="utf-8")
    return {"dialects": ("sq",), "grammar_dirs": (str(tmp_path),)}


def test_a_dialect_of_contract_names_only(scratch: dict[str, Any]) -> None:
    r = run_all_ways(SCRATCH_TEXT, tools=[WEATHER], **scratch)
    assert r.text == "Looking it up.\n Done."
    assert [(c.name, c.input, c.dialect) for c in r.calls] == [
        (
            "get_weather",
            {
                "city": "Paris",
                "days": 3,
                "raw": " 3 ",
                "zip": "75001",
                "tag": ["a", "b & c"],
                "note": "x [y] <z>",
                "unit": "C",
            },
            "sq",
        ),
        ("ping", {}, "sq"),
    ]
    # without the tools' schemas the zip code is a number
    assert parse(SCRATCH_TEXT, **scratch).calls[0].input["zip"] == 75001


def test_a_scratch_call_that_cannot_be_built_fails_its_block(scratch: dict[str, Any]) -> None:
    for bad, why in [
        ('[call name=""][/call]', "a call needs a non-empty name"),
        ("[call name=f][args][1][/args][/call]", "not a JSON object"),
    ]:
        text = f"a [[calls]]{bad}[[/calls]] b"
        r = run_all_ways(text, **scratch)
        assert (r.text, r.calls) == (text, ())
        assert [b.status for b in r.blocks] == ["failed"]
        assert any(why in d for d in r.blocks[0].diagnostics), r.blocks[0].diagnostics
