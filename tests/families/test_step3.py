"""``step3``: StepFun Step-3. The calls between ``<｜tool_calls_begin｜>`` and
``<｜tool_calls_end｜>``, each ``<｜tool_call_begin｜>function<｜tool_sep｜>`` then a
``<steptml:invoke name="f">`` with ``<steptml:parameter name="p">v</steptml:parameter>``
children, then ``<｜tool_call_end｜>``. Values are raw text, typed by the tool's schema (a
string as it is, else a JSON value). The cases follow SGLang's and its router's Step-3 parser
tests (rewritten): one call with text around it, parallel calls, no parameters, JSON values,
markup in a value, a mention in prose. Step-3.5 writes Qwen3-Coder's format
(``qwen3_coder``: its chat template, ``stepfun-ai-Step-3.5-Flash.jinja``).

Step-3's opener is also DeepSeek's ``<｜tool▁calls▁begin｜>`` spelled with ``_``, which the
default ``deepseek_native`` accepts: the more specific opener wins (dialect isolation,
grammar/README.md "Entries"), so Step-3 reads beside the defaults too."""

from __future__ import annotations

from family_cases import Case, FamilySuite
from helpers import run_all_ways

from callsieve import DEFAULT_DIALECTS, parse

B, E = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
CB, CE, SEP = "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"


def call(name: str, *params: tuple[str, str], nl: str = "\n") -> str:
    body = "".join(f'{nl}<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in params)
    return f'{CB}function{SEP}<steptml:invoke name="{name}">{body}{nl}</steptml:invoke>{CE}'


SEARCH = call("search", ("query", "rust programming"), ("limit", "10"))

CASES = [
    Case(
        "sglang-example",
        f"Let me help you.\n{B}\n{SEARCH}\n{E}\nHere are the results...",
        [("search", {"query": "rust programming", "limit": 10})],
        answer="Let me help you.\n\nHere are the results...",
    ),
    Case(
        "parallel-calls",
        B
        + call("get_weather", ("city", "Beijing"), nl="")
        + call("get_weather", ("city", "Shanghai"), ("unit", "celsius"), nl="")
        + E,
        [
            ("get_weather", {"city": "Beijing"}),
            ("get_weather", {"city": "Shanghai", "unit": "celsius"}),
        ],
        answer="",
    ),
    Case(
        "no-parameters",
        f'{B}{CB}function{SEP}<steptml:invoke name="get_time"></steptml:invoke>{CE}{E}',
        [("get_time", {})],
        answer="",
    ),
    Case(
        "json-values",
        B
        + call(
            "create_event",
            ("attendees", '["ana@example.com", "li@example.cn"]'),
            ("options", '{"remind": true, "at": [15, 60]}'),
            ("public", "false"),
        )
        + E,
        [
            (
                "create_event",
                {
                    "attendees": ["ana@example.com", "li@example.cn"],
                    "options": {"remind": True, "at": [15, 60]},
                    "public": False,
                },
            )
        ],
        answer="",
    ),
    Case(
        "markup-in-a-value",
        B + call("write_file", ("path", "a.html"), ("content", "<p>a < b</p>\n<br/>")) + E,
        [("write_file", {"path": "a.html", "content": "<p>a < b</p>\n<br/>"})],
        answer="",
    ),
    Case(
        "a-mention-stays-text",
        f"Step-3 opens its calls with {B} and closes them with {E}.",
        [],
        answer=f"Step-3 opens its calls with {B} and closes them with {E}.",
    ),
    Case(
        "unclosed-block-stays-text",
        f'Sure.\n{B}{CB}function{SEP}<steptml:invoke name="f">',
        [],
        answer=f'Sure.\n{B}{CB}function{SEP}<steptml:invoke name="f">',
    ),
]


class TestStep3(FamilySuite):
    dialect = "step3"
    cases = CASES


def test_step3_reads_beside_the_default_dialects() -> None:
    """Issue 32: beside the defaults the reply gave no call and a failed ``deepseek_native``
    block; the more specific opener now opens a ``step3`` block, and DeepSeek's own spelling
    still opens DeepSeek's."""
    opts = {"dialects": (*DEFAULT_DIALECTS, "step3")}
    r = run_all_ways(CASES[0].text, **opts)
    assert [(c.name, c.dialect) for c in r.calls] == [("search", "step3")]
    native = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n"
        '{"a": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    assert [(c.name, c.dialect) for c in parse(native, **opts).calls] == [("f", "deepseek_native")]
