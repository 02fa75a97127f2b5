"""Issue 35, item 1: vLLM enforces ``tool_choice`` with callsieve's own grammars (SPEC §18).

Driven through vLLM's own code, as its server drives it: the parser pair is built as
vLLM's renderer builds it for ``adjust_request``, given the rendered prompt, and asked to
adjust the request; the request's sampling parameters are checked by vLLM's own
``SamplingParams.verify`` (its backend choice included), and the constraint is compiled by
vLLM's own backend object (``XgrammarBackend`` or ``GuidanceBackend``), as its engine
does. A generation is then simulated through that compiled grammar with the harness's
tokenizer: our writer's text (``prompt.format_calls``) after free text, a random detour
among the tokens the mask allows, and the way back. The reply the grammar takes, read by
the plugin (whole and streamed), holds schema-valid calls of the allowed tools only.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "vllm",
    reason="vLLM is not installed here: .ci/run runs these tests in "
    "a second environment with pip install '.[vllm]'",
)

import jsonschema
from helpers import canon_value
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schema_values import SCHEMAS
from vllm_harness import (
    chunked,
    load_plugins,
    make_parser,
    request,
    save_model_dir,
    stream,
    tokenizer,
    whole,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "spec"))
import test_s18_constrain as markup_cases
import test_s18_families as family_cases

from callsieve.integrations.vllm import (
    ENV_CONSTRAIN,
    _constrain,
    active_variants,
)
from callsieve.prompt import format_calls

#: vLLM 0.33's xgrammar backend passes an argument xgrammar 0.2.8 deprecates (vLLM's, not ours).
pytestmark = pytest.mark.filterwarnings(
    "ignore:max_rollback_tokens is deprecated:DeprecationWarning"
)
DEFAULTS = ("dsml", "dsml_v4", "dsml_v32", "dsml_v41", "xml", "deepseek_native")
FAMILIES = tuple(
    v.dialects[0]
    for v in active_variants()
    if len(v.dialects) == 1 and v.dialects[0] in ("hermes", "qwen3_coder", "glm45")
)
NAMED = {"type": "function", "function": {"name": "search"}}
#: Each forced choice: what vLLM receives, and the ``parallel_tool_calls`` it comes with.
FORCED = {
    "required": ("required", True),
    "named": (NAMED, True),
    "single": ("auto", False),
}
OPENERS = _constrain.openers(DEFAULTS)
#: schema_values' tools, in the shape vLLM's request takes (OpenAI's).
TOOLS = [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in SCHEMAS.items()]


def variant_for(dialect: str) -> str:
    """The parser name that reads ``dialect`` (the DeepSeek row reads every default)."""
    return "callsieve" if dialect in DEFAULTS else f"callsieve_{dialect}"


def prompt_ids(dialect: str) -> list[int]:
    """A rendered prompt that shows the dialect's opener (as the template's instructions
    do) and ends after an empty thought, as the DeepSeek V3.1+ templates write it."""
    shown = OPENERS.get(dialect, "")
    text = f"<｜User｜>Call tools as {shown}…<｜Assistant｜></think>"
    return list(tokenizer().encode(text, add_special_tokens=False))


# ------------------------------------------------------------- vLLM's side, built once
@dataclass(frozen=True)
class Engine:
    model_config: Any
    backends: dict[str, Any]


@functools.cache
def engine() -> Engine:
    from vllm.config import DeviceConfig, ModelConfig, StructuredOutputsConfig, VllmConfig
    from vllm.v1.structured_output.backend_guidance import GuidanceBackend
    from vllm.v1.structured_output.backend_xgrammar import XgrammarBackend

    folder = save_model_dir(Path(tempfile.mkdtemp(prefix="callsieve-vllm-")) / "model")
    model = ModelConfig(model=str(folder), tokenizer=str(folder))
    config = VllmConfig(
        model_config=model,
        device_config=DeviceConfig(device="cpu"),  # (no GPU here; the backends need none)
        structured_outputs_config=StructuredOutputsConfig(backend="auto"),
    )
    tok = tokenizer()
    return Engine(
        model,
        {
            "xgrammar": XgrammarBackend(config, tokenizer=tok, vocab_size=len(tok)),
            "guidance": GuidanceBackend(config, tokenizer=tok, vocab_size=len(tok)),
        },
    )


@pytest.fixture
def constrain_as(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def set_to(setting: str) -> None:
        monkeypatch.setenv(ENV_CONSTRAIN, setting)

    yield set_to


def adjusted(dialect: str, forced: str, tools: Any = TOOLS) -> Any:
    """The request after vLLM's renderer has the parser adjust it."""
    choice, parallel = FORCED[forced]
    req = request(tools, tool_choice=choice, parallel_tool_calls=parallel)
    name = variant_for(dialect)
    parser = make_parser(name, name, req)
    parser.set_prompt_token_ids(prompt_ids(dialect))
    return parser.adjust_request(req)


