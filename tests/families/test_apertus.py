"""SPEC §19 ``apertus``: Swiss AI Apertus. The calls are one JSON list after
``<|tools_prefix|>``, each call an object whose one key is the tool's name and whose value is
its arguments, then ``<|tools_suffix|>``; the model reasons between ``<|inner_prefix|>`` and
``<|inner_suffix|>``. The cases follow the chat template (``Apertus-8B-Instruct.jinja``, which
writes past calls so) and the shapes llama.cpp's apertus handler and vLLM's parser read.

Where the peers differ, on purpose: they read the list with a JSON reader, so an object with
two keys would be two calls; the template writes one key per object, and here such an object
fails the block and stays text.
"""

from __future__ import annotations

from family_cases import Case, FamilySuite

WEATHER = ("get_weather", {"city": "Bern", "unit": "celsius"})
ONE = '<|tools_prefix|>[{"get_weather": {"city": "Bern", "unit": "celsius"}}]<|tools_suffix|>'

CASES = [
    Case("template-shape", ONE, [WEATHER], answer=""),
    Case(
        "parallel",
        '<|tools_prefix|>[{"get_weather": {"city": "Bern"}}, {"get_weather": {"city": "Zürich"}},'
        ' {"get_time": {}}]<|tools_suffix|>',
        [
            ("get_weather", {"city": "Bern"}),
            ("get_weather", {"city": "Zürich"}),
            ("get_time", {}),
        ],
        answer="",
    ),
    Case(
        "text-before-and-white-space",
        'Let me check.\n<|tools_prefix|>[\n  {"get_weather": {"city": "Bern", "unit": "celsius"}}\n]'
        "<|tools_suffix|>",
        [WEATHER],
        answer="Let me check.\n",
    ),
    Case(
        "nested-values",
        '<|tools_prefix|>[{"book": {"guests": [{"name": "Ana", "age": 31}], "vip": false, '
        '"note": "room {12} ]["}}]<|tools_suffix|>',
        [("book", {"guests": [{"name": "Ana", "age": 31}], "vip": False, "note": "room {12} ]["})],
        answer="",
    ),
    Case(
        "suffix-missing",
        '<|tools_prefix|>[{"get_time": {"tz": "Europe/Zurich"}}]',
        [("get_time", {"tz": "Europe/Zurich"})],
        answer="",
    ),
    Case(
        "reasoning-then-call",
        "<|inner_prefix|>The user wants the weather in Bern.<|inner_suffix|>" + ONE,
        [WEATHER],
        answer="",
        wraps=False,
    ),
    Case(
        "two-keys-is-text",
        '<|tools_prefix|>[{"a": {}, "b": {}}]<|tools_suffix|>',
        [],
        answer='<|tools_prefix|>[{"a": {}, "b": {}}]<|tools_suffix|>',
        wraps=False,
    ),
    Case(
        "arguments-not-an-object-is-text",
        '<|tools_prefix|>[{"get_time": "now"}]<|tools_suffix|>',
        [],
        answer='<|tools_prefix|>[{"get_time": "now"}]<|tools_suffix|>',
        wraps=False,
    ),
    Case(
        "json-in-prose-is-text",
        'The list [{"get_weather": {"city": "Bern"}}] is an example.',
        [],
        answer='The list [{"get_weather": {"city": "Bern"}}] is an example.',
        wraps=False,
    ),
]


class TestApertus(FamilySuite):
    dialect = "apertus"
    cases = CASES
