"""The teacher model client: chat protocol, OpenAI-compatible client, retries, tool-call parsing."""
