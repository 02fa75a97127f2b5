"""The sanitizer layer: the leaked-output sanitizer (SPEC §13) — ``leaks``, its patterns
read from the grammar (``leak_patterns``) and the end of a leaked JSON value
(``leak_json``). Imports the layers below.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