def verified(req: Any, backend: str) -> Any:
    """vLLM's own check of the request's sampling parameters, as its input processor runs
    it with ``--structured-outputs-config.backend BACKEND``: the params, backend chosen."""
    from vllm.config import StructuredOutputsConfig

    params = req.to_sampling_params(64, {})
    params.verify(
        engine().model_config, None, StructuredOutputsConfig(backend=backend), tokenizer()
    )
    return params


class Generation:
    """One request's grammar as vLLM's engine holds it: tokens accepted one step at a time,
    the mask read from the bitmask vLLM fills."""

    def __init__(self, params: Any) -> None:
        from vllm.v1.structured_output.request import get_structured_output_key

        kind, spec = get_structured_output_key(params.structured_outputs)
        self.backend = engine().backends[params.structured_outputs._backend]
        self.grammar = self.backend.compile_grammar(kind, spec)
        self.mask = self.backend.allocate_token_bitmask(1)
        self.eos = tokenizer().eos_token_id

    def take(self, ids: list[int]) -> bool:
        return all(self.grammar.accept_tokens("r", [i]) for i in ids)

    def would_end(self, ids: list[int]) -> bool:
        """Would the grammar take ``ids`` and then the end (nothing advances)?"""
        want = [*ids, self.eos]
        return list(self.grammar.validate_tokens(want)) == want

    def allowed(self) -> list[int]:
        self.grammar.fill_bitmask(self.mask, 0)
        row = self.mask[0].tolist()
        return [i for i in range(len(tokenizer())) if row[i // 32] >> (i % 32) & 1]


def ids(text: str) -> list[int]:
    return list(tokenizer().encode(text, add_special_tokens=False))


# --------------------------------------------------------------- what vLLM is handed
#: (The native markers are special tokens here, as in DeepSeek's vocabularies: guidance's
#: grammars cannot produce those, test_guidance_leaves_special_token_markers_free.)
MARKUP = tuple(d for d in DEFAULTS if d != "deepseek_native")
EXPECTED = (
    [(d, "auto", "structural_tag", "xgrammar") for d in DEFAULTS]
    + [(d, "guidance", "grammar", "guidance") for d in MARKUP]
    + [(d, "auto", "grammar", "guidance") for d in FAMILIES]
)


@pytest.mark.parametrize("forced", sorted(FORCED))
@pytest.mark.parametrize(("dialect", "setting", "field", "backend"), EXPECTED)
def test_a_forced_choice_gets_a_constraint_vllm_verifies_and_compiles(
    constrain_as: Any, dialect: str, setting: str, field: str, backend: str, forced: str
) -> None:
    constrain_as(setting)
    req = adjusted(dialect, forced)
    so = req.structured_outputs
    assert so is not None and getattr(so, field), (dialect, setting)
    assert req.response_format is None
    params = verified(req, setting)
    # vLLM's "auto" backend compiles a structural tag in xgrammar, and falls back to
    # guidance for a Lark grammar (xgrammar refuses llguidance's extensions).
    assert params.structured_outputs._backend == backend
    assert Generation(params).allowed(), "the grammar compiles and allows a first token"


def test_the_xgrammar_setting_hands_vllm_structural_tags_only(
    constrain_as: Any, caplog: pytest.LogCaptureFixture
) -> None:
    constrain_as("xgrammar")
    req = adjusted("dsml_v32", "required")
    assert verified(req, "xgrammar").structured_outputs._backend == "xgrammar"
    if FAMILIES:
        with caplog.at_level(logging.WARNING, logger="callsieve.vllm"):
            _constrain._said.clear()
            for _ in range(2):
                assert adjusted(FAMILIES[0], "required").structured_outputs is None
        said = [r for r in caplog.records if "has no structural tag" in r.getMessage()]
        assert len(said) == 1


@pytest.mark.parametrize("choice", ["auto", "none"])
def test_auto_with_parallel_calls_and_none_are_left_free(choice: str) -> None:
    req = request(TOOLS, tool_choice=choice)
    parser = make_parser("callsieve", "callsieve", req)
    parser.set_prompt_token_ids(prompt_ids("dsml_v32"))
    assert parser.adjust_request(req).structured_outputs is None


def test_a_format_the_request_asks_for_is_kept_under_auto(constrain_as: Any) -> None:
    constrain_as("auto")
    fmt = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}
    req = request(TOOLS, tool_choice="auto", parallel_tool_calls=False, response_format=fmt)
    parser = make_parser("callsieve", "callsieve", req)
    parser.set_prompt_token_ids(prompt_ids("dsml_v32"))
    after = parser.adjust_request(req)
    assert after.structured_outputs is None and after.response_format is not None


def test_the_responses_api_gets_the_constraint_too(constrain_as: Any) -> None:
    from vllm.entrypoints.openai.responses.protocol import ResponsesRequest
    from vllm.parser import ParserManager

    constrain_as("auto")
    load_plugins()
    flat = [{"type": "function", "name": n, "parameters": SCHEMAS[n]} for n in SCHEMAS]
    req = ResponsesRequest(
        model="m", input="hi", tools=flat, tool_choice={"type": "function", "name": "search"}
    )
    cls = ParserManager.get_parser(
        tool_parser_name="callsieve",
        reasoning_parser_name="callsieve",
        enable_auto_tools=True,
        tokenizer=tokenizer(),
    )
    parser = cls(tokenizer(), req.tools, chat_template_kwargs={}, model_config=None)
    parser.set_prompt_token_ids(prompt_ids("dsml_v32"))
    after = parser.adjust_request(req)
    assert after.text is None
    gen = Generation(verified(after, "auto"))
    call = format_calls([("search", {"query": "q"})], dialect="dsml_v32")
    other = format_calls([("now", {})], dialect="dsml_v32")
    assert gen.would_end(ids(call)) and not gen.would_end(ids(other))


@pytest.mark.parametrize(
    ("reasoning", "include_reasoning", "enforced"),
    [
        ("callsieve_deepseek_r1", True, True),
        ("callsieve_deepseek_r1", False, False),
        (None, True, False),
    ],
)
def test_a_thought_vllm_would_constrain_too_is_left_free(
    constrain_as: Any, reasoning: str | None, include_reasoning: bool, enforced: bool
) -> None:
    """R1's reply starts inside the thought. vLLM holds the constraint back until the thought
    ends only with our reasoning parser and the reasoning included."""
    constrain_as("auto")
    req = request(TOOLS, tool_choice="required", include_reasoning=include_reasoning)
    parser = make_parser("callsieve_deepseek_r1", reasoning, req)
    parser.set_prompt_token_ids(ids("<｜User｜>hi<｜Assistant｜><think>"))
    assert (parser.adjust_request(req).structured_outputs is not None) is enforced


def test_supports_required_and_named_stays_false(monkeypatch: pytest.MonkeyPatch) -> None:
    """With True, vLLM 0.33's serving layer reads a required reply as a JSON list of calls
    and never asks the tool parser: our calls would be lost."""
    req = request(TOOLS, tool_choice="required")
    text = "Sure.\n" + format_calls([("get_weather", {"city": "Paris"})], dialect="dsml_v32")
    prompt = prompt_ids("dsml_v32")
    parser = make_parser("callsieve", "callsieve", req)
    assert not parser.tool_parser.supports_required_and_named
    assert whole(parser, req, text, prompt).named_calls() == [("get_weather", {"city": "Paris"})]
    monkeypatch.setattr(type(parser.tool_parser), "supports_required_and_named", True)
    flipped = make_parser("callsieve", "callsieve", req)
    assert whole(flipped, req, text, prompt).named_calls() == []


def test_off_leaves_every_request_as_it_came(constrain_as: Any) -> None:
    constrain_as("off")
    assert adjusted("dsml_v32", "required").structured_outputs is None


def test_the_prompt_decides_the_dialect_of_a_row_of_several(constrain_as: Any) -> None:
    constrain_as("auto")
    for dialect in DEFAULTS:
        tag = adjusted(dialect, "required").structured_outputs.structural_tag
        assert json.dumps(OPENERS[dialect], ensure_ascii=False)[1:-1] in tag, dialect


# -------------------------------------------------- a dialect that cannot be exported
def test_a_dialect_with_no_export_logs_once_and_leaves_the_request(
    constrain_as: Any, caplog: pytest.LogCaptureFixture
) -> None:
    rows = [v.name for v in active_variants() if v.name == "callsieve_kimi_k2"]
    if not rows:
        pytest.skip("kimi_k2 (the family with no export) is not in this callsieve")
    constrain_as("auto")
    _constrain._said.clear()
    with caplog.at_level(logging.WARNING, logger="callsieve.vllm"):
        for forced in ("required", "named", "required"):
            choice, parallel = FORCED[forced]
            before = request(TOOLS, tool_choice=choice, parallel_tool_calls=parallel)
            req = before.model_copy(deep=True)
            parser = make_parser(rows[0], rows[0], req)
            parser.set_prompt_token_ids(ids("<｜User｜>hi<｜Assistant｜>"))
            after = parser.adjust_request(req)
            assert after.model_dump() == before.model_dump()
    said = [r for r in caplog.records if "not enforced for dialect 'kimi_k2'" in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in caplog.records]


def test_guidance_leaves_special_token_markers_free(
    constrain_as: Any, caplog: pytest.LogCaptureFixture
) -> None:
    constrain_as("guidance")
    _constrain._said.clear()
    with caplog.at_level(logging.WARNING, logger="callsieve.vllm"):
        for _ in range(2):
            assert adjusted("deepseek_native", "required").structured_outputs is None
    said = [r for r in caplog.records if "a special token" in r.getMessage()]
    assert len(said) == 1
    constrain_as("auto")  # xgrammar's structural tag produces them
    gen = Generation(verified(adjusted("deepseek_native", "required"), "auto"))
    native = format_calls([("get_weather", {"city": "Paris"})], dialect="deepseek_native")
    assert tokenizer().convert_tokens_to_ids(OPENERS["deepseek_native"]) in ids(native)
    assert gen.would_end(ids(native))


def test_a_schema_no_export_can_enforce_leaves_the_request(constrain_as: Any) -> None:
    constrain_as("auto")
    tools = [
        {
            "type": "function",
            "function": {
                "name": "search",
                "parameters": {"type": "object", "properties": {"q": {"not": {"type": "null"}}}},
            },
        }
    ]
    assert adjusted("dsml_v32", "named", tools).structured_outputs is None


#: A string whose length's product with its context is past a structural tag's bound.
LONG_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "post",
            "parameters": {
                "type": "object",
                "properties": {"body": {"type": "string", "maxLength": 200}},
                "required": ["body"],
            },
        },
    }
]


