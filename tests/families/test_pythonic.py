"""SPEC §19 ``pythonic``: a Python list of calls with keyword arguments, Llama 3.2's and Llama
4's format (grammar/pythonic.lark). The cases follow Meta's prompt formats and the fixtures of
vLLM's ``test_pythonic_tool_parser.py`` and ``test_llama4_pythonic_tool_parser.py``; each runs
every way ``family_cases.FamilySuite`` drives it.

Where vLLM differs, on purpose: it keeps the good calls of a list when one call cannot be
converted (``[bad(x=b'z'), good()]``); here a call that cannot be built fails its block, as in
every dialect (SPEC §4), and the block stays text. Arguments go out whole when a call's ``)``
arrives (a Python literal is no JSON the argument stream could send as it comes).
"""

from __future__ import annotations

import pytest
from family_cases import Case, FamilySuite
from helpers import run_all_ways

import callsieve

D = "pythonic"

SIMPLE = "get_weather(city='San Francisco', metric='celsius')"
SIMPLE_CALL = ("get_weather", {"city": "San Francisco", "metric": "celsius"})
MORE = (
    "register_user(name='John Doe', age=37, address={'city': 'San Francisco', "
    "'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])"
)
MORE_CALL = (
    "register_user",
    {
        "name": "John Doe",
        "age": 37,
        "address": {"city": "San Francisco", "state": "CA"},
        "role": None,
        "passed_test": True,
        "aliases": ["John", "Johnny"],
    },
)

