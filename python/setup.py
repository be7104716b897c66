"""Builds fourfold_torch with its compiled extension, fourfold_torch._C: the torch.ops.fourfold ops (csrc/),
linked against the release libfourfold of this checkout (FOURFOLD_LIBRARY names another), with PyTorch's C++
extension tooling. The package carries the suites' rows (fourfold_torch/data/suite_rows.json, package data), so
that an installed copy runs without the checkout. PyTorch must already be installed: `pip install --no-build-isolation ./python`, so that
the extension is built against the torch it will load into (scripts/python-env.sh does this)."""
import glob
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)
library = os.environ.get("FOURFOLD_LIBRARY", os.path.join(repo, "build", "release", "libfourfold.a"))
if not os.path.isfile(library):
    raise SystemExit(f"fourfold_torch: {library} not found: build the release preset first "
                     "(cmake --preset release && cmake --build --preset release) or set FOURFOLD_LIBRARY")


setup(
    ext_modules=[CppExtension(
        name="fourfold_torch._C",
        sources=sorted(glob.glob(os.path.join("fourfold_torch", "csrc", "*.cpp"))),
        include_dirs=[os.path.join(repo, "include")],
        # OpenMP: at::parallel_for, which runs fourfold's loops on PyTorch's threads (csrc/tensor_bridge.cpp), is
        # inline and OpenMP in PyTorch's CPU builds; libgomp.so.1 is then the one torch has already loaded.
        extra_compile_args=["-std=c++20", "-O2", "-fopenmp"],
        extra_objects=[library],
        libraries=["fmt", "pcre2-8", "utf8proc", "png"],
        # The library's weak template copies stay its own, not interposed by another library loaded into Python.
        extra_link_args=["-Wl,-Bsymbolic", "-fopenmp"],
    )],
    cmdclass={"build_ext": BuildExtension},
)
