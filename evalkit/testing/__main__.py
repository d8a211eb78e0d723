"""``python -m evalkit.testing``: evalkit's local model server as a judge for offline runs, until Ctrl-C.

Why: trying an LLM judge (``evalkit run``, a custom ``.prompty``, the judge studio) should not need a deployed
model or a key. This starts :class:`~evalkit.testing.ModelServer` (the heuristic judge: deterministic 1-5
answers; and the Batch API's ``/v1/files`` and ``/v1/batches``, taking ``--batch-delay`` seconds a batch, for
``evalkit run --batch``) on loopback and prints, on stdout and nothing else, the lines a POSIX shell evaluates
to point evalkit's judge configuration (``evalkit.judges.models``) at it::

    export OPENAI_BASE_URL=http://127.0.0.1:8000/v1
    export OPENAI_API_KEY=local
    export OPENAI_MODEL=evalkit-model-server
    unset AZURE_AI_OPENAI_ENDPOINT AZURE_OPENAI_ENDPOINT

(``--api azure`` prints the ``AZURE_OPENAI_*`` variables instead.) An Azure endpoint in the environment would
win over ``OPENAI_*``, hence the ``unset``. What the server is doing goes to stderr. Ctrl-C (or SIGTERM) stops
it with exit code 0 and a one-line count of the requests served.

May import: ``evalkit.testing``, ``evalkit.judges``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from evalkit.judges.models import DEFAULT_AZURE_API_VERSION
from evalkit.testing.server import ModelServer

#: The key the printed variables carry (the server accepts any key unless ``--key`` is given).
DEFAULT_KEY = "local"
#: The model / deployment name the printed variables carry.
MODEL_NAME = "evalkit-model-server"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evalkit.testing",
        description="Serve evalkit's local model server (deterministic heuristic judge answers) on 127.0.0.1 "
        "until Ctrl-C, and print the shell lines that make evalkit use it as its judge: paste them into the "
        "shell that runs evalkit, or redirect them to a file and source it (python -m evalkit.testing > judge.env &).",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    parser.add_argument(
        "--api",
        choices=("openai", "azure"),
        default="openai",
        help="which judge variables to print: OPENAI_* (default) or AZURE_OPENAI_*; the server speaks both",
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="delay added to every answer (default 0)",
    )
    parser.add_argument(
        "--fail-rate",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="share of answers that are 429 Too Many Requests with Retry-After: 0.1 (0-1, default 0), to see "
        "evalkit's back-off",
    )
    parser.add_argument(
        "--batch-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="how long a batch of /v1/batches takes to complete (default 0), to see evalkit run --batch wait",
    )
    parser.add_argument(
        "--key", default=None, help="require this API key (default: any key is accepted; 'local' is printed)"
    )
    return parser


def exports(server: ModelServer, api: str, key: str) -> list[str]:
    """The shell lines that make evalkit's judge configuration point at ``server``."""
    if api == "azure":
        return [
            f"export AZURE_OPENAI_ENDPOINT={server.azure_endpoint}",
            f"export AZURE_OPENAI_API_KEY={key}",
            f"export AZURE_OPENAI_DEPLOYMENT={MODEL_NAME}",
            f"export AZURE_AI_API_VERSION={DEFAULT_AZURE_API_VERSION}",
            "unset AZURE_AI_OPENAI_ENDPOINT AZURE_AI_MODEL_NAME AZURE_AI_API_KEY",
        ]
    return [
        f"export OPENAI_BASE_URL={server.openai_base_url}",
        f"export OPENAI_API_KEY={key}",
        f"export OPENAI_MODEL={MODEL_NAME}",
        "unset AZURE_AI_OPENAI_ENDPOINT AZURE_OPENAI_ENDPOINT",
    ]


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 <= args.fail_rate <= 1:
        print(
            f"Error: --fail-rate {args.fail_rate} is not a share between 0 and 1 (e.g. 0.1)", file=sys.stderr
        )
        return 2
    server = ModelServer(latency=max(0.0, args.latency), require_key=args.key, port=args.port)
    try:
        server.start()
    except OSError as exc:
        print(f"Error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    server.batches.delay = max(0.0, args.batch_delay)
    if args.fail_rate:
        server.fail_randomly(args.fail_rate, status=429, retry_after=0.5)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # a shell without job control starts `... &` with SIGINT ignored, and Python keeps it so: Ctrl-C / kill -INT
    # must stop the server all the same
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        print("\n".join(exports(server, args.api, args.key or DEFAULT_KEY)), flush=True)
        print(
            f"evalkit model server on {server.url} (heuristic judge answers); Ctrl-C stops it.",
            file=sys.stderr,
            flush=True,
        )
        while not stop.wait(0.2):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        served = server.request_count
        server.stop()
    print(f"Stopped after {served} {'request' if served == 1 else 'requests'}.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
