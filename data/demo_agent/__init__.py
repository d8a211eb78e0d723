"""evalkit's demo agent: a small deterministic HR assistant (with a market-data side) to run evaluations on.

``agent.answer(prompt, history)`` answers from the markdown knowledge base in ``knowledge/`` by keyword
retrieval and emits OpenTelemetry spans; ``market`` holds the stock/broker tools and scenarios. The agent
is loaded by file path (``data/demo_agent/agent.py:answer``) or as this package; both work.
"""
