"""The agent loop's own cost: turns per CPU-second, HTTP throughput against ideal, peak memory.

- scripted/bm25: the scripted teacher solving the tiny corpus's chain questions planted in a
  100k-passage BM25 index (passages regrouped from the real sentences of ../shared/data, as in
  bench_bm25), 10% injected faults, every trajectory serialized to JSONL as it finishes. The
  reference is the same sequence of tool calls replayed directly on the `ToolBox` in the same
  process: `overhead_share` is the part of the CPU time that is not the tools.
- scripted/hybrid: the same passages with a dense side (queries embedded by the real model,
  passage vectors random: embedding 100k passages on a CPU takes hours), with searches batched
  across trajectories (search_batch 64: one embedding call and one faiss call per batch) and
  one by one (1). Torch and faiss run on one thread, so CPU seconds are one core's.
- http: a teacher served by tests/helpers/openai_server.py in a child process with a fixed 200 ms added
  latency; `share_of_ideal` is achieved turns/s over concurrency / latency.
- memory: 1,000 trajectories of 600 turns each, all in flight at once; peak RSS over the
  baseline (sampled every 50 ms), per turn.
- long: the scripted teacher on a FOLDOC aggregation over about 300 entries two links out
  (about 600 tool calls each), 10% faults, all samples in flight at once: turns per CPU-second
  and peak RSS over the baseline per trajectory, beside the JSON size of one trajectory.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
_T = TypeVar("_T")
LATENCY_S = 0.2
KEYS = ("case", "setting", "passages", "trajectories", "turns", "wall_s", "cpu_s", "turns_per_s",
        "turns_per_cpu_s", "reference", "ratio", "note")

SERVER = """
import sys
sys.path.insert(0, {repo!r})
from tests.helpers.openai_server import OpenAITestServer, Reply
TURNS = {turns}
CALLS = [("search", {{"query": "Quillon salt cod"}}), ("open", {{"doc_id": "quillon"}}),
         ("find", {{"doc_id": "quillon", "pattern": "Grey Needle"}})]
def handler(request):
    n = sum(1 for m in request["messages"] if m["role"] == "tool")
    if n >= TURNS - 1:
        return Reply.delay({latency}, Reply.tool_call("answer", {{"text": "Quillon"}}))
    name, args = CALLS[n % 3]
    return Reply.delay({latency}, Reply.tool_call(name, args))
with OpenAITestServer() as server:
    server.set_handler(handler)
    print(server.base_url, flush=True)
    sys.stdin.read()
    import json, resource
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({{"cpu_s": usage.ru_utime + usage.ru_stime,
                      "max_in_flight": server.max_in_flight}}), flush=True)
