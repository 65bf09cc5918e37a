"""Corpus ingestion, indexing and the search tools the teacher calls."""
