"""Strategy: a thin command line over ``parse()`` and ``Sieve`` — for trying the library on a
saved model reply, and for seeing exactly what a streaming server would emit.

What it does: ``callsieve parse FILE|-`` reads the whole text and prints the ``ParseResult``
as one indented JSON object (``reasoning``, ``text``, ``calls``, ``blocks``,
``saw_tool_call_syntax``, ``rejected_by_policy``, ``rejected_tool_names``). ``callsieve stream FILE|- [--chunk-size N]``
feeds the text through a ``Sieve`` in chunks of N characters (default 4, about an LLM token;
for ``stream -`` each read is cut on its own, its last chunk shorter, so nothing that has
arrived waits for the next read — as a server feeds what it has) and prints one compact JSON
object per line (``{"event": "text", ...}``, ``{"event": "reasoning", ...}``,
``{"event": "tool_calls", "calls": [...], "block": {...}}``, and the argument-streaming
events). By default adjacent text events are merged into one ``text`` line (adjacent
reasoning into one ``reasoning`` line), printed when an event of another kind comes, at the end, and — for ``stream -``, which feeds standard input as it
arrives — whenever a read's worth of input has been fed, so a reader of a live pipe sees text
as soon as it is released (piped input may therefore print its text in more lines than the
same FILE; the text and the other events are the same). ``--raw-events`` prints every event
as it comes, one line each, to show the real hold-back behaviour (the ``<think>`` and
``</think>`` tags as ``reasoning`` events with their ``raw`` text); ``--sse`` prints each line
as a Server-Sent Events frame (``data: <json>`` and a blank line). Both commands take
``--tools FILE`` (a JSON list of tool definitions, passed as ``tools=``) and
``--early-emit MODE``, ``--reasoning tags|open|off`` and ``--calls-in-reasoning text|call``
(SPEC §15; choices read from ``_config.options.EARLY_EMIT``, ``REASONING`` and
``CALLS_IN_REASONING``, so a new mode needs no change here), and ``--format API`` (the
API's wire JSON, reasoning as that API carries it; ``--no-reasoning-output`` leaves it out); ``-`` reads standard input. ``callsieve --version`` prints
``callsieve <version>``; ``callsieve dialects`` lists the dialects and ``callsieve check-grammar
FILE`` checks a grammar file of one's own (``_cli_grammar``, which also gives ``parse`` and
``stream`` their ``--dialects`` and ``--grammar-dir``); ``callsieve serve`` runs the gateway (``_cli_serve``: its flags,
and the server imported only then); ``callsieve grammar`` prints the constraint a decoding
engine takes for a tools file (``_cli_constrain``); a bare ``callsieve`` prints the help (usage and the commands, one
line each) to standard output and exits 0, as ``--help`` does.
Where output is chosen: ``_stream_writer(args, out)`` builds the ``StreamWriter`` every stream
event goes through (text merging, an encoder of records, a frame; ``_cli_output``), and
``_parse_view(args)`` the function that turns the ``ParseResult`` into the object printed —
a wire format (``--format``) is one more encoder and one more view there.
What it guarantees: input is read as UTF-8 with line endings kept as they are (spans index
the exact text); output is JSON, with non-ASCII kept when standard output can encode it and
escaped otherwise. A user error (missing or unreadable file, bad UTF-8, bad tools JSON, a
malformed tool definition, a bad option or command) prints one line to standard error and
returns exit code 2 — never a traceback. The options (``SieveOptions``) are checked before any
input is read, so ``parse -`` with a bad tools file fails at once instead of waiting for stdin.
What it costs: ``parse`` holds the whole input; ``stream`` holds one read of standard input
plus what the sieve and the text merger hold, except that a FILE is read whole first.
"""

from __future__ import annotations

import argparse
import codecs
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, TextIO

from . import __version__
from ._base.errors import CallsieveError, ConfigurationError
from ._cli_constrain import add_constrain, run_constrain
from ._cli_draft import add_draft, run_draft
from ._cli_grammar import add_dialect_options, add_grammar_commands, dialect_options, run_grammar
from ._cli_output import (
    SSE_DONE,
    EventRecords,
    Frame,
    Record,
    StreamWriter,
    dumps,
    json_line,
    result_json,
    sse_event_frame,
    sse_frame,
)
from ._cli_serve import add_serve, run_serve
from ._config import options as _options
from ._config.options import SieveOptions
from ._config.policy import ON_REJECT, POLICIES
from ._facade.explain import explain_json
from ._facade.results import ParseResult, parse
from ._facade.sieve import Sieve
from ._grammar.compiled import load_grammar

__all__ = ["main"]

PROG = "callsieve"
DEFAULT_CHUNK_SIZE = 4
_READ_SIZE = 1 << 16
EXIT_OK = 0
EXIT_USAGE = 2


class _UsageError(Exception):
    """A user error: reported as one line on standard error, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """``argparse`` that raises instead of printing the usage block and exiting."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


