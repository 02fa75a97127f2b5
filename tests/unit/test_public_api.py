"""The public API is a contract (issue 2, item 8): outside harnesses import these names."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import pytest

import callsieve

#: The names the package promises; adding one is a decision, removing one a breaking change.
PUBLIC = {
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
    "aggregate_metrics",
    "UnknownOptionError",
    "__version__",
    "available_dialects",
    "dialect_for_model_dir",
    "dialect_from_response_template",
    "dialects",
    "new_call_id",
    "parse",
    "sanitize_leaked_output",
}


def test_all_is_exactly_the_contract() -> None:
    assert set(callsieve.__all__) == PUBLIC
    assert len(callsieve.__all__) == len(set(callsieve.__all__))
    for name in callsieve.__all__:
        assert hasattr(callsieve, name), name


def has_vllm() -> bool:
    return importlib.util.find_spec("vllm") is not None


#: An integration's modules that import their host, and the host (each an extra).
HOSTS = {
    "callsieve.integrations.litellm._hook": "litellm",
    "callsieve.integrations.sglang._plugin": "sglang",
}


def host_missing(module: str) -> bool:
    """``module`` imports a host that is not installed here."""
    host = next((h for prefix, h in HOSTS.items() if module.startswith(prefix)), None)
    return host is not None and importlib.util.find_spec(host) is None


def test_private_modules_declare_all() -> None:
    """Every module and package of callsieve, in every folder, declares ``__all__``."""
    for info in pkgutil.walk_packages(callsieve.__path__, "callsieve."):
        if info.name.endswith(".__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # the vLLM plugin's parsers import vLLM (the vllm extra)
            if info.name.startswith("callsieve.integrations.vllm.") and not has_vllm():
                continue
            if host_missing(info.name):
                continue
            raise
        names = getattr(module, "__all__", None)
        assert names is not None, f"{info.name} has no __all__"
        for name in names:
            assert hasattr(module, name), f"{info.name}.{name}"


@pytest.mark.parametrize(
    "name",
    [
        "Text",
        "ToolCalls",
        "ToolCall",
        "Block",
        "CallStarted",
        "ArgumentsDelta",
        "CallFinished",
        "CallAborted",
    ],
)
def test_events_are_slotted_values(name: str) -> None:
    cls = getattr(callsieve, name)
    assert "__slots__" in cls.__dict__ and cls.__slots__
    instance = cls.__new__(cls)
    assert not hasattr(instance, "__dict__"), f"{name} instances carry a __dict__"


def test_one_exception_tree() -> None:
    assert issubclass(callsieve.FormatError, ValueError)
    for name in (
        "ConfigurationError",
        "FormatError",
        "GrammarError",
        "InputTypeError",
        "SieveClosedError",
        "UnknownOptionError",
    ):
        assert issubclass(getattr(callsieve, name), callsieve.CallsieveError)
    assert issubclass(callsieve.InputTypeError, TypeError)
    assert issubclass(callsieve.ConfigurationError, ValueError)
    assert issubclass(callsieve.UnknownOptionError, TypeError)
    assert issubclass(callsieve.SieveClosedError, RuntimeError)


def test_error_carries_offset_and_expected() -> None:
    s = callsieve.Sieve()
    s.feed("abc")
    s.close()
    with pytest.raises(callsieve.SieveClosedError) as info:
        s.feed("x")
    assert info.value.offset == 3
    with pytest.raises(callsieve.ConfigurationError) as cfg:
        callsieve.Sieve(early_emit="sometimes")
    assert "block" in cfg.value.expected
