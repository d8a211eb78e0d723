"""``evalkit spans serve`` and ``evalkit spans status``: online evaluation of live OTLP spans.

``serve`` runs an OTLP/HTTP receiver on ``--host``/``--port`` (loopback and 4318 by default; HTTPS with
``--tls-cert``/``--tls-key``; a bearer token from ``--token``, ``--token-file`` or ``EVALKIT_RECEIVER_TOKEN``,
which off loopback needs TLS or ``--insecure``) that stores spans
(``/v1/traces``) and event records (``/v1/logs``) in ``--store DIR`` and scores a sample of the sessions that went quiet for ``--session-timeout`` with up to 10
Lambda-style evaluators, writing ``DIR/results.jsonl`` and ``DIR/metrics.jsonl`` (see
``evalkit.spans.online.server``). ``status`` summarises a store: sessions per state, spans and records stored, pass rates per
evaluator.

Both are added to the ``spans`` command group by ``register(commands)``, where ``commands`` is that group's
subparsers object.
"""

from __future__ import annotations

import argparse
import math
import signal
import threading

from evalkit.analysis.formatting import count
from evalkit.cli.arguments.paths import output_folder
from evalkit.cli.run import parse_rate, parse_seconds
from evalkit.cli.spans.options import add_custom_dir, add_session_attribute
from evalkit.errors import EvalkitError


def register(commands) -> None:
    """Add ``serve`` and ``status`` to the ``spans`` subcommands."""
    sv = commands.add_parser(
        "serve",
        help="receive OTLP spans and evaluate completed sessions continuously (online evaluation)",
        description="An OTLP/HTTP receiver (POST /v1/traces for spans, POST /v1/logs for event records; "
        "protobuf or JSON) that stores spans and records durably in "
        "DIR/store.sqlite3 and, once a session has had no span for --session-timeout, runs the evaluators on "
        "the sampled sessions, writing DIR/results.jsonl (gen_ai.evaluation.result events) and "
        "DIR/metrics.jsonl (CloudWatch EMF).",
    )
    sv.add_argument(
        "--store", metavar="DIR", type=output_folder, required=True, help="store folder (created if missing)"
    )
    sv.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)")
    sv.add_argument("--port", type=int, default=4318, help="port (default 4318, the OTLP/HTTP port; 0: any)")
    sv.add_argument(
        "--session-timeout",
        metavar="DURATION",
        default="15m",
        help="inactivity after which a session is complete, 1m-1440m as AgentCore: 15m, 90s, 2h (default 15m)",
    )
    sv.add_argument(
        "--sampling",
        metavar="PERCENT",
        type=parse_percentage,
        default=100.0,
        help="percentage of sessions evaluated, 0.01-100 as AgentCore (default 100), decided by a hash of "
        "the session id",
    )
    sv.add_argument(
        "--config-name",
        metavar="NAME",
        help="online evaluation configuration name, written to results.jsonl and metrics.jsonl as "
        "onlineEvaluationConfigId (default: the store folder's name)",
    )
    sv.add_argument(
        "--evaluator",
        metavar="NAME[:LEVEL]",
        action="append",
        default=[],
        help="span evaluator: Builtin.<Name> (AgentCore built-in LLM judge) or custom-evaluators/NAME/NAME.py (repeat, up to 10)",
    )
    add_custom_dir(sv)
    sv.add_argument(
        "--filter",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="evaluate only sessions with a span whose attribute matches (AgentCore's filter operators): "
        "KEY=VALUE (Equals), KEY!=VALUE (NotEquals), KEY~=VALUE (Contains), KEY!~=VALUE (NotContains), "
        "KEY>N, KEY<N, KEY>=N, KEY<=N (GreaterThan, LessThan, ...OrEqual); repeat for several, at most 5 "
        "(all must match)",
    )
    token = sv.add_mutually_exclusive_group()
    token.add_argument(
        "--token",
        help="require the header Authorization: Bearer TOKEN (visible to other users in ps: prefer "
        "--token-file or the environment variable EVALKIT_RECEIVER_TOKEN)",
    )
    token.add_argument(
        "--token-file",
        metavar="PATH",
        help="require the bearer token held in this file (its text, one trailing newline dropped); without "
        "--token or --token-file, EVALKIT_RECEIVER_TOKEN gives the token when set",
    )
    sv.add_argument(
        "--tls-cert", metavar="PEM", help="serve HTTPS with this certificate (chain); needs --tls-key"
    )
    sv.add_argument("--tls-key", metavar="PEM", help="private key of --tls-cert")
    sv.add_argument(
        "--insecure",
        action="store_true",
        help="allow --token on an address other than loopback without TLS (the token crosses the network "
        "in clear text)",
    )
    sv.add_argument(
        "--idle-timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=60.0,
        help="close a connection that sends no request for SECONDS (default 60)",
    )
    sv.add_argument(
        "--alarm-threshold",
        metavar="RATE",
        type=parse_rate,
        help="alarm when an evaluator's pass rate over --alarm-window drops below RATE (0-1 or 80%%)",
    )
    sv.add_argument("--alarm-window", metavar="DURATION", default="1h", help="alarm window (default 1h)")
    sv.add_argument("--alarm-webhook", metavar="URL", help="POST each alarm as JSON to URL")
    sv.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=300.0,
        help="per evaluator call (default 300, as Lambda)",
    )
    sv.add_argument(
        "--namespace",
        default="Bedrock-AgentCore/Evaluations",
        help="EMF metric namespace (default %(default)s)",
    )
    add_session_attribute(sv)
    sv.set_defaults(func=serve_main)

    st = commands.add_parser(
        "status",
        help="sessions and pass rates of an online evaluation store",
        description="Sessions open, complete, evaluated and skipped, and each evaluator's pass rate over the "
        "last hour and the last day.",
    )
    st.add_argument("--store", metavar="DIR", required=True, help="store folder of evalkit spans serve")
    st.set_defaults(func=status_main)


