"""SPEC §19 ``functiongemma``: Google FunctionGemma. Each call
``<start_function_call>call:NAME{…}<end_function_call>``, keys unquoted, strings between
``<escape>`` tokens, other values JSON. The cases follow the FunctionGemma chat templates
(llama.cpp's google-functiongemma.jinja, vLLM's example template) and the FunctionGemma
parsers' tests of vLLM and llama.cpp, rewritten here.

Where the peers differ: a value between ``<escape>``s is JSON where it is one (vLLM's reading,
its template writes every value so) unless the tool's schema types it ``string`` (llama.cpp
keeps the text). An object or list in Gemma's own syntax (unquoted keys, ``<escape>``
strings), at any depth, is read by the contract's value nodes (grammar/README.md, "Value
nodes"), as Gemma 4's is; JSON (the template's ``tojson``) is read as JSON."""

from __future__ import annotations

from family_cases import Case, FamilySuite, check_typed_by_schema

E = "<escape>"


def call(name: str, args: str) -> str:
    return f"<start_function_call>call:{name}{{{args}}}<end_function_call>"


CASES = [
    Case(
        "model-card",
        call("get_weather", f"location:{E}London{E}"),
        [("get_weather", {"location": "London"})],
        answer="",
    ),
    Case(
        "template-tojson-values",
        call(
            "set_config",
            f'theme:{E}dark{E},count:3,ratio:-0.5,on:true,none:null,config:{{"a": [1, "}}"]}},tags:["x", 2]',
        ),
        [
            (
                "set_config",
                {
                    "theme": "dark",
                    "count": 3,
                    "ratio": -0.5,
                    "on": True,
                    "none": None,
                    "config": {"a": [1, "}"]},
                    "tags": ["x", 2],
                },
            )
        ],
        answer="",
    ),
    Case(
        "vllm-template-escapes-every-value",
        call("book", f"city:{E}Paris{E},nights:{E}3{E},flex:{E}false{E}"),
        [("book", {"city": "Paris", "nights": 3, "flex": False})],
        answer="",
    ),
    Case(
        "parallel-with-text",
        "Let me check both.\n"
        + call("get_weather", f"city:{E}Tokyo{E}")
        + call("get_stock_price", f"symbol:{E}GOOG{E}")
        + "\nDone.",
        [("get_weather", {"city": "Tokyo"}), ("get_stock_price", {"symbol": "GOOG"})],
        answer="Let me check both.\n\nDone.",
    ),
    Case(
        "empty-arguments-and-empty-string",
        call("pwd", "") + call("echo", f"text:{E}{E}"),
        [("pwd", {}), ("echo", {"text": ""})],
        answer="",
    ),
    Case(
        "string-with-delimiters-of-the-syntax",
        call("say", f"text:{E}a {{b}}, c: <d> 'e'\n{E}"),
        [("say", {"text": "a {b}, c: <d> 'e'\n"})],
        answer="",
    ),
    Case(
        "unclosed-string-is-text",
        f"<start_function_call>call:say{{text:{E}hi}}<end_function_call>",
        [],
        answer=f"<start_function_call>call:say{{text:{E}hi}}<end_function_call>",
        wraps=False,
    ),
    Case(
        # (Gemma's own syntax, as Gemma 4's template writes a mapping)
        "gemma-syntax-object",
        call("set_config", f"config:{{theme:{E}dark{E},size:{{h:2,w:3}}}}"),
        [("set_config", {"config": {"theme": "dark", "size": {"h": 2, "w": 3}}})],
        answer="",
    ),
    Case(
        "gemma-syntax-lists",
        call(
            "plan",
            f"steps:[{E}a, b{E},{E}c:{{d}}{E}],"
            f"people:[{{name:{E}Ada{E},langs:[{E}en{E},{E}fr{E}]}},{{name:{E}Bo{E},langs:[]}}]",
        ),
        [
            (
                "plan",
                {
                    "steps": ["a, b", "c:{d}"],
                    "people": [
                        {"name": "Ada", "langs": ["en", "fr"]},
                        {"name": "Bo", "langs": []},
                    ],
                },
            )
        ],
        answer="",
    ),
    Case(
        "gemma-syntax-empty-and-scalars-inside",
        call("f", f"o:{{a:{{}},b:[],c:[1,-2.5,true,null,{E}x{E}],d:false}},j:{{}}"),
        [("f", {"o": {"a": {}, "b": [], "c": [1, -2.5, True, None, "x"], "d": False}, "j": {}})],
        answer="",
    ),
    Case(
        "gemma-syntax-object-unclosed-is-text",
        call("f", f"o:{{k:{E}v{E},l:[1}}"),
        [],
        answer=call("f", f"o:{{k:{E}v{E},l:[1}}"),
        wraps=False,
    ),
]


class TestFunctionGemma(FamilySuite):
    dialect = "functiongemma"
    cases = CASES


def test_a_string_schema_keeps_an_escaped_number_as_text() -> None:
    check_typed_by_schema("functiongemma", call("f", f"code:{E}0042{E},n:2.5"))
