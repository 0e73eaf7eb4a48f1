"""The artifact contract: strict JSON reading, JSON Schemas and their messages, artifact sets, source texts.

Everything an agent's files must satisfy before they can touch the graph; reads files only through the one
safe reader.
"""
