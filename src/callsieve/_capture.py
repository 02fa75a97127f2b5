"""Strategy: read one captured block with Lark's InteractiveParser, fed by an incremental
scanner that takes its patterns and its context from the grammar.

What it does: ``scan(buf, p, final)`` consumes text from ``buf[p:]`` and answers one of
VIABLE (a viable prefix: consumed up to the returned position, hold the rest), COMPLETE (the
block closed at the returned position) or FAILED (release the block as text). At every
token boundary the current parser state says which terminals may come (``StateSpec``):
bounded ones are matched exactly, and where none matches, a tail that a terminal's prefix
closure still accepts is held (a token cut by a chunk boundary is held, never guessed); a
run (text, CDATA, JSON, white space) is fed to the parser once, as a zero-length placeholder
when it starts (so the parser is already in the state that follows it) whose value is
filled in when it ends. A run never costs a parser step per chunk and its
text is never re-scanned: only the new chunk is searched for the run's stop.
Repairs (SPEC §4) are synthetic tokens: the missing opening wrapper (fed before the first
invoke; such a block fails on the first non-white stray text, and emits nothing until its
closing wrapper) and, at the end of input, loose CDATA (closed before the last tag that lets
the rest of the block parse, re-read from a parser snapshot taken at the CDATA opener).
What it guarantees: the same tokens, hence the same answer, for any chunking.
What it costs: O(1) per chunk inside runs, one Lark step per token, and a few regex calls
per decision at a token boundary — most of them found instead in the parser state's
remembered decisions (a tag cut by chunk boundaries is asked about with every chunk, and a
dialect's tags are few); a held tail is bounded by the longest bounded terminal.
"""

from __future__ import annotations

from typing import Any, TypeVar

from lark import Token
from lark.exceptions import LarkError

from ._assembler import assemble_call
from ._grammar import CompiledGrammar, EntrySpec, StateSpec, TerminalSpec

__all__ = ["COMPLETE", "FAILED", "VIABLE", "Capture", "GroupToken"]

VIABLE = 0
COMPLETE = 1
FAILED = 2

MISSING_OPENER = "missing_opener"
LOOSE_CDATA = "loose_cdata"
_MAX_CDATA_CANDIDATES = 64


class GroupToken(Token):
    """A token that keeps its terminal's named groups (``v``: a value, ``k``: a key) from the
    match the scanner made in context — a look-ahead at its end cannot be re-checked later."""

    __slots__ = ("groups",)

    groups: dict[str, str | None]


_new_str = str.__new__


_T = TypeVar("_T", bound=Token)


def _token(cls: type[_T], name: str, value: str) -> _T:
    """``Token(name, value)``, set up the way Lark's own constructor does, without the call
    through its keyword-deprecation shim (which costs more than the rest)."""
    tok = _new_str(cls, value)
    tok.type = name
    tok.value = value
    tok.start_pos = tok.line = tok.column = None
    tok.end_line = tok.end_column = tok.end_pos = None
    return tok


#: ``(terminal, value, token, cut, pending)``: take ``token`` (the text ``value`` of
#: ``terminal``, a ``GroupToken`` if the terminal has named groups; built once per decision
#: and shared, as nothing changes a token once made), or hold a tag cut by the end of the
#: text (``cut``; ``pending``: the one terminal it may become, or None), or neither: no token
#: starts here.
Decision = tuple[Any, str, Any, bool, Any]
_NO_TOKEN: Decision = (None, "", None, False, None)
_CUT: Decision = (None, "", None, True, None)
#: Decisions on texts up to this long are remembered (per parser state; see
#: ``CompiledGrammar.remember`` for the bound): a token cut by a chunk boundary plus the
#: next chunk of a stream is shorter, while the texts at a tag in large chunks, which
#: seldom come back, are not kept.
DECISION_SPAN = 32


