#!/usr/bin/env bash
# Build a wheel for each Ascend host architecture (x86_64 and aarch64) into OUTDIR, tagged
# manylinux_2_28 (the glibc of openEuler 20.03 and Kylin V10): the C libraries (host library,
# emulator trees) are compiled with Zig's C compiler (PyPI's ziglang) against glibc 2.28 for
# each target, then every wheel is checked (tools/check_wheel.py). Installs its tools into a
# private environment.
set -euo pipefail
out="${1:?usage: bash tools/build-wheels.sh OUTDIR}"
root="$(cd "$(dirname "$0")/.." && pwd)"
glibc="2.28"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet "ziglang==0.17.1" "wheel>=0.45" "pyelftools==0.33"
zig="$("$work/venv/bin/python" -c "import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))")"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
for machine in x86_64 aarch64; do
    echo "== wheel for $machine (glibc $glibc)"
    source="$work/source-$machine"  # a clean copy: nothing built for another machine leaks in
    git -C "$root" ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$(mkdir -p "$source" && echo "$source")")
    CC="$zig cc -target $machine-linux-gnu.$glibc" ACLNN_EMU_ARCH="$machine" \
        ACLNN_EMU_LDFLAGS="-Wl,--undefined-version" \
        "$work/venv/bin/python" -m pip wheel --quiet --no-deps --wheel-dir "$work/raw-$machine" "$source"
    "$work/venv/bin/python" -m wheel tags --remove --platform-tag \
        "manylinux_${glibc/./_}_$machine" "$work/raw-$machine"/aclnn_py-*.whl >/dev/null
    mv "$work/raw-$machine"/aclnn_py-*manylinux*.whl "$out/"
done
"$work/venv/bin/python" "$root/tools/check_wheel.py" "$out"/aclnn_py-*manylinux*.whl

# The aarch64 build, run for real under user-mode emulation: CANN's C sample of
# aclnnMseLossBackward (tests/c_client/) against each emulator tree of the aarch64 wheel.
echo "== the aarch64 wheel under qemu-user"
if ! command -v qemu-aarch64-static >/dev/null || [ ! -d /usr/aarch64-linux-gnu/lib ]; then
    apt-get update -q >/dev/null && apt-get install -y -q qemu-user-static libc6-arm64-cross >/dev/null
fi
unpacked="$work/aarch64"
"$work/venv/bin/python" -m zipfile -e "$out"/aclnn_py-*manylinux*_aarch64.whl "$unpacked"
"$zig" cc -target "aarch64-linux-gnu.$glibc" -O2 "$root/tests/c_client/mse_loss_backward_sample.c" \
    -o "$work/sample" -ldl
expected=$'-0.000000\n0.000000\n1.000000\n3.000000'
for tree in "$unpacked"/aclnn_py/_emulator/*/; do
    printed="$(LD_LIBRARY_PATH="$tree/lib64:$tree/driver/lib64/driver" \
        qemu-aarch64-static -L /usr/aarch64-linux-gnu "$work/sample" "$tree/lib64")"
    if [ "$printed" != "$expected" ]; then
        echo "the aarch64 sample on $(basename "$tree") printed: $printed" >&2
        exit 1
    fi
    echo "aarch64 sample on the $(basename "$tree") tree: ok"
done
ls "$out"
