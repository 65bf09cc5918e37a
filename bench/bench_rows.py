"""Exported rows read as a trainer reads them, by code that shares nothing with the export.

For each build named in HOPFORGE_BENCH_BUILDS (`name=BUILD_DIR`, comma separated; default
builds/demo), every trained assistant turn of every SFT layout (sft/hf and sft/openai: weight
1; sft/trl: the completion; sharegpt: the last turn, as LLaMA-Factory trains a row with the
`mask_history: true` the card asks for)
is checked against its own row only:
- `unjustified`: a trained call the row does not justify: a search word that no earlier
  message of the row holds, an `open`/`find` doc_id shown earlier without its title (the
  corpus's title, read from BUILD/corpus), a `find` pattern word not written earlier;
- `thought_disagrees`: a trained call whose thought does not name it (the search query, the
  title or doc_id opened, the pattern found);
- `after_elided`: a trained turn right after a result the row shows only as an elided pointer
  (its thought reports what the row does not show);
- `wrong_answers`: a trained final answer that is not the gold answer (lists as sets), or
  "not found" on an answerable question;
- `unexhausted`: a trained "not found" whose run (BUILD/trajectories) never named, in a call
  whose result came through, some member of the question's set (`spec.steps` of relation
  `item`): a give-up, not a finding;
- `over_max`: rows longer than the build's `[export] max_seq_tokens` by Qwen2.5's tokenizer
  and chat template (HOPFORGE_QWEN_TOKENIZER, a folder with tokenizer.json; skipped without),
  the limit read from the export's manifest.json.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hopforge.corpus.store import read_document_column

_WORD = re.compile(r"\w+")
_LAYOUTS = ("sft/hf", "sft/openai", "sft/trl", "sharegpt")
EMPTY = ("not found", "none")  # the answers of a question with no answer, or an empty list


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _norm(answer: str) -> frozenset[str]:
    parts = re.split(r";|\n", answer.lower())
    return frozenset(" ".join(_WORD.findall(p)) for p in parts if _WORD.findall(p))


def _calls(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for call in message.get("tool_calls") or []:
        fn = call["function"]
        args = fn["arguments"]
        out.append((fn["name"], json.loads(args) if isinstance(args, str) else args))
    return out


def _sharegpt(row: dict[str, Any]) -> Iterator[tuple[str, list[tuple[str, dict[str, Any]]], str]]:
    """(context before the turn, calls, thought) for the row's last turn, if it calls a tool."""
    seen = [row.get("system") or "", row.get("tools") or ""]
    last = len(row["conversations"]) - 1
    for i, turn in enumerate(row["conversations"]):
        value = turn["value"]
        if turn["from"] == "function_call" and i == last:
            think = re.search(r"<think>(.*?)</think>", value, re.DOTALL)
            body = value[think.end():] if think else value
            call = json.loads(body.strip())
            yield "\n".join(seen), [(call["name"], call["arguments"])], (
                think.group(1) if think else "")
        seen.append(value)


def _trained(layout: str, row: dict[str, Any]
             ) -> Iterator[tuple[str, list[tuple[str, dict[str, Any]]], str]]:
    """(the row's text before a trained turn, its calls, its thought) per trained turn."""
    if layout == "sharegpt":
        yield from _sharegpt(row)
        return
    if layout == "sft/trl":
        messages = [*row["prompt"], *row["completion"]]
        trained = set(range(len(row["prompt"]), len(messages)))
    else:
        messages = row["messages"]
        trained = {i for i, m in enumerate(messages)
                   if m["role"] == "assistant" and float(m.get("weight", 1)) > 0}
    for i in sorted(trained):
        m = messages[i]
        if m["role"] != "assistant":
            continue
        before = "\n".join(str(x.get("content") or "") + " " + json.dumps(x.get("tool_calls") or "")
                           for x in messages[:i])
        # the result this turn answers, as the row shows it: a pointer means it is elided
        last = next((str(x.get("content") or "") for x in reversed(messages[:i])
                     if x["role"] != "assistant"), "")
        elided = "[result of turn " in last[:60] and " elided" in last[:80]
        yield before + ("\n\x00elided" if elided else ""), _calls(m), str(m.get("content") or "")


def check_build(build: Path) -> dict[str, Any]:
    """The counts of one build's export, per layout."""
    titles = read_document_column(build / "corpus", "title")
    gold: dict[str, tuple[str, str]] = {}
    for part in sorted((build / "questions").glob("part-*.jsonl")):
        for line in part.read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            gold[q["qid"]] = (q["answer"], q["kind"])
    unchecked = _unchecked_members(build)
    out: dict[str, Any] = {}
    for layout in _LAYOUTS:
        counts = {"rows": 0, "trained_calls": 0, "unjustified": 0, "thought_disagrees": 0,
                  "after_elided": 0, "wrong_answers": 0, "trained_answers": 0, "unexhausted": 0}
        examples: list[str] = []
        for part in sorted((build / "export" / layout / "train").glob("*.jsonl")):
            for line in part.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                counts["rows"] += 1
                qid = row.get("metadata", {}).get("qid", "")
                tid = row.get("metadata", {}).get("tid", "")
                for before, calls, thought in _trained(layout, row):
                    counts["after_elided"] += before.endswith("\x00elided")
                    context = before.lower()
                    for name, args in calls:
                        counts["trained_calls"] += 1
                        problem = _justify(name, args, context, titles, thought, gold.get(qid))
                        for key in problem:
                            counts[key] += 1
                        if name == "answer":
                            counts["trained_answers"] += 1
                            said = str(args.get("answer", args.get("text", "")))
                            if said.strip().lower() in EMPTY and unchecked.get(tid):
                                counts["unexhausted"] += 1
                                problem = [*problem, "unexhausted"]
                        if problem and len(examples) < 3:
                            examples.append(f"{name}({json.dumps(args)[:80]}): {problem}")
        counts["examples"] = examples
        out[layout] = counts
    return out


