"""Evaluators: the result contract, built-ins, custom-evaluator discovery, and the registry."""
