"""Questions as task specs: families sample specs from the corpus, composers render them, checks
read them, and the stage (`hopforge.synth.questions.stage`) runs the three in turn."""