def test_a_long_string_in_a_section_is_enforced_in_the_json_object_body(
    constrain_as: Any,
) -> None:
    """Past the bound the writer puts the call in the JSON object body, which the structural
    tag vLLM compiles takes: ``>`` in it too."""
    constrain_as("auto")
    gen = Generation(verified(adjusted("xml", "required", LONG_TOOLS), "auto"))
    text = format_calls([("post", {"body": "a > b <c>"})], dialect="xml", tools=LONG_TOOLS)
    assert '{"body": ' in text and gen.would_end(ids(text)), text


def test_a_long_string_in_the_fence_is_enforced_with_its_backticks_escaped(
    constrain_as: Any,
) -> None:
    """In the native fence the writer spells such a tool's backticks ``\\u0060``, and the
    structural tag vLLM compiles takes them so (no product with the fence is needed)."""
    constrain_as("auto")
    gen = Generation(verified(adjusted("deepseek_native", "required", LONG_TOOLS), "auto"))
    value = "a`b ``` <c>"
    text = format_calls([("post", {"body": value})], dialect="deepseek_native", tools=LONG_TOOLS)
    assert "\\u0060b" in text and gen.would_end(ids(text)), text


# ---------------------------------------------------------- generating under the grammar
def cases_for(dialect: str) -> Any:
    return family_cases if dialect in FAMILIES else markup_cases


