#!/bin/sh
# run.sh STEP BUILD_DIR [ARG]: the Python checks of scripts/test.sh, one step
# at a time so each is counted. Work goes to BUILD_DIR/python.
#   install      installs BUILD_DIR into a prefix, makes a venv
#                (--system-site-packages: Debian's numpy, pytest, mpi4py)
#                and pip-installs ./python into it with set_env.sh sourced
#   pytest N [ofi|tls]  the pytest suites under oshrun -n N (over a forced
#                transport on loopback when named)
#   exit         implicit finalize at exit (PE 1), calls after finalize raise
#                StateError (PE 0); a PE that exits 3 ends the job
#   example      python/examples/halo_numpy.py at 4 PEs
#   torch_examples  python/examples/ddp_train.py (shoal against gloo) and
#                oneshot_allreduce.py at 4 PEs
#   mpi4py N [--shoal-first]  python/tests/mpi_mix.py under Open MPI's mpirun -n N
#   wheel        SHOAL_BUNDLE=1 pip wheel, installed in a fresh venv with the
#                prefix moved away and PATH/LD_LIBRARY_PATH clear of Shoal:
#                shmem-config --version, oshrun -n 2 python3 -c 'import shoal'
set -e
step=${1:?usage: run.sh STEP BUILD_DIR [ARG]}
build=$(cd "${2:?usage: run.sh STEP BUILD_DIR [ARG]}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$build/python
prefix=$work/prefix
venv=$work/venv
py=$venv/bin/python
limit=240

case $step in
install)
    rm -rf "$work"
    mkdir -p "$work"
    cmake --install "$build" --prefix "$prefix" >/dev/null
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    # Build in a copy: pip must not leave build/ or egg-info in the tree.
    cp -r "$src/python" "$work/src"
    rm -rf "$work/src/build" "$work/src"/*.egg-info
    (. "$prefix/bin/set_env.sh" && cd "$work" && "$py" -m pip install -q --no-build-isolation ./src)
    "$py" -c 'import shoal, shoal._core; print("shoal installed:", shoal._core.__file__)'
    # Debian's torch is a test dependency: the backend must have been built,
    # or its suites would only skip.
    "$py" -c 'import shoal.torch, shoal._torch; print("shoal.torch installed:", shoal._torch.__file__)'
    ;;
pytest)
    . "$prefix/bin/set_env.sh"
    cd "$src"
    if [ -n "${4:-}" ]; then export SHMEM_TRANSPORT=$4 FI_TCP_IFACE=lo; fi
    oshrun -n "${3:?pytest N}" --timeout $limit "$py" -m pytest -q python/tests
    ;;
exit)
    . "$prefix/bin/set_env.sh"
    # No finalize call: atexit does it, the job ends 0.
    out=$(oshrun -n 2 --timeout 60 "$py" -c '
import numpy as np, shoal
shoal.init()
a = shoal.zeros(2, np.int64)
shoal.put(a, np.array([7, shoal.my_pe()]), (shoal.my_pe() + 1) % 2)
shoal.barrier_all()
ok = a[1] == (shoal.my_pe() + 1) % 2 and a[0] == 7
if shoal.my_pe() == 0:
    # After an explicit finalize every call raises instead of ending the job.
    shoal.finalize()
    for call in (lambda: shoal.put(a, a, 0), lambda: shoal.my_pe(), shoal.init, shoal.barrier_all):
        try:
            call()
            ok = False
        except shoal.StateError:
            pass
print("exit ok" if ok else "exit WRONG")')
    [ "$(echo "$out" | grep -c '^exit ok$')" = 2 ] || { echo "$out"; echo "run.sh: implicit finalize run failed"; exit 1; }
    # A Python exception on PE 1 ends the job (non-zero), without a hang.
    if oshrun -n 2 --timeout 60 "$py" -c '
import shoal
shoal.init()
if shoal.my_pe() == 1: raise SystemExit(3)
shoal.barrier_all()' >/dev/null 2>&1; then
        echo "run.sh: a PE that exits 3 did not fail the job"; exit 1
    fi
    echo "exit: implicit finalize ok; a failing PE ends the job"
    ;;
example)
    . "$prefix/bin/set_env.sh"
    oshrun -n 4 --timeout 120 "$py" "$src/python/examples/halo_numpy.py" | grep "field matches numpy exactly"
    ;;
torch_examples)
    . "$prefix/bin/set_env.sh"
    # DDP over "shoal" and "gloo" side by side: losses and parameters agree.
    oshrun -n 4 --timeout 240 "$py" "$src/python/examples/ddp_train.py" | grep "ddp_train: OK"
    oshrun -n 4 --timeout 120 "$py" "$src/python/examples/oneshot_allreduce.py" | grep "matches all_reduce"
    ;;
mpi4py)
    . "$prefix/bin/set_env.sh"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpirun=$(command -v mpirun.openmpi || command -v mpirun)
    timeout 120 "$mpirun" --oversubscribe --mca btl self,vader --mca oob_tcp_if_include lo \
        --mca btl_vader_single_copy_mechanism none -n "${3:?mpi4py N}" "$py" "$src/python/tests/mpi_mix.py" ${4:-} |
        grep "mpi4py + shoal ok on $3 PEs"
    ;;
wheel)
    rm -rf "$work/wheel" "$work/wheelvenv" "$work/src/build"
    (. "$prefix/bin/set_env.sh" && cd "$work" && SHOAL_BUNDLE=1 "$py" -m pip wheel -q --no-build-isolation --no-deps \
        -w "$work/wheel" ./src)
    whl=$(ls "$work"/wheel/shoal-*.whl)
    /usr/bin/python3 -m venv --system-site-packages "$work/wheelvenv"
    # Where Shoal was is gone, and nothing in the environment points at it.
    mv "$prefix" "$prefix.away"
    trap 'mv "$prefix.away" "$prefix"' EXIT
    clean="env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH -u CMAKE_PREFIX_PATH PATH=$work/wheelvenv/bin:/usr/bin:/bin"
    $clean "$work/wheelvenv/bin/python" -m pip install -q --no-deps "$whl"
    ! $clean sh -c 'command -v oshrun' | grep -qv "$work/wheelvenv/bin" || { echo "run.sh: oshrun not from the wheel"; exit 1; }
    $clean shmem-config --version | grep -q "^Shoal "
    # Its self-test runs the bundled shoal-selftest under the bundled oshrun.
    $clean shmem-config --check 2>&1 | grep -q "all 5 tests passed" || { echo "run.sh: shmem-config --check failed"; exit 1; }
    out=$(cd /tmp && $clean oshrun -n 2 --timeout 60 python3 -c '
import numpy as np, shoal
shoal.init()
a = shoal.zeros(1, np.int64)
shoal.atomic_add(a, shoal.my_pe() + 1, 0)
shoal.barrier_all()
if shoal.my_pe() == 0: print("wheel ok", int(a[0]), shoal._core.__file__)')
    echo "$out"
    echo "$out" | grep -q "^wheel ok 3 $work/wheelvenv/" || { echo "run.sh: the wheel's shoal did not run"; exit 1; }
    echo "wheel: $(basename "$whl") ($(du -k "$whl" | cut -f1) KiB): shmem-config and oshrun from the wheel, no Shoal installed"
    ;;
*)
    echo "run.sh: unknown step $step" >&2
    exit 2
    ;;
esac
