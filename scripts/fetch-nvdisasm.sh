#!/usr/bin/env bash
# fetch-nvdisasm.sh - the test-only disassembler: nvdisasm from PyPI's
# nvidia-cuda-nvdisasm wheel, unpacked as DIR/nvdisasm, for the offline SASS
# checks of tests/test_family_wgmma.c (HGMMA and USETMAXREG present, no
# local loads or stores). The CUDA toolkit here ships no nvdisasm; the
# product never runs it. Does nothing when DIR/nvdisasm already runs.
#
#   scripts/fetch-nvdisasm.sh DIR
set -euo pipefail
dir=$1
version=13.2.86 # the oldest 13.x on PyPI: it reads sm_90a cubins of the 13.0 toolkit
[ -x "$dir/nvdisasm" ] && "$dir/nvdisasm" --version >/dev/null 2>&1 && exit 0
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" "nvidia-cuda-nvdisasm==$version" ||
    { echo "fetch-nvdisasm.sh: pip could not download nvidia-cuda-nvdisasm==$version" >&2; exit 1; }
python3 - "$tmp" "$dir/nvdisasm.tmp" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/bin/nvdisasm"))
    open(sys.argv[2], "wb").write(z.read(name))
PY
chmod +x "$dir/nvdisasm.tmp"
mv "$dir/nvdisasm.tmp" "$dir/nvdisasm"
"$dir/nvdisasm" --version >/dev/null
