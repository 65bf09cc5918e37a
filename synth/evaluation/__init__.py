"""`hopforge eval`: how far a model gets at set turn budgets under named fault mixes.

The whole eval lives here; flows/commands/eval.py only parses the command line and calls
`evaluate.run_eval`. Calls go down this list:

- evaluate.py: `run_eval`: pick the tasks, run every (budget, fault mix) cell, measure, write DIR
  (summary.json, report.md, the plots, trajectories/, handoffs.jsonl, tasks.jsonl).
- runner.py: a cell through the trajectories stage's agent loop (one teacher per task, with its
  injections), and a finished cell's files in DIR, reused by a rerun with the same key.
- config.py: `EvalConfig`, the fault mixes (none, light, heavy) and the parsing of `--budgets`,
  `--faults` and `--inject`.
- tasks.py: the ladder of tasks per budget, from a build or a JSONL file of questions.
- injections.py: `InjectingTeacher`, which breaks a teacher on purpose (repeat, bad-args,
  forget, ignore-faults) to check that the harness sees it.
- stops.py: the plan-change stop, and what a handed-off run knew when it stopped.
- metrics.py: the measures of one trajectory on its task (success, valid calls, faults
  recovered and ignored, the onset of each error kind).
- summary.py: a cell's row of summary.json and the report.md built from the rows.
- plots.py: success.png and onset.png.
"""
