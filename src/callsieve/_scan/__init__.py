"""The scanning layer: the stream's position and held text (``cursor``), Markdown code
over prose (``fences``), the scanner's decision at a token boundary (``decide``) and
balanced JSON runs (``balanced``). Imports the layers below (``_base`` … ``_config``).

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
