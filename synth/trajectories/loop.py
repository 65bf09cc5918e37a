"""The agent loop for one trajectory: call the teacher, parse, validate, execute, annotate, stop.

`run_agent` is the coroutine for one (question, sample); `run_trajectories` fans it out. Output
that never parses, or an answer the server could not turn into a completion, ends the
trajectory with termination `error` and the reason; an error a server sent never becomes an
assistant message. A prompt the server refuses as too long ends it as `context_limit`, with a
forced answer on a compacted prompt. Failures of the server or its setup (unreachable, retries
exhausted, a refused request) are no result of the question: they stop the whole run instead
(`stops_run`), finished parts stay, and a rerun after the fix continues with what is left.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hopforge.corpus.tools import ToolResult, is_final, validate_arguments
from hopforge.corpus.tools.page import named_line
from hopforge.synth import prompts
from hopforge.synth.annotate import Annotator, normalize_call, shown_titles
from hopforge.synth.records import Checkpoint, Question, ToolCall, Trajectory, Turn, Usage
from hopforge.synth.teacher.chat import ChatModel, Completion, Message, ModelError
from hopforge.synth.teacher.errors import is_context_limit, stops_run
from hopforge.synth.teacher.tool_calls import ParsedCall, ToolCallParseError, parse_completion
from hopforge.synth.teacher.wire import RAW_ARGUMENTS
from hopforge.synth.trajectories.context import (
    CHECKPOINT_RESPONSE_FORMAT,
    CheckpointParseError,
    Context,
    parse_checkpoint_json,
)
from hopforge.synth.trajectories.fairness import Visible, page_body
from hopforge.synth.trajectories.faults import FaultyTools, unlaid

if TYPE_CHECKING:
    from hopforge.synth.trajectories.stage import TrajectoryConfig

log = logging.getLogger(__name__)


_SYSTEM_CACHE: dict[tuple[int, bool, bool], tuple[list[dict[str, Any]], str]] = {}


def system_prompt(schemas: list[dict[str, Any]], *, text_calls: bool,
                  reasoning: bool = False) -> str:
    """The system prompt: the instructions, and the tools' JSON schemas for text calls only.

    With native tool calls the request's `tools` carries the schemas and the chat template
    renders them, so they are not written here a second time. `reasoning`: a reasoning teacher,
    whose thinking the prompt does not limit.
    """
    key = (id(schemas), text_calls, reasoning)
    cached = _SYSTEM_CACHE.get(key)
    if cached is not None and cached[0] is schemas:  # the cache holds `schemas`, so ids are unique
        return cached[1]
    tools = ""
    if text_calls:
        tools = prompts.AGENT_TOOL_SCHEMAS.format(
            tools=json.dumps(schemas, indent=1, ensure_ascii=False))
    text = prompts.AGENT_SYSTEM.format(
        tools=tools,
        thinking=prompts.AGENT_REASONING if reasoning else prompts.AGENT_BRIEF,
        call_format=prompts.AGENT_TEXT_CALLS if text_calls else "",
    )
    if len(_SYSTEM_CACHE) > 64:
        _SYSTEM_CACHE.clear()
    _SYSTEM_CACHE[key] = (schemas, text)
    return text


@dataclass(slots=True)
class _TrajectoryState:
    """Mutable state of one trajectory while it runs."""

    turns: list[Turn] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    final_answer: str = ""
    termination: str = ""
    reason: str = ""
    peak_context: int = 0

    def add_usage(self, c: Completion) -> None:
        self.prompt_tokens += c.prompt_tokens
        self.completion_tokens += c.completion_tokens

    def stop(self, termination: str, reason: str) -> None:
        self.termination, self.reason = termination, reason

    def rendered(self, ctx: Context) -> None:
        self.peak_context = max(self.peak_context, ctx.estimate_tokens())


def _assistant_message(parsed: ParsedCall, text: str, call_id: str, reasoning: str = "") -> Message:
    """The assistant message the next prompt shows: the text, the reasoning beside it (as
    `reasoning_content`, which reasoning chat templates render) and a native call."""
    message: Message = {"role": "assistant", "content": text}
    if parsed.fmt == "native":
        call = parsed.call
        wire = {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}
        message = {
            "role": "assistant",
            "content": text or None,
            "tool_calls": [{"id": call_id, "type": "function", "function": wire}],
        }
    if reasoning:
        message["reasoning_content"] = reasoning
    return message


def _result_message(parsed: ParsedCall, call_id: str, text: str) -> Message:
    if parsed.fmt == "native":
        return {"role": "tool", "tool_call_id": call_id, "content": text}
    return {"role": "user", "content": prompts.AGENT_TOOL_RESPONSE.format(result=text)}


def _raw(c: Completion) -> str:
    """The assistant message as produced: its text, then each native call as JSON."""
    parts = [c.text] if c.text else []
    for t in c.tool_calls:
        args: Any = t.arguments
        if isinstance(args, dict) and set(args) == {RAW_ARGUMENTS}:
            args = args[RAW_ARGUMENTS]  # undecodable arguments, verbatim as the model wrote them
        parts.append(json.dumps({"name": t.name, "arguments": args}, ensure_ascii=False))
    return "\n".join(parts)


LINE_TOOLS = ("find", "grep")  # tools whose result is a document's matching lines
KEPT_LINES = 2  # of them, the lines an elided result keeps


LEAD_CHARS = 200  # of a first page, the opening an elided result keeps


def _lead(page: str) -> str:
    """The first sentence of a page's text (`page_body`: without the tool's header and
    footer), at most LEAD_CHARS; none of a one-line reply (an empty page, a flat layout)."""
    body = " ".join(page_body(page).split()) if "\n" in page else ""
    end = re.search(r"[.!?](?=\s|$)", body)
    lead = body[: end.end()] if end else body
    return lead if len(lead) <= LEAD_CHARS else lead[:LEAD_CHARS].rsplit(" ", 1)[0] + " …"


def _pointer(turn: int, call: ToolCall, result: ToolResult) -> str:
    """The line an old result becomes: what it showed (each doc_id with the title the result
    gave it, the entries a page listed as named there, the first lines a `find` found and the
    first sentence of a document's first page, so later calls and the thoughts that count or
    date them stay readable), and the call that shows it again."""
    text = unlaid(result.text)  # a result in another layout says the same
    titles = shown_titles(text)
    lines = text.splitlines()
    shown = ""
    listed = named_line(text)
    if listed:
        shown += f"; entries named there: {listed}"
    if result.ok and call.name in LINE_TOOLS and lines:  # the lines it found: short, and what
        shown += "; it read: " + " / ".join(lines[:1 + KEPT_LINES])  # a tally rests on
    elif result.ok and call.name == "open" and not call.arguments.get("page"):
        lead = _lead(text)  # where a page states what its subject is, and its dates
        if lead:
            shown += f"; it read: {lead}"
    if result.doc_ids:
        named = [f"{d} ({titles[d]})" if titles.get(d) else d for d in result.doc_ids]
        shown += f"; it showed {', '.join(named)}"
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())
    return prompts.AGENT_ELIDED_RESULT.format(turn=turn, shown=shown, again=f"{call.name}({args})")


async def run_agent(
    question: Question,
    teacher: ChatModel,
    tools: FaultyTools,
    *,
    config: TrajectoryConfig,
    tid: str,
    sample: int,
    seed: int,
) -> Trajectory:
    """Run the teacher on `question` until it answers or a stop rule ends the trajectory."""
    t0 = time.perf_counter()
    text_calls = config.call_format == "text"
    schemas = tools.schemas
    tool_names = [s["function"]["name"] for s in schemas]
    answer_schemas = [s for s in schemas if is_final(s["function"]["name"])]
    system = system_prompt(schemas, text_calls=text_calls, reasoning=config.reasoning)
    ctx = Context(
        system,
        question.question,
        keep_results=config.keep_results,
        context_tokens=config.context_tokens,
        reserve_tokens=config.max_tokens,
    )
    gold = set(question.evidence) | ({question.answer_doc} if question.answer_doc else set())
    annotator = Annotator(gold)
    visible = Visible(system, question.question)
    run = _TrajectoryState()
    window: deque[str] = deque()
    in_window: Counter[str] = Counter()
    last_progress = -1
    invalid_streak = 0

    async def complete(messages: list[Message], **kwargs: Any) -> Completion:
        return await teacher.complete(
            messages,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            seed=seed,
            **kwargs,
        )

    for index in range(config.max_turns):
        messages = ctx.render()
        run.rendered(ctx)
        if ctx.over_budget():
            await _force_answer(run, ctx, complete, answer_schemas, index, text_calls, visible)
            break
        started = time.perf_counter()
        try:
            completion = await complete(messages, tools=None if text_calls else schemas)
        except ModelError as exc:
            if is_context_limit(exc):
                await _force_answer(run, ctx, complete, answer_schemas, index, text_calls,
                                    visible, refused=exc)
                break
            if stops_run(exc):
                raise  # the server or its setup failed, not this question: stop the run
            run.stop("error", f"{type(exc).__name__}: {exc}")
            break
        run.add_usage(completion)
        if completion.prompt_tokens:
            ctx.calibrate(completion.prompt_tokens)
        raw = _raw(completion)
        try:
            parsed = parse_completion(completion)
        except ToolCallParseError as exc:
            invalid_streak += 1
            run.turns.append(
                annotator.annotate(
                    index=index, raw=raw, thought=completion.text.strip(), call=None, result="",
                    schema_valid=False, args_valid=False, tokens=completion.completion_tokens,
                    latency_s=completion.latency_s, error=str(exc),
                )
            )
            run.turns[-1] = dataclasses.replace(run.turns[-1], reasoning=completion.reasoning)
            if invalid_streak > config.max_invalid_turns:
                run.stop("error", f"no usable tool call in {invalid_streak} turns in a row: {exc}")
                break
            fix = {"role": "user", "content": prompts.AGENT_INVALID_CALL.format(error=exc)}
            visible.see(fix["content"])
            wrong: Message = {"role": "assistant", "content": completion.text}
            if completion.reasoning:
                wrong["reasoning_content"] = completion.reasoning
            ctx.add_step(index, wrong, fix, None)
            continue
        call = parsed.call
        call_id = call.call_id or f"call_{index}"
        call = ToolCall(name=call.name, arguments=call.arguments, call_id=call_id)
        schema_valid = call.name in tool_names
        problem = "" if not schema_valid else validate_arguments(call.name, call.arguments, schemas)
        fault = None
        doc_ids: tuple[str, ...] = ()
        ok = False
        if not schema_valid:
            text = prompts.AGENT_UNKNOWN_TOOL.format(name=call.name, names=", ".join(tool_names))
        elif problem:
            text = prompts.AGENT_INVALID_ARGUMENTS.format(name=call.name, problem=problem)
        elif is_final(call.name):
            run.final_answer = str(call.arguments.get("text", "")).strip()
            text, ok = run.final_answer, True
        else:
            result, fault = await tools.call(call)
            text, ok, doc_ids = result.text or f"Error: {result.error}", result.ok, result.doc_ids
        valid = schema_valid and not problem
        invalid_streak = 0 if valid else invalid_streak + 1
        turn = annotator.annotate(
            index=index, raw=raw, thought=parsed.thought, call=call, result=text, ok=ok,
            doc_ids=doc_ids, fault=fault, schema_valid=schema_valid, args_valid=valid,
            tokens=completion.completion_tokens,
            latency_s=time.perf_counter() - started,
            error="" if ok else (problem or text),
        )
        justified, unseen = visible.check(call)
        turn = dataclasses.replace(turn, justified=justified, unseen=unseen, call_format=parsed.fmt,
                                   reasoning=completion.reasoning)
        visible.see(text)
        run.turns.append(turn)
        if valid and is_final(call.name):
            run.stop("answer", "")
            break
        if invalid_streak > config.max_invalid_turns:
            run.stop("error", f"invalid tool calls in {invalid_streak} turns in a row: {text}")
            break
        result_obj = ToolResult(text=text, ok=ok, doc_ids=doc_ids)
        ctx.add_step(
            index,
            _assistant_message(parsed, completion.text, call_id, completion.reasoning),
            _result_message(parsed, call_id, text),
            _pointer(index, call, result_obj),
        )
        if turn.new_evidence:
            last_progress = index
        if valid:
            key = normalize_call(call)
            window.append(key)
            in_window[key] += 1
            if len(window) > config.repeat_window:
                in_window[window.popleft()] -= 1
            if in_window[key] > config.repeat_limit:
                run.stop(
                    "repetition",
                    f"{key!r} called {in_window[key]} times in the last {len(window)} turns",
                )
                break
        if index - last_progress >= config.no_progress_turns:
            run.stop("no_progress", f"no new evidence in the last {config.no_progress_turns} turns")
            break
        due = config.checkpoint_every and (index + 1) % config.checkpoint_every == 0
        if due:
            refused = await _checkpoint(run, ctx, complete, index)
            if refused is not None:
                await _force_answer(run, ctx, complete, answer_schemas, index + 1, text_calls,
                                    visible, refused=refused)
            if run.termination:
                break
            run.rendered(ctx)
    else:
        run.stop("max_turns", f"reached max_turns={config.max_turns}")
    return Trajectory(
        tid=tid,
        qid=question.qid,
        teacher=teacher.name,
        sample=sample,
        turns=tuple(run.turns),
        checkpoints=tuple(run.checkpoints),
        final_answer=run.final_answer,
        termination=run.termination,  # type: ignore[arg-type]
        reason=run.reason,
        usage=Usage(
            prompt_tokens=run.prompt_tokens,
            completion_tokens=run.completion_tokens,
            seconds=time.perf_counter() - t0,
        ),
        system_prompt=system,
        seed=seed,
        peak_context_tokens=run.peak_context,
    )


async def _checkpoint(
    run: _TrajectoryState, ctx: Context, complete: Any, index: int
) -> ModelError | None:
    """Ask the teacher for its state and keep it; the refusal when the prompt was too long.

    A failure of the teacher for good stops `run` with `error`.
    """
    extra = {"role": "user", "content": prompts.AGENT_CHECKPOINT}
    try:
        completion = await complete(
            ctx.render(extra=extra), tools=None, response_format=CHECKPOINT_RESPONSE_FORMAT
        )
    except ModelError as exc:
        if is_context_limit(exc):
            return exc
        if stops_run(exc):
            raise
        run.stop("error", f"checkpoint at turn {index}: {type(exc).__name__}: {exc}")
        return None
    run.add_usage(completion)
    try:
        cp = parse_checkpoint_json(completion.text, index)
    except CheckpointParseError as exc:
        log.debug("checkpoint at turn %d not kept: %s", index, exc)
        return None
    run.checkpoints.append(cp)
    ctx.set_checkpoint(cp)
    return None


async def _force_answer(
    run: _TrajectoryState,
    ctx: Context,
    complete: Any,
    answer_schemas: list[dict[str, Any]],
    index: int,
    text_calls: bool,
    visible: Visible,
    *,
    refused: ModelError | None = None,
) -> None:
    """The context is full: ask once for a final answer on a compacted prompt, then stop.

    `refused` is the server's refusal of a prompt as too long, when that is how it showed.
    """
    if refused is None:
        reason = f"prompt reached ~{ctx.estimate_tokens()} of {ctx.context_tokens} tokens"
    else:
        reason = f"the server refused a prompt of ~{ctx.estimate_tokens()} tokens as too long"
    run.stop("context_limit", reason)
    messages = ctx.render(extra={"role": "user", "content": prompts.AGENT_FORCE_ANSWER}, compact=True)
    run.rendered(ctx)
    if ctx.over_budget():
        run.reason += "; no room left for a final answer"
        return
    try:
        completion = await complete(messages, tools=None if text_calls else answer_schemas)
    except ModelError as exc:
        if stops_run(exc):
            raise
        run.reason += f"; the final answer failed: {type(exc).__name__}: {exc}"
        return
    run.add_usage(completion)
    try:
        parsed = parse_completion(completion)
    except ToolCallParseError as exc:
        run.reason += f"; the final answer was not a tool call: {exc}"
        return
    ok = is_final(parsed.call.name) and not validate_arguments(parsed.call.name, parsed.call.arguments,
                                                               answer_schemas)
    if ok:
        run.final_answer = str(parsed.call.arguments.get("text", "")).strip()
    justified, unseen = visible.check(parsed.call)
    run.turns.append(
        Turn(
            index=index, raw=_raw(completion), thought=parsed.thought,
            reasoning=completion.reasoning, call=parsed.call,
            result=run.final_answer if ok else "", schema_valid=is_final(parsed.call.name),
            args_valid=ok, tokens=completion.completion_tokens, latency_s=completion.latency_s,
            error="" if ok else "the forced final turn did not call answer",
            justified=justified, unseen=unseen, call_format=parsed.fmt,
        )
    )
