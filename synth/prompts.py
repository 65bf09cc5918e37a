"""Every prompt hopforge sends to a model, as named constants (each rendered once in a test)."""

# --- question composition (synth/questions.py) ---

# --- the search agent (synth/agent.py) ---
