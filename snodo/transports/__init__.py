"""Thin adapters that carry the core's messages over stdio and Streamable HTTP."""
