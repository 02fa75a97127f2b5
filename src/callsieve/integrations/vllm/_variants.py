"""Strategy: the parser variants callsieve registers in vLLM, as one table of data, and the
per-request reasoning decision (SPEC §15, §17) they feed.

What it does: every row of ``VARIANTS`` is one name a user passes to vLLM
(``--tool-call-parser NAME --reasoning-parser NAME``): the dialects its tool parser reads (and
with them whether its calls end a thought never closed, ``thought_enders``), whether the
model thinks when the request says nothing (``thinks_by_default``), whether its
chat template writes ``<think>`` into the prompt when it does (``template_opens_thought``:
then the reply starts inside the thought, ``reasoning="open"``), and the vLLM parsers it
stands in for (for docs/vllm.md and the tests). A family becomes a variant by adding a row; a
row whose dialects this callsieve lacks (issue 25's families, until they land) is not
registered. ``reasoning_setting`` decides one request: the rendered prompt when it shows a
thought marker (it is what the model continues), else the request's ``chat_template_kwargs``
(``thinking`` / ``enable_thinking``, ``reasoning_effort="none"``) and the row.
What it guarantees: pure data and functions, no vLLM import; the same answer for the same
inputs, in every process (the API server's parsers and the engine core's).
What it costs: a dictionary look-up per request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ... import DEFAULT_DIALECTS, available_dialects
from ..._grammar.compiled import load_grammar

__all__ = ["VARIANTS", "Variant", "active_variants", "reasoning_setting", "thinking_requested"]

#: What the rendered prompt ends in: inside a thought, after one, or neither (or unknown).
PromptMarker = Literal["open", "close"] | None


@dataclass(frozen=True)
class Variant:
    name: str
    dialects: tuple[str, ...] = DEFAULT_DIALECTS
    thinks_by_default: bool = False
    template_opens_thought: bool = True
    replaces: tuple[str, ...] = ()
    #: The dialect its models write, when a prompt shows none (``tool_choice`` enforced in it).
    writes: str | None = None

    @property
    def class_stem(self) -> str:
        """``callsieve_deepseek_r1`` -> ``CallsieveDeepseekR1`` (the classes' names)."""
        return "".join(part[:1].upper() + part[1:] for part in self.name.split("_"))

    @property
    def available(self) -> bool:
        return set(self.dialects) <= set(available_dialects())

    @property
    def thought_enders(self) -> tuple[str, ...]:
        """The row's dialects whose models open calls in a thought they never close: their
        dialect files declare it (``//%calls_end_thought``), and a call opener inside a
        thought still open ends it there (SPEC §15). The row takes the setting with its
        dialects; it is said here for docs/vllm.md and the tests."""
        g = load_grammar(self.dialects)
        return tuple(d for d in self.dialects if g.traits[d].flag("calls_end_thought"))


VARIANTS: tuple[Variant, ...] = (
    # Every default dialect (the DeepSeek family's DSML, native tokens and the legacy XML);
    # thinking only when the request asks for it, the DeepSeek V3.1+ template's behaviour.
    Variant("callsieve", replaces=("deepseek_v3", "deepseek_v31", "deepseek_v32")),
    # R1 always thinks, its template opening the thought.
    Variant(
        "callsieve_deepseek_r1",
        thinks_by_default=True,
        replaces=("deepseek_r1",),
        writes="deepseek_native",
    ),
    # V4 and V4.1 think unless the request turns it off (as vLLM's own deepseek_v4 does).
    Variant(
        "callsieve_deepseek_v4", thinks_by_default=True, replaces=("deepseek_v4", "deepseek_v41")
    ),
    # Issue 25's families (SPEC §19): registered once their grammar modules exist. Their
    # templates let the model write <think> itself: "tags" is right whatever the request.
    Variant(
        "callsieve_hermes", ("hermes",), template_opens_thought=False, replaces=("hermes", "qwen3")
    ),
    Variant(
        "callsieve_qwen3_coder",
        ("qwen3_coder",),
        template_opens_thought=False,
        replaces=("qwen3_coder", "qwen3_xml"),
    ),
    Variant(
        "callsieve_glm45",
        ("glm45",),
        thinks_by_default=True,
        template_opens_thought=False,
        replaces=("glm45", "glm47"),
    ),
    Variant(
        "callsieve_kimi_k2",
        ("kimi_k2",),
        thinks_by_default=True,
        template_opens_thought=False,
        replaces=("kimi_k2",),
    ),
    # Issue 32's families whose chat template writes the thought's opener into the prompt.
    # GLM-5 and GLM-5.3-Flash (GLM-4.7's template ends with `<think>` when thinking is on);
    # vLLM reads them with its glm47 tool parser and glm45 reasoning parser.
    Variant("callsieve_glm53_flash", ("glm53_flash",), thinks_by_default=True, replaces=("glm47",)),
    # ERNIE-4.5 Thinking always thinks, its prompt opening the thought (vLLM's ernie45
    # reasoning parser expects no `<think>` in the reply). Plain ERNIE-4.5: callsieve_hermes.
    Variant("callsieve_ernie45", ("ernie45",), thinks_by_default=True, replaces=("ernie45",)),
)


def active_variants() -> tuple[Variant, ...]:
    """The rows this callsieve can serve (their dialects exist)."""
    return tuple(v for v in VARIANTS if v.available)


def thinking_requested(variant: Variant, chat_template_kwargs: Mapping[str, Any] | None) -> bool:
    """Whether the request asks the model to think: ``thinking`` or ``enable_thinking`` when
    given (vLLM turns ``reasoning_effort`` into ``enable_thinking``), ``reasoning_effort``
    ``"none"`` means no, otherwise the row's default."""
    kwargs = chat_template_kwargs or {}
    for key in ("thinking", "enable_thinking"):
        if kwargs.get(key) is not None:
            return bool(kwargs[key])
    if kwargs.get("reasoning_effort") == "none":
        return False
    return variant.thinks_by_default


def reasoning_setting(
    variant: Variant,
    chat_template_kwargs: Mapping[str, Any] | None,
    prompt_marker: PromptMarker = None,
) -> Literal["open", "tags"]:
    """The ``reasoning=`` option for one request: ``"open"`` when the reply starts inside the
    thought (the prompt ends inside one; else thinking was asked for and the template opens
    the thought), ``"tags"`` otherwise (a ``<think>`` the model writes itself still opens
    reasoning)."""
    if prompt_marker is not None:
        return "open" if prompt_marker == "open" else "tags"
    if variant.template_opens_thought and thinking_requested(variant, chat_template_kwargs):
        return "open"
    return "tags"
