"""How much of each family's tests a dialect drafted from its chat template reads.

For every chat template in ../shared/templates/chat/ whose family has a hand-written
dialect, ``callsieve.draft`` drafts a dialect, and each case of that family's test file
(tests/families/test_<family>.py, ``CASES``) is parsed with the draft alone. A case is read
when the draft gives the case's calls (its tools and options applied). Prints a Markdown
table (docs/model-metadata.md holds the last one).

    PYTHONPATH=$PWD/src python benchmarks/draft_dialects.py [--templates DIR]

"reviewed": the same after the one review the report asks for where values are untyped
(``//%raw_values_are_strings`` added), for the families whose reference parsers keep such
values strings (their hand-written dialects declare it); "—" elsewhere.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from callsieve import CallsieveError, parse
from callsieve._grammar.compiled import load_grammar
from callsieve.draft import DraftError, dialect_name, draft, write

#: template → the family whose hand-written dialect and tests it is measured against
FAMILIES = {
    "Qwen-Qwen3-0.6B.jinja": "hermes",
    "Qwen-Qwen2.5-7B-Instruct.jinja": "hermes",
    "Qwen-QwQ-32B.jinja": "hermes",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja": "hermes",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": "hermes",
    "Qwen3-Coder.jinja": "qwen3_coder",
    "Qwen-Qwen3-Coder-30B-A3B-Instruct.jinja": "qwen3_coder",
    "Qwen3.5-4B.jinja": "qwen3_coder",
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": "qwen3_coder",
    "stepfun-ai-Step-3.5-Flash.jinja": "qwen3_coder",
    "glm_4_5.jinja": "glm45",
    "GLM-4.6.jinja": "glm45",
    "GLM-4.7-Flash.jinja": "glm45",
    "Kimi-K2-Instruct.jinja": "kimi_k2",
    "moonshotai-Kimi-K2.jinja": "kimi_k2",
    "Kimi-K2-Thinking.jinja": "kimi_k2",
    "Kimi-K3.jinja": "kimi_k3",
    "MiniMax-M2.jinja": "minimax_m2",
    "MiniMax-M3.jinja": "minimax_m3",
    "ByteDance-Seed-OSS.jinja": "seed_oss",
    "tencent-Hy3.jinja": "hy_v3",
    "google-gemma-4-31B-it.jinja": "gemma4",
    "openai-gpt-oss-120b.jinja": "gpt_oss",
    "meetkai-functionary-medium-v3.1.jinja": "functionary",
    "NVIDIA-Nemotron-Nano-v2.jinja": "nemotron",
    "tool_chat_template_internlm2_tool.jinja": "internlm2",
    "openbmb-MiniCPM5-1B.jinja": "minicpm5",
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": "command_r7b",
    "Apertus-8B-Instruct.jinja": "apertus",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja": "mistral",
    "meta-llama-Llama-3.1-8B-Instruct.jinja": "llama3_json",
    "upstage-Solar-Open-100B.jinja": "solar_open2",
    "LFM2.5-Instruct.jinja": "lfm2",
    "GigaChat3.1-10B-A1.8B.jinja": "gigachat3",
}
#: the default dialects have spec tests, not a family file: their templates are drafted and
#: checked on their own renderings only
NO_CASES = {
    "deepseek-ai-DeepSeek-V3.1.jinja": "deepseek_native",
    "deepseek-ai-DeepSeek-V3.2.jinja": "dsml_v32",
    "deepseek-ai-DeepSeek-V4.jinja": "dsml_v4",
    "deepseek-ai-DeepSeek-V4-Flash-0731.jinja": "dsml_v4",
}


def _same(result: Any, calls: list[tuple[str, dict[str, Any]]]) -> bool:
    from helpers import canon_calls, canon_value

    return bool(canon_calls(result.calls) == [(n, canon_value(i)) for n, i in calls])


#: The one line a reviewer adds where the report says values are untyped and the family's
#: reference parsers keep them strings (docs/model-metadata.md, "The draft's review").
STRINGS = "//%raw_values_are_strings"


def family_share(template: Path, family: str, strings: bool = False) -> tuple[int, int, str]:
    """(cases read, cases, why none) for ``template`` against ``family``'s cases; with
    ``strings``, the draft reviewed as its report says (raw values kept strings)."""
    module = importlib.import_module(f"families.test_{family}")
    cases = module.CASES
    name = dialect_name(str(template))
    try:
        d = draft(template.read_text(encoding="utf-8"), name, template.name)
    except (DraftError, IndexError, ValueError, StopIteration) as exc:
        return 0, len(cases), (str(exc).splitlines() or [type(exc).__name__])[0][:90]
    if strings and any(n.startswith("untyped values") for n in d.notes):
        head, _, rest = d.grammar.partition("\n")
        d = replace(d, grammar=f"{head}\n{STRINGS}\n{rest}")
    read = 0
    with tempfile.TemporaryDirectory() as tmp:
        write(d, tmp)
        for case in cases:
            opts = {k: v for k, v in case.opts.items() if k not in ("dialects", "grammar_dirs")}
            try:
                result = parse(
                    case.text, dialects=[name], grammar_dirs=[tmp], tools=case.tools, **opts
                )
            except CallsieveError:  # (a case's options the draft cannot take: not read)
                continue
            read += _same(result, case.calls)
    return read, len(cases), ""


def _keeps_strings(family: str) -> bool:
    """Whether the family's hand-written dialect keeps raw values strings (its reference
    parsers do: what a reviewer of the draft would learn from them)."""
    return bool(load_grammar((family,), ()).traits[family].flag("raw_values_are_strings"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--templates", default=str(ROOT.parent / "shared/templates/chat"))
    args = ap.parse_args(argv)
    folder = Path(args.templates)
    if not folder.is_dir():
        print(f"{folder}: no such folder")
        return 1
    print("| template | family | cases read | share | reviewed | note |")
    print("|---|---|---|---|---|---|")
    for file, family in FAMILIES.items():
        path = folder / file
        if not path.is_file():
            continue
        read, total, why = family_share(path, family)
        share = f"{100 * read / total:.0f} %" if total else "—"
        after = "—"
        if _keeps_strings(family):
            reviewed, _, _ = family_share(path, family, strings=True)
            after = f"{100 * reviewed / total:.0f} %" if total else "—"
        print(f"| `{file}` | `{family}` | {read}/{total} | {share} | {after} | {why} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
