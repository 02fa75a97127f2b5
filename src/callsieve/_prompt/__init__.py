"""The prompt side's private half (SPEC §16): what a server holds read into plain tuples
(``inputs``) and calls written in a markup dialect (``write``), for ``callsieve.prompt``.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
