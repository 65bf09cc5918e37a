"""`hopforge eval`: how far a model gets at set turn budgets under named fault mixes."""
