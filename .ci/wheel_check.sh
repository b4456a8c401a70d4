#!/usr/bin/env bash
# The release check (issue 67): build a wheel and an sdist from this checkout, install the
# wheel (not editable) in a fresh virtual environment, and run from that install, in a
# folder outside the checkout: the main job's smoke test, a search game, the web board's
# page and the shipped policy; the data files (leaves.json, the policy .npz, the web
# board) must be in the wheel and the sdist. Called by .ci/run; about 3 minutes on
# 2 cores (most of it compiling the kernels into the new install's empty cache).
#
#   .ci/wheel_check.sh            # from any folder, with a python3 that has pip
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/build-env"
"$work/build-env/bin/pip" install -q build
"$work/build-env/bin/python" -m build --outdir "$work/dist" "$root" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
wheel="$(ls "$work"/dist/*.whl)"
sdist="$(ls "$work"/dist/*.tar.gz)"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "${wheel}[server,rl]"
mkdir "$work/run"
cd "$work/run"   # nothing of the checkout is importable from here
PATH="$work/venv/bin:$PATH" "$work/venv/bin/python" "$root/.ci/wheel_check.py" "$wheel" "$sdist"
