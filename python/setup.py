"""Builds the shoal package: shoal._core (C, over libshoal's public API) and,
where torch is importable, shoal._torch (C++, see the hook below).

libshoal is found through `shmem-config --cflags --libs` (an installed
Shoal's set_env.sh puts it on PATH; SHMEM_CONFIG may name it), else through
`pkg-config shoal`.

SHOAL_BUNDLE=1 makes a self-contained wheel: libshoal, oshrun, shmem-config
and shoal-selftest are copied into shoal/_bundle (an installed prefix's
layout), _core finds libshoal there by rpath, and the console scripts
oshrun and shmem-config exec the bundled binaries.
"""
import glob
import os
import shlex
import shutil
import subprocess

import numpy
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.environ.get("SHOAL_BUNDLE", "0") not in ("", "0")


def shoal_flags():
    """(cflags, libs) as argument lists."""
    tool = os.environ.get("SHMEM_CONFIG") or shutil.which("shmem-config")
    if tool:
        out = subprocess.run([tool, "--cflags", "--libs"], check=True, capture_output=True, text=True).stdout
        return shlex.split(out), []
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "shoal"], check=True, capture_output=True,
                                text=True).stdout
        libs = subprocess.run(["pkg-config", "--libs", "shoal"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit("setup.py: neither shmem-config nor pkg-config finds Shoal; "
                         "source an installed Shoal's bin/set_env.sh first")
    return shlex.split(cflags), shlex.split(libs)


def split_flags(flags):
    inc, libdirs, libs, other = [], [], [], []
    for f in flags:
        if f.startswith("-I"):
            inc.append(f[2:])
        elif f.startswith("-L"):
            libdirs.append(f[2:])
        elif f.startswith("-l"):
            libs.append(f[2:])
        elif f.startswith("-Wl,-rpath,"):
            continue  # set below: the prefix's lib, or the bundle's
        else:
            other.append(f)
    return inc, libdirs, libs, other


def shoal_prefix(libdirs):
    """The installed Shoal prefix (lib's parent)."""
    for d in libdirs:
        if glob.glob(os.path.join(d, "libshoal.so*")):
            return os.path.dirname(os.path.abspath(d))
    raise SystemExit("setup.py: no libshoal.so in %s" % libdirs)


cflags, libflags = shoal_flags()
inc, libdirs, libs, other = split_flags(cflags + libflags)
prefix = shoal_prefix(libdirs)
if BUNDLE:
    rpath_args = ["-Wl,-rpath,$ORIGIN/_bundle/lib"]
else:
    rpath_args = ["-Wl,-rpath," + d for d in libdirs]

core = Extension(
    "shoal._core",
    sources=sorted(glob.glob(os.path.join("csrc", "core", "*.c"))),
    include_dirs=inc + [numpy.get_include()],
    library_dirs=libdirs,
    libraries=libs or ["shoal"],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-missing-field-initializers"] + other,
    extra_link_args=rpath_args,
)


class build_py_bundle(build_py):
    """Copies the installed Shoal into shoal/_bundle when SHOAL_BUNDLE=1."""

    def run(self):
        super().run()
        if not BUNDLE:
            return
        dest = os.path.join(self.build_lib, "shoal", "_bundle")
        for sub, pattern in (("bin", "oshrun"), ("bin", "shmem-config"), ("lib", "libshoal.so*"),
                             ("libexec/shoal", "shoal-selftest"), ("include", "*")):
            os.makedirs(os.path.join(dest, sub), exist_ok=True)
            for src in glob.glob(os.path.join(prefix, sub, pattern)):
                target = os.path.join(dest, sub, os.path.basename(src))
                if os.path.isdir(src):
                    shutil.copytree(src, target, dirs_exist_ok=True)
                else:
                    shutil.copy2(src, target, follow_symlinks=True)


ext_modules = [core]
cmdclass = {"build_py": build_py_bundle}
entry_points = {}
if BUNDLE:
    entry_points["console_scripts"] = ["oshrun = _shoal_launch:oshrun", "shmem-config = _shoal_launch:shmem_config"]

# --- PyTorch hook (h-pytorch owns these lines): shoal._torch is built from
# csrc/torch/*.cpp only where torch.utils.cpp_extension imports. ---
torch_sources = sorted(glob.glob(os.path.join("csrc", "torch", "*.cpp")))
if torch_sources:
    try:
        from torch.utils.cpp_extension import BuildExtension, CppExtension
    except ImportError:
        BuildExtension = None
    if BuildExtension is not None:
        ext_modules.append(CppExtension(
            "shoal._torch", torch_sources, include_dirs=inc, library_dirs=libdirs, libraries=libs or ["shoal"],
            extra_compile_args=["-Wall", "-Wextra", "-Wno-unused-parameter"], extra_link_args=rpath_args))

        # Without ninja: its build file compiles every source, _core's C
        # files too, with the C++ compiler; the distutils path keeps gcc's
        # choice by file suffix.
        cmdclass["build_ext"] = BuildExtension.with_options(use_ninja=False)
# --- end of the PyTorch hook ---

setup(
    name="shoal",
    version="0.1.0",
    description="OpenSHMEM for Python on Shoal: numpy arrays on the symmetric heap",
    packages=[p for p in ("shoal", "shoal.torch") if os.path.isdir(os.path.join(HERE, p.replace(".", "/")))],
    py_modules=["_shoal_launch"] if BUNDLE else [],
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    entry_points=entry_points,
    python_requires=">=3.9",
    install_requires=[],
    zip_safe=False,
)
