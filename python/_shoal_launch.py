"""Console scripts of the self-contained wheel (SHOAL_BUNDLE=1): oshrun and
shmem-config exec the copies bundled in shoal/_bundle (an installed
Shoal's layout). A module of its own, so starting oshrun does not import
shoal (and load libshoal) in the launcher process."""
import importlib.util
import os
import sys


def _exec(name):
    spec = importlib.util.find_spec("shoal")
    where = list(spec.submodule_search_locations or []) if spec else []
    path = os.path.join(where[0], "_bundle", "bin", name) if where else name
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
