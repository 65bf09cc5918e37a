"""Export of kept trajectories as SFT, RL and preference shards, with a dataset card."""
