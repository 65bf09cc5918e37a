"""The `hopforge` command line: one module per command (cli.py dispatches to them)."""
