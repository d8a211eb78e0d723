"""Options the ``evalkit spans`` commands share, written once: the evaluators folder, the session attribute
and the log level (``spans eval``, ``serve``, ``stream``, ``package``, ``invoke``, ``to-document``).

Each command's own options stay in its module; these say the same thing everywhere, so they are added here.

May import: the standard library only.
"""

from __future__ import annotations

#: Where a trace's session id is read from when ``--session-attribute`` is not given.
SESSION_DEFAULT = (
    "session.id, gen_ai.conversation.id and the other session attributes agent frameworks emit; "
    "a trace with none is its own session"
)


def add_custom_dir(parser) -> None:
    """``--custom-dir DIR``: the span evaluators folder."""
    parser.add_argument(
        "--custom-dir", metavar="DIR", help="span evaluators folder (default: ./custom-evaluators)"
    )


def add_session_attribute(parser, default: str = SESSION_DEFAULT) -> None:
    """``--session-attribute NAME``; ``default`` says what is used without it."""
    parser.add_argument(
        "--session-attribute",
        metavar="NAME",
        help=f"span or resource attribute holding the session id (default: {default})",
    )


def add_log_level(parser) -> None:
    """``--log-level``: ``info`` says which span shapes each file held."""
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default="warning",
        help="info: say which span shapes each file held",
    )
