"""Every prompt hopforge sends to a model, as named constants (each rendered once in a test)."""

# --- question composition (synth/questions.py) ---

# --- the search agent (synth/agent.py) ---

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
