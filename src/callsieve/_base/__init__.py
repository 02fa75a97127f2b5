"""The base layer: the exception tree (``errors``), the values the sieve hands out
(``events``) and parameter bodies as JSON values (``values``). Imports nothing of callsieve's.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