# ---------------------------------------------------------------------- input
def _read_text(path: str) -> str:
    if path == "-":
        return "".join(_stdin_pieces())
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except FileNotFoundError:
        raise _UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise _UsageError(f"{path}: is a directory") from None
    except UnicodeDecodeError as exc:
        raise _UsageError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise _UsageError(f"{path}: {exc.strerror or exc}") from None


def _stdin_pieces() -> Iterator[str]:
    """Standard input as UTF-8 text, piece by piece as it arrives."""
    stdin = sys.stdin
    if stdin is None:
        raise _UsageError("-: standard input is closed")
    raw = getattr(stdin, "buffer", None)
    if raw is None:  # a text-only stream (e.g. io.StringIO): already decoded
        yield stdin.read()
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    read = getattr(raw, "read1", raw.read)
    try:
        while True:
            data = read(_READ_SIZE)
            if not data:
                tail = decoder.decode(b"", final=True)
                if tail:
                    yield tail
                return
            piece = decoder.decode(data)
            if piece:
                yield piece
    except UnicodeDecodeError:
        raise _UsageError("-: standard input is not valid UTF-8") from None


def _pieces(path: str) -> Iterator[str]:
    """The input as it can be read: a FILE whole, standard input read by read."""
    if path == "-":
        yield from _stdin_pieces()
    else:
        yield _read_text(path)


def _load_tools(path: str | None) -> list[Any] | None:
    if path is None:
        return None
    text = _read_text(path)
    try:
        tools = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _UsageError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(tools, list):
        raise _UsageError(
            f"{path}: expected a JSON list of tool definitions, got a JSON {type(tools).__name__}"
        )
    try:
        SieveOptions(tools)
    except ConfigurationError as exc:  # a malformed definition: say which file holds it
        raise _UsageError(f"{path}: {exc}") from None
    return tools


def _sieve_options(args: argparse.Namespace) -> tuple[list[Any] | None, dict[str, Any]]:
    """The tools and the options of a command (``Sieve``'s keyword arguments), checked
    before any input is read."""
    tools = _load_tools(args.tools)
    options: dict[str, Any] = {
        "early_emit": args.early_emit,
        "reasoning": args.reasoning,
        "calls_in_reasoning": args.calls_in_reasoning,
        "policy": args.policy,
        "on_reject": args.on_reject,
        "sanitize": args.sanitize,
        **dialect_options(args),
    }
    checked = SieveOptions(tools, **options)
    load_grammar(checked.dialects, checked.grammar_dirs)  # (an unknown dialect: before input)
    return tools, options


# ---------------------------------------------------------------------- commands
def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Pull tool calls out of LLM output, whole or streamed.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser, title="commands"
    )
    sub.required = True

    common = _Parser(add_help=False)
    common.add_argument("file", metavar="FILE", help="UTF-8 text to read, or - for stdin")
    common.add_argument(
        "--tools", metavar="FILE", help="JSON list of tool definitions (OpenAI or Anthropic style)"
    )
    common.add_argument(
        "--early-emit",
        choices=_options.EARLY_EMIT,
        default="block",
        help="when calls are emitted (default block)",
    )
    common.add_argument(
        "--reasoning",
        choices=_options.REASONING,
        default="tags",
        help="where reasoning is: between <think> tags, open from the start "
        "to the first </think>, or off (default tags)",
    )
    common.add_argument(
        "--calls-in-reasoning",
        choices=_options.CALLS_IN_REASONING,
        default="text",
        help="a tool block inside reasoning is reasoning text, or a call (default text)",
    )
    common.add_argument(
        "--policy",
        choices=POLICIES,
        default=None,
        help="reject calls to tools not in --tools (allowlist), or whose "
        "arguments fail the tool's schema too (schema)",
    )
    common.add_argument(
        "--on-reject",
        choices=ON_REJECT,
        default="drop",
        help="what a rejected call's text becomes (default drop)",
    )
    common.add_argument(
        "--sanitize", action="store_true", help="remove leaked protocol from the released text"
    )
    add_dialect_options(common)
    common.add_argument(
        "--format",
        choices=tuple(FORMATS),
        default=None,
        help="print the API's wire JSON instead of callsieve's own view: "
        "a response object (parse) or stream objects (stream)",
    )
    common.add_argument(
        "--no-reasoning-output",
        dest="include_reasoning",
        action="store_false",
        help="with --format: leave the reasoning out of the wire JSON",
    )

    parse_cmd = sub.add_parser(
        "parse",
        parents=[common],
        help="parse the whole text; print the result as one JSON object",
        description="Parse the whole text and print the ParseResult as JSON.",
    )
    parse_cmd.add_argument(
        "--explain",
        action="store_true",
        help="print each block's span, dialect, status, repairs, policy "
        "decisions and, for a failed block, where and why it failed",
    )
    stream = sub.add_parser(
        "stream",
        parents=[common],
        help="feed the text through a Sieve; print its events as JSON lines",
        description="Feed the text through a Sieve in chunks and print its events as lines "
        "of JSON, adjacent text events merged into one line (for stdin: until "
        "the input pauses).",
    )
    stream.add_argument(
        "--chunk-size",
        metavar="N",
        type=_positive_int,
        default=DEFAULT_CHUNK_SIZE,
        help=f"characters per chunk (default {DEFAULT_CHUNK_SIZE})",
    )
    stream.add_argument(
        "--raw-events",
        action="store_true",
        help="print every event as it comes, text events not merged",
    )
    stream.add_argument(
        "--sse",
        action="store_true",
        help="print each line as a Server-Sent Events frame (data: ...)",
    )
    add_serve(sub, _positive_int, DEFAULT_CHUNK_SIZE)
    add_grammar_commands(sub)
    add_constrain(sub)
    add_draft(sub)
    return parser


