"""callsieve — pull tool calls out of LLM output, exactly, on whole text and on streams.

What it promises is docs/spec.md (in the repository and the sdist): "SPEC §N" in the code,
the tests and the docs means its section N. README.md shows the API.

>>> from callsieve import parse
>>> parse('Hi <tool_calls><invoke name="f"></invoke></tool_calls>').calls[0].name
'f'
"""

from ._base.errors import (
    CallsieveError,
    ConfigurationError,
    FormatError,
    GrammarError,
    GrammarWarning,
    InputTypeError,
    SieveClosedError,
    UnknownOptionError,
)
from ._base.events import (
    ABORT_REASONS,
    BLOCK_STATUSES,
    AbortReason,
    ArgumentsDelta,
    Block,
    BlockStatus,
    CallAborted,
    CallFinished,
    CallStarted,
    Event,
    Reasoning,
    Text,
    ToolCall,
    ToolCalls,
)
from ._config.metrics import Metrics, aggregate_metrics
from ._config.model_dir import ModelDirDialect
from ._config.policy import Rejection
from ._config.response_template import ResponseTemplateDialect, dialect_from_response_template
from ._facade.results import ParseResult, parse
from ._facade.sieve import Sieve
from ._grammar.compiled import DEFAULT_DIALECTS, available_dialects
from ._grammar.files import dialects
from ._model_dir import dialect_for_model_dir
from ._sanitizer.leaks import LeakFilter, sanitize_leaked_output
from ._stream.sieve import SieveState, new_call_id

__version__ = "0.1.0"

__all__ = [
    "ABORT_REASONS",
    "BLOCK_STATUSES",
    "DEFAULT_DIALECTS",
    "AbortReason",
    "ArgumentsDelta",
    "Block",
    "BlockStatus",
    "CallAborted",
    "CallFinished",
    "CallStarted",
    "CallsieveError",
    "ConfigurationError",
    "Event",
    "FormatError",
    "GrammarError",
    "GrammarWarning",
    "InputTypeError",
    "LeakFilter",
    "Metrics",
    "ModelDirDialect",
    "ParseResult",
    "Reasoning",
    "Rejection",
    "ResponseTemplateDialect",
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
    "dialect_for_model_dir",
    "dialect_from_response_template",
    "dialects",
    "new_call_id",
    "parse",
    "sanitize_leaked_output",
]
