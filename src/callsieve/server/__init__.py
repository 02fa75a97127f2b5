"""Strategy: ``callsieve serve`` — an OpenAI- and Anthropic-compatible gateway that puts a
``Sieve`` between any model and its clients (docs/gateway.md). An optional extra,
``callsieve[server]`` (Starlette, Uvicorn, httpx): ``import callsieve`` never imports this
package.

What it does: ``create_app(config)`` is the ASGI app (``_app``); ``serve(config)`` runs it with
Uvicorn on ``config.host:config.port``; ``ServerConfig.build(**settings)`` checks the settings
(``_config``) and ``load_toml(path)`` reads a config file. The app reads each request in its
API (``_read_openai``, ``_read_anthropic`` into ``_turns.ModelRequest``), takes the reply from
a replay file (``_replay``) or an upstream chat-completions server (``_upstream``, with the
prompt written by ``_prompting``), and answers through the sieve and the API's renderer
(``_respond``, ``_apis``); faults are the API's error shape (``_errors``).
What it guarantees and costs: see each module.
"""

from __future__ import annotations

from ._app import create_app
from ._config import ServerConfig, load_toml

__all__ = ["ServerConfig", "create_app", "load_toml", "serve"]


def serve(config: ServerConfig) -> None:
    """Run the gateway until interrupted."""
    import uvicorn

    uvicorn.run(create_app(config), host=config.host, port=config.port, log_level="info",
                timeout_graceful_shutdown=5)
