"""SPEC §19 (issue 32, item 4): a vendor's own parser as the oracle — openai/harmony's, for
``gpt_oss``.

Harmony ships an encoder and a decoder. Two properties: messages its encoder renders (a
thought, then one to three calls to ``functions.NAME``; or a final answer, a thought before it
or not) are read by callsieve as by harmony's ``parse_messages_from_completion_tokens``, under
every chunking, the token boundaries among them. The reply starts after
``<|start|>assistant``, where the prompt ends.

"Alike" compares the calls (names and arguments, exactly), the thinking (the analysis
channel) and the answer (the final channel's text and a commentary message to no one). The
answer is compared without its outer white space: callsieve releases every character.
Where the two differ by design, the case is in ``DIFFERENCES`` with the reason (an
``xfail(strict=True)``: if the difference goes, the test says so).

Harmony loads the o200k_base vocabulary, from the network unless ``TIKTOKEN_ENCODINGS_BASE``
names a folder that holds it. litellm's wheel ships the file (in tiktoken's cache, under its
cache name); the test copies it (or the file such a folder already holds) to a temporary
folder, checks its sha256, and points harmony there. Without harmony, or without the file, the
test skips.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import run_all_ways
from hypothesis import assume, given, settings
from hypothesis import strategies as st

harmony = pytest.importorskip("openai_harmony")

#: The vocabulary's sha256, as harmony and tiktoken check it.
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
#: Where litellm ships it: tiktoken's cache name for the o200k_base file.
LITELLM_COPY = Path("litellm_core_utils", "tokenizers", "fb374d419588a4632f3f557e76b4b70aebbca790")

#: Harmony's special tokens: text that spells one reads as text only at the token level.
SPECIALS = (
    *("<|start|>", "<|end|>", "<|message|>", "<|channel|>"),
    *("<|constrain|>", "<|call|>", "<|return|>"),
)


def _vocabulary() -> Path:
    """The o200k_base file: in a folder ``TIKTOKEN_ENCODINGS_BASE`` names, or litellm's copy."""
    given = Path(os.environ.get("TIKTOKEN_ENCODINGS_BASE", "/nonexistent"), "o200k_base.tiktoken")
    if given.is_file() and hashlib.sha256(given.read_bytes()).hexdigest() == O200K_SHA256:
        return given
    spec = importlib.util.find_spec("litellm")  # (found, not imported: litellm is slow to load)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("no o200k_base vocabulary offline: litellm, which ships it, is absent")
    path = Path(next(iter(spec.submodule_search_locations)), LITELLM_COPY)
    if not path.is_file():
        pytest.skip(f"no o200k_base vocabulary offline: {path} is absent")
    if hashlib.sha256(path.read_bytes()).hexdigest() != O200K_SHA256:
        pytest.skip(f"{path} is not the o200k_base vocabulary harmony expects")
    return path


