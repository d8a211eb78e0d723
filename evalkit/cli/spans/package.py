"""``evalkit spans package NAME --out NAME.zip [--requirements requirements.txt]``: a span evaluator's AWS Lambda
deployment zip.

Builds the zip of one span evaluator (``evalkit.spans.lambdas.packaging``: the handler's file at the root, the
folder's other files, the shared modules it imports, and with ``--requirements`` its pinned third-party
packages from ``requirements_bundle``), then prints what went in, the runtime it targets, the handler setting
Lambda needs and a warning when the zip is past Lambda's size limits. Added to the ``spans`` command group by
``register(commands)``.
"""

from __future__ import annotations

import time

from evalkit.analysis.formatting import count
from evalkit.cli.arguments.paths import output_file
from evalkit.cli.spans.options import add_custom_dir


def register(commands) -> None:
    from evalkit.spans.lambdas.requirements_bundle import ARCHITECTURES, DEFAULT_ARCHITECTURE, DEFAULT_PYTHON

    package = commands.add_parser(
        "package",
        help="build the AWS Lambda deployment zip of a span evaluator",
        description="Zip custom-evaluators/NAME/ for AWS Lambda: the handler's file at the root (NAME.py or "
        "lambda_function.py; the handler setting Lambda needs is printed), the folder's other files, the "
        "shared modules of custom-evaluators/_shared/ it imports, and with --requirements the pinned "
        "third-party packages of that file, installed by pip for Lambda's Linux runtime (pure-Python and "
        f"manylinux wheels only; Python {DEFAULT_PYTHON} on {DEFAULT_ARCHITECTURE} unless --python and "
        "--architecture pick another; pip's PIP_INDEX_URL, PIP_FIND_LINKS and PIP_NO_INDEX say where wheels "
        "come from). The same folder and wheels always give the same bytes.",
    )
    package.add_argument(
        "name", metavar="NAME", help="span evaluator custom-evaluators/NAME/ (NAME.py or lambda_function.py)"
    )
    add_custom_dir(package)
    package.add_argument(
        "--out", metavar="FILE", type=output_file, required=True, help="zip file to write, e.g. NAME.zip"
    )
    package.add_argument(
        "--handler",
        metavar="MODULE.FUNCTION",
        help="Lambda's handler setting, when it is not NAME.py or lambda_function.py with lambda_handler or "
        "handler",
    )
    package.add_argument(
        "--requirements",
        metavar="FILE",
        help="pinned requirements (name==version on every line) to bundle into the zip",
    )
    package.add_argument(
        "--python",
        metavar="3.X",
        default=DEFAULT_PYTHON,
        help=f"the Lambda runtime's Python the bundled wheels are for (default {DEFAULT_PYTHON})",
    )
    package.add_argument(
        "--architecture",
        choices=sorted(ARCHITECTURES),
        default=DEFAULT_ARCHITECTURE,
        help=f"the Lambda function's architecture the bundled wheels are for (default {DEFAULT_ARCHITECTURE})",
    )
    package.set_defaults(func=main)


#: AWS Lambda's limits on a deployment package: a zip uploaded directly, and the unzipped function.
DIRECT_UPLOAD_LIMIT = 50 * 1024 * 1024
UNZIPPED_LIMIT = 250 * 1024 * 1024


def _size_notes(package) -> None:
    """Say when the zip is past Lambda's direct-upload limit, or its files past the unzipped limit."""
    unzipped = package.unzipped
    if unzipped > UNZIPPED_LIMIT:
        print(
            f"Warning: the files come to {unzipped:,} bytes unzipped, past Lambda's 250 MB limit: the function "
            "would not deploy (move packages to a layer or a container image)"
        )
    elif package.size > DIRECT_UPLOAD_LIMIT:
        print("Note: the zip is past the 50 MB Lambda takes as a direct upload: upload it through S3")


def main(args) -> int:
    from evalkit.spans.lambdas.packaging import build_package
    from evalkit.spans.lambdas.requirements_bundle import HOW_TO_PICK, LambdaRuntime

    started = time.perf_counter()
    runtime = LambdaRuntime(args.python, args.architecture)
    package = build_package(
        args.name,
        args.out,
        args.custom_dir,
        handler=args.handler,
        requirements=args.requirements,
        runtime=runtime,
    )
    bundle = package.requirements
    files = count(len(package.entries), "file")
    print(f"Packaged {package.name} into {args.out} ({files}, {package.size:,} bytes):")
    own = [
        a
        for a in sorted(package.entries)
        if bundle is None or not package.entries[a].is_relative_to(bundle.folder)
    ]
    width = max(len(arcname) for arcname in own)
    for arcname in own:
        print(f"  {arcname:<{width}}  from {package.entries[arcname]}")
    if bundle is not None:
        print(
            f"  and {count(len(package.entries) - len(own), 'file')} of {count(len(bundle.installed), 'distribution')} "
            f"from {args.requirements}: {', '.join(bundle.installed)}"
        )
        print(f"Targets {runtime.describe()} ({HOW_TO_PICK}); built in {time.perf_counter() - started:.1f} s")
    if package.runtime_sdk:
        print(
            f"Left out, the Lambda Python runtime provides them (the AWS SDK): {', '.join(package.runtime_sdk)}"
        )
    if package.optional:
        print(f"Optional imports left out (a Lambda layer may provide them): {', '.join(package.optional)}")
    _size_notes(package)
    print(f"Handler: {package.handler}")
    return 0
