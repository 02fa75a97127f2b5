"""SPEC §19 ``olmo3``: AI2 Olmo 3 (Instruct, Think). Python calls with keyword arguments, one a
line, inside ``<function_calls>`` tags; values are Python literals or JSON's
``true``/``false``/``null``, as the template writes them. The cases follow the chat template
(``tool_chat_template_olmo3.jinja``, its examples and its rendering of past calls) and the
inputs of vLLM's olmo3 parser tests (escaped quotes, Python and JSON literals, empty
containers, calls one a line).

``<function_calls>`` is antml's opener too: the first character after it that is not white
space tells them apart (a name: olmo3; a ``<``: antml), also with every dialect enabled.
Where vLLM differs, on purpose: it reads the calls with no tags too, and keeps the good calls
of a block with a bad one; here the tags are needed and such a block stays text.
"""

from __future__ import annotations

from family_cases import Case, FamilySuite
from helpers import run_all_ways

NYC = ("get_weather", {"city": "New York", "units": "celsius"})

CASES = [
    Case(
        "template-example",
        "<function_calls>\nget_weather(city='New York', units='celsius')\n</function_calls>",
        [NYC],
        answer="",
    ),
    Case(
        "one-a-line",
        "<function_calls>\nget_weather(city='New York', units='celsius')\n"
        "get_time(tz='America/New_York')\n</function_calls>",
        [NYC, ("get_time", {"tz": "America/New_York"})],
        answer="",
    ),
    Case(
        "json-literals",
        "<function_calls>\nbook(guests=2, vip=true, note=null, smoking=false, "
        'rooms=[101, 102], extra={"view": "sea"})\n</function_calls>',
        [
            (
                "book",
                {
                    "guests": 2,
                    "vip": True,
                    "note": None,
                    "smoking": False,
                    "rooms": [101, 102],
                    "extra": {"view": "sea"},
                },
            )
        ],
        answer="",
    ),
    Case(
        "escaped-quotes",
        "<function_calls>get_weather(city='Martha\\'s Vineyard', metric='\\\"cool units\\\"')"
        "</function_calls>",
        [("get_weather", {"city": "Martha's Vineyard", "metric": '"cool units"'})],
        answer="",
    ),
    Case(
        "python-literals-and-empty-containers",
        "<function_calls>register_user(name='John Doe', age=37, role=None, passed_test=True, "
        "aliases=['John', 'Johnny'])\ndo_something_cool(additional_data={}, steps=[])"
        "</function_calls>",
        [
            (
                "register_user",
                {
                    "name": "John Doe",
                    "age": 37,
                    "role": None,
                    "passed_test": True,
                    "aliases": ["John", "Johnny"],
                },
            ),
            ("do_something_cool", {"additional_data": {}, "steps": []}),
        ],
        answer="",
    ),
    Case(
        "no-arguments-and-text-before",
        "Let me look that up.\n<function_calls>\nget_time()\n</function_calls>",
        [("get_time", {})],
        answer="Let me look that up.\n",
    ),
    Case(
        "comma-between-calls",
        "<function_calls>get_weather(city='Paris'), get_weather(city='Rome')</function_calls>",
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        answer="",
    ),
    Case(
        "strings-with-brackets-and-tags",
        "<function_calls>\nrun(cmd=\"echo ')' && ls\", html='</function_calls>')\n"
        "</function_calls>",
        [("run", {"cmd": "echo ')' && ls", "html": "</function_calls>"})],
        answer="",
    ),
    Case(
        "think-then-call",
        "<think>Need the weather.</think>\n<function_calls>\n"
        "get_weather(city='New York', units='celsius')\n</function_calls>",
        [NYC],
        answer="\n",
        wraps=False,
    ),
    Case(
        "positional-argument-is-text",
        "<function_calls>\nget_weather('Paris')\n</function_calls>",
        [],
        answer="<function_calls>\nget_weather('Paris')\n</function_calls>",
        wraps=False,
    ),
    Case(
        "two-calls-on-one-line-are-text",
        "<function_calls>\na() b()\n</function_calls>",
        [],
        answer="<function_calls>\na() b()\n</function_calls>",
        wraps=False,
    ),
]


class TestOlmo3(FamilySuite):
    dialect = "olmo3"
    cases = CASES


def test_an_antml_block_is_still_antml_beside_olmo3() -> None:
    """``<function_calls>`` then ``<invoke …>`` is antml's block, with olmo3 enabled too."""
    text = (
        '<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Paris'
        "</parameter>\n</invoke>\n</function_calls>"
    )
    result = run_all_ways(text, dialects=("olmo3", "antml"))
    assert [(c.name, c.input, c.dialect) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}, "antml")
    ]
    result = run_all_ways(
        "<function_calls>\nf(a=1)\n</function_calls>", dialects=("antml", "olmo3")
    )
    assert [(c.name, c.input, c.dialect) for c in result.calls] == [("f", {"a": 1}, "olmo3")]