def parse_percentage(text: str) -> float:
    """A percentage, ``50`` or ``50%`` (a finite number: ``nan`` and ``inf`` are refused here; the range is
    checked by the command, as AgentCore's)."""
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage: write e.g. 10 or 10%") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage: write e.g. 10 or 10%")
    return value


def serve_main(args) -> int:
    from evalkit.spans.online.server import serve
    from evalkit.spans.online.session_tracking import check_sampling, check_session_timeout, parse_duration

    # AgentCore's ranges, checked before anything is loaded or bound (exit 2, naming the range)
    check_sampling(args.sampling, "--sampling")
    check_session_timeout(parse_duration(args.session_timeout), args.session_timeout, "--session-timeout")

    server = serve(
        args.store,
        evaluators=args.evaluator,
        custom_dir=args.custom_dir,
        host=args.host,
        port=args.port,
        session_timeout=args.session_timeout,
        sampling=args.sampling,
        filters=args.filter,
        token=args.token,
        token_file=args.token_file,
        alarm_threshold=args.alarm_threshold,
        alarm_window=args.alarm_window,
        alarm_webhook=args.alarm_webhook,
        namespace=args.namespace,
        evaluator_timeout=args.timeout,
        config_name=args.config_name,
        idle_timeout=args.idle_timeout,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        insecure=args.insecure,
        session_attribute=args.session_attribute,
    )
    # SIGTERM is taken before the address is announced: a supervisor (or a test) that reads the line and stops
    # the receiver at once gets the clean stop, not a death by the signal.
    stopped = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        server.start()
    except OSError as exc:
        signal.signal(signal.SIGTERM, previous)
        raise EvalkitError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    print(
        f"Receiving OTLP spans on {server.url} and event records on {server.logs_url} (store {args.store}); "
        "Ctrl-C to stop",
        flush=True,
    )
    try:
        while not stopped.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
    print("Stopped.")
    return 0


def status_main(args) -> int:
    from evalkit.spans.online.views import status

    info = status(args.store)
    counts = info["counts"]
    print(
        f"Sessions: {counts['open']} open, {counts['complete']} complete, {counts['evaluated']} evaluated, "
        f"{counts['skipped']} skipped; {count(counts['spans'], 'span')}, {count(counts['records'], 'record')} "
        "stored"
    )
    names = sorted(set(info["hour"]) | set(info["day"]))
    if not names:
        print("No results yet.")
        return 0
    width = max(len(n) for n in names)
    print(f"  {'evaluator':<{width}}  {'last hour':>20}  {'last day':>20}")
    for name in names:
        cells = []
        for window in ("hour", "day"):
            ok, total = info[window].get(name, (0, 0))
            cells.append(f"{ok / total:.1%} ({ok}/{total})" if total else "-")
        print(f"  {name:<{width}}  {cells[0]:>20}  {cells[1]:>20}")
    return 0
