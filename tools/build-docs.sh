#!/usr/bin/env bash
# Build the HTML documentation into OUTDIR: the pages of docs/ (with README.md and the
# examples they link to) and an API reference generated from the docstrings, by MkDocs with
# mkdocstrings; warnings are errors. Installs its tools into a private environment.
set -euo pipefail
out="${1:?usage: bash tools/build-docs.sh OUTDIR}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet "mkdocs==1.6.1" "mkdocstrings==1.0.8" \
    "mkdocstrings-python==2.0.11"
# The staging folder: the pages as they sit in the tree, so their relative links resolve.
stage="$work/stage"
mkdir -p "$stage"
cp -r "$root/README.md" "$root/LICENSE" "$root/docs" "$root/examples" "$stage/"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$root"
DOCS_STAGE="$stage" "$work/venv/bin/mkdocs" build --strict --clean \
    --config-file "$root/mkdocs.yml" --site-dir "$out"
echo "documentation written to $out"
