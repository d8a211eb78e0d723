#!/usr/bin/env bash
# Java 17 or newer for the Spark engine's tests (pyspark 4 runs on a JVM): Debian's openjdk-17-jre-headless (or
# openjdk-21 where 17 is not packaged), installed when `java -version` is missing or older than 17.
set -euo pipefail
source "$(dirname "$0")/apt_install.sh"
java_cmd=${JAVA_HOME:+$JAVA_HOME/bin/}java
# `openjdk version "17.0.15" 2025-04-15`, `java version "1.8.0_351"`: the major version, 0 when there is none
major=$("$java_cmd" -version 2>&1 | sed -n 's/.* version "\([0-9][0-9.]*\).*/\1/p' | head -n 1 || true)
case "$major" in
  1.*) major=${major#1.} ;;
esac
major=${major%%.*}
if [ "${major:-0}" -ge 17 ] 2>/dev/null; then
  exit 0
fi
found=${major:+Java $major}
why="the Spark tests need Java 17 or newer (found ${found:-no java})"
package=openjdk-17-jre-headless
if command -v apt-cache >/dev/null 2>&1 && ! apt-cache show "$package" >/dev/null 2>&1 \
  && apt-cache show openjdk-21-jre-headless >/dev/null 2>&1; then
  package=openjdk-21-jre-headless  # a release that no longer packages 17
fi
apt_install "$why" "$package"
