"""Strategy: ``callsieve serve`` — an OpenAI-, Anthropic- and Gemini-compatible gateway that
puts a ``Sieve`` between any model and its clients (docs/gateway.md). An optional extra,
``callsieve[server]`` (Starlette, Uvicorn, httpx): ``import callsieve`` never imports this
package.

What it does: ``create_app(config)`` is the ASGI app (``_app``); ``serve(config)`` runs it
with Uvicorn (``_run``: one process, or ``workers`` processes sharing the sockets; each
connection behind ``_conn``'s guard: TCP_NODELAY, the header deadline, the cap per worker);
``ServerConfig.build(**settings)`` checks the settings (``_config``; the ``[models]`` table,
``_models``) and ``load_toml(path)`` reads a config file. Each request passes ``_wire``
(its body and send deadlines, its access-log line) and the access checks (``_access``:
Host, Origin, API key, Content-Type), is read strictly (``_json``) in its API (``_read``: ``openai``, ``anthropic``, ``gemini`` into ``turns.ModelRequest``; ``fields``:
every field forwarded, read or refused), and runs as one exchange (``_reply.exchange``:
cancellation, keep-alive, drain) that takes the reply from a replay file (``_reply.replay``)
or an upstream chat-completions server (``_reply.upstream``, reading SSE with ``_reply.sse``,
with the prompt written by ``_reply.prompting``) and answers through the sieve and the API's
renderer (``_reply.respond``, ``_reply.apis``), its reasoning read as the request and the
model say (``_reply.thinking``); faults are the API's error shape (``_errors``).
What it guarantees and costs: see each module.
"""

from __future__ import annotations

from ._app import create_app
from ._config import ServerConfig, load_toml
from ._run import serve

__all__ = ["ServerConfig", "create_app", "load_toml", "serve"]
