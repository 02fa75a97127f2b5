"""Drive callsieve's vLLM plugin — and vLLM's own parsers — the way vLLM's chat serving does.

``tokenizer()`` is a real Hugging Face tokenizer made here, with no download: byte-level BPE
without merges (every string encodes, one token per byte) plus the added tokens of the
DeepSeek family's templates (the native tool markers, ``<think>``, ``</think>``, the turn
markers), so special tokens are single ids as in the real vocabularies. ``make_parser(...)``
composes a parser class exactly as the server does (``ParserManager.get_parser``) and
instantiates it as ``OpenAIServingChat._make_parser`` does; ``stream(...)`` feeds it chunk
by chunk through ``ChatStreamProcessor.step`` (the object the streaming chat path calls per
engine step) and accumulates what the response would hold; ``whole(...)`` runs
``Parser.parse`` as the non-streaming path does. ``atoms``/``chunked`` cut a text into
chunks of k tokens' text where a special token is never split (what vLLM's detokenizer
delivers); ``helpers.char_chunks`` cuts into chunks of k characters, special tokens split too.
"""

from __future__ import annotations

import json
import random
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import vllm  # noqa: F401  (its import warns about torch internals)
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser import ParserManager
    from vllm.plugins import load_general_plugins

#: The DeepSeek templates' added tokens (V3/R1/V3.1 native calls, thinking, turns).
SPECIALS = (
    "<｜begin▁of▁sentence｜>",
    "<｜end▁of▁sentence｜>",
    "<｜User｜>",
    "<｜Assistant｜>",
    "<think>",
    "</think>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁outputs▁begin｜>",
    "<｜tool▁outputs▁end｜>",
    "<｜tool▁output▁begin｜>",
    "<｜tool▁output▁end｜>",
)
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}<｜User｜>{{ m['content'] }}"
    "{% elif m['role'] == 'assistant' %}<｜Assistant｜>{{ m['content'] }}<｜end▁of▁sentence｜>"
    "{% else %}{{ m['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}"
    "<｜Assistant｜>{% if thinking %}<think>{% else %}</think>{% endif %}{% endif %}"
)


def _byte_vocab() -> dict[str, int]:
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    return {ch: i for i, ch in enumerate(sorted(alphabet))}


@cache
def tokenizer() -> Any:
    raw = Tokenizer(models.BPE(vocab=_byte_vocab(), merges=[]))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    raw.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token=SPECIALS[0], eos_token=SPECIALS[1]
    )
    tok.add_special_tokens({"additional_special_tokens": list(SPECIALS[2:])})
    tok.chat_template = CHAT_TEMPLATE
    return tok


def save_model_dir(path: Path) -> Path:
    """A model folder vLLM can open with no weights: this tokenizer and a tiny Llama config."""
    path.mkdir(parents=True, exist_ok=True)
    tokenizer().save_pretrained(str(path))
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": len(tokenizer()),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "max_position_embeddings": 4096,
        "torch_dtype": "float32",
        "bos_token_id": tokenizer().bos_token_id,
        "eos_token_id": tokenizer().eos_token_id,
    }
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return path


_SPECIAL_RE = re.compile("|".join(re.escape(s) for s in SPECIALS) + "|.", re.DOTALL)


def atoms(text: str) -> list[str]:
    """The text as the detokenizer delivers it: special tokens whole, else characters."""
    return _SPECIAL_RE.findall(text)


def chunked(text: str, k: int | None, seed: int = 7) -> list[str]:
    """Chunks of ``k`` atoms (``None``: 1-8 at random, seeded)."""
    parts = atoms(text)
    rng = random.Random(seed)
    out, at = [], 0
    while at < len(parts):
        n = k if k is not None else rng.randint(1, 8)
        out.append("".join(parts[at : at + n]))
        at += n
    return out


def load_plugins() -> None:
    load_general_plugins()


