"""Builds the Rust library with cargo and ships it inside the package.

The binding is cffi in ABI mode: `build_ffi.py` turns the generated header into a pure-Python
module that `dlopen`s the packaged `libossa.so`, so neither building nor installing compiles C.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
CRATE = HERE.parent
sys.path.insert(0, str(HERE))

import build_ffi  # noqa: E402  (beside this file, imported after the path is set)


def cargo_target_dir() -> Path:
    configured = os.environ.get("CARGO_TARGET_DIR")
    return Path(configured) if configured else CRATE / "target"


class BuildWithCargo(build_py):
    def run(self) -> None:
        # cargo also regenerates include/ossa.h, which the cffi module is made from.
        subprocess.run(
            ["cargo", "build", "--release", "--lib", "--manifest-path", str(CRATE / "Cargo.toml")],
            check=True,
        )
        super().run()
        # Both go straight into the build tree: the source tree keeps only what git tracks.
        package = Path(self.build_lib) / "ossa"
        library = package / "libossa.so"
        shutil.copy2(cargo_target_dir() / "release" / "libossa.so", library)
        # The release profile keeps debug info for profiling (about 36 MB); the wheel needs none.
        if shutil.which("strip"):
            subprocess.run(["strip", "--strip-debug", str(library)], check=True)
        build_ffi.emit(CRATE / "include" / "ossa.h", package / "_ossa_cffi.py")


class BinaryDistribution(Distribution):
    # The wheel carries a native library: tag it for this platform, not as pure Python.
    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithCargo}, distclass=BinaryDistribution)
