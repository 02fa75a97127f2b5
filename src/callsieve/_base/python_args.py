"""Strategy: read Python keyword arguments — ``city="SF", days=3)``, the rest of an argument
list up to its closing parenthesis — into a JSON object, for the contract node
``call_kwargs`` (grammar/README.md; the ``pythonic`` family).

What it does: ``python_kwargs(text)`` parses ``f(`` + ``text`` with Python's own parser
(``ast``: the text is parsed, never run) and reads each keyword argument's value as a
literal: a string (either quote, any prefix but ``b``/``f``), an integer, a finite float,
``True``/``False``/``None`` and JSON's ``true``/``false``/``null``, a list, tuple or set (an
array, in the order written), a dict whose keys are strings or numbers (an object; a number
key written as JSON writes it), a sign before a number. Anything else — a positional
argument, ``*args``/``**kwargs``, a name, a call, an operator, ``bytes``, a complex number,
a number out of a float's range, two arguments of one name, text that is no argument list —
is a ``ValueError`` saying what.
What it guarantees: the arguments as a model meant them, or an error; no code is evaluated,
nothing is imported. The balanced run that reads the text has bounded its nesting
(``MAX_JSON_DEPTH``), so the recursion here is shallow.
What it costs: one ``ast.parse`` of the text (linear) and a walk over its literals.
"""

from __future__ import annotations

import ast
import io
import keyword
import math
import re
import tokenize
from typing import Any

__all__ = ["python_kwargs"]

#: JSON's literals, which models write in Python calls too.
_JSON_NAMES = {"true": True, "false": False, "null": None}


def python_kwargs(text: str) -> dict[str, Any]:
    """The keyword arguments of the argument list ``text`` (``a=1, b='x')``) as a dict of
    JSON values; ``ValueError`` if it holds anything but keyword arguments with literals."""
    source, renamed = _keyword_names("_(" + text)
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"not an argument list ({type(exc).__name__})") from None
    call = tree.body
    if not isinstance(call, ast.Call) or not (
        isinstance(call.func, ast.Name) and call.func.id == "_"
    ):
        raise ValueError("not an argument list")
    if call.args:
        raise ValueError("a positional argument")
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise ValueError("**kwargs")
        name = renamed.get(kw.arg, kw.arg)
        if name in out:
            raise ValueError(f"the argument {name!r} twice")
        out[name] = _literal(kw.value)
    return out


def _keyword_names(source: str) -> tuple[str, dict[str, str]]:
    """``source`` with every argument named after a Python keyword (``from='NYC'``: a tool's
    parameter may be called so, and a model writes it so) renamed to a name Python takes,
    and the new names' old ones. Python's tokenizer finds them (a keyword, then ``=``, after
    ``(`` or ``,``), so nothing inside a string is touched. Text it cannot tokenize is given
    back as it is (the parser then says what is wrong)."""
    if _KEYWORD_ARG.search(source) is None:  # (the common case: one search, in C)
        return source, {}
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return source, {}
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    significant = [t for t in toks if t.type not in _SKIPPED]
    renamed: dict[str, str] = {}
    edits: list[tuple[int, int, str]] = []
    for k, t in enumerate(significant[1:-1], 1):
        if (
            t.type == tokenize.NAME
            and keyword.iskeyword(t.string)
            and significant[k + 1].string == "="
            and significant[k - 1].string in ("(", ",")
        ):
            new = f"_kw{len(renamed)}_{t.string}"
            renamed[new] = t.string
            at = starts[t.start[0] - 1] + t.start[1]
            edits.append((at, at + len(t.string), new))
    for a, b, new in reversed(edits):
        source = source[:a] + new + source[b:]
    return source, renamed


#: A Python keyword, then ``=``: where an argument may be named after one.
_KEYWORD_ARG = re.compile(r"\b(?:" + "|".join(keyword.kwlist) + r")\s*=(?!=)")
_SKIPPED = frozenset(
    {
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.COMMENT,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
)


def _literal(node: ast.expr) -> Any:
    """One literal's JSON value."""
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (bool, str, int)):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError("a number out of a float's range")
            return value
        raise ValueError(f"a {type(value).__name__} value")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _literal(node.operand)
        if isinstance(operand, bool) or not isinstance(operand, (int, float)):
            raise ValueError("a sign before something that is no number")  # noqa: TRY004
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        obj: dict[str, Any] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise ValueError("** in a dict")
            key = _literal(k)
            if isinstance(key, bool) or key is None or not isinstance(key, (str, int, float)):
                raise ValueError("a dict key that is no string or number")
            obj[key if isinstance(key, str) else _json_key(key)] = _literal(v)
        return obj
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    raise ValueError(f"{type(node).__name__.lower()} is no literal")


def _json_key(key: float) -> str:
    """A number key as ``json.dumps`` writes one (``1`` -> ``"1"``, ``1.5`` -> ``"1.5"``)."""
    return repr(key) if isinstance(key, float) else str(key)
