"""SPEC §19 ``functionary_v32``: MeetKai Functionary v3.2 (functionary-small/medium-v3.2).
Each message goes to a recipient: ``>>>NAME\\n`` then a JSON object is a call, ``>>>all\\n``
then text for the user, ``>>>python\\n`` then raw code. The template ends the prompt with
``>>>``, so the first recipient comes without it. Sources: the chat template
(meetkai-functionary-medium-v3.2.jinja) and llama.cpp's functionary v3.2 parsers and
tests/test-chat.cpp. It uses the grammar contract's second edition (SPEC §12): ``all`` is a
frame, the first recipient anchored at the reply's start, raw Python a ``body_code``."""

from __future__ import annotations

from pathlib import Path

import pytest
from family_cases import Case, FamilySuite
from helpers import run_all_ways

from callsieve import parse

DIALECT = "functionary_v32"
TEMPLATE = (
    Path(__file__).parents[3]
    / "shared"
    / "templates"
    / "chat"
    / "meetkai-functionary-medium-v3.2.jinja"
)

CASES = [
    Case(
        # (an anchored first call: not drafted in reasoning, where it is not the reply's start)
        "first-call-without-marker",
        'get_weather\n{"location": "San Francisco, CA", "unit": "celsius"}',
        [("get_weather", {"location": "San Francisco, CA", "unit": "celsius"})],
        answer="",
        wraps=False,
    ),
    Case(
        # llama.cpp's test: text to the user, then a call right after it
        "all-then-call",
        'all\nHello, world!\nnono\nWhat\'s up?>>>special_function\n{"arg1": 1}\n',
        [("special_function", {"arg1": 1})],
        answer="Hello, world!\nnono\nWhat's up?\n",
        wraps=False,
    ),
    Case(
        "text-only",
        "all\nHello, world!\nWhat's up?",
        [],
        answer="Hello, world!\nWhat's up?",
        wraps=False,
    ),
    Case(
        "marked-all-then-call",
        '>>>all\nLet me call a tool\n>>>special_function\n{"arg1":1}',
        [("special_function", {"arg1": 1})],
        answer="Let me call a tool\n",
    ),
    Case(
        "parallel-calls",
        '>>>get_weather\n{"city": "Paris"}>>>get_time\n{"tz": "Europe/Paris"}',
        [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})],
        answer="",
    ),
    Case(
        # llama.cpp's test: raw Python, the rest of the reply
        "raw-python-first",
        "python\n# This is a program:\nprint('hey')",
        [("python", {"code": "# This is a program:\nprint('hey')"})],
        answer="",
        wraps=False,
    ),
    Case(
        "raw-python-up-to-the-next-recipient",
        ">>>python\nimport math\nprint(math.pi > 3)\n>>>all\nDone.",
        [("python", {"code": "import math\nprint(math.pi > 3)\n"})],
        answer="Done.",
    ),
    Case(
        "python-as-json",
        '>>>python\n{"code": "print(\'Hello, world!\')"}',
        [("python", {"code": "print('Hello, world!')"})],
        answer="",
    ),
    Case(
        "unclosed-json-stays-text",
        '>>>get_weather\n{"city": "Paris"',
        [],
        answer='>>>get_weather\n{"city": "Paris"',
    ),
    Case(
        # (a name and a JSON line later in prose: not the reply's start, so text)
        "name-line-in-prose-is-text",
        'Sure. The payload\n{"a": 1}\nis all.',
        [],
        answer='Sure. The payload\n{"a": 1}\nis all.',
    ),
]


class TestFunctionaryV32(FamilySuite):
    dialect = DIALECT
    cases = CASES


def test_first_recipient_after_reasoning() -> None:
    text = '<think>Weather in Paris.</think>\nget_weather\n{"city": "Paris"}'
    r = run_all_ways(text, dialects=[DIALECT])
    assert [(c.name, c.input) for c in r.calls] == [("get_weather", {"city": "Paris"})]
    assert (r.reasoning, r.text) == ("Weather in Paris.", "\n")


def test_all_is_a_frame_not_text() -> None:
    r = parse(">>>all\nHi.", dialects=[DIALECT])
    assert [(b.status, b.raw, b.dialect) for b in r.blocks] == [("frame", ">>>all\n", DIALECT)]
    assert r.text == "Hi." and r.calls == ()


def test_an_anchored_head_only_at_the_start() -> None:
    text = 'all\nok\nall\nget_weather\n{"city": "Paris"}'
    r = run_all_ways(text, dialects=[DIALECT])
    assert r.calls == () and r.text == 'ok\nall\nget_weather\n{"city": "Paris"}'


def test_the_template_writes_what_we_read() -> None:
    jinja2 = pytest.importorskip("jinja2")
    if not TEMPLATE.exists():
        pytest.skip("the shared templates are not here")
    env = jinja2.Environment()
    env.filters["tojson"] = lambda v: __import__("json").dumps(v)
    template = env.from_string(TEMPLATE.read_text(encoding="utf-8"))
    call = {"function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    rendered = template.render(
        messages=[
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [call]},
        ],
        tools=[],
        bos_token="",
        add_generation_prompt=False,
    )
    past = rendered[rendered.index(">>>all") :]
    r = parse(past, dialects=[DIALECT])
    assert [(c.name, c.input) for c in r.calls] == [("get_weather", {"city": "Paris"})]
    assert r.text.startswith("Checking.")