def _cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    run_serve(args)
    return EXIT_OK


def _cmd_constrain(args: argparse.Namespace, out: TextIO) -> int:
    return run_constrain(args, out, _load_tools)


#: ``--format`` values (a contract outside harnesses use) and their ``callsieve.render`` modules.
FORMATS = {
    "openai": "openai_chat",
    "responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}


#: ``--sse`` with ``--format``: each API's own event-stream framing — OpenAI Chat's ``data:``
#: lines closed by ``data: [DONE]``, named events for Responses and Anthropic, Gemini's
#: ``data:`` lines (its ``alt=sse``).
SSE_FRAMING: dict[str, tuple[Frame, str]] = {
    "openai": (sse_frame, SSE_DONE),
    "responses": (sse_event_frame, ""),
    "anthropic": (sse_event_frame, ""),
    "gemini": (sse_frame, ""),
}


def _renderer(args: argparse.Namespace) -> Any:
    """The ``callsieve.render`` module ``--format`` names (imported only then)."""
    return importlib.import_module(f"callsieve.render.{FORMATS[args.format]}")


def _parse_view(args: argparse.Namespace) -> Callable[[ParseResult], Record]:
    """What ``parse`` prints for a result: callsieve's view, or ``--format``'s response."""
    if args.format is None:
        return result_json
    render = _renderer(args).render_response
    include: bool = args.include_reasoning
    return lambda result: render(result, include_reasoning=include)


def _stream_writer(args: argparse.Namespace, out: TextIO) -> StreamWriter:
    """Where ``stream``'s events go: callsieve's event view (adjacent text merged unless
    ``--raw-events``), or ``--format``'s ``StreamRenderer``, whose objects are printed as
    the API sends them, one per line (text is not merged first: each is what a server
    would send for the chunk)."""
    if args.format is None:
        return StreamWriter(
            out,
            EventRecords(),
            merge_text=not args.raw_events,
            frame=sse_frame if args.sse else json_line,
        )
    frame, end = SSE_FRAMING[args.format] if args.sse else (json_line, "")
    renderer = _renderer(args).StreamRenderer(include_reasoning=args.include_reasoning)
    return StreamWriter(out, renderer, merge_text=False, frame=frame, end=end)


def _cmd_parse(args: argparse.Namespace, out: TextIO) -> int:
    tools, options = _sieve_options(args)
    text = _read_text(args.file)
    result = parse(text, tools=tools, **options)
    view = explain_json(result, text) if args.explain else _parse_view(args)(result)
    out.write(dumps(view, out, indent=2) + "\n")
    out.flush()
    return EXIT_OK


def _cmd_stream(args: argparse.Namespace, out: TextIO) -> int:
    tools, options = _sieve_options(args)
    sieve = Sieve(tools, **options)
    writer = _stream_writer(args, out)
    size: int = args.chunk_size
    live = args.file == "-"
    for piece in _pieces(args.file):  # chunks of `size` characters, a piece's last shorter
        for i in range(0, len(piece), size):
            writer.feed(sieve.feed(piece[i : i + size]))
        if live:  # the next read may wait for the model: print what it has released so far
            writer.pause()
    writer.close(sieve.close())
    return EXIT_OK


def _one_line(message: str) -> str:
    """A message as one line (an error quoting a multi-line exception stays one line)."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 2 user error)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if not argv:  # a bare `callsieve`: the help, as --help prints it
            sys.stdout.write(parser.format_help())
            sys.stdout.flush()
            return EXIT_OK
        args = parser.parse_args(argv)
        command = {
            "parse": _cmd_parse,
            "stream": _cmd_stream,
            "serve": _cmd_serve,
            "dialects": run_grammar,
            "check-grammar": run_grammar,
            "export-response-template": run_grammar,
            "grammar": _cmd_constrain,
            "draft-dialect": run_draft,
        }[args.command]
        return command(args, sys.stdout)
    except (_UsageError, CallsieveError) as exc:  # CallsieveError: e.g. a bad option value
        print(f"{PROG}: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``callsieve stream x | head``): stop quietly, and keep the
        # interpreter from complaining when it flushes standard output at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1


if __name__ == "__main__":
    sys.exit(main())
