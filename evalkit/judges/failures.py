"""``JudgeFailure``: a judge call that failed in a known way, with its upstream error code.

Its own module so that what reads judge answers (``strict_answers``, ``metering``) and the pool that runs the
calls can both raise it without importing each other; ``evalkit.judges.pool`` re-exports it.

May import: ``evalkit.documents``.
"""

from __future__ import annotations

from evalkit.documents.redaction import redact


class JudgeFailure(Exception):
    """A judge call that failed in a known way; ``code`` is the upstream error code.

    The message is redacted here (``evalkit.documents.redaction``): servers echo keys in their errors, and
    this message goes into results, logs and the terminal.
    """

    def __init__(
        self, message: str, code: str = "evaluatorError", *, retryable: bool = False, retry_after=None
    ):
        super().__init__(redact(message))
        self.code = code
        self.retryable = retryable
        self.retry_after = retry_after
