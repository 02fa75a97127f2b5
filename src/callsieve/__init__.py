"""callsieve — pull tool calls out of LLM output, exactly, on whole text and on streams.

What it promises is docs/spec.md (in the repository and the sdist): "SPEC §N" in the code,
the tests and the docs means its section N. README.md shows the API.

>>> from callsieve import parse
>>> parse('Hi <tool_calls><invoke name="f"></invoke></tool_calls>').calls[0].name
'f'
"""

from ._errors import (
    CallsieveError,
    ConfigurationError,
    FormatError,
    GrammarError,
    InputTypeError,
    SieveClosedError,
    UnknownOptionError,
)
from ._events import (
    ArgumentsDelta,
    Block,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    Reasoning,
    Text,
    ToolCall,
    ToolCalls,
)
from ._grammar import DEFAULT_DIALECTS, available_dialects
from ._leaks import LeakFilter, sanitize_leaked_output
from ._metrics import Metrics, aggregate_metrics
from ._policy import Rejection
from ._results import ParseResult, parse
from ._sieve import Sieve, SieveState, new_call_id

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_DIALECTS",
    "ArgumentsDelta",
    "Block",
    "CallAborted",
    "CallFinished",
    "CallStarted",
    "CallsieveError",
    "ConfigurationError",
    "Event",
    "FormatError",
    "GrammarError",
    "InputTypeError",
    "LeakFilter",
    "Metrics",
    "ParseResult",
    "Reasoning",
    "Rejection",
    "Sieve",
    "SieveClosedError",
    "SieveState",
    "Text",
    "ToolCall",
    "ToolCalls",
    "UnknownOptionError",
    "__version__",
    "aggregate_metrics",
    "available_dialects",
    "new_call_id",
    "parse",
    "sanitize_leaked_output",
]
