"""Point-wise and pair-wise scoring, and the style-bias and duplicate filters."""
