"""Strategy: the names the code and the grammar share — the rule-name contract (SPEC §12),
the terminals the engine reads by name, and the named groups of their patterns — written
down once, here; grammar/README.md ("The contract") says what each means.

What it does: the names as constants (every module that means one imports it from here),
``CONTRACT`` (the names no dialect file's namespace renames) and ``check_terminals``, which
the loader runs on every grammar it derives (``derive``).
What it guarantees: a grammar that defines some of the terminals one feature reads together
(``TOGETHER``: the loose-CDATA repair's three) but not all of them is a ``GrammarError``
naming the one it lacks, so a renamed terminal is an error at load, not a feature that
silently stops working; the built-in grammar defines every terminal named here
(tests/spec/test_s12_grammar_layer.py). A terminal a grammar lacks altogether is a feature
it does not have (no ``THINK_OPEN``: no reasoning before the answer; no ``STRAY_RUN``: no
stray text between invokes).
What it costs: nothing per chunk; a few set operations per grammar derived.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from .._base.errors import GrammarError

__all__ = [
    "ATTR",
    "BODY_PREFIX",
    "CALL",
    "CALL_ARGS",
    "CALL_ENVELOPE",
    "CALL_ID",
    "CALL_JSON",
    "CALL_KWARGS",
    "CALL_NAME",
    "CDATA",
    "CDATA_CLOSE",
    "CDATA_OPEN",
    "CDATA_RUN",
    "CLOSE_GROUP",
    "CONTRACT",
    "CONTRACT_RULES",
    "FRAME",
    "KEY_GROUP",
    "PARAM",
    "PARAM_NAME",
    "PARAM_VALUE",
    "QUOTED_GROUP",
    "RAW_VALUE",
    "REPAIR_PREFIX",
    "RUN_SUFFIX",
    "SPELLINGS",
    "START",
    "STRAY_RUN",
    "TERMINALS",
    "TEXT_RUN",
    "THINK_CLOSE",
    "THINK_OPEN",
    "TOGETHER",
    "VALUE_ARRAY",
    "VALUE_GROUP",
    "VALUE_KEY",
    "VALUE_MEMBER",
    "VALUE_NODES",
    "VALUE_OBJECT",
    "VALUE_SCALAR",
    "VALUE_STRING",
    "check_terminals",
]

# ------------------------------------------------------------------ rules (SPEC §12)
#: The rule the loader adds above the dialects' block rules.
START = "start"
CALL = "call"
CALL_NAME = "call_name"
CALL_ARGS = "call_args"
CALL_JSON = "call_json"
CALL_ID = "call_id"
PARAM = "param"
PARAM_NAME = "param_name"
PARAM_VALUE = "param_value"
#: A body a family writes as raw text (``decode_raw``).
RAW_VALUE = "raw_value"
#: A JSON envelope of the call (its name and arguments inside), and Python keyword arguments.
CALL_ENVELOPE = "call_envelope"
CALL_KWARGS = "call_kwargs"
ATTR = "attr"
CDATA = "cdata"
#: A family's own value language (Gemma's ``{key:<|"|>text<|"|>}``), read into JSON: an
#: object of members (a key and a value), an array, a delimited string, a bare scalar.
VALUE_OBJECT = "value_object"
VALUE_ARRAY = "value_array"
VALUE_MEMBER = "value_member"
VALUE_KEY = "value_key"
VALUE_STRING = "value_string"
VALUE_SCALAR = "value_scalar"
VALUE_NODES = frozenset(
    {VALUE_OBJECT, VALUE_ARRAY, VALUE_MEMBER, VALUE_KEY, VALUE_STRING, VALUE_SCALAR}
)
#: The nodes the assembler makes calls of (a rule's name or its alias).
CONTRACT_RULES = frozenset(
    {
        CALL,
        CALL_NAME,
        CALL_ARGS,
        CALL_JSON,
        CALL_ID,
        CALL_ENVELOPE,
        CALL_KWARGS,
        PARAM,
        PARAM_NAME,
        PARAM_VALUE,
        RAW_VALUE,
        ATTR,
        CDATA,
    }
    | VALUE_NODES
)
#: A node named ``repair_<kind>`` inside a call records the repair ``<kind>`` (grammar/README.md).
REPAIR_PREFIX = "repair_"
#: A node named ``body_<name>`` inside a call is the parameter ``<name>``: its text, verbatim,
#: a string (a body the model writes with no parameter name, Functionary's raw code).
BODY_PREFIX = "body_"
#: A block alternative that holds no call, only framing the dialect drops from the text (a
#: recipient line, a response wrapper): the block is a ``Block`` of status ``"frame"``.
FRAME = "frame"

# ------------------------------------------------------------------ terminals
#: A terminal whose name ends so is a run: it streams, its pattern says where it stops.
RUN_SUFFIX = "_RUN"
#: Text between invokes that a block ignores (a missing-wrapper block fails on any).
STRAY_RUN = "STRAY_RUN"
#: The loose-CDATA repair (SPEC §4) reads these.
CDATA_OPEN = "CDATA_OPEN"
CDATA_RUN = "CDATA_RUN"
CDATA_CLOSE = "CDATA_CLOSE"
#: The run of a plain parameter body (``common.lark``; the prompt side checks a plain body
#: against where it stops).
TEXT_RUN = "TEXT_RUN"
#: The reasoning tags (SPEC §15): they belong to no block; ``common.lark`` defines them.
THINK_OPEN = "THINK_OPEN"
THINK_CLOSE = "THINK_CLOSE"
#: Every terminal named here.
TERMINALS = (STRAY_RUN, CDATA_OPEN, CDATA_RUN, CDATA_CLOSE, TEXT_RUN, THINK_OPEN, THINK_CLOSE)
#: Terminals read together, by what reads them: a grammar has all of a group or none.
TOGETHER: dict[str, tuple[str, ...]] = {
    "the loose-CDATA repair": (CDATA_OPEN, CDATA_RUN, CDATA_CLOSE),
}

# ------------------------------------------------------------------ named groups
#: In a closing tag's pattern: what makes it a closing one.
CLOSE_GROUP = "close"
#: In a name or attribute token's pattern: the value as written, the text inside its
#: quotes (the value a quoted name stands for), an attribute's key.
VALUE_GROUP = "v"
QUOTED_GROUP = "q"
KEY_GROUP = "k"

#: Names every file means alike, which no dialect file's namespace renames: the rules of the
#: contract, the start rule and the terminals the repairs know by name.
CONTRACT = CONTRACT_RULES | {START, FRAME, STRAY_RUN, CDATA_OPEN, CDATA_RUN, CDATA_CLOSE}


class SPELLINGS:
    """The names of the entries of a spelling file (``grammar/spelling/<dialect>.lark``,
    grammar/README.md "Spellings for writing"): one named after a parser terminal is that
    terminal's canonical spelling (``CALLS_OPEN``: the wrapper opener's, whatever its
    terminal is called); the others are template text no parser terminal reads. (The
    sanitizer's names, ``LEAK_*`` of ``grammar/_leaks.lark``, are read in
    ``_sanitizer.leak_patterns`` only.)"""

    CALLS_OPEN = "CALLS_OPEN"
    CALLS_CLOSE = "CALLS_CLOSE"
    INVOKE_OPEN = "INVOKE_OPEN"
    INVOKE_CLOSE = "INVOKE_CLOSE"
    PARAM_OPEN = "PARAM_OPEN"
    PARAM_CLOSE = "PARAM_CLOSE"
    NAME_ATTR = "NAME_ATTR"
    ATTR = "ATTR"
    TAG_END = "TAG_END"
    STRING_BODY = "STRING_BODY"
    CDATA_OPEN = "CDATA_OPEN"
    CDATA_CLOSE = "CDATA_CLOSE"
    RESULTS_OPEN = "RESULTS_OPEN"
    RESULTS_CLOSE = "RESULTS_CLOSE"
    RESULT_OPEN = "RESULT_OPEN"
    RESULT_CLOSE = "RESULT_CLOSE"
    RESULT_SEP = "RESULT_SEP"
    CALL_SEP = "CALL_SEP"
    FUNCTIONS_OPEN = "FUNCTIONS_OPEN"
    FUNCTIONS_CLOSE = "FUNCTIONS_CLOSE"
    NATIVE_CALLS_BEGIN = "NATIVE_CALLS_BEGIN"
    NATIVE_CALLS_END = "NATIVE_CALLS_END"
    NATIVE_CALL_BEGIN = "NATIVE_CALL_BEGIN"
    NATIVE_CALL_END = "NATIVE_CALL_END"
    NATIVE_SEP = "NATIVE_SEP"
    NATIVE_HEAD = "NATIVE_HEAD"
    NATIVE_NAME_LINE = "NATIVE_NAME_LINE"
    NATIVE_FENCE_OPEN = "NATIVE_FENCE_OPEN"
    NATIVE_FENCE_END = "NATIVE_FENCE_END"
    BEGIN_OF_SENTENCE = "BEGIN_OF_SENTENCE"
    END_OF_SENTENCE = "END_OF_SENTENCE"
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    TOOL_OUTPUTS_BEGIN = "TOOL_OUTPUTS_BEGIN"
    TOOL_OUTPUTS_END = "TOOL_OUTPUTS_END"
    TOOL_OUTPUT_BEGIN = "TOOL_OUTPUT_BEGIN"
    TOOL_OUTPUT_END = "TOOL_OUTPUT_END"


def check_terminals(defined: Collection[str], where: Callable[..., str]) -> None:
    """A ``GrammarError`` if ``defined``, the grammar's terminals, holds some of a
    ``TOGETHER`` group but not all (``where(*names)``: the file and line of a name)."""
    for reader, group in TOGETHER.items():
        present = [name for name in group if name in defined]
        if present and len(present) < len(group):
            lacking = next(name for name in group if name not in defined)
            raise GrammarError(
                f"{where(*present)}: the grammar defines {', '.join(present)} but not {lacking}, "
                f"which {reader} reads with {'it' if len(present) == 1 else 'them'} "
                "(grammar/README.md, 'Names the repairs use')",
                expected=group,
            )
