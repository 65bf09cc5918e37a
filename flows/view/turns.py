"""What the question and trajectory pages show: a spec's steps with their evidence, and turns.

Both read stored rows (dicts), not records, so a field a newer build adds (a step's `fact`, an
aggregation's `condition`) is shown when present and nothing breaks when it is absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from hopforge.flows.view.catalog import Catalog
from hopforge.synth.annotate import sft_weight
from hopforge.synth.records import Turn

ELIDE_CHARS = 400  # a result longer than this shows its start, the rest behind "show all"
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")


def evidence_sentence(text: str, needle: str, limit: int = 320) -> str:
    """The first sentence of `text` that contains `needle` (case-insensitively), or ""."""
    if not needle or not text:
        return ""
    low = needle.lower()
    for sentence in _SENTENCE_END.split(text):
        if low in sentence.lower():
            sentence = sentence.strip()
            if len(sentence) <= limit:
                return sentence
            at = sentence.lower().index(low)
            start = max(0, at - limit // 2)
            return ("…" if start else "") + sentence[start:start + limit].strip() + "…"
    return ""


def question_steps(cat: Catalog, q: dict[str, Any]) -> list[dict[str, Any]]:
    """The spec's steps: each document with its title, how it is reached, and the evidence.

    The evidence of a step is the step's `fact.evidence` when the spec carries facts, else the
    sentence of the document that holds the step's phrase, and for a link the sentence of the
    document it comes from that names it.
    """
    spec = q.get("spec") or {}
    steps = []
    for step in spec.get("steps") or ():
        doc = str(step.get("doc", ""))
        title = cat.titles.get(doc, doc)
        fact = step.get("fact") or None
        evidence: list[tuple[str, str]] = []  # (where, sentence)
        if fact and fact.get("evidence"):
            evidence.append((cat.titles.get(str(fact.get("doc", doc)), title),
                             str(fact["evidence"])))
        else:
            via = str(step.get("via", ""))
            if via:
                found = evidence_sentence(cat.document_text(via), title)
                if found:
                    evidence.append((cat.titles.get(via, via), found))
            for needle in (step.get("phrase"), step.get("value")):
                found = evidence_sentence(cat.document_text(doc), str(needle or ""))
                if found:
                    evidence.append((title, found))
        steps.append({
            "doc": doc, "title": title, "relation": step.get("relation", ""),
            "via": cat.titles.get(str(step.get("via", "")), step.get("via", "")),
            "phrase": step.get("phrase", ""), "value": step.get("value", ""),
            "fact": fact, "evidence": evidence,
            "gold": doc in (q.get("evidence") or ()), "target": doc == spec.get("target"),
        })
    return steps


def trajectory_turns(row: dict[str, Any], turn_rewards: Sequence[float], lo: int,
                     hi: int) -> list[dict[str, Any]]:
    """Turns `lo..hi` of a stored trajectory, with the weight export gives each, the result
    split where it is elided, and the checkpoints written after them."""
    all_turns = row.get("turns") or []
    rewards = list(turn_rewards) if len(turn_rewards) == len(all_turns) else None
    checkpoints: dict[int, list[dict[str, Any]]] = {}
    for cp in row.get("checkpoints") or ():
        checkpoints.setdefault(int(cp.get("turn", -1)), []).append(cp)
    out = []
    for i in range(lo, min(hi, len(all_turns))):
        t = all_turns[i]
        turn = Turn.from_row(t)
        reward = rewards[i] if rewards is not None else None
        call = t.get("call") or None
        result = str(t.get("result", ""))
        out.append({
            "index": t.get("index", i), "thought": t.get("thought", ""), "raw": t.get("raw", ""),
            "call": call, "args": json.dumps(call.get("arguments", {}), ensure_ascii=False)
            if call else "",
            "head": result[:ELIDE_CHARS], "rest": result[ELIDE_CHARS:],
            "fault": t.get("fault"), "error": t.get("error", ""),
            "label": t.get("label", ""), "label_reason": t.get("label_reason", ""),
            "weight": sft_weight(turn, reward), "reward": reward,
            "repeat_of": t.get("repeat_of"), "recovered": t.get("recovered", False),
            "new_evidence": t.get("new_evidence") or [], "tokens": t.get("tokens", 0),
            "latency": t.get("latency_s", 0.0), "justified": t.get("justified", True),
            "unseen": t.get("unseen") or [],
            "checkpoints": checkpoints.get(int(t.get("index", i)), []),
        })
    return out
