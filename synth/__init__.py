"""Question synthesis and teacher-driven search trajectories."""
