"""Development build of shoal._torch next to the sources (python/shoal/).

The package's setup.py builds the same extension from the same files; this
is for working on them without installing. Needs shmem-config on PATH (an
installed Shoal's set_env.sh, or a build's tools/ folder).
Usage: /usr/bin/python3 python/csrc/torch/build_inplace.py
"""
import glob
import os
import shlex
import subprocess
import sys

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

here = os.path.dirname(os.path.abspath(__file__))
pkg_root = os.path.dirname(os.path.dirname(here))  # python/
flags = shlex.split(subprocess.check_output(["shmem-config", "--cflags", "--libs"], text=True))
include = [f[2:] for f in flags if f.startswith("-I")]
libdirs = [f[2:] for f in flags if f.startswith("-L")]
ext = CppExtension(
    "shoal._torch",
    sorted(glob.glob(os.path.join(here, "*.cpp"))),
    include_dirs=include,
    library_dirs=libdirs,
    libraries=["shoal"],
    runtime_library_dirs=libdirs,
    extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
)
os.chdir(pkg_root)
sys.argv = [sys.argv[0], "build_ext", "--inplace", "--build-temp", os.path.join(pkg_root, "..", "build-torch")]
setup(name="shoal-torch-dev", ext_modules=[ext], cmdclass={"build_ext": BuildExtension})