def special_in(text: str) -> bool:
    return any(t in text for t in tokenizer().all_special_tokens)


def written(
    dialect: str, data: st.DataObject, forced: str, specials_ok: bool
) -> tuple[str, list[Any]]:
    """Our writer's reply: free text, then the calls. Under guidance the reply holds no
    special token's text: the tokenizer makes it that token, which guidance's grammars
    refuse in text (so does its mask for a model). A structural tag's bodies are xgrammar's
    grammar, which our GBNF export shares; guidance's is the Lark export."""
    cases = cases_for(dialect)
    fmt = "gbnf" if specials_ok else "lark"
    if forced == "named":
        call = cases.calls_for(dialect, fmt).filter(lambda c: c[0] == "search")
        calls = data.draw(st.lists(call, min_size=1, max_size=2))
    else:
        calls = data.draw(st.lists(cases.calls_for(dialect, fmt), min_size=1, max_size=1))
    prose = data.draw(markup_cases.PROSE)
    if specials_ok:  # (a structural tag's free text is the engine's: no opener, no fence)
        prose = "".join(c for c in prose if c not in "<`")
    # (under the tools: a raw family's string-typed strings as they are, a markup call's
    # null string-typed parameter as the JSON object body)
    text = prose + format_calls(calls, dialect=dialect, tools=TOOLS)
    assume(specials_ok or not special_in(text))
    return text, calls


