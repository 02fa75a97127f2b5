"""The grammar is the only place that knows a tag (issue 11, item 5): what Python used to
know of the spellings — the closing slash, the quotes around a value, the ```json fence, the
default dialects — is read from the grammar, so a scratch grammar in a temporary folder that
spells them otherwise is read its own way. Also: the order of the entry terminals (which of
two openers that match the same text is taken) is the grammar's, not the hash seed's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import run_all_ways

SRC = Path(__file__).resolve().parents[1] / "src"


def _write(folder: Path, **files: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.lark").write_text(text, encoding="utf-8")
    return str(folder)


# ---------------------------------------------------------------- entry order
_ENTRY_ORDER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import callsieve
from callsieve._grammar import load_grammar
zw = "\\u200b"
print(json.dumps([[e.terminal for e in load_grammar().entries],
                  [c.dialect for c in callsieve.parse(
                      "＜" + zw + 'tool_calls＞<invoke name="f"/></tool_calls>').calls],
                  [c.dialect for c in callsieve.parse(
                      '<invoke name="f"/>＜' + zw + "／tool_calls＞").calls]]))
"""


def test_the_entry_order_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """``＜\\u200btool_calls＞`` is spelled as both the dsml and the xml opener (a zero-width
    prefix): the first enabled of the two, dsml, takes it, in every process — it used to be
    whichever the parse table listed first, which followed ``PYTHONHASHSEED``."""
    seen = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed,
               "CALLSIEVE_CACHE_DIR": str(tmp_path / f"cache{seed}")}
        out = subprocess.run([sys.executable, "-c", _ENTRY_ORDER, str(SRC)], env=env,
                             capture_output=True, text=True, check=True).stdout
        seen.add(out)
    assert len(seen) == 1, seen
    entries, opened, repaired = json.loads(seen.pop())
    assert opened == repaired == ["dsml"]
    assert entries.index("DSML__DSML_CALLS_OPEN") < entries.index("XML__XML_CALLS_OPEN")
