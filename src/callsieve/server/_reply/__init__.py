"""Strategy: the reply side of the gateway — one exchange (``exchange``) takes a request to
its model source (``upstream``, reading the upstream's SSE with ``sse``, its prompt written by
``prompting``; or ``replay``) and answers through the sieve and the API's renderer
(``respond``, with each API's framing and error events in ``apis``).
"""

from __future__ import annotations

__all__: list[str] = []
