"""Model files: reading (mmap, immutable dataclasses), validating, editing and rewriting.

Holds the reader (`model`), dtype tables, the structural verifier and validator, sparse
densifying, object-API edits of a copy (`edit`) and the rewritten copies that expose
intermediates (`rewrite`). May import only `inspector.core.errors`/`writing` and the schema
packages; every other part of core builds on this one.
"""
