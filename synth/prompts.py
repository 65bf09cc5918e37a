"""Every prompt hopforge sends to a model, as named constants (each rendered once in a test)."""

# --- question composition (synth/questions/) ---
# Rendered by hopforge.synth.questions.model. The model rewrites a task spec as one question and
# replies with one JSON object {"question": ...}, parsed by
# hopforge.synth.questions.model.parse_question_json. The answer comes from the spec, never
# from the model. It then reads its question back (QUESTION_READ_BACK_PROMPT, parsed by
# hopforge.synth.questions.model.parse_reading) and the reading is compared with the spec.

QUESTION_SYSTEM = """You write hard questions for training research agents that search a \
document collection with search, open and find tools. You are given a task that is already \
fixed: which document to start from, which facts pick each next document among those the one \
before names, and what to ask. You only put it into words. Reply with one JSON object and \
nothing else."""

QUESTION_RENDER_PROMPT = """Task ({family}):
{steps}

A plain wording of the same task:
{plain}

Rewrite it as one short, natural question (at most {max_words} words) that asks exactly the \
same thing, the way a curious person would ask it. Rules:
- Keep every quoted title word for word, inside quotes; word the facts freely but keep their \
meaning exactly (a decade stays that decade, a bound stays that bound, a relation keeps its \
direction).
- Name no other document, and do not add facts of your own.
- Drop nothing the task needs; say it more briefly than the plain wording where you can.
- Do not use letters such as X or Y as stand-ins.
Reply with JSON: {{"question": "..."}}"""

FACTS_PROMPT = """List the facts this document states that a reader can check in its text: \
dates and years (what happened then), numbers with their units, what kind of thing its subject \
is, and other documents it names (people, places, works, organisations).

Document "{title}":
{text}

Reply with one JSON object {{"facts": [...]}}, at most {limit} facts, each {{"kind": "date", \
"number", "category" or "entity"; "relation": the document's own words that state it, right \
before the value (e.g. "was founded in", "directed by"); "value": the date, number, category or \
name exactly as written; "evidence": the whole sentence that states it, copied word for word}}. \
Copy; do not reword, translate or add anything the text does not say."""

QUESTION_READ_BACK_PROMPT = """Read this question about a collection of {nouns} and write down \
what it asks, without answering it. A {noun} mentions another when its text names it.

Question: {question}

Reply with one JSON object:
- "named": the titles of the {nouns} the question names as starting points, word for word.
- "clues": one item per fact that picks a sought {noun} (a date, a number, a category, a name \
it mentions, words it contains): {{"phrase": that fact as the question states it, "direction": "mentioned_by_source" if the sought {noun} is one that the {noun} it is \
reached from mentions, "mentions_source" if it is one that mentions that {noun}}}. A {noun} is \
reached from a named one or from one reached before.
- "answer_relation": when the answer is the one {noun} tied to several {nouns} reached through \
clues, "mentioned_by_clues" if they mention it, "mentions_clues" if it mentions them; otherwise \
"none".
- "asks": "title", "year", "count", "list", "earlier" or "later" (the one of several that states \
the earlier or later year)."""

ORACLE_CONTEXT_PROMPT = """Answer the question from these documents only. Reply with only the \
answer: a title, a year, a number, a list of titles separated by semicolons, or "not found" if \
the documents show that nothing meets the question.

{documents}

Question: {question}"""

CLOSED_BOOK_PROMPT = """Answer this question from memory, without searching. Reply with only the \
answer (a name, a date or a number), or "unknown" if you do not know.

Question: {question}"""


# --- the search agent (synth/trajectories/loop.py) ---
# Rendered by hopforge.synth.trajectories.loop and .context. `{tools}` is AGENT_TOOL_SCHEMAS with
# the JSON of the tool schemas for servers without native tool calls, else "" (the request's
# `tools` carries them, and the chat template renders them once); `{thinking}` is AGENT_BRIEF or,
# for reasoning teachers (`[teacher] reasoning = true`), AGENT_REASONING; `{call_format}` is
# AGENT_TEXT_CALLS for servers without native tool calls, else "".
# AGENT_TEXT_CALLS and AGENT_CHECKPOINT are sent as they are (not formatted).

