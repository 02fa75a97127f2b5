"""The stream layer: the sans-IO machine (``sieve``), its modes and the table of every step
between them (``modes``), where the reply stands (``context``) and prose entry detection
(``entries``). Imports the layers below.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