@pytest.fixture(scope="module")
def encoding(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder = tmp_path_factory.mktemp("tiktoken")
    shutil.copyfile(_vocabulary(), folder / "o200k_base.tiktoken")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TIKTOKEN_ENCODINGS_BASE", str(folder))
        yield harmony.load_harmony_encoding(harmony.HarmonyEncodingName.HARMONY_GPT_OSS)


# ------------------------------------------------------------------ the two readings


def _message(channel: str, text: str, to: str | None = None, kind: str | None = None) -> Any:
    m = harmony.Message.from_role_and_content(harmony.Role.ASSISTANT, text).with_channel(channel)
    if to is not None:
        m = m.with_recipient(to)
    return m if kind is None else m.with_content_type(kind)


def _reply(encoding: Any, messages: list[Any]) -> list[int]:
    """The tokens a model writes for ``messages``, rendered by harmony as a completion (a final
    answer ends with ``<|return|>``, the thought kept), after the prompt's
    ``<|start|>assistant`` (the first two tokens)."""
    tokens = encoding.render_conversation_for_training(
        harmony.Conversation.from_messages(messages),
        harmony.RenderConversationConfig(auto_drop_analysis=False),
    )
    assert encoding.decode(tokens[:2]) == "<|start|>assistant"
    return list(tokens[2:])


def _theirs(encoding: Any, tokens: list[int]) -> dict[str, Any]:
    """The reply as harmony reads it: calls, thinking, answer."""
    read = encoding.parse_messages_from_completion_tokens(tokens, harmony.Role.ASSISTANT)
    calls, thinking, answer = [], [], []
    for m in read:
        text = "".join(c.text for c in m.content)
        if m.recipient and m.recipient.startswith("functions."):
            calls.append((m.recipient.removeprefix("functions."), json.loads(text)))
        elif m.channel == "analysis" and not m.recipient:
            thinking.append(text)
        elif m.channel in ("final", "commentary") and not m.recipient:
            answer.append(text)
    return {"calls": calls, "thinking": "".join(thinking), "answer": "".join(answer).strip()}


def _token_pieces(encoding: Any, tokens: list[int]) -> list[str]:
    """The reply cut where a server streams it: at the token boundaries (a token that ends
    inside a character joins the next)."""
    pieces, start = [], 0
    for end in range(1, len(tokens) + 1):
        try:
            pieces.append(encoding.decode_utf8(tokens[start:end]))
            start = end
        except harmony.HarmonyError:  # (the tokens end inside a character)
            pass
    return pieces


def _ours(encoding: Any, tokens: list[int]) -> dict[str, Any]:
    text = encoding.decode(tokens)
    pieces = _token_pieces(encoding, tokens)
    assert "".join(pieces) == text
    result = run_all_ways(text, dialects=("gpt_oss",), extra_chunkings=[pieces])
    return {
        "calls": [(c.name, c.input) for c in result.calls],
        "thinking": result.reasoning,
        "answer": result.text.strip(),
    }


# ------------------------------------------------------------------ cases, and differences

_CALL_TEXT = '{"city": "Tokyo"}'


def _call(name: str = "get_weather", args: str = _CALL_TEXT) -> Any:
    return _message("commentary", args, f"functions.{name}", "<|constrain|>json")


_THOUGHT = _message("analysis", "The user wants a tool.")


def _cases() -> dict[str, list[Any]]:
    return {
        "a call first": [_call()],
        "a call after thinking": [_message("analysis", "Need the weather."), _call()],
        "two calls": [_THOUGHT, _call(), _call("get_time", '{"zone": "JST"}')],
        "a call typed json": [_THOUGHT, _message("commentary", "{}", "functions.ping", "json")],
        "a call on the analysis channel": [
            _THOUGHT,
            _message("analysis", "{}", "functions.ping", "json"),
        ],
        "an answer after thinking": [_message("analysis", "Easy."), _message("final", "Four.")],
        "an answer alone": [_message("final", "Four.")],
        "an answer that spells a call": [
            _message("final", "See <|channel|>commentary to=functions.f<|message|>{}<|call|>.")
        ],
        "an answer that spells tokens": [_message("final", "Say <|call|> or <|end|>.")],
        "a thought alone": [_message("analysis", "Hmm.")],
        "an answer that leaves a code span open": [_message("final", "Run `ls")],
        "a preamble before a call": [_message("commentary", "Checking."), _call()],
    }


#: Where callsieve reads harmony's rendering otherwise than harmony, and why.
DIFFERENCES = {
    "an answer that leaves a code span open": (
        "tags inside code are text (SPEC §6): the reply's `<|return|>` after a backtick that "
        "no backtick closes is inside inline code, so it stays text"
    ),
    "a call first": (
        "harmony's encoder writes a call's recipient in the role (`<|start|>assistant "
        "to=functions.f<|channel|>commentary …`); after the prompt's `<|start|>assistant` the "
        "reply starts with a bare ` to=functions.f`. Only an opener tied to the reply's start "
        "(`^`) could read it, and a dialect with one exports no constraint (callsieve.constrain)"
    ),
    "an answer that spells a call": (
        "harmony's encoder writes a special token spelt in a message as text, and its parser "
        "reads tokens; read from text, the spelling is the token (callsieve reads text)"
    ),
    "a thought alone": (
        "an `<|end|>` that ends the reply stays in the thought: the close waits for what "
        "follows it, to take a final answer's header (grammar/gpt_oss.lark); a model's reply "
        "ends with <|call|> or <|return|>, never there"
    ),
    "a preamble before a call": (
        "the `<|end|>` that closes a preamble (a commentary message to no one) stays text: as "
        "a frame it would be a block inside the thought too, where `<|end|>` is the close "
        "(grammar/gpt_oss.lark)"
    ),
}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=[pytest.mark.xfail(reason=DIFFERENCES[c], strict=True)])
        if c in DIFFERENCES
        else c
        for c in _cases()
    ],
)
def test_harmony_renders_a_reply_that_both_read_alike(encoding: Any, case: str) -> None:
    tokens = _reply(encoding, _cases()[case])
    assert _ours(encoding, tokens) == _theirs(encoding, tokens)


def test_every_difference_names_a_case() -> None:
    assert set(DIFFERENCES) <= set(_cases())


# ------------------------------------------------------------------ the property

_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-]{0,15}", fullmatch=True)
_keys = st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True)
_tags = st.sampled_from([*SPECIALS, "to=functions.f", "}", "{", '"', "\\", "\n", "]"])
_strings = st.lists(
    st.one_of(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8), _tags),
    max_size=4,
).map("".join)
_scalars = st.one_of(
    _strings,
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.none(),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=6,
)
_arguments = st.dictionaries(_keys, _values, max_size=3)
_prose = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30)


def _plain(text: str) -> bool:
    """Text that spells no special token (read from text, a spelling is the token)."""
    return not any(s in text for s in SPECIALS)


@settings(max_examples=60, deadline=None)
@given(
    calls=st.lists(st.tuples(_names, _arguments), min_size=1, max_size=3),
    thinking=_prose,
    channel=st.sampled_from(["commentary", "analysis"]),
    kind=st.sampled_from(["<|constrain|>json", "json", None]),
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 2]),
)
def test_calls_harmony_writes_are_read_by_both_alike(
    encoding: Any,
    calls: list[tuple[str, dict[str, Any]]],
    thinking: str,
    channel: str,
    kind: str | None,
    ascii_only: bool,
    indent: int | None,
) -> None:
    # (the thought first: a reply that starts with a call is in DIFFERENCES, "a call first")
    assume(_plain(thinking))
    messages = [_message("analysis", thinking)]
    for name, args in calls:
        text = json.dumps(args, ensure_ascii=ascii_only, indent=indent)
        messages.append(_message(channel, text, f"functions.{name}", kind))
    tokens = _reply(encoding, messages)
    theirs = _theirs(encoding, tokens)
    assert theirs["calls"] == calls
    assert _ours(encoding, tokens) == theirs


@settings(max_examples=40, deadline=None)
@given(thinking=st.one_of(st.just(""), _prose), answer=_prose)
def test_an_answer_harmony_writes_is_read_by_both_alike(
    encoding: Any, thinking: str, answer: str
) -> None:
    # (an answer that leaves code open keeps the `<|return|>` after it: DIFFERENCES says why)
    assume(_plain(thinking) and _plain(answer) and "`" not in answer and "~" not in answer)
    messages = [_message("analysis", thinking)] if thinking else []
    tokens = _reply(encoding, [*messages, _message("final", answer)])
    assert _ours(encoding, tokens) == _theirs(encoding, tokens)
