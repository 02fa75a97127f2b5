"""Strategy: the request side of the gateway — a client's request, in whichever API it came,
read into one plain ``ModelRequest`` (``turns``), each field forwarded, read or refused as its
API's table says (``fields``): ``openai`` (Chat Completions and Responses), ``anthropic``
(Messages), ``gemini`` (``generateContent``). Nothing here does I/O.
"""

from __future__ import annotations

__all__: list[str] = []
