"""Console scripts of the self-contained wheel: oshrun and shmem-config exec
the copies bundled in shoal/_bundle (an installed Shoal's layout)."""
import os
import sys

_BUNDLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bundle")


def _exec(name):
    path = os.path.join(_BUNDLE, "bin", name)
    if not os.path.exists(path):
        sys.stderr.write("%s: this shoal was installed without its bundled Shoal (%s is missing)\n" % (name, path))
        sys.exit(127)
    if not os.access(path, os.X_OK):
        os.chmod(path, 0o755)
    os.execv(path, [name] + sys.argv[1:])


def oshrun():
    _exec("oshrun")


def shmem_config():
    _exec("shmem-config")