def decide(spec: StateSpec, buf: str, p: int, final: bool) -> Decision:
    """The scanner's one decision at ``buf[p]`` in a parser state: the bounded terminals are
    tried in priority order; one that may still complete there (``buf[p:]`` is a viable
    prefix, unless ``final``) keeps any lower one from being taken."""
    n = len(buf)
    pending = None
    for term in spec.starting(buf[p]):
        tm = term.pattern.match(buf, p)
        if tm is not None:
            if pending is not None:
                return (None, "", None, True, pending)
            value = tm.group()
            tok: Token
            if term.pattern.groupindex:
                gtok = _token(GroupToken, term.name, value)
                gtok.groups = tm.groupdict()
                tok = gtok
            else:
                tok = _token(Token, term.name, value)
            return term, value, tok, False, None
        if not final and n - p <= term.reach and term.viable(buf, p) is not None:
            if pending is not None:  # a second one: hold, and no single terminal is pending
                return _CUT
            pending = term
    return _NO_TOKEN if pending is None else (None, "", None, True, pending)


class Capture:
    """The state of one block being captured. Created at an entry token in prose."""

    __slots__ = (
        "leftover",
        "waiting",
        "pending",
        "call_diags",
        "call_ends",
        "call_pieces",
        "calls",
        "diagnostics",
        "dialect",
        "emitted",
        "failure",
        "g",
        "ip",
        "last_value",
        "opener_len",
        "pieces",
        "ps",
        "raw",
        "raw_len",
        "repairs",
        "run",
        "schemas",
        "snap",
        "spec",
        "start",
        "strict",
    )

    def __init__(self, g: CompiledGrammar, entry: EntrySpec, start: int, opener: str,
                 schemas: dict[str, dict[str, Any]], pieces: list[str] | None = None) -> None:
        self.g = g
        self.ip = g.new_parser()
        self.ps = self.ip.parser_state
        self.start = start
        self.dialect = entry.dialect
        self.opener_len = len(opener)
        self.strict = entry.synthetic is not None
        self.raw: list[str] = [opener]
        self.raw_len = len(opener)
        self.run: TerminalSpec | None = None
        # A run's text while it streams; kept (and cleared) in place, never replaced: the
        # sieve appends to it directly (``pieces``: the sieve's one list for its captures).
        self.pieces: list[str] = [] if pieces is None else pieces
        self.pieces.clear()
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.call_ends: list[int] = []  # raw length at the end of each call
        self.call_pieces: list[int] = []  # len(raw) there (raw is not joined while streaming)
        self.call_diags: list[int] = []  # len(diagnostics) there
        self.repairs: list[str] = []
        self.diagnostics: list[str] = []
        self.last_value = opener
        self.snap: tuple[Any, int, int, int] | None = None
        self.schemas = schemas
        self.failure = ""
        self.emitted = 0  # calls already handed out (early_emit="invoke")
        self.leftover = ""  # text after the block that a repair found already consumed
        self.waiting = False  # the held tail is a bounded token cut by the chunk boundary
        self.pending: TerminalSpec | None = None  # ... and the one terminal it may become
        if entry.synthetic is not None:
            self.repairs.append(MISSING_OPENER)
            self.ps.feed_token(_token(Token, entry.synthetic, ""))
        self.ps.feed_token(_token(Token, entry.terminal, opener))
        self.spec: StateSpec = g.states[self.ps.state_stack[-1]]

    # ------------------------------------------------------------------ helpers
    def raw_text(self) -> str:
        """The block's text so far (a run in progress keeps its text in ``pieces``). ``raw``
        is left as it is: ``call_pieces`` indexes it."""
        head = "".join(self.raw)
        return head + "".join(self.pieces) if self.pieces else head

    def _fail(self, why: str) -> int:
        self.failure = why
        return FAILED

    def _feed(self, tok: Token) -> int:
        """Feed one bounded token; VIABLE, COMPLETE or FAILED."""
        name = tok.type
        value = tok.value
        try:
            self.ps.feed_token(tok)
        except LarkError:
            return self._fail(f"unexpected {name} at offset {self.start + self.raw_len - len(value)}")
        spec = self.spec = self.g.states[self.ps.state_stack[-1]]
        self.last_value = value
        if name == "CDATA_OPEN":
            snapshot = self.g.fork_parser(self.ip)
            self.snap = (snapshot, self.raw_len, len(self.calls), len(self.diagnostics))
        elif name == "CDATA_CLOSE":
            self.snap = None
        if spec.call_rule is not None:
            rule = spec.call_rule
            size = len(rule.expansion)
            tree = self.ps.parse_conf.callbacks[rule](self.ps.value_stack[-size:])
            try:
                self.calls.append(assemble_call(tree, self.schemas))
            except Exception as exc:  # noqa: BLE001 - model output never raises (§Inv. 5)
                return self._fail(f"call at offset {self.start + self.raw_len} not built: {exc}")
            self.call_ends.append(self.raw_len)
            self.call_pieces.append(len(self.raw))
            self.call_diags.append(len(self.diagnostics))
        return COMPLETE if spec.end_ok else VIABLE

    def _end_run(self) -> None:
        run = self.run
        assert run is not None
        pieces = self.pieces
        value = pieces[0] if len(pieces) == 1 else "".join(pieces)
        self.raw.append(value)
        self.ps.value_stack[-1] = _token(Token, run.name, value)
        if run.name == "STRAY_RUN" and value.strip():
            self.diagnostics.append(
                f"stray text ignored at offset {self.start + self.raw_len - len(value)}")
        self.run = None
        self.pieces.clear()

    def _token_at(self, buf: str, p: int, final: bool) -> Decision:
        """The scanner's one decision at ``buf[p]`` (see ``decide``), remembered per parser
        state for short texts: a tag cut by chunk boundaries is asked about again with each
        chunk, and the tags of a dialect are few, so most answers are found, not computed.
        ``pending`` is left as the one terminal a held tail may become (None: several, or
        none)."""
        spec = self.spec
        if final or len(buf) - p > DECISION_SPAN:
            d = decide(spec, buf, p, final)
        else:
            memo = spec.decisions
            key = buf[p:] if p else buf
            hit = memo.get(key)
            if hit is None:
                d = decide(spec, key, 0, False)
                self.g.remember(memo, key, d)
            else:
                d = hit
        self.pending = d[4]
        return d

    def cut_at(self, text: str, p: int) -> bool:
        """Would ``scan``, at ``text[p]``, hold the rest as a tag cut by the end of ``text``?
        Its decision there, without feeding anything: for a held tag plus new characters
        (``p`` = 0), or where the current run stops. (``pending`` is left as for ``scan``.)"""
        return self._token_at(text, p, False)[3]

    def _take(self, text: str) -> None:
        self.pieces.append(text)
        self.raw_len += len(text)

    # ------------------------------------------------------------------ the scan
    def scan(self, buf: str, p: int, final: bool, limit: int) -> tuple[int, int]:
        n = len(buf)
        self.waiting = False
        while True:
            run = self.run
            if run is not None:
                s, is_tail = run.find_stop(buf, p, final)
                if s > p:
                    piece = buf[p:s]
                    if self.strict and run.name == "STRAY_RUN" and piece.strip():
                        return self._fail("text after an invoke without its wrapper"), p
                    self.pieces.append(piece)  # (``_take``, inline)
                    self.raw_len += s - p
                    p = s
                    if self.raw_len > limit:
                        return self._fail(f"block longer than max_block_chars ({limit})"), p
                if s == n or is_tail:
                    break
            if p >= n:
                break
            term, value, tok, cut, _ = self._token_at(buf, p, final)
            if term is not None:
                if self.run is not None:
                    self._end_run()
                if self.raw_len + len(value) > limit:
                    return self._fail(f"block longer than max_block_chars ({limit})"), p
                self.raw.append(value)
                self.raw_len += len(value)
                status = self._feed(tok)
                p += len(value)
                if status != VIABLE:
                    return status, p
                continue
            if cut:  # a tag cut by the end of the buffer: hold it
                self.waiting = True
                break
            # No token starts here.
            run = self.run
            if run is not None:
                if not run.soft:
                    return self._fail(f"unexpected {buf[p]!r} at offset "
                                      f"{self.start + self.raw_len}"), p
                c = buf[p]
                if self.strict and run.name == "STRAY_RUN" and not c.isspace():
                    return self._fail("text after an invoke without its wrapper"), p
                self._take(c)
                p += 1
                continue
            spec = self.spec
            run = spec.run
            if run is None:
                return self._fail(f"unexpected {buf[p]!r} at offset "
                                  f"{self.start + self.raw_len}, expected one of "
                                  f"{', '.join(t.name for t in spec.bounded)}"), p
            try:
                self.ps.feed_token(run.placeholder)
            except LarkError:
                return self._fail(f"unexpected text at offset {self.start + self.raw_len}"), p
            self.spec = self.g.states[self.ps.state_stack[-1]]
            self.run = run
            self.pieces.clear()
        if final:
            return self._finish(buf, p)
        return VIABLE, p

    # ------------------------------------------------------------------ end of input
    def _finish(self, buf: str, p: int) -> tuple[int, int]:
        """The input ended inside the block: try the loose-CDATA repair, else fail."""
        if self.snap is None or self.run is None or self.run.name != "CDATA_RUN":
            return self._fail("the input ended inside the block"), p
        snap_ip, snap_len, snap_calls, snap_diags = self.snap
        full = self.raw_text() + buf[p:]
        content_from = snap_len
        content = full[content_from:]
        # Where could the CDATA have ended? Before any tag the state after it accepts.
        probe = self.g.fork_parser(snap_ip)
        try:
            probe.feed_token(self.run.placeholder)
            probe.feed_token(Token("CDATA_CLOSE", ""))
        except LarkError:
            return self._fail("the input ended inside CDATA"), p
        after = self.g.states[probe.parser_state.position]
        cuts: set[int] = set()
        for term in after.bounded:
            if term.name == "CDATA_OPEN":
                continue
            cuts.update(m.start() for m in term.pattern.finditer(content))
        for cut in sorted(cuts, reverse=True)[:_MAX_CDATA_CANDIDATES]:
            trial = self._fork(snap_ip, full[:content_from], snap_calls, snap_diags)
            try:
                trial.ps.feed_token(Token("CDATA_RUN", content[:cut]))
                trial.ps.feed_token(Token("CDATA_CLOSE", ""))
            except LarkError:
                continue
            trial.raw.append(content[:cut])
            trial.raw_len += cut
            trial.spec = self.g.states[trial.ps.position]
            status, q = trial.scan(content, cut, True, 1 << 62)
            if status == COMPLETE:
                self._adopt(trial)
                self.repairs.append(LOOSE_CDATA)
                # The CDATA run had swallowed what follows the block: hand it back.
                self.leftover = content[q:]
                return COMPLETE, len(buf)
        return self._fail("the input ended inside CDATA and no closing tag lets it parse"), p

    def _fork(self, snap_ip: Any, raw: str, ncalls: int, ndiags: int) -> Capture:
        twin = object.__new__(Capture)
        for name in Capture.__slots__:
            setattr(twin, name, getattr(self, name))
        twin.ip = self.g.fork_parser(snap_ip)
        twin.ps = twin.ip.parser_state
        twin.raw = [raw]
        twin.raw_len = len(raw)
        twin.run = None
        twin.pieces = []
        twin.calls = self.calls[:ncalls]
        twin.call_ends = self.call_ends[:ncalls]
        twin.call_pieces = [1] * ncalls  # twin.raw is one joined piece
        twin.call_diags = self.call_diags[:ncalls]
        twin.repairs = list(self.repairs)
        twin.diagnostics = self.diagnostics[:ndiags]
        twin.snap = None
        return twin

    def _adopt(self, other: Capture) -> None:
        for name in Capture.__slots__:
            setattr(self, name, getattr(other, name))