def walked(gen: Generation, template: list[int], data: st.DataObject) -> list[int]:
    """A reply the grammar takes: the template's tokens up to a drawn point, a detour of
    drawn tokens among those the mask allows, then the shortest tail of the template that
    takes the grammar to its end."""
    turn = data.draw(st.integers(0, len(template)))
    out = template[:turn]
    assert gen.take(out), tokenizer().decode(out)
    for _ in range(data.draw(st.integers(0, 12))):
        allowed = gen.allowed()
        pick = data.draw(st.sampled_from(allowed))
        if pick == gen.eos:
            return out
        assert gen.take([pick])
        out.append(pick)
    rest = template[turn:]
    tail = next((rest[k:] for k in range(len(rest) + 1) if gen.would_end(rest[k:])), None)
    assume(tail is not None)
    assert tail is not None
    return out + tail


def read_back(dialect: str, req: Any, text: str) -> list[tuple[str, Any]]:
    """The calls the plugin reads from ``text``, whole and streamed (they agree)."""
    name = variant_for(dialect)
    prompt = prompt_ids(dialect)
    got = whole(make_parser(name, name, req), req, text, prompt).named_calls()
    streamed = stream(make_parser(name, name, req), req, chunked(text, None), prompt)
    assert streamed.named_calls() == got, text
    return got


WALKS = [(d, "structural_tag", "auto") for d in DEFAULTS] + [
    (d, "grammar", "auto" if d in FAMILIES else "guidance") for d in ("dsml_v32", *FAMILIES)
]


@pytest.mark.parametrize(("dialect", "field", "setting"), WALKS)
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_a_generation_under_the_grammar_reads_back_as_allowed_calls(
    dialect: str, field: str, setting: str, data: st.DataObject
) -> None:
    forced = data.draw(st.sampled_from(sorted(FORCED)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_CONSTRAIN, setting)
        req = adjusted(dialect, forced)
    assert getattr(req.structured_outputs, field)
    text, calls = written(dialect, data, forced, field == "structural_tag")
    gen = Generation(verified(req, setting))
    assert gen.would_end(ids(text)), text  # what our writer writes, the grammar takes
    want = markup_cases._want(calls)
    assert [(n, canon_value(a)) for n, a in read_back(dialect, req, text)] == want, text
    reply = tokenizer().decode(walked(gen, ids(text), data))
    if field == "structural_tag":  # (the engine's free text may open an inline code span
        # that hides the block: a structural tag cannot rule it out, docs/constrained-decoding)
        assume("`" not in reply.partition(OPENERS[dialect])[0])
    got = read_back(dialect, req, reply)
    assert got or forced == "single", reply  # required and named: at least one call
    for name, args in got:
        assert name in SCHEMAS and (forced != "named" or name == "search"), reply
        schema = {**SCHEMAS[name], "additionalProperties": False}
        jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(
            args
        )
    if forced == "single":
        assert len(got) <= 1, reply


@pytest.mark.parametrize(("dialect", "field", "setting"), WALKS)
def test_text_alone_another_tool_and_a_second_call_are_refused(
    constrain_as: Any, dialect: str, field: str, setting: str
) -> None:
    constrain_as(setting)
    tools = TOOLS if dialect in FAMILIES else None
    weather = ("get_weather", {"city": "Paris"})
    search = ("search", {"query": "vllm", "filters": {"exact": True}})
    for forced, good, bad in [
        ("required", [weather], None),
        ("named", [search], [weather]),
        ("single", [weather], [weather, search]),
    ]:
        gen = Generation(verified(adjusted(dialect, forced), setting))
        assert gen.would_end(ids("Sure. " + format_calls(good, dialect=dialect, tools=tools)))
        if forced == "required":
            assert not gen.would_end(ids("Just text, no call.")), (dialect, forced)
        if bad is not None:
            assert not gen.would_end(ids(format_calls(bad, dialect=dialect, tools=tools)))


def test_a_bad_setting_stops_vllm_at_start_up_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from callsieve import ConfigurationError
    from callsieve.integrations.vllm import register

    monkeypatch.setenv(ENV_CONSTRAIN, "xgramar")
    with pytest.raises(ConfigurationError, match="CALLSIEVE_VLLM_CONSTRAIN"):
        register()
