"""The gateway's tests (``callsieve serve``, docs/gateway.md): real ``openai`` and
``anthropic`` clients against the gateway over 127.0.0.1, in replay mode and in upstream
mode against a scripted model server (``loopback``)."""
