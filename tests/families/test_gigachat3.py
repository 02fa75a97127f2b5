"""SPEC §19 ``gigachat3``: GigaChat 3 and 3.1 (ai-sage). One call per turn, the JSON envelope
``{"name": …, "arguments": {…}}`` after GigaChat 3's ``<|message_sep|>`` and ``function
call<|role_sep|>`` role header, or after GigaChat 3.1's ``<|function_call|>``. The cases
follow the chat templates (``GigaChat3-10B-A1.8B.jinja``, ``GigaChat3.1-10B-A1.8B.jinja``),
llama.cpp's PR #19931 and the inputs of vLLM's gigachat3 parser tests.

Where the peers differ, on purpose: they find ``function call<|role_sep|>`` anywhere; here it
must follow the ``<|message_sep|>`` that ends the model's message (so a block never starts at
a letter), and a mention of the role in prose stays text. A ``<|message_sep|>`` with no call
after it ends the model's message: a frame, dropped from the text.
"""

from __future__ import annotations

from family_cases import Case, FamilySuite

WEATHER = ("get_weather", {"city": "Москва", "units": "celsius"})
ARGS = '{"name": "get_weather", "arguments": {"city": "Москва", "units": "celsius"}}'

CASES = [
    Case(
        "v3-role-header",
        "<|message_sep|>\n\nfunction call<|role_sep|>\n" + ARGS,
        [WEATHER],
        answer="",
    ),
    Case(
        "v3-text-before",
        "Сейчас узнаю погоду.<|message_sep|>\n\nfunction call<|role_sep|>\n" + ARGS,
        [WEATHER],
        answer="Сейчас узнаю погоду.",
    ),
    Case(
        "v3-message-end",
        "<|message_sep|>\n\nfunction call<|role_sep|>\n" + ARGS + "<|message_sep|>\n\n",
        [WEATHER],
        answer="\n\n",
    ),
    Case(
        "vllm-memory-tool-then-eos",
        "I'll check that for you.<|message_sep|>\n\nfunction call<|role_sep|>\n"
        '{"name": "manage_user_memory", "arguments": {"action": "create", "id": "preferences", '
        '"content": {"short_answers": true, "english_ui": false}}}</s>',
        [
            (
                "manage_user_memory",
                {
                    "action": "create",
                    "id": "preferences",
                    "content": {"short_answers": True, "english_ui": False},
                },
            )
        ],
        # (the end-of-sequence token stays text: a framing tag the grammar cannot drop yet)
        answer="I'll check that for you.</s>",
    ),
    Case(
        "v31-marker",
        "Проверяю.<|function_call|>" + ARGS,
        [WEATHER],
        answer="Проверяю.",
    ),
    Case(
        "v31-marker-message-end",
        '<|function_call|>{"name": "get_time", "arguments": {}}<|message_sep|>',
        [("get_time", {})],
        answer="",
    ),
    Case(
        "v31-arguments-as-string",
        '<|function_call|>{"name": "search", "arguments": "{\\"q\\": \\"GigaChat 3.1\\"}"}',
        [("search", {"q": "GigaChat 3.1"})],
        answer="",
    ),
    Case(
        "nested-values-and-braces-in-strings",
        '<|function_call|>{"name": "save", "arguments": {"path": "a/{b}.json", '
        '"data": {"items": [1, 2, {"x": null}], "ok": true}}}',
        [("save", {"path": "a/{b}.json", "data": {"items": [1, 2, {"x": None}], "ok": True}})],
        answer="",
    ),
    Case(
        "thinking-then-call",
        "<think>Нужна погода.</think><|function_call|>" + ARGS,
        [WEATHER],
        answer="",
        wraps=False,
    ),
    Case(
        "role-named-in-prose-is-text",
        "The role is written function call<|role_sep|> in the template.",
        [],
        answer="The role is written function call<|role_sep|> in the template.",
        wraps=False,
    ),
    Case(
        "not-json-is-text",
        "<|function_call|>{get_weather: Moscow}",
        [],
        answer="<|function_call|>{get_weather: Moscow}",
        wraps=False,
    ),
    Case(
        "answer-then-message-end",
        "Погода в Москве: +5, облачно.<|message_sep|>",
        [],
        answer="Погода в Москве: +5, облачно.",
        wraps=False,
    ),
    Case(
        "message-end-then-next-message",
        "Готово.<|message_sep|>\n\nuser<|role_sep|>Спасибо",
        [],
        answer="Готово.\n\nuser<|role_sep|>Спасибо",
        wraps=False,
    ),
]


class TestGigachat3(FamilySuite):
    dialect = "gigachat3"
    cases = CASES
