"""Renderers: callsieve's events and results as the JSON each API sends (SPEC §10).

One module per API — ``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini`` (these
names are a contract outside harnesses use) — each with a stateful stream encoder
``StreamRenderer`` (``feed(events) -> list[dict]``, ``close(finish_reason=None) ->
list[dict]``) and a whole-response builder ``render_response(result) -> dict``. They all
read a reply through ``Reply`` (``_reply``): text and calls in order, the same for every
``early_emit`` and every chunking. The core never imports this package.
"""

from . import anthropic, gemini, openai_chat, openai_responses
from ._reply import Reply, reply_events

__all__ = ["Reply", "anthropic", "gemini", "openai_chat", "openai_responses", "reply_events"]
