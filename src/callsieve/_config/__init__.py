"""The configuration layer: the validated options of a ``Sieve`` (``options``), the tool
definitions read once (``tools``), and the services the blocks report to — the tool
policy (``policy``) and the counters (``metrics``). Imports ``_base`` and the grammar layer.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