def tool_defs(names: Sequence[str], schemas: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """OpenAI tool definitions for ``names`` (a schema where given; ``noop`` when none)."""
    out = []
    for name in dict.fromkeys(names or ["noop"]):
        fn: dict[str, Any] = {"name": name}
        if schemas and name in schemas:
            fn["parameters"] = schemas[name]
        out.append({"type": "function", "function": fn})
    return out


def request(
    tools: list[dict[str, Any]] | None = None,
    *,
    tool_choice: Any = "auto",
    stream: bool = True,
    **extra: Any,
) -> Any:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
        **extra,
    }
    if tools:
        body["tools"] = tools
        body["tool_choice"] = tool_choice
    return ChatCompletionRequest(**body)


def make_parser(
    tool: str | None,
    reasoning: str | None,
    req: Any,
    chat_template_kwargs: dict[str, Any] | None = None,
) -> Any:
    load_plugins()
    cls = ParserManager.get_parser(
        tool_parser_name=tool,
        reasoning_parser_name=reasoning,
        enable_auto_tools=True,
        tokenizer=tokenizer(),
    )
    return cls(
        tokenizer(), req.tools, chat_template_kwargs=chat_template_kwargs or {}, model_config=None
    )


@dataclass
class Reply:
    """What a client accumulates from the stream (or the whole response holds)."""

    content: str = ""
    reasoning: str = ""
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    deltas: int = 0

    def add(self, delta: Any) -> None:
        self.deltas += 1
        self.content += delta.content or ""
        self.reasoning += delta.reasoning or ""
        for tc in delta.tool_calls or []:
            call = self.calls.setdefault(tc.index, {"id": None, "name": None, "arguments": ""})
            if tc.id:
                assert call["id"] is None, f"call {tc.index} got a second id"
                call["id"] = tc.id
            if tc.function is not None:
                if tc.function.name:
                    call["name"] = tc.function.name
                call["arguments"] += tc.function.arguments or ""

    def named_calls(self) -> list[tuple[str, Any]]:
        return [
            (c["name"], json.loads(c["arguments"]) if c["arguments"] else {})
            for _, c in sorted(self.calls.items())
        ]


def stream(
    parser: Any, req: Any, chunks: Sequence[str], prompt_token_ids: list[int] | None = None
) -> Reply:
    """Feed ``chunks`` as ``chat_completion_stream_generator`` does, one step per chunk."""
    processor = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=type(parser))
    tok = tokenizer()
    prompt = (
        prompt_token_ids
        if prompt_token_ids is not None
        else tok.encode("<｜User｜>hi<｜Assistant｜>", add_special_tokens=False)
    )
    reply = Reply()
    chunks = list(chunks) or [""]
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        ids = tok.encode(chunk, add_special_tokens=False) if chunk else []
        step = processor.step(chunk, ids, "stop" if last else None, prompt)
        if step.delta is not None:
            reply.add(step.delta)
        if last:
            reply.finish_reason = step.finish_reason
    return reply


def whole(parser: Any, req: Any, text: str, prompt_token_ids: list[int] | None = None) -> Reply:
    """``chat_completion_full_generator``'s parsing of one choice."""
    from vllm.entrypoints.openai.chat_completion.message_assembly import (
        assemble_chat_message_fields,
    )

    tok = tokenizer()
    prompt = (
        prompt_token_ids
        if prompt_token_ids is not None
        else tok.encode("<｜User｜>hi<｜Assistant｜>", add_special_tokens=False)
    )
    parser.set_prompt_token_ids(prompt)
    reasoning, content, tool_calls = parser.parse(
        text,
        req,
        enable_auto_tools=True,
        model_output_token_ids=tok.encode(text, add_special_tokens=False),
    )
    fields = assemble_chat_message_fields(
        req, reasoning, content, tool_calls, enable_auto_tools=True, parser_cls=type(parser)
    )
    reply = Reply(content=fields.content or "", reasoning=fields.reasoning or "")
    for i, tc in enumerate(fields.tool_calls):
        reply.calls[i] = {"id": tc.id, "name": tc.function.name, "arguments": tc.function.arguments}
    return reply
