"""The build file: its tables parsed and checked, settings hashes, the teacher, the demo's file."""
