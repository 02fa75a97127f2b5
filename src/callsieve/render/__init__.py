"""Renderers: callsieve's events and results as the JSON each API sends (SPEC §10).

One module per API — ``openai_chat``, ``openai_responses``, ``anthropic``, ``gemini`` (these
names are a contract outside harnesses use) — each with a stateful stream encoder
``StreamRenderer`` (``feed(events) -> list[dict]``, ``close(finish_reason=None) ->
list[dict]``) and a whole-response builder ``render_response(result) -> dict``. They all
read a reply through ``Reply`` (``_reply``): text and calls in order, the same for every
``early_emit`` and every chunking. A call that began to stream and then aborts ends the
reply with the API's own error signal (``on_abort="error"``, the default; ``_aborts``), and
``cut_off(blocks)`` tells a reply that ended inside a call. The core never imports this
package.
"""

from . import anthropic, gemini, openai_chat, openai_responses
from ._aborts import ON_ABORT, cut_off
from ._reply import Reply, reply_events

__all__ = [
    "ON_ABORT",
    "Reply",
    "anthropic",
    "cut_off",
    "gemini",
    "openai_chat",
    "openai_responses",
    "reply_events",
]
