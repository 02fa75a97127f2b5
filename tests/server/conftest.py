"""The gateway's tests (``callsieve serve``, docs/gateway.md): real ``openai``,
``anthropic`` and ``google-genai`` clients against the gateway over 127.0.0.1, in replay mode
and in upstream mode against a scripted model server that injects faults (``loopback``)."""

import gc
from collections.abc import Iterator

import pytest
from loopback import close_clients


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_clients()
    gc.collect()  # a socket a test leaked warns here, in that test, not in a later one
    # What survived belongs to the session: later collections skip it (a full collection of
    # the process, its grammar tables and SDKs, cost 0.7 s per test on a busy machine).
    gc.freeze()
