"""The blocks layer: one captured block read with a Lark LALR parser state (``capture``),
its end-of-input repair (``repair``), what failed captures teach (``lessons``), calls
assembled from parse trees (``assembler``), argument streaming (``argstream``,
``json_stream``), the block lifecycle (``lifecycle``), failure messages (``messages``)
and the lenient DeepSeek native reader (``native_read``). Imports the layers below.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
