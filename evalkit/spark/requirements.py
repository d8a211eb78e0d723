"""The optional ``spark`` extra: check that pyspark 4 and pyarrow are importable, with the fix when not."""

from __future__ import annotations

from evalkit.errors import EnvironmentConfigError

INSTALL = "pip install 'evalkit[spark]'"
MIN_PYSPARK = (4, 0)


def require_pyspark() -> None:
    """Raise ``EnvironmentConfigError`` (exit 3) naming the pip command when pyspark or pyarrow is missing."""
    try:
        import pyspark
    except ImportError:
        raise EnvironmentConfigError(
            f"The Spark engine needs pyspark {MIN_PYSPARK[0]}.x and pyarrow, which are not installed: "
            f"run {INSTALL} (Spark also needs Java 17, e.g. apt-get install openjdk-17-jre-headless)."
        ) from None
    try:
        import pyarrow  # noqa: F401 - only its presence is checked
    except ImportError:
        raise EnvironmentConfigError(
            f"The Spark engine needs pyarrow, which is not installed: run {INSTALL}."
        ) from None
    version = tuple(int(p) for p in pyspark.__version__.split(".")[:2] if p.isdigit())
    if version < MIN_PYSPARK:
        raise EnvironmentConfigError(
            f"The Spark engine needs pyspark {MIN_PYSPARK[0]}.x; pyspark {pyspark.__version__} is installed: "
            f"run {INSTALL} --upgrade."
        )
