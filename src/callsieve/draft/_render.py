"""Strategy: render a Hugging Face chat template in jinja2's sandbox, as transformers does.

What it does: ``Template(source)`` compiles a chat template with the filters and globals HF
templates use (``tojson``, ``raise_exception``, ``strftime_now``, the ``generation`` block).
``reply(messages)`` is the text the last assistant message adds to the prompt.
What it guarantees: the template runs sandboxed; it cannot reach the file system or Python
objects beyond the messages it is given. A template that fails is a ``DraftError``.
What it costs: one render per call (a few milliseconds).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import SandboxedEnvironment

from .._base.errors import CallsieveError

__all__ = ["DraftError", "Template", "template_source"]


class DraftError(CallsieveError):
    """A chat template that cannot be read, compiled or rendered."""


class _Generation(Extension):
    """``{% generation %}…{% endgeneration %}``: transformers' assistant-mask block; its body."""

    tags = {"generation"}  # noqa: RUF012 (jinja2 reads a set)

    def parse(self, parser: Any) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.Scope(body, lineno=lineno)


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise(message: str) -> None:
    raise DraftError(f"the template refused: {message}")


def _strftime_now(fmt: str) -> str:
    return datetime(2026, 1, 2).strftime(fmt)  # (fixed: renderings must compare equal)


def template_source(text: str) -> str:
    """The chat template in ``text``: a template as it is, or a ``tokenizer_config.json``'s
    ``chat_template`` (a string, or a list of named ones: ``tool_use`` first, else
    ``default``)."""
    if not text.lstrip().startswith("{") or "{%" in text[:200]:
        return text
    try:
        config = json.loads(text)
    except json.JSONDecodeError:
        return text
    chat = config.get("chat_template") if isinstance(config, dict) else None
    if isinstance(chat, list):
        named = {t.get("name"): t.get("template") for t in chat if isinstance(t, dict)}
        chat = named.get("tool_use") or named.get("default")
    if not isinstance(chat, str):
        raise DraftError("the tokenizer_config.json holds no chat_template")
    return chat


class Template:
    """A chat template compiled in the sandbox."""

    def __init__(self, source: str) -> None:
        env = SandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols, _Generation]
        )
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = _strftime_now
        try:
            self._template = env.from_string(source)
        except jinja2.TemplateError as exc:
            raise DraftError(f"the template does not compile: {exc}") from None

    def render(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
        add_generation_prompt: bool = False,
    ) -> str:
        try:
            return self._template.render(
                messages=list(messages),
                tools=list(tools) if tools else None,
                add_generation_prompt=add_generation_prompt,
                bos_token="",
                eos_token="",
            )
        except DraftError:
            raise
        except Exception as exc:  # noqa: BLE001 (a template error of any kind: its message says which)
            raise DraftError(f"the template fails to render: {type(exc).__name__}: {exc}") from None
