"""Prefect flows and the `hopforge` command line."""
