"""Trajectories: the agent loop, its context, the fault layer, the scripted teacher, the stage."""
