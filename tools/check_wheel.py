"""Check a built wheel: its platform tag, and that every shared library in it is for that
machine and needs no newer glibc than the tag's manylinux policy allows.

Usage: ``python tools/check_wheel.py WHEEL`` (exit status 1 with the reasons on failure).
Reads the ELF headers and the GNU version needs (``.gnu.version_r``) with pyelftools; checks
only, never repairs (auditwheel's repair would add RPATHs and rename the CANN-named
libraries)."""

from __future__ import annotations

import io
import re
import sys
import zipfile
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

TAG = re.compile(r"-cp39-abi3-manylinux_(\d+)_(\d+)_(x86_64|aarch64)\.whl$")
MACHINES = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}


def check(wheel: Path) -> list[str]:
    """The problems of ``wheel`` (none: it is what its tag says)."""
    found = TAG.search(wheel.name)
    if found is None:
        return [f"{wheel.name}: not tagged cp39-abi3-manylinux_<glibc>_<machine>"]
    policy = (int(found.group(1)), int(found.group(2)))
    machine = MACHINES[found.group(3)]
    problems = []
    libraries = 0
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if not name.endswith(".so"):
                continue
            libraries += 1
            elf = ELFFile(io.BytesIO(archive.read(name)))
            if elf["e_machine"] != machine:
                problems.append(f"{name}: machine {elf['e_machine']}, not {machine}")
            for section in elf.iter_sections():
                if not isinstance(section, GNUVerNeedSection):
                    continue
                for _, versions in section.iter_versions():
                    for version in versions:
                        text = version.name
                        if text.startswith("GLIBC_") and text[6:].replace(".", "").isdigit():
                            needed = tuple(int(part) for part in text[6:].split("."))
                            if needed[:2] > policy:
                                problems.append(f"{name}: needs {text}, newer than "
                                                f"manylinux_{policy[0]}_{policy[1]}")
    if not libraries:
        problems.append(f"{wheel.name}: holds no shared library")
    return problems


def main(arguments: list[str]) -> int:
    problems = [problem for wheel in arguments for problem in check(Path(wheel))]
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{len(arguments)} wheel(s): tags, ELF machines and glibc versions agree")
    return 1 if problems or not arguments else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
