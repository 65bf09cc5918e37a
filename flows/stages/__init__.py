"""Build-directory runners of the stages that flows/ drives itself (questions to export, eval)."""