CASES = [
    Case(
        "simple",
        f"[{SIMPLE}]",
        [SIMPLE_CALL],
        answer="",
    ),
    Case(
        "more-types",
        f"[{MORE}]",
        [MORE_CALL],
        answer="",
    ),
    Case(
        "parameterless",
        "[get_weather()]",
        [("get_weather", {})],
        answer="",
    ),
    Case(
        "empty-dict",
        "[do_something_cool(additional_data={})]",
        [("do_something_cool", {"additional_data": {}})],
        answer="",
    ),
    Case(
        "empty-list",
        "[do_something_cool(steps=[])]",
        [("do_something_cool", {"steps": []})],
        answer="",
    ),
    Case(
        "escaped-strings",
        r"""[get_weather(city='Martha\'s Vineyard', metric='\"cool units\"')]""",
        [("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})],
        answer="",
    ),
    Case(
        "parallel",
        f"[{SIMPLE}, {MORE}]",
        [SIMPLE_CALL, MORE_CALL],
        answer="",
    ),
    Case(
        "parallel-no-spaces",
        "[get_weather(city='LA',metric='C'),register_user(name='Doe',age=9)]",
        [
            ("get_weather", {"city": "LA", "metric": "C"}),
            ("register_user", {"name": "Doe", "age": 9}),
        ],
        answer="",
    ),
    Case(
        "llama4-tags",
        "<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>",
        [("get_weather", {"city": "LA", "metric": "C"})],
        answer="",
    ),
    Case(
        "llama4-no-end-tag",
        "<|python_start|>[get_weather(city='LA', metric='C'),register_user(name='Doe', age=9)]",
        [
            ("get_weather", {"city": "LA", "metric": "C"}),
            ("register_user", {"name": "Doe", "age": 9}),
        ],
        answer="",
    ),
    Case(
        "llama4-text-after-end-tag",
        "<|python_start|>[now()]<|python_end|> and then",
        [("now", {})],
        answer=" and then",
    ),
    Case(
        "double-quotes-numbers-signs",
        '[get_forecast(city="東京", days=3, offset=-1.5, exp=1e3, units="metric")]',
        [
            (
                "get_forecast",
                {"city": "東京", "days": 3, "offset": -1.5, "exp": 1000.0, "units": "metric"},
            )
        ],
        answer="",
    ),
    Case(
        "json-literals",
        "[set_flags(a=true, b=false, c=null)]",
        [("set_flags", {"a": True, "b": False, "c": None})],
        answer="",
    ),
    Case(
        "tuples-and-sets",
        "[f(pair=(1, 2), tags={'x'})]",
        [("f", {"pair": [1, 2], "tags": ["x"]})],
        answer="",
    ),
    Case(
        "brackets-in-strings",
        """[f(s=")]", t='a,b', u="[{(")]""",
        [("f", {"s": ")]", "t": "a,b", "u": "[{("})],
        answer="",
    ),
    Case(
        "dotted-name",
        "[math.sqrt(x=4)]",
        [("math.sqrt", {"x": 4})],
        answer="",
    ),
    Case(
        "multi-line",
        "[\n  search(\n    query='lark parser',\n    limit=5,\n  ),\n  get_time(),\n]",
        [("search", {"query": "lark parser", "limit": 5}), ("get_time", {})],
        answer="",
    ),
    Case(
        "text-around",
        'I will check. [get_weather(city="SF", days=3)] Done.',
        [("get_weather", {"city": "SF", "days": 3})],
        answer="I will check.  Done.",
    ),
    Case(
        "markdown-link",
        "See [the docs](https://example.com/a(b)) and [1].",
        [],
        answer="See [the docs](https://example.com/a(b)) and [1].",
        wraps=False,
    ),
    Case(
        "positional-argument",
        "[print(x)] is how you print.",
        [],
        answer="[print(x)] is how you print.",
        wraps=False,
    ),
    Case(
        "bytes-fails-the-block",
        "[bad(x=b'z'), get_weather(city='SF')]",
        [],
        answer="[bad(x=b'z'), get_weather(city='SF')]",
        wraps=False,
    ),
    Case(
        "out-of-range",
        "[calc(x=1e999)]",
        [],
        answer="[calc(x=1e999)]",
        wraps=False,
    ),
    Case(
        "expression",
        "[calc(x=1+2)]",
        [],
        answer="[calc(x=1+2)]",
        wraps=False,
    ),
    Case(
        "name-value",
        "[calc(x=y)]",
        [],
        answer="[calc(x=y)]",
        wraps=False,
    ),
    Case(
        "kwargs",
        "[calc(**opts)]",
        [],
        answer="[calc(**opts)]",
        wraps=False,
    ),
    Case(
        "mismatched-brackets",
        "[foo(x=1])]",
        [],
        answer="[foo(x=1])]",
        wraps=False,
    ),
    Case(
        "unterminated-string",
        "[foo(x='abc)]",
        [],
        answer="[foo(x='abc)]",
        wraps=False,
    ),
    Case(
        "never-closed",
        "[get_weather(city='SF')",
        [],
        answer="[get_weather(city='SF')",
        wraps=False,
    ),
]


class TestPythonic(FamilySuite):
    dialect = D
    cases = CASES


def test_a_call_completes_at_its_parenthesis() -> None:
    """Under early_emit="invoke" a call goes out when its `)` arrives; the block ends at `]`."""
    sieve = callsieve.Sieve(dialects=(D,), early_emit="invoke")
    events = sieve.feed("[a(x=1), b(")
    assert [c.name for e in events if isinstance(e, callsieve.ToolCalls) for c in e.calls] == ["a"]
    events = sieve.feed("y='(')]tail") + sieve.close()
    assert [c.name for e in events if isinstance(e, callsieve.ToolCalls) for c in e.calls] == ["b"]
    assert "".join(e.text for e in events if isinstance(e, callsieve.Text)) == "tail"


@pytest.mark.parametrize(
    "doc",
    [
        "```python\n[get_weather(city='SF')]\n```\n",
        "Use `[get_weather(city='SF')]` to call it.",
    ],
)
def test_quoted_calls_are_examples(doc: str) -> None:
    r = run_all_ways(doc, dialects=(D,))
    assert r.calls == () and r.text == doc