"""


def _row(**values: Any) -> dict[str, Any]:
    return {k: values.get(k, "") for k in KEYS}


def _tiny() -> tuple[list[Any], list[Any]]:
    sys.path.insert(0, str(REPO))
    from tests.conftest import _agent_questions
    from tests.helpers.tiny import load_tiny

    docs = load_tiny()
    return docs, _agent_questions(docs)


def _corpus(n: int, tiny: list[Any]) -> list[Any]:
    from hopforge.corpus.records import Document

    from bench.zipf_corpus import ZipfCorpus, foldoc_vocabulary

    texts = [" ".join(p) for chunk in ZipfCorpus(max(0, n - len(tiny)), foldoc_vocabulary()).chunks()
             for p in chunk]
    docs = [Document(doc_id=f"p{i:06d}", title=" ".join(t.split()[:4]), text=t, source="bench")
            for i, t in enumerate(texts)]
    return docs + list(tiny)


def _scripted(searcher: Any, questions: list[Any], samples: int, *, batch: int = 64,
              concurrency: int = 64) -> tuple[list[Any], float, float, int]:
    from hopforge.synth.trajectories.faults import FaultConfig
    from hopforge.synth.trajectories.scripted import ScriptedTeacher
    from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories

    config = TrajectoryConfig(samples=samples, concurrency=concurrency, search_batch=batch,
                              faults=FaultConfig.uniform(0.1, timeout_delay_s=0.0))
    calls: list[Any] = []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        def write(t: Any) -> None:
            out.write(json.dumps(t.to_row(), ensure_ascii=False, sort_keys=True) + "\n")
            calls.extend(x.call for x in t.turns if x.call is not None and x.call.name != "answer")

        def factory(q: Any, s: int, seed: int) -> Any:
            return ScriptedTeacher(q, searcher.documents, seed=seed)

        wall, cpu = time.perf_counter(), time.process_time()
        done = asyncio.run(run_trajectories(questions, searcher, factory, config=config,
                                            on_result=write, collect=False))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        del done
    turns = len(calls) + samples * len(questions)
    return calls, wall, cpu, turns


def _replay(searcher: Any, calls: list[Any]) -> float:
    from hopforge.corpus.tools import ToolBox

    toolbox = ToolBox(searcher)
    cpu = time.process_time()
    for c in calls:
        toolbox.call(c.name, c.arguments)
    return time.process_time() - cpu


def _hybrid(bm25: Any) -> Any:
    """The same passages with a dense side: real query embeddings, random passage vectors.

    Embedding 100k passages on a CPU takes hours, and what a turn costs does not depend on the
    passage vectors' values: the query embedding and the (exact, flat) vector search are real.
    """
    import faiss
    import numpy as np
    import torch
    from hopforge.corpus.dense import embedder_from_config
    from hopforge.corpus.index import IndexConfig
    from hopforge.corpus.search import Searcher
    from hopforge.corpus.vectors import VectorIndex

    faiss.omp_set_num_threads(1)  # one core, measured in CPU seconds: no spinning helper threads
    torch.set_num_threads(1)
    config = IndexConfig(index_kind="flat")
    embedder = embedder_from_config(config)
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((len(bm25.passages), embedder.dim), dtype=np.float32)
    vectors = _OneThread(VectorIndex.build(vecs, config))
    return Searcher(documents=list(bm25.documents.values()), passages=bm25.passages,
                    bm25=bm25.bm25, config=config, embedder=embedder,
                    vectors=vectors)  # type: ignore[arg-type]


class _OneThread:
    """A `VectorIndex` searching on one OpenMP thread in whichever thread calls it.

    faiss's thread count is set per calling thread, and the batcher searches in its own thread.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def search(self, queries: Any, k: int) -> Any:
        import faiss

        faiss.omp_set_num_threads(1)
        return self.inner.search(queries, k)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def bench_scripted(quick: bool) -> list[dict[str, Any]]:
    from hopforge.corpus.search import Searcher

    tiny, questions = _tiny()
    rows = []
    n = 10_000 if quick else 100_000
    t = time.perf_counter()
    searcher = Searcher.from_documents(_corpus(n, tiny), dense=False)
    build_s = time.perf_counter() - t
    samples = 40 if quick else 400
    calls, wall, cpu, turns = _scripted(searcher, questions, samples)
    tools_cpu = _replay(searcher, calls)
    rows.append(_row(case="scripted", setting="bm25, batch 64, faults 10%",
                     passages=len(searcher.passages), trajectories=samples * len(questions),
                     turns=turns, wall_s=wall, cpu_s=cpu, turns_per_s=turns / wall,
                     turns_per_cpu_s=turns / cpu, reference="tools alone (cpu share)",
                     ratio=tools_cpu / cpu,
                     note=f"target >= 1000 turns/cpu-s; BM25 build {build_s:.0f} s"))
    hybrid = _hybrid(searcher)
    samples = 10 if quick else 40
    per_cpu = {}
    for batch in (64, 1):
        calls, wall, cpu, turns = _scripted(hybrid, questions, samples, batch=batch)
        per_cpu[batch] = turns / cpu
        rows.append(_row(case="scripted", setting=f"hybrid, batch {batch}, faults 10%",
                         passages=len(hybrid.passages), trajectories=samples * len(questions),
                         turns=turns, wall_s=wall, cpu_s=cpu, turns_per_s=turns / wall,
                         turns_per_cpu_s=turns / cpu,
                         note="passage vectors random; queries embedded by MiniLM on CPU"))
    rows[-2]["reference"], rows[-2]["ratio"] = "batch 1 (turns/cpu-s)", per_cpu[64] / per_cpu[1]
    return rows


