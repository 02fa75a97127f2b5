"""The grammar layer: finding, joining and compiling the ``.lark`` files, the tables derived
from them for the scanner (cached across processes) and the spellings for writing.
Imports only ``_base``.

The layers and every module: docs/architecture.md.
"""

__all__: list[str] = []
