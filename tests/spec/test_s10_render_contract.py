"""SPEC §10: what the four renderers promise alike — the module names (a contract outside
harnesses use), one ``usage`` and checked id factories, a typed error after ``close()``, and
that neither the core nor the renderers import an SDK (they are test dependencies only).
Each API's own wire objects are checked in its own ``test_s10_render_<api>.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import ModuleType

import pytest
from helpers import ROOT

import callsieve
from callsieve import CallsieveError, ConfigurationError, SieveClosedError, Text, render
from callsieve.render import anthropic, gemini, openai_chat, openai_responses

RENDERERS = [
    pytest.param(m, id=m.__name__.rsplit(".", 1)[1])
    for m in (openai_chat, openai_responses, anthropic, gemini)
]


def test_the_renderers_are_the_contracts_names() -> None:
    assert {"openai_chat", "openai_responses", "anthropic", "gemini"} <= set(render.__all__)


@pytest.mark.parametrize("module", RENDERERS)
def test_feed_or_close_after_close_raises_a_typed_error(module: ModuleType) -> None:
    renderer = module.StreamRenderer()
    renderer.close()
    with pytest.raises(SieveClosedError) as info:
        renderer.feed([Text("late")])
    assert isinstance(info.value, CallsieveError)
    with pytest.raises(SieveClosedError):
        renderer.close()


def test_every_renderer_takes_the_same_usage_and_checks_it() -> None:
    """One ``usage`` for every API (``render._options.token_counts``): the neutral counts,
    each renderer writing them its API's way; a typo is an error, never a silent zero."""
    usage = {"input_tokens": 2, "output_tokens": 3}
    result = callsieve.parse("Hi")
    assert openai_chat.render_response(result, usage=usage)["usage"]["total_tokens"] == 5
    assert openai_responses.render_response(result, usage=usage)["usage"]["total_tokens"] == 5
    assert anthropic.render_response(result, usage=usage)["usage"]["output_tokens"] == 3
    assert gemini.render_response(result, usage=usage)["usageMetadata"]["totalTokenCount"] == 5
    for module in (openai_chat, openai_responses, anthropic, gemini):
        with pytest.raises(ConfigurationError):
            module.render_response(result, usage={"prompt_tokens": 2})


def test_neither_the_core_nor_a_renderer_imports_an_sdk() -> None:
    """In a process where the SDKs cannot be imported at all, ``import callsieve`` loads no
    renderer, and every renderer loads and renders."""
    code = (
        "import sys\n"
        "for sdk in ('openai', 'anthropic', 'google', 'pydantic'): sys.modules[sdk] = None\n"
        "import callsieve\nassert 'callsieve.render' not in sys.modules\n"
        "from callsieve.render import anthropic, gemini, openai_chat, openai_responses\n"
        "r = callsieve.parse('hi')\n"
        "print(anthropic.render_response(r)['content'])\n"
        "print(gemini.render_response(r)['candidates'][0]['content']['parts'])\n"
        "print(openai_chat.render_response(r)['choices'][0]['message']['content'])\n"
        "print(openai_responses.render_response(r)['output'][0]['content'][0]['text'])\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), *sys.path) if p),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.splitlines() == [
        "[{'type': 'text', 'text': 'hi'}]",
        "[{'text': 'hi'}]",
        "hi",
        "hi",
    ]
