"""One module per CLI command; each is a thin wrapper over the Python API.

Every command module exposes ``register(subparsers)`` (adds its parser and sets ``func``) and a
``main(args) -> int`` that returns the exit code.
"""