def bench_http(quick: bool) -> list[dict[str, Any]]:
    from hopforge.corpus.search import Searcher
    from hopforge.synth.teacher.openai_client import OpenAIChatModel
    from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories

    tiny, questions = _tiny()
    searcher = Searcher.from_documents(tiny, dense=False)
    turns_per = 6 if quick else 10
    code = SERVER.format(repo=str(REPO), turns=turns_per, latency=LATENCY_S)
    rows = []
    for concurrency in ((16, 64) if quick else (16, 64, 256)):
        waves = 2 if quick else 3
        samples = max(1, concurrency * waves // len(questions))
        config = TrajectoryConfig(samples=samples, concurrency=concurrency, checkpoint_every=0,
                                  max_turns=turns_per + 2, no_progress_turns=1000,
                                  repeat_limit=1000)
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        url = proc.stdout.readline().strip()

        async def go(url: str, concurrency: int, config: Any) -> tuple[int, float, float]:
            async with OpenAIChatModel(url, "test-model", concurrency=concurrency,
                                       read_timeout=60, max_retries=2) as model:
                wall, cpu = time.perf_counter(), time.process_time()
                done = await run_trajectories(questions, searcher, lambda q, s, seed: model,
                                              config=config)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                return sum(len(t.turns) for t in done), wall, cpu

        try:
            turns, wall, cpu = asyncio.run(go(url, concurrency, config))
        finally:
            proc.stdin.close()
            server = json.loads(proc.stdout.readline() or "{}")
            proc.wait(timeout=30)
        ideal = concurrency / LATENCY_S
        both_ms = 1000 * (cpu + server.get("cpu_s", 0.0)) / turns
        rows.append(_row(case="http", setting=f"concurrency {concurrency}, 200 ms latency",
                         trajectories=samples * len(questions), turns=turns, wall_s=wall,
                         cpu_s=cpu, turns_per_s=turns / wall, turns_per_cpu_s=turns / cpu,
                         reference=f"ideal {ideal:g} turns/s", ratio=turns / wall / ideal,
                         note=f"server {server.get('cpu_s', 0):.1f} cpu-s, "
                              f"{server.get('max_in_flight', '?')} in flight; client+server "
                              f"{both_ms:.2f} cpu-ms/turn"
                              + ("; target >= 0.8" if concurrency == 64 else "")))
    return rows


class _Wanderer:
    """A teacher that never answers: searches, opens and finds across the corpus for 600 turns."""

    name = "wanderer"

    def __init__(self, doc_ids: list[str], titles: list[str], seed: int) -> None:
        self.rng = random.Random(seed)
        self.doc_ids, self.titles, self.n = doc_ids, titles, 0

    async def complete(self, messages: list[Any], **kwargs: Any) -> Any:
        from hopforge.synth.records import ToolCall
        from hopforge.synth.teacher.chat import Completion

        if kwargs.get("response_format"):
            state = {"goal": "wander", "facts": [], "open_constraints": ["all"],
                     "queries_tried": []}
            return Completion(text=json.dumps(state), completion_tokens=20)
        self.n += 1
        i = self.rng.randrange(len(self.doc_ids))
        if self.n % 5 == 1:
            call = ToolCall(name="search", arguments={"query": self.titles[i]})
        elif self.n % 5 == 3:
            call = ToolCall(name="find", arguments={"doc_id": self.doc_ids[i], "pattern": "the"})
        else:
            call = ToolCall(name="open", arguments={"doc_id": self.doc_ids[i]})
        return Completion(text=f"Step {self.n}: looking around.", tool_calls=(call,),
                          completion_tokens=20)


def _sampled(work: Callable[[], _T]) -> tuple[_T, float, float, int]:
    """`work()`, its wall and CPU seconds, and its peak RSS over the RSS before it (every 50 ms)."""
    base = peak = _rss()
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.wait(0.05):
            peak = max(peak, _rss())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stop.set()
    sampler.join()
    return result, wall, cpu, max(peak, _rss()) - base


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def bench_memory(quick: bool) -> list[dict[str, Any]]:
    from hopforge.corpus.search import Searcher
    from hopforge.synth.records import Question
    from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories

    tiny, _ = _tiny()
    docs = _corpus(2_000, tiny)
    searcher = Searcher.from_documents(docs, dense=False)
    ids, titles = [d.doc_id for d in docs], [d.title for d in docs]
    n_traj, n_turns = (100, 600) if quick else (1_000, 600)
    questions = [Question(qid=f"m{i}", question="Wander.", answer="x", evidence=("none",))
                 for i in range(n_traj)]
    config = TrajectoryConfig(concurrency=n_traj, max_turns=n_turns, no_progress_turns=10**6,
                              repeat_limit=10**4)
    done, wall, cpu, extra = _sampled(lambda: asyncio.run(run_trajectories(
        questions, searcher, lambda q, s, seed: _Wanderer(ids, titles, seed), config=config)))
    turns = sum(len(t.turns) for t in done)
    serialized = sum(len(json.dumps(t.to_row())) for t in done[:20]) / min(20, len(done))
    return [_row(case="memory", setting=f"{n_traj} in flight x {n_turns} turns",
                 passages=len(searcher.passages), trajectories=len(done), turns=turns,
                 wall_s=wall, cpu_s=cpu, turns_per_s=turns / wall, turns_per_cpu_s=turns / cpu,
                 reference="JSON bytes per turn", ratio=extra / (serialized / n_turns * n_traj),
                 note=f"peak RSS +{extra / 2**20:.0f} MiB, {extra / turns:.0f} B/turn "
                      f"(JSON {serialized / n_turns:.0f} B/turn)")]


def bench_long(quick: bool) -> list[dict[str, Any]]:
    """The scripted teacher at about 600 turns a trajectory on FOLDOC: speed and memory."""
    from hopforge.corpus.ingest import ingest_paths
    from hopforge.corpus.search import Searcher
    from hopforge.synth.trajectories.faults import FaultConfig
    from hopforge.synth.trajectories.scripted import ScriptedTeacher
    from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories

    sys.path.insert(0, str(REPO))
    from tests.helpers.spec_questions import SpecMaker

    docs = ingest_paths([REPO.parent / "shared" / "data" / "dictd" / "foldoc"]).documents
    searcher = Searcher.from_documents(docs, dense=False)
    question = SpecMaker(docs, seed=1).aggregation(290, scope="links2", max_items=320)
    assert question is not None
    samples = 2 if quick else 16
    config = TrajectoryConfig(samples=samples, concurrency=samples, max_turns=800,
                              faults=FaultConfig.uniform(0.1, timeout_delay_s=0.0))
    done, wall, cpu, extra = _sampled(lambda: asyncio.run(run_trajectories(
        [question], searcher,
        lambda q, s, seed: ScriptedTeacher(q, searcher.documents, seed=seed), config=config)))
    turns = [len(t.turns) for t in done]
    serialized = sum(len(json.dumps(t.to_row())) for t in done) / len(done)
    per = extra / len(done)
    return [_row(case="long", setting=f"FOLDOC aggregation, {len(question.spec.items)} items, "  # type: ignore[union-attr]
                 "faults 10%", passages=len(searcher.passages), trajectories=len(done),
                 turns=sum(turns), wall_s=wall, cpu_s=cpu, turns_per_s=sum(turns) / wall,
                 turns_per_cpu_s=sum(turns) / cpu, reference="JSON bytes per trajectory",
                 ratio=per / serialized,
                 note=f"turns {min(turns)}-{max(turns)}; peak RSS +{per / 2**20:.1f} MiB per "
                      f"trajectory (JSON {serialized / 2**20:.2f} MiB); peak context "
                      f"{max(t.peak_context_tokens for t in done)} tokens")]


def run(quick: bool = False) -> list[dict[str, Any]]:
    """All rows: scripted (bm25, hybrid), http at several concurrencies, memory, long."""
    return [*bench_scripted(quick), *bench_http(quick), *bench_memory(quick), *bench_long(quick)]
