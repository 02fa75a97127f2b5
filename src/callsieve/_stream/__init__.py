"""The stream layer: the sans-IO machine (``sieve``), its modes (``modes``), the reader
per mode (``readers``) and prose entry detection (``entries``). Imports the layers below.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