def _unchecked_members(build: Path) -> dict[str, set[str]]:
    """tid -> the members of its question's set that no call of the run named."""
    members: dict[str, set[str]] = {}
    for part in sorted((build / "questions").glob("part-*.jsonl")):
        for line in part.read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            steps = (q.get("spec") or {}).get("steps") or []
            members[q["qid"]] = {st["doc"] for st in steps if st.get("relation") == "item"}
    out: dict[str, set[str]] = {}
    for part in sorted((build / "trajectories").glob("part-*.jsonl")):
        for line in part.read_text(encoding="utf-8").splitlines():
            t = json.loads(line)
            named = {str((x.get("call") or {}).get("arguments", {}).get("doc_id"))
                     for x in t["turns"]  # by a call whose result came through
                     if not x.get("fault") or x["fault"].get("kind") in ("partial", "format")}
            out[t["tid"]] = members.get(t["qid"], set()) - named
    return out


def _justify(name: str, args: dict[str, Any], context: str, titles: dict[str, str],
             thought: str, gold: tuple[str, str] | None) -> list[str]:
    problems = []
    said = thought.lower()
    have = _words(context)
    if name == "search":
        query = str(args.get("query", ""))
        if any(w not in have and w.rstrip("s") not in have for w in _words(query)):
            problems.append("unjustified")
        if query.lower() not in said and not _words(query) <= _words(said):
            problems.append("thought_disagrees")
    elif name in ("open", "find"):
        doc = str(args.get("doc_id", ""))
        title = titles.get(doc, "")
        if doc.lower() not in context or (title and title.lower() not in context):
            problems.append("unjustified")
        pattern = str(args.get("pattern", ""))
        if name == "find" and not _words(pattern) <= have:
            problems.append("unjustified")
        named = (title.lower() in said or doc.lower() in said) if name == "open" else (
            pattern.lower() in said or _words(pattern) <= _words(said))
        if not named:
            problems.append("thought_disagrees")
    elif name == "answer" and gold is not None:
        answer, kind = str(args.get("answer", args.get("text", ""))), gold[1]
        if _norm(answer) != _norm(gold[0]) or (answer.strip().lower() in EMPTY
                                               and kind != "unanswerable"):
            problems.append("wrong_answers")
    return list(dict.fromkeys(problems))


def over_max(build: Path, tokenizer_dir: str) -> dict[str, Any]:
    """Rows of sft/hf longer than max_seq_tokens by Qwen2.5's tokenizer and chat template."""
    from transformers import AutoTokenizer

    manifest = json.loads((build / "export" / "manifest.json").read_text(encoding="utf-8"))
    limit = _find(manifest, "max_seq_tokens")
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    rows = over = longest = 0
    for part in sorted((build / "export" / "sft" / "hf" / "train").glob("*.jsonl")):
        for line in part.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            messages = [{k: v for k, v in m.items() if k != "weight"} for m in row["messages"]]
            text = tok.apply_chat_template(messages, tools=row.get("tools"), tokenize=False)
            n = len(tok(text, add_special_tokens=False)["input_ids"])
            rows += 1
            over += n > limit
            longest = max(longest, n)
    return {"rows": rows, "max_seq_tokens": limit, "over": over, "longest": longest}


def _find(tree: Any, key: str) -> Any:
    """The first value of `key` anywhere in a JSON tree."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        tree = list(tree.values())
    if isinstance(tree, list):
        for item in tree:
            found = _find(item, key)
            if found is not None:
                return found
    return None


def run(quick: bool = False) -> list[dict[str, Any]]:
    """One row per build and layout; `over_max` and `longest_tokens` on the sft/hf rows."""
    spec = os.environ.get("HOPFORGE_BENCH_BUILDS", "demo=builds/demo")
    tokenizer = os.environ.get("HOPFORGE_QWEN_TOKENIZER", "")
    rows = []
    for item in filter(None, spec.split(",")):
        name, _, path = item.partition("=")
        build = Path(path.strip())
        if not (build / "export" / "manifest.json").exists():
            rows.append({"build": name.strip(), "layout": f"no export in {build}: run `make "
                         "demo` or name builds in HOPFORGE_BENCH_BUILDS=name=DIR,..."})
            continue
        lengths = over_max(build, tokenizer) if tokenizer else {}
        for layout, c in check_build(build).items():
            rows.append({"build": name.strip(), "layout": layout,
                         **{k: v for k, v in c.items() if k != "examples"},
                         "over_max": lengths.get("over", "") if layout == "sft/hf" else "",
                         "longest_tokens": lengths.get("longest", "") if layout == "sft/hf"
                         else "",
                         "examples": " | ".join(c["examples"])})
    return rows


if __name__ == "__main__":
    for r in run():
        print(json.dumps(r))
