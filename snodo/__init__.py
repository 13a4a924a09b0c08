"""snodo: a schema-first MCP 2026-07-28 server toolkit."""