AGENT_SYSTEM = """You are a research assistant who answers multi-hop questions by searching a \
document collection. Do not answer from memory: every fact you use must come from a document you \
read with the tools.{tools}

{thinking} Search with short keyword queries, open a promising hit by its doc_id, and use find \
to locate a name or phrase inside a document. When you know the answer, call answer with only \
the answer (a name, a date or a number).{call_format}"""

AGENT_TOOL_SCHEMAS = """

Tools (JSON schemas):
{tools}"""

AGENT_BRIEF = "In each message write one short sentence of reasoning, then call exactly one tool."

AGENT_REASONING = """Think before each call for as long as the step needs: what the results so \
far show, what is still unknown, and which call settles it. Then call exactly one tool."""

AGENT_TEXT_CALLS = """

Write each tool call as one JSON object between tags, for example:
<tool_call>{"name": "search", "arguments": {"query": "lighthouse designer"}}</tool_call>"""

AGENT_QUESTION = "Question: {question}"

AGENT_CHECKPOINT = """Checkpoint. Before you go on, write down the state of your research as one \
JSON object: {"goal": "what you must find", "facts": [{"fact": "a fact you read", "source": \
"the doc_id it came from"}], "open_constraints": ["what is still unknown"], "queries_tried": \
["search queries you already ran"]}. Only list facts you read in a document. Reply with the JSON \
object only."""

AGENT_CHECKPOINT_BLOCK = """Your checkpoint at turn {turn} (what the turns up to {turn} found; the oldest of those \
turns may be left out below to make room):
Goal: {goal}
Confirmed facts:
{facts}
Still open:
{open_constraints}
Queries already tried: {queries_tried}"""

AGENT_FORCE_ANSWER = """You have no room left for more research. Call answer now with your best \
answer from what you have read."""

AGENT_INVALID_CALL = "Your last message could not be used: {error}"

AGENT_INVALID_ARGUMENTS = "Error: invalid arguments for {name}: {problem}. Fix them and call again."

AGENT_UNKNOWN_TOOL = "Error: there is no tool named {name!r}. Use one of: {names}."

AGENT_ELIDED_RESULT = "[result of turn {turn} elided{shown}; to see it again: {again}]"

AGENT_TOOL_RESPONSE = "<tool_response>\n{result}\n</tool_response>"


# --- judges (filters/judge.py) ---
# The judge never sees which teacher wrote a response: only the question, the reference answer and
# the responses, labelled A and B. Verdicts are one JSON object, parsed by
# hopforge.filters.judge.parse_verdict.

JUDGE_SYSTEM = (
    "You are a strict, impartial grader of research assistants that answer multi-hop questions "
    "by searching a document collection. Judge only correctness and the soundness of the search; "
    "ignore writing style, length and politeness. Reply with one JSON object and nothing else."
)

JUDGE_POINTWISE_PROMPT = """Question: {question}
Reference answer: {reference}

The assistant's work:
{response}

Is the assistant's final answer correct, i.e. does it name the same thing as the reference answer
(aliases, abbreviations and harmless extra words are fine; a different or missing entity is not)?
Reply with JSON: {{"score": <1 if correct, 0 if wrong, or a value in between when partly right>,
"reason": "<one sentence>"}}"""

JUDGE_PAIRWISE_PROMPT = """Question: {question}
Reference answer: {reference}

Response A:
{response_a}

Response B:
{response_b}

Which response is better? First, a correct final answer beats a wrong one. If both are equally
correct, prefer the response whose answer is grounded in documents it actually read, then the one
that reached it with fewer wasted or repeated steps. Do not prefer a response for its position, its
length or its wording. Reply with JSON: {{"winner": "A" | "B" | "tie", "reason": "<one sentence>"}}"""
