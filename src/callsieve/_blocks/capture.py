"""Strategy: read one captured block with Lark's LALR parser (a parser state), fed by an
incremental scanner that takes its patterns and its context from the grammar.

What it does: ``scan(buf, p, final)`` consumes text from ``buf[p:]`` and answers one of
VIABLE (a viable prefix: consumed up to the returned position, hold the rest), COMPLETE (the
block closed at the returned position) or FAILED (release the block as text). At every
token boundary the current parser state says which terminals may come (``StateSpec``):
bounded ones are matched exactly, and where none matches, a tail that a terminal's prefix
closure still accepts is held (a token cut by a chunk boundary is held, never guessed); a
run (text, CDATA, JSON, white space) is fed to the parser once, as a zero-length placeholder
when it starts (so the parser is already in the state that follows it) whose value is
filled in when it ends. A run never costs a parser step per chunk and its text is never
re-scanned: only the new chunk is searched for the run's stop. A balanced run
(a JSON body) has a reader of its own (``_scan.balanced.JsonRun``) in the terminal's place, which
carries its state from chunk to chunk (and reads what the sieve appended to it, ``took``).
Repairs (SPEC §4) are synthetic tokens: the missing opening wrapper (fed before the first
invoke; such a block fails on the first non-white stray text, and emits nothing until its
closing wrapper) and, at the end of input, loose CDATA (``_blocks.repair``).
A capture notes a checkpoint after every run and at every call opener, stops at one where an
earlier capture failed, and at the end of the input does not read again a run known to reach
it (``_blocks.lessons``): a failed block's text is scanned again, and this keeps that linear.
What it guarantees: the same tokens, hence the same answer, for any chunking; a failure says
where, what the parser state accepted there and what it found (``messages``).
What it costs: O(1) per chunk inside runs, one Lark step per token, a few regex calls per
token boundary (most remembered per parser state); a held tail is at most the longest tag.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any, NamedTuple

from lark import Token
from lark.exceptions import LarkError

from .._config.policy import Policy, Settled, settled
from .._grammar.compiled import CompiledGrammar, EntrySpec, StateSpec
from .._grammar.lark_internals import end_action, end_state, feed_end, is_reduce, reduce_by_hand
from .._grammar.names import STRAY_RUN
from .._grammar.rule_sets import is_call, repairs_in
from .._grammar.specs import (
    CLOSES_CDATA,
    OPENS_CALL,
    OPENS_CDATA,
    BalancedSpec,
    RunTerminal,
    TokenSpec,
)
from .._scan.balanced import JsonRun
from .._scan.cursor import RunText
from .._scan.decide import DECISION_SPAN, Decision, GroupToken, decide, new_token
from .argstream import ArgStream, Built, Read, RunStart
from .assembler import assemble_call
from .lessons import ANY_CAPTURE, REPAIRABLE, Lessons
from .messages import FOUND_CHARS, json_body_failed, read_before, too_long, unexpected

__all__ = [
    "COMPLETE",
    "FAILED",
    "VIABLE",
    "BlockRecord",
    "Capture",
    "CaptureContext",
    "Checkpoints",
    "HeldTail",
    "Repair",
]

VIABLE = 0
COMPLETE = 1
FAILED = 2

MISSING_OPENER = "missing_opener"
#: A block whose parser stack grows past this fails. Only a recursive grammar (value nodes,
#: grammar/README.md) nests: its checkpoints copy the stack, so an unbounded one would be
#: quadratic. The built-in families stay under 20 (300 calls in one block too).
MAX_PARSE_DEPTH = 1024
_NO_INTS = array("q")  # (copied, never written)


class BlockRecord:
    """A block's calls (``Settled``, in order), its repairs and diagnostics, and per call where
    it ended: the block's length, the number of its text's pieces, and of its diagnostics."""

    __slots__ = ("calls", "diagnostics", "diags", "emitted", "ends", "pieces", "repairs")

    def __init__(self) -> None:
        self.calls: list[Settled] = []
        self.repairs: list[str] = []
        self.diagnostics: list[str] = []
        # Per call (arrays: a block of many calls holds a few bytes per call here; each a
        # copy of an empty one, which costs less than ``array("q")``'s argument parsing):
        self.ends = _NO_INTS[:]  # the block's length at the end of each call
        self.pieces = _NO_INTS[:]  # its text's pieces there (the text is not joined while read)
        self.diags = _NO_INTS[:]  # len(diagnostics) there
        self.emitted = 0  # calls already handed out (early_emit="invoke")

    def call_ended(self, call: Settled, length: int, pieces: int) -> None:
        """A call was built, the block ``length`` characters long in ``pieces`` pieces."""
        self.calls.append(call)
        self.ends.append(length)
        self.pieces.append(pieces)
        self.diags.append(len(self.diagnostics))

    def emitted_all(self) -> None:
        """Every call read so far has been handed out (``early_emit="invoke"``)."""
        self.emitted = len(self.calls)

    def trial(self, ncalls: int, ndiags: int) -> BlockRecord:
        """The record of a repair's trial: this one's first ``ncalls`` calls and ``ndiags``
        diagnostics (the trial's text is one piece before them all)."""
        twin = BlockRecord()
        twin.calls = self.calls[:ncalls]
        twin.ends = self.ends[:ncalls]
        twin.pieces = array("q", [1]) * ncalls
        twin.diags = self.diags[:ncalls]
        twin.repairs = list(self.repairs)
        twin.diagnostics = self.diagnostics[:ndiags]
        twin.emitted = self.emitted
        return twin


class Checkpoints:
    """Where a capture read a checkpoint token, and its parser's state stack after it
    (``_blocks.lessons``): what a failed capture teaches the next ones."""

    __slots__ = ("at", "stacks")

    def __init__(self) -> None:
        self.at = _NO_INTS[:]
        self.stacks: list[tuple[int, ...]] = []

    def note(self, at: int, stack: tuple[int, ...]) -> None:
        self.at.append(at)
        self.stacks.append(stack)


class Repair:
    """The loose-CDATA repair's state in a capture (``_blocks.repair``): the parser snapshot
    at the last CDATA opener, whether the capture may repair, and what a trial found."""

    __slots__ = ("leftover", "limited", "may_repair", "probe", "snap")

    def __init__(self, may_repair: bool = True, probe: bool = False) -> None:
        self.snap: tuple[Any, int, int, int] | None = None  # (parser, length, calls, diags)
        self.may_repair = may_repair  # False in a repair's trial: one CDATA is closed
        self.probe = probe  # a trial that only finds out whether the block would complete
        self.limited = False  # it failed, or a repair trial did, over max_block_chars
        # Text after the block that the repair read from a copy of the block (a block begun
        # in an earlier chunk): the sieve goes on with it. None: no such text.
        self.leftover: str | None = None

    def opened(self, snapshot: Any, length: int, calls: int, diags: int) -> None:
        """A CDATA opened: the snapshot a repair starts its trials from."""
        self.snap = (snapshot, length, calls, diags)

    def closed(self) -> None:
        """The CDATA closed: nothing to repair."""
        self.snap = None

    def forbid(self) -> None:
        """This capture may not repair (a trial, or a block the sieve cannot re-read)."""
        self.may_repair = False

    def over_limit(self, trial: bool = True) -> None:
        """The capture, or one of its trials, went over ``max_block_chars``."""
        self.limited = self.limited or trial

    def read_on(self, text: str) -> None:
        """The repaired block ended in a copy; ``text`` follows it."""
        self.leftover = text


class HeldTail:
    """What the capture's held tail is: a bounded token cut by the chunk boundary
    (``waiting``), and the one terminal it may become (``pending``; None: several, or none).
    The capture's scan writes both, at each token boundary, with no setter (a fast path:
    benchmarks/README.md, "Fast paths", "held tail")."""

    __slots__ = ("pending", "waiting")

    def __init__(self) -> None:
        self.waiting = False
        self.pending: TokenSpec | None = None


class CaptureContext(NamedTuple):
    """What the captures of one sieve share, given to each at construction."""

    g: CompiledGrammar
    schemas: dict[str, dict[str, Any]]
    lessons: Lessons  # what failed captures taught (``_blocks.lessons``)
    policy: Policy | None  # what a call may become once built (``_config.policy``), or None


class Capture:
    """The state of one block being captured. Created at an entry token in prose; read by
    the sieve through ``scan``, ``cut_at``, ``raw_text`` and the fields documented below,
    which only the capture (and ``_blocks.repair``, its end-of-input half) writes. Its parts
    own their own fields: ``record`` (``BlockRecord``), ``checks`` (``Checkpoints``),
    ``repair`` (``Repair``), ``held`` (``HeldTail``) and ``run_text`` (``RunText``)."""

    __slots__ = (
        "args",
        "held",
        "checks",
        "dialect",
        "failure",
        "ctx",
        "last_value",
        "opener_len",
        "ps",
        "ran",
        "raw",
        "raw_len",
        "record",
        "run",
        "run_text",
        "repair",
        "spec",
        "start",
        "strict",
    )

    def __init__(
        self,
        ctx: CaptureContext,
        entry: EntrySpec,
        start: int,
        opener: str,
        groups: dict[str, str | None] | None = None,
        args: ArgStream | None = None,
    ) -> None:
        self.ctx = ctx
        g = ctx.g
        self.args = args  # early_emit="arguments": the block's argument stream (``argstream``)
        self.start = start
        self.dialect = entry.dialect  # the entry's: where the parse cannot tell (``dialect_now``)
        self.opener_len = len(opener)
        self.strict = entry.synthetic is not None
        self.raw: list[str] = [opener]
        self.raw_len = len(opener)
        self.run: RunTerminal | None = None
        # The current run's text (``RunText``: the sieve's run hot path appends to it
        # through ``run_budget``, and ``took`` counts that).
        self.run_text = RunText()
        #: its calls, repairs and diagnostics (``BlockLife`` makes the events of them)
        self.record = BlockRecord()
        self.last_value = opener
        self.checks = Checkpoints()  # for the lessons, if it fails (``_blocks.lessons``)
        self.failure = ""
        self.repair = Repair()  # the loose-CDATA repair's state (``_blocks.repair``)
        self.ran = False  # a balanced run ended before the next token (``_settle``)
        self.held = HeldTail()  # what the held tail is (``scan``, ``cut_at``)
        # The parser (a Lark parser state), fed the entry's tokens: the missing wrapper first,
        # if the entry is a bare invoke, then the opener.
        if groups is None:
            tok = new_token(Token, entry.terminal, opener)
        else:  # the entry's own named groups, from the match in prose (see ``GroupToken``)
            tok = new_token(GroupToken, entry.terminal, opener)
            tok.groups = groups
        tokens = [tok]
        if entry.synthetic is not None:
            self.record.repairs.append(MISSING_OPENER)
            tokens.insert(0, new_token(Token, entry.synthetic, ""))
        self.ps = g.parser.entered(tokens, None if args is None else args.feed)
        if args is not None:  # (the opener may be part of the arguments: `{"name":`)
            args.feed(Read(entry.terminal, (groups.get("v") if groups else None) or opener))
        self.spec: StateSpec = g.states[self.ps.state_stack[-1]]

    # ------------------------------------------------------------------ helpers
    def run_budget(self) -> list[Callable[[str], None]]:
        """The bound appends the sieve's run hot path writes the current run's text through
        (``RunText.budget``), what was appended counted first (``took``) if it is spent."""
        if not self.run_text.run_live:
            self.took()
        return self.run_text.budget()

    def took(self) -> int:
        """Count what the sieve's run hot path appended (``run_budget``) into the block's
        length, the one count ``max_block_chars`` is held to; a balanced run reads it now.
        The block's length."""
        n = self.run_text.count()
        if n:
            self.raw_len += n
            run = self.run
            if type(run) is JsonRun:
                run.took(self.run_text.pieces, n, self.start + self.raw_len - n)
        return self.raw_len

    @property
    def calls(self) -> list[Settled]:
        """The calls read so far (``BlockRecord.calls``)."""
        return self.record.calls

    @property
    def emitted(self) -> int:
        """How many of them were handed out (``early_emit="invoke"``)."""
        return self.record.emitted

    def raw_text(self) -> str:
        """The block's text so far (a run in progress keeps its text in ``pieces``). ``raw``
        is left as it is: ``call_pieces`` indexes it."""
        head = "".join(self.raw)
        pieces = self.run_text.pieces
        return head + "".join(pieces) if pieces else head

    def dialect_now(self) -> str:
        """The dialect of the block as parsed so far (``DialectMap.dialect_of``): two
        dialects may share an opener, and the entry's is only the first of them."""
        return self.ctx.g.dialect_map.dialect_of(self.ps.state_stack, self.dialect)

    def fail(self, why: str) -> int:
        self.failure = why
        return FAILED

    def too_long(self, limit: int) -> int:
        self.repair.over_limit()
        return self.fail(too_long(limit))

    def learn(self) -> None:
        """A failed capture: note its checkpoints, unless where it began could matter (over
        ``max_block_chars``). A missing-wrapper capture's failure holds for such captures
        only: it may have failed on stray text that a wrapped block ignores."""
        if self.repair.limited:
            return
        flags = (0 if self.strict else ANY_CAPTURE) | (REPAIRABLE if self.repair.may_repair else 0)
        self.ctx.lessons.learn(self.checks.at, self.checks.stacks, flags, self.failure)

    def _feed(self, term: TokenSpec, tok: Token, after_run: bool = False) -> int:
        """Feed one bounded token of ``term`` (``after_run``: it ended a run); VIABLE,
        COMPLETE or FAILED."""
        name = tok.type
        value = tok.value
        ps = self.ps
        try:
            ps.feed_token(tok)
        except LarkError:
            return self.fail(unexpected(self, name, self.start + self.raw_len - len(value), value))
        stack = ps.state_stack
        if len(stack) > MAX_PARSE_DEPTH:
            return self.fail(f"the block nests deeper than {MAX_PARSE_DEPTH} parser states")
        args = self.args
        if args is not None:
            groups = getattr(tok, "groups", None)
            args.feed(Read(name, (groups.get("v") if groups else None) or value))
        spec = self.spec = self.ctx.g.states[stack[-1]]
        self.last_value = value
        marks = term.marks
        if after_run or marks & OPENS_CALL:
            # A checkpoint (``_blocks.lessons``): where the token began, and the stack it left.
            # After every run and at every call opener: any long stretch of a block passes
            # one, and a block that begins inside another begins at an entry.
            lessons = self.ctx.lessons
            at = self.start + self.raw_len - len(value)
            key = lessons.stack_key(stack)
            if lessons.fails:
                why = lessons.doomed(at, key, self.strict, self.repair.may_repair)
                if why is not None:
                    return self.fail(read_before(why, at))
            self.checks.note(at, key)
        if marks & OPENS_CDATA:
            if self.repair.may_repair:
                snapshot = self.ctx.g.parser.fork_parser(self.ps)
                record = self.record
                self.repair.opened(
                    snapshot, self.raw_len, len(record.calls), len(record.diagnostics)
                )
        elif marks & CLOSES_CDATA:
            self.repair.closed()
        if (
            spec.call_rule is not None
            and self._call_done(spec.call_rule, self.ps.value_stack) == FAILED
        ):
            return FAILED
        return self._at_end() if spec.end_ok else VIABLE

    def _call_done(self, rule: Any, values: list[Any]) -> int:
        """The call ``rule`` is complete, its children on top of ``values`` (the parser's
        value stack, or the copy ``_end_call`` reduces): build it and assemble it (its tree
        is built here; the parser's own callback for it discards it); FAILED if it cannot be
        built. A probe builds nothing."""
        if self.repair.probe:  # only whether the block completes matters
            return VIABLE
        args = self.args
        g = self.ctx.g
        tree = g.parser.build_call[rule](values[-len(rule.expansion) :])
        reading = g.dialect_map.value_reading_of(self.ps.state_stack, self.dialect)
        try:
            built = assemble_call(tree, self.ctx.schemas, reading)
        except Exception as exc:  # noqa: BLE001 - model output never raises (§Inv. 5)
            return self.fail(f"call at offset {self.start + self.raw_len} not built: {exc}")
        record = self.record
        if rule in g.parser.repairing_calls:  # (the grammar's own repairs, ``repair_*``)
            record.repairs += repairs_in(tree)
        call = settled(self.ctx.policy, built)  # (coerced, and the policy's verdict)
        if args is not None:
            args.feed(Built(call, self.dialect_now(), tuple(record.repairs)))
        # One string per call: a block of many calls keeps a few objects per call.
        k = record.pieces[-1] if record.pieces else 1
        if len(self.raw) > k + 1:
            self.raw[k:] = ["".join(self.raw[k:])]
        record.call_ended(call, self.raw_len, len(self.raw))
        return VIABLE

    def _at_end(self) -> int:
        """The parser state may end the block here (``spec.end_ok``): it closes it if it takes
        nothing else, COMPLETE (``_ends``); else the block may end or go on, and the text
        that follows decides (VIABLE: ``scan`` looks at it, grammar/README.md, "Where a block
        ends")."""
        return self._ends() if self.spec.closes else VIABLE

    def _ends(self) -> int:
        """The block ends here: COMPLETE — once the parser agrees, where the state's end of
        input is a reduction LALR merged in from another context (not ``end_sure``: a copy of
        the parser is fed the end), else FAILED. A grammar with calls that end where their
        block ends reads the end itself (``_end_call``)."""
        if self.ctx.g.ends.end_calls:
            return self._end_call()
        if self.spec.end_sure:
            return COMPLETE
        try:
            feed_end(self.ctx.g.parser.fork_parser(self.ps))
        except LarkError:
            return self._cannot_end()
        return COMPLETE

    def _cannot_end(self) -> int:
        return self.fail(f"the block cannot end at offset {self.start + self.raw_len}")

    def _end_call(self) -> int:
        """The block ends here, and a call may end with it (``function_call``'s open form: no
        token closes its parameters). Make the reductions the end of input makes, as Lark's
        ``feed_token`` would, on copies of the parser's stacks; where one reduces a call that
        its state did not build when its last token arrived (``StateSpec.call_rule``), keep
        its children, and build it once the end is reached: COMPLETE. FAILED if the parser
        cannot end here, or the call cannot be built."""
        ps = self.ps
        stack, values = list(ps.state_stack), list(ps.value_stack)
        call: tuple[Any, list[Any]] | None = None
        done = end_state(ps)
        while stack[-1] != done:
            action, rule = end_action(ps, stack[-1])
            if not is_reduce(action):
                return self._cannot_end()
            built = self.ctx.g.states[stack[-1]].call_rule is not None
            children = reduce_by_hand(ps, stack, values, rule)
            if call is None and is_call(rule) and not built:
                call = (rule, children)
        if call is not None and self._call_done(*call) == FAILED:
            return FAILED
        return COMPLETE

    def _settle(self) -> int:
        """A balanced run ended where a call, or the block, may end with it: reduce what the
        states after it reduce whatever comes next (``spec.default_rule``, LALR's default
        reductions, performed here as the parser would on the next token), up to the call;
        build the call; then the block closes, may end, or goes on (``_at_end``)."""
        spec = self.spec
        ps = self.ps
        states = self.ctx.g.states
        while spec.default_rule is not None:
            reduce_by_hand(ps, ps.state_stack, ps.value_stack, spec.default_rule)
            spec = self.spec = states[ps.state_stack[-1]]
        if spec.call_rule is not None and self._call_done(spec.call_rule, ps.value_stack) == FAILED:
            return FAILED
        return self._at_end() if spec.end_ok else VIABLE

    def _end_run(self, buf: str, seg: int, p: int) -> None:
        """The run ends at ``buf[p]`` (its last stretch began at ``seg``): its text becomes
        the placeholder's value."""
        run = self.run
        assert run is not None
        self._piece(buf, seg, p)
        pieces = self.run_text.pieces
        value = pieces[0] if len(pieces) == 1 else "".join(pieces)
        self.raw.append(value)
        self.ps.value_stack[-1] = new_token(Token, run.name, value)
        if run.name == STRAY_RUN and value.strip():
            self.record.diagnostics.append(
                f"stray text ignored at offset {self.start + self.raw_len - len(value)}"
            )
        self.run = None
        self.run_text.new_run()

    def _token_at(self, buf: str, p: int, final: bool) -> Decision:
        """The scanner's one decision at ``buf[p]`` (see ``decide``), remembered per parser
        state for short texts: a tag cut by chunk boundaries is asked about again with each
        chunk, and the tags of a dialect are few, so most answers are found, not computed.
        ``held.pending`` is left as the one terminal a held tail may become (None: several, or
        none)."""
        spec = self.spec
        d: Decision | None
        if final or len(buf) - p > DECISION_SPAN:
            d = decide(spec, buf, p, final)
        else:
            key = buf[p:] if p else buf
            d = spec.decisions.get(key)
            if d is None:
                d = decide(spec, key, 0, False)
                self.ctx.g.remember(spec.decisions, key, d)
        self.held.pending = d[4]  # (``HeldTail``: what a held tail may become)
        return d

    def cut_at(self, text: str, p: int) -> bool:
        """Would ``scan``, at ``text[p]``, hold the rest as a tag cut by the end of ``text``?
        Its decision there, without feeding anything: for a held tag plus new characters
        (``p`` = 0), or where the current run stops. (``held.pending`` is left as for ``scan``.)"""
        return self._token_at(text, p, False)[3]

    def _stray(self) -> int:
        return self.fail("text after an invoke without its wrapper")

    # ------------------------------------------------------------------ the scan
    def scan(self, buf: str, p: int, final: bool, limit: int) -> tuple[int, int]:
        """Read ``buf`` from ``p`` (the character after what the capture has read):
        ``(VIABLE, where the held rest begins)``, ``(COMPLETE, where the block ended)`` or
        ``(FAILED, where it stopped)``. ``final``: ``buf`` runs to the end of the input (a block
        still open there is VIABLE: ``repair.scan_to_end`` settles it; one whose state may end
        there ends: ``_end_of_input``).
        A run's text in ``buf`` is counted as it is read and kept as one piece per stretch
        (``seg`` to ``p``), however many stops in it turn out to be content. The steps: in a
        run, read on to its next stop (``_read_run``; a balanced run that ends a call or may
        end the block settles it there, ``_settle``); at a token boundary, the scanner's
        decision (``_token_at``): a token (the run, if any, ends: ``_end_run``; the parser
        takes it: ``_feed``), a tag cut by the end of ``buf`` (held), a stop that starts no
        token (the run's content, the end of a balanced run, or where the block ends:
        ``_stop_in_run``), or the start of the parser state's run (``_start_run``; where the
        state may end and nothing goes on with the block, it ends)."""
        n = len(buf)
        held = self.held
        held.waiting = False
        seg = p  # where the current run's stretch in buf began (when a run is on)
        status = VIABLE
        while True:
            run = self.run
            if run is not None:
                status, p, stop = self._read_run(run, buf, seg, p, final, limit)
                if stop:
                    break
                run = self.run  # (None: a balanced run that settled its call has ended)
            if p >= n:
                break
            term, value, tok, cut, _ = self._token_at(buf, p, final)
            if term is not None:
                # (a run ends here: this one, or a balanced one ``_settle`` closed)
                after_run = (run is not None or self.ran) and self._run_ended(buf, seg, p)
                size = len(value)
                if self.raw_len + size > limit:
                    return self.too_long(limit), p
                self.raw.append(value)
                self.raw_len += size
                status = self._feed(term, tok, after_run)
                p += size
                if status != VIABLE:
                    return status, p
                continue
            if cut:  # a tag cut by the end of the buffer: hold it
                held.waiting = True
                break
            if run is not None:  # no token starts here
                status = self._stop_in_run(run, buf, seg, p)
                if status != VIABLE:
                    break
                if self.run is not None:  # (content: the run goes on after it)
                    p += 1
                continue
            status = self._start_run(buf, p, final)
            if status != VIABLE:
                return status, p
            seg = p
        if self.run is not None:
            self._piece(buf, seg, p)
        if final:
            return self._end_of_input(buf, p, status), p
        return status, p

    def _run_ended(self, buf: str, seg: int, p: int) -> bool:
        """A token comes at ``buf[p]``: the run on, if any, ends there. Whether a run ended
        right before the token — that one, or a balanced one ``_settle`` closed — which makes
        the token a checkpoint (``_blocks.lessons``)."""
        ended = self.ran
        self.ran = False
        run = self.run
        if run is not None:
            if run.name in self.ctx.lessons.stops:  # (a run with a fixed stop: ``_doomed_run``)
                self._checkpoint(self.start + self.raw_len)
            self._end_run(buf, seg, p)
            return True
        return ended

    def _checkpoint(self, at: int) -> None:
        """Note a checkpoint (``_blocks.lessons``): offset ``at``, the parser's stack now."""
        self.checks.note(at, self.ctx.lessons.stack_key(self.ps.state_stack))

    def _doomed_run(self, run: RunTerminal) -> str | None:
        """A fast path, at the start of a run with a fixed stop: where a run of it from here
        stops is known (``Lessons.stop_from``), and a capture whose run stopped there, with
        this stack, failed (the checkpoint ``_run_ended`` notes before the run's text is
        joined). Why this capture fails then, without reading the run: in a failed block
        holding an unclosed CDATA, every later capture's run reaches the same far stop."""
        lessons = self.ctx.lessons
        z = lessons.stop_from(run, self.run_text.start)
        if z < 0:
            return None
        stack = lessons.stack_key(self.ps.state_stack)
        why = lessons.doomed(z, stack, self.strict, self.repair.may_repair)
        return None if why is None else read_before(why, z)

    def _end_of_input(self, buf: str, p: int, status: int) -> int:
        """The scan stopped with ``status`` at the end of the input: if VIABLE, where the
        block's state may end and no tag is held, the block ends there — unless a run is on
        that is not a hard one read to the end (VIABLE: the end-of-input repair decides)."""
        if status != VIABLE or not self.spec.end_ok or self.held.waiting:
            return status
        run = self.run
        if run is None:
            return self._ends()
        if not run.balanced and p == len(buf):  # (a hard run to the end of the input)
            self._end_run(buf, p, p)
            return self._ends()
        return VIABLE

    def _read_run(
        self, run: RunTerminal, buf: str, seg: int, p: int, final: bool, limit: int
    ) -> tuple[int, int, bool]:
        """Read the current run on from ``buf[p]`` to its next stop: ``(status, p, stop)``,
        ``stop`` when the scan ends here (the run reaches the end of ``buf``, or its tail may
        begin the stop, or the capture failed or completed). A balanced run's reader knows
        where it ends, and one that ends a call or may end the block settles it at once
        (``_settle``), not at the next token; at the end of the input, a run known to reach it
        is not read again (``_blocks.lessons``)."""
        if type(run) is JsonRun:
            run.base = self.start + self.raw_len - p
            s, is_tail = run.read(buf, p), False
            if s < 0:
                return self.fail(json_body_failed(self.run_text.start, run.why)), p, True
            spec = self.spec
            if run.done and (
                spec.default_rule is not None or spec.call_rule is not None or spec.end_ok
            ):
                self.raw_len += s - p
                p = s
                if self.raw_len > limit:
                    return self.too_long(limit), p, True
                self._end_run(buf, seg, p)
                self.ran = True
                status = self._settle()
                return status, p, status != VIABLE
        elif (
            final
            and not self.spec.end_ok
            and self.ctx.lessons.reaches_end(run, self.spec, self.start + self.raw_len)
        ):
            return (
                VIABLE,
                p,
                True,
            )  # the rest of the input is this run's (``_blocks.repair`` reads it)
        else:
            s, is_tail = self._find_stop(run, buf, p, final)
        if s > p:
            if self.strict and run.name == STRAY_RUN and not buf[p:s].isspace():
                return self._stray(), p, True
            self.raw_len += s - p
            p = s
            if self.raw_len > limit:
                return self.too_long(limit), p, True
        if s == len(buf) or is_tail:
            if final and not run.balanced:
                self.ctx.lessons.ran_to_end(run, self.spec, self.run_text.start)
            return VIABLE, p, True
        return VIABLE, p, False

    def _find_stop(self, run: RunTerminal, buf: str, p: int, final: bool) -> tuple[int, bool]:
        """``run.find_stop``, asking the lessons first where a run of it searched from here
        stops (an unclosed CDATA's ``]]>`` far ahead is searched for once, not once per
        capture: ``_blocks.lessons``)."""
        at = self.start + self.raw_len
        known = self.ctx.lessons.stop_from(run, at)
        if known >= 0 and p + known - at <= len(buf):
            return p + known - at, False
        s, is_tail = run.find_stop(buf, p, final)
        if s < len(buf) and not is_tail:
            self.ctx.lessons.stopped(run, at, at + s - p)
        return s, is_tail

    def _stop_in_run(self, run: RunTerminal, buf: str, seg: int, p: int) -> int:
        """A stop of the run at ``buf[p]`` that starts no token: a balanced run's object ended
        there (the run ends: what follows may be another); where the state after the run may
        end the block, the block ends there (``_ends``: a raw rest-of-block body, soft or
        hard, grammar/README.md "Where a block ends"); else in a soft run it is content
        (counted; VIABLE either way), and a hard one fails, as does stray text in a strict
        capture."""
        if run.balanced:
            self._end_run(buf, seg, p)
            return VIABLE
        if self.spec.end_ok:  # the block may end where its run stops
            self._end_run(buf, seg, p)
            return self._ends()
        if not run.soft:
            return self._unexpected(repr(buf[p]), buf, p)
        if self.strict and run.name == STRAY_RUN and not buf[p].isspace():
            return self._stray()
        self.raw_len += 1
        return VIABLE

    def _start_run(self, buf: str, p: int, final: bool) -> int:
        """No token starts at ``buf[p]``: where the state may end and its run (if any) would
        not start here, nothing goes on with the block: it ends (``_ends``). Else the parser
        state's run starts there, fed to the parser as its placeholder (its value is set when
        it ends: ``_end_run``). No run, or one the parser does not take here: the block
        fails."""
        spec = self.spec
        run = spec.run
        if spec.end_ok and (run is None or run.find_stop(buf, p, final)[0] == p):
            return self._ends()
        if run is None:
            return self._unexpected(repr(buf[p]), buf, p)
        try:
            self.ps.feed_token(run.placeholder)
        except LarkError:
            return self._unexpected("text", buf, p)
        self.spec = self.ctx.g.states[self.ps.state_stack[-1]]
        run_start = self.start + self.raw_len
        self.run_text.new_run(run_start)
        if self.ctx.lessons.fails and not run.balanced:
            why = self._doomed_run(run)
            if why is not None:
                return self.fail(why)
        self.run = (
            JsonRun(run, self.ctx.lessons.walks, run_start)
            if isinstance(run, BalancedSpec)
            else run
        )
        if self.args is not None:  # (the state inside the run: a CDATA string's guard)
            stack = self.ps.state_stack
            self.args.feed(
                RunStart(
                    run, stack[-1], self.ctx.g.dialect_map.value_reading_of(stack, self.dialect)
                )
            )
        return VIABLE

    def _unexpected(self, what: str, buf: str, p: int) -> int:
        """Fail: ``what`` at ``buf[p]`` is not what the parser state accepts."""
        found = buf[p : p + FOUND_CHARS]
        return self.fail(unexpected(self, what, self.start + self.raw_len, found))

    def _piece(self, buf: str, seg: int, p: int) -> None:
        """The run's stretch ``buf[seg:p]`` read: one more piece of its text (and of the
        argument stream's: it sees run text too)."""
        if seg < p:
            self.run_text.add_piece(piece := buf[seg:p])
            if self.args is not None:
                self.args.feed(piece)
