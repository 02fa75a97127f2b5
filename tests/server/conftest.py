"""The gateway's tests (``callsieve serve``, docs/gateway.md): real ``openai`` and
``anthropic`` clients against the gateway over 127.0.0.1, in replay mode and in upstream
mode against a scripted model server (``loopback``)."""

import gc
from collections.abc import Iterator

import pytest
from loopback import close_clients


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_clients()
    gc.collect()  # a socket a test leaked warns here, in that test, not in a later one
