"""Strategy: ``dialect_for_model_dir``, a model's folder read for its dialect, with every step.

What it does: ``dialect_for_model_dir(folder)`` is ``_config.model_dir.read_model_dir`` with
its rendering step: ``callsieve.draft``'s ``by_rendering`` renders a sample call with the chat
template in jinja2's sandbox. The step lives above the engine (it parses), so it is handed
down from here. ``serve --model-dir`` and vLLM's ``callsieve_auto`` both call this.
What it guarantees: without jinja2 (the ``draft`` extra) the rendering step is skipped; the
other steps decide, and an error says the step was not tried.
What it costs: an import of jinja2 the first time a folder's markers name no dialect.
"""

from __future__ import annotations

import importlib
import os

from ._config.model_dir import ModelDirDialect, Renderer, read_model_dir

__all__ = ["dialect_for_model_dir"]


def _renderer() -> Renderer | None:
    """The rendering step, or ``None`` where jinja2 is not installed."""
    try:  # (through importlib, as the CLI reaches the draft package: only when it runs)
        identify = importlib.import_module("callsieve.draft._identify")
    except ModuleNotFoundError as exc:
        if exc.name not in ("jinja2", "markupsafe"):
            raise
        return None
    render: Renderer = identify.by_rendering
    return render


def dialect_for_model_dir(
    folder: str | os.PathLike[str],
    *,
    grammar_dirs: tuple[str, ...] = (),
    write_to: str | os.PathLike[str] | None = None,
) -> ModelDirDialect:
    """The dialect of the model in ``folder`` (docs/model-metadata.md, "A model's folder").

    ``grammar_dirs`` adds dialects of your own to match against. ``write_to`` is where a
    compiled ``response_template`` is saved (default: a new temporary folder).
    """
    return read_model_dir(folder, grammar_dirs=grammar_dirs, write_to=write_to, render=_renderer())
