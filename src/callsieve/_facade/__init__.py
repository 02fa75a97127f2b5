"""The facade layer: the public ``Sieve`` and its sanitizing variant (``sieve``),
``parse()`` and ``ParseResult`` (``results``) and the ``--explain`` view (``explain``).
Imports the layers below; the surfaces (``render``, ``prompt``, ``server``, the CLI) sit
on it.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
