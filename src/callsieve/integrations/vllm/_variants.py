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
registered. The ``callsieve_auto`` row names no dialect: ``resolved`` reads them, once per
process, from the model's folder in ``CALLSIEVE_MODEL_DIR`` (``_model_dir``: its
``response_template``, else its chat template's markers). ``reasoning_setting`` decides one request: the rendered prompt when it shows a
thought marker (it is what the model continues), else the request's ``chat_template_kwargs``
(``thinking`` / ``enable_thinking``, ``reasoning_effort="none"``) and the row.
What it guarantees: pure data and functions, no vLLM import; the same answer for the same
inputs, in every process (the API server's parsers and the engine core's).
What it costs: a dictionary look-up per request.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from ... import DEFAULT_DIALECTS, ConfigurationError, available_dialects
from ..._grammar.compiled import load_grammar
from ..._model_dir import dialect_for_model_dir

__all__ = [
    "ENV_MODEL_DIR",
    "VARIANTS",
    "Variant",
    "active_variants",
    "reasoning_setting",
    "resolved",
    "thinking_requested",
]

#: Where ``callsieve_auto`` finds the model's folder (vLLM's model path, downloaded).
ENV_MODEL_DIR = "CALLSIEVE_MODEL_DIR"
log = logging.getLogger("callsieve.vllm")

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
    #: Folders of grammar files its dialects are in, besides the built-in one.
    grammar_dirs: tuple[str, ...] = ()
    #: Its dialects come from the model's folder at first use (``resolved``).
    from_model_dir: bool = False

    @property
    def class_stem(self) -> str:
        """``callsieve_deepseek_r1`` -> ``CallsieveDeepseekR1`` (the classes' names)."""
        return "".join(part[:1].upper() + part[1:] for part in self.name.split("_"))

    @property
    def available(self) -> bool:
        return set(self.dialects) <= set(available_dialects(self.grammar_dirs))

    @property
    def thought_enders(self) -> tuple[str, ...]:
        """The row's dialects whose models open calls in a thought they never close: their
        dialect files declare it (``//%calls_end_thought``), and a call opener inside a
        thought still open ends it there (SPEC §15). The row takes the setting with its
        dialects; it is said here for docs/vllm.md and the tests."""
        if self.from_model_dir:
            return ()  # (none until the model's folder is read: ``resolved``)
        g = load_grammar(self.dialects, self.grammar_dirs)
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
    # Any model whose folder names its format (issue 36): the dialects are read from
    # CALLSIEVE_MODEL_DIR at first use. Its template writes no thought opener unless its
    # response_template says the reply may start inside one.
    Variant("callsieve_auto", (), template_opens_thought=False, from_model_dir=True),
)


def active_variants() -> tuple[Variant, ...]:
    """The rows this callsieve can serve (their dialects exist)."""
    return tuple(v for v in VARIANTS if v.available)


def resolved(variant: Variant, environ: Mapping[str, str] | None = None) -> Variant:
    """The row with its dialects: ``callsieve_auto``'s read from the model's folder in
    ``CALLSIEVE_MODEL_DIR`` (once per process and folder); any other row as it is. A missing
    variable, or a folder that names no dialect, is a ``ConfigurationError`` saying what to
    do."""
    if not variant.from_model_dir:
        return variant
    folder = (os.environ if environ is None else environ).get(ENV_MODEL_DIR, "").strip()
    if not folder:
        raise ConfigurationError(
            f"{variant.name} reads the model's folder from {ENV_MODEL_DIR}: set it to the "
            "folder holding the model's tokenizer_config.json (docs/model-metadata.md)"
        )
    return _from_folder(variant, folder)


@functools.cache
def _from_folder(variant: Variant, folder: str) -> Variant:
    try:
        found = dialect_for_model_dir(folder)
    except ConfigurationError as exc:
        raise ConfigurationError(
            f"{ENV_MODEL_DIR}: {exc} With vLLM: name a row (--tool-call-parser "
            "callsieve_hermes, …) or the dialects in CALLSIEVE_VLLM_OPTIONS."
        ) from None
    log.info("%s: %s: %s", variant.name, folder, found.why)
    opens = found.reasoning == "open"
    return replace(
        variant,
        dialects=found.dialects,
        grammar_dirs=found.grammar_dirs,
        thinks_by_default=opens,
        template_opens_thought=opens,
        writes=found.dialect if found.source == "chat_template" else None,
        from_model_dir=False,
    )


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
