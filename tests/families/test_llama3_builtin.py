"""SPEC §19 ``llama3_builtin``: Llama 3.1-3.3's built-in tools, ``<|python_tag|>`` then
``brave_search.call(query="…")`` or ``wolfram_alpha.call(query="…")`` and ``<|eom_id|>``.
The cases follow Meta's Llama 3.1 prompt format, its chat template
(``meta-llama-Llama-3.1-8B-Instruct.jinja``, which writes a past built-in call so) and the
outputs llama.cpp's Llama 3.x handler reads (its tests' ``brave_search`` and
``wolfram_alpha`` calls).

``<|python_tag|>`` is llama3_json's opener too: what follows the tag tells them apart (a
``{``: llama3_json; ``NAME.call(``: this), also with every dialect enabled.
``code_interpreter``'s raw Python after the tag is the call ``python`` with ``{"code": …}``
(a raw body, as llama.cpp reads it; Meta's name is not in the text). With functionary
enabled too (and under ``dialects="all"``), its tag outranks this one: the same call, read as
functionary's.
"""

from __future__ import annotations

from family_cases import Case, FamilySuite
from helpers import run_all_ways

SEARCH = ("brave_search", {"query": "current weather in Menlo Park, California"})
CODE = ("python", {"code": "import math\nprint(math.sqrt(2))"})

CASES = [
    Case(
        "brave-search",
        '<|python_tag|>brave_search.call(query="current weather in Menlo Park, California")',
        [SEARCH],
        answer="",
    ),
    Case(
        "brave-search-eom",
        '<|python_tag|>brave_search.call(query="current weather in Menlo Park, California")'
        "<|eom_id|>",
        [SEARCH],
        answer="",
    ),
    Case(
        "wolfram-alpha",
        '<|python_tag|>wolfram_alpha.call(query="solve x^2 + 2x + 1 = 0 for x")<|eom_id|>',
        [("wolfram_alpha", {"query": "solve x^2 + 2x + 1 = 0 for x"})],
        answer="",
    ),
    Case(
        "single-quotes-and-more-arguments",
        "<|python_tag|>brave_search.call(query='llama (animal)', count=3, safe=True)",
        [("brave_search", {"query": "llama (animal)", "count": 3, "safe": True})],
        answer="",
    ),
    Case(
        "text-before",
        'Let me search for that.\n<|python_tag|>brave_search.call(query="Llama 3.1 release")',
        [("brave_search", {"query": "Llama 3.1 release"})],
        answer="Let me search for that.\n",
    ),
    Case(
        "think-then-call",
        '<think>Search the web.</think><|python_tag|>brave_search.call(query="news")',
        [("brave_search", {"query": "news"})],
        answer="",
        wraps=False,
    ),
    Case(
        "positional-argument-is-text",
        '<|python_tag|>brave_search.call("news")',
        [],
        answer='<|python_tag|>brave_search.call("news")',
        wraps=False,
    ),
    # (with every dialect, raw code after the tag is functionary's: the same `python` call)
    Case(
        "code-interpreter-raw-python",
        "<|python_tag|>import math\nprint(math.sqrt(2))",
        [CODE],
        answer="",
        with_all=[CODE],
    ),
    Case(
        "code-interpreter-text-before-and-eom",
        "I'll compute it.\n<|python_tag|>import math\nprint(math.sqrt(2))<|eom_id|>",
        [CODE],
        answer="I'll compute it.\n<|eom_id|>",
        wraps=False,
        with_all=[CODE],
    ),
    Case(
        "code-that-looks-like-json-is-a-string",
        '<|python_tag|>data = {"a": 1}\nprint(data["a"])',
        [("python", {"code": 'data = {"a": 1}\nprint(data["a"])'})],
        answer="",
        with_all=[("python", {"code": 'data = {"a": 1}\nprint(data["a"])'})],
    ),
]


class TestLlama3Builtin(FamilySuite):
    dialect = "llama3_builtin"
    cases = CASES


def test_llama3_json_keeps_its_tagged_objects_beside_it() -> None:
    """``<|python_tag|>{…}`` stays llama3_json's with both enabled, and a built-in call is this
    dialect's."""
    text = (
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "SF"}}\n'
        '<|python_tag|>brave_search.call(query="SF")'
    )
    result = run_all_ways(text, dialects=("llama3_json", "llama3_builtin"))
    assert [(c.name, c.input, c.dialect) for c in result.calls] == [
        ("get_weather", {"city": "SF"}, "llama3_json"),
        ("brave_search", {"query": "SF"}, "llama3_builtin"),
    ]


def test_functionary_reads_the_raw_code_when_both_are_enabled() -> None:
    """One spelling, two dialects: functionary's tag outranks this one's, whichever comes
    first; the call is the same."""
    text = "<|python_tag|>print(1)"
    for dialects in (("llama3_builtin", "functionary"), ("functionary", "llama3_builtin")):
        result = run_all_ways(text, dialects=dialects)
        assert [(c.name, c.input, c.dialect) for c in result.calls] == [
            ("python", {"code": "print(1)"}, "functionary")
        ]
