#!/usr/bin/env python3
"""fake_pmi.py: a PMI-1 server that misbehaves on purpose, and launcher
environments that cannot work.

    fake_pmi.py CASE PROGRAM [ARGS...]

Starts PROGRAM as rank 0 of 2 with PMI_FD on one end of a socket pair (or,
for the port_* cases, with PMI_PORT and PMI_ID naming a listening socket on
127.0.0.1, as mpiexec -pmi-port does) and answers its requests as CASE
says. The env_* cases start it with no server at all, in an environment
that names a launcher but gives it nothing usable. The program must end by
itself within the time limit, with a non-zero exit status (not a signal: a
malformed reply is a protocol error, not a crash), the expected message in
exactly one line, and nothing on stdout (it must not have run as a job of
one PE)."""
import os
import socket
import subprocess
import sys

GOOD = {
    "init": b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
    "initack": b"cmd=initack\ncmd=set size=2\ncmd=set rank=0\ncmd=set debug=0\n",
    "get_maxes": b"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n",
    "get_my_kvsname": b"cmd=my_kvsname kvsname=fake_kvs\n",
    "put": b"cmd=put_result rc=0 msg=success\n",
    "barrier_in": b"cmd=barrier_out\n",
    "get": b"cmd=get_result rc=0 msg=success value=00\n",
    "finalize": b"cmd=finalize_ack\n",
}

# CASE: (the request to spoil, the reply sent instead or None to hang up,
#        text expected on stderr)
CASES = {
    "garbage": ("init", b"\x01\x02 no fields here\n", "unexpected reply"),
    "control_chars": ("init", b"cmd=\x1b[2Jx rc=0\n", "cmd=?[2Jx"),
    "wrong_cmd": ("get_maxes", b"cmd=barrier_out\n", "unexpected reply"),
    "bad_maxes": ("get_maxes", b"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=-5\n", "get_maxes"),
    "long_kvsname": ("get_my_kvsname", b"cmd=my_kvsname kvsname=" + b"k" * 600 + b"\n", "key-value space name"),
    "endless_line": ("get_my_kvsname", b"cmd=my_kvsname kvsname=" + b"x" * 20000, "longer than"),
    "rc_error": ("put", b"cmd=put_result rc=-1 msg=out_of_space\n", "out_of_space"),
    "short_value": ("get", b"cmd=get_result rc=0 msg=success value=ab\n", "bytes in hex"),
    "not_hex": ("get", b"cmd=get_result rc=0 msg=success value=" + b"zz" * 64 + b"\n", "bytes in hex"),
    "too_many_fields": ("init", b"cmd=response_to_init" + b" a=b" * 40 + b"\n", "malformed reply"),
    "hangup": ("barrier_in", None, "closed the connection"),
    # PMI_PORT: the same protocol over TCP, after the initack handshake.
    "port_initack_garbage": ("initack", b"cmd=initack\ncmd=set size=zero\ncmd=set rank=0\ncmd=set debug=0\n",
                             "answer to initack (PMI_ID=0) lacks a valid size and rank"),
    "port_initack_rank": ("initack", b"cmd=initack\ncmd=set size=2\ncmd=set rank=2\ncmd=set debug=0\n",
                          "lacks a valid size and rank"),
    "port_wrong_cmd": ("initack", b"cmd=response_to_init rc=0\n", "unexpected reply"),
    "port_hangup": ("initack", None, "closed the connection"),
    "port_rc_error": ("put", b"cmd=put_result rc=-1 msg=out_of_space\n", "out_of_space"),
}

# No server: (environment, text expected on stderr). Each names a launcher
# of several processes that left nothing Shoal can talk to.
ENV_CASES = {
    "env_port_refused": ({"PMI_PORT": "127.0.0.1:%(closed)d", "PMI_ID": "0"}, "cannot reach the PMI server"),
    "env_port_malformed": ({"PMI_PORT": "localhost", "PMI_ID": "0"}, "PMI_PORT='localhost' is not HOST:PORT"),
    "env_port_no_id": ({"PMI_PORT": "127.0.0.1:%(closed)d"}, "PMI_PORT is set but PMI_SIZE is not"),
    "env_port_bad_id": ({"PMI_PORT": "127.0.0.1:%(closed)d", "PMI_ID": "-1"}, "PMI_ID='-1' is not a number"),
    "env_fd_closed": ({"PMI_FD": "250", "PMI_RANK": "0", "PMI_SIZE": "2"}, "PMI_FD=250 is not an open descriptor"),
    "env_pmi_size": ({"PMI_SIZE": "2", "PMI_RANK": "0"}, "as one of 2 processes (PMI_SIZE=2)"),
    "env_hydra": ({"MPI_LOCALNRANKS": "4", "MPI_LOCALRANKID": "0"}, "MPICH's mpiexec as one of 4 processes"),
    "env_ompi": ({"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"}, "Open MPI's mpirun as one of 2"),
    "env_slurm": ({"SLURM_STEP_NUM_TASKS": "3", "SLURM_PROCID": "1"}, "srun --mpi=pmix"),
    "env_pmix_broken": ({"PMIX_NAMESPACE": "no-such-job", "PMIX_RANK": "0"}, "PMIx"),
}

# Variables of every launcher, cleared so each case sees only its own.
LAUNCHER_VARS = ("SHOAL_BOOT_FD", "SHOAL_RANK", "SHOAL_SIZE", "PMIX_RANK", "PMIX_NAMESPACE", "PMI_FD", "PMI_PORT",
                 "PMI_ID", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS")


def clean_env(extra):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS and not k.startswith("PMIX_")}
    env.update(extra)
    return env


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nobody listens there now
    return port


def judge(case, child, expected, timeout=20):
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        print("fake_pmi: FAIL: the program hung")
        return 1
    err = err.decode(errors="replace")
    sys.stdout.write(err)
    if child.returncode <= 0:
        print("fake_pmi: FAIL: exit status %d (expected a clean non-zero exit)" % child.returncode)
        return 1
    hits = [line for line in err.splitlines() if expected in line]
    if len(hits) != 1:
        print("fake_pmi: FAIL: %d lines hold '%s', want exactly 1" % (len(hits), expected))
        return 1
    ours = [line for line in err.splitlines() if line.startswith("shoal:")]
    if len(ours) != 1:
        print("fake_pmi: FAIL: %d lines from Shoal, want exactly 1" % len(ours))
        return 1
    if out:
        print("fake_pmi: FAIL: the program wrote to stdout (ran as a job?): %r" % out[:200])
        return 1
    print("fake_pmi: pass (%s: exit %d)" % (case, child.returncode))
    return 0


def main():
    case, prog = sys.argv[1], sys.argv[2:]
    if case in ENV_CASES:
        extra, expected = ENV_CASES[case]
        extra = {k: v % {"closed": closed_port()} for k, v in extra.items()}
        child = subprocess.Popen(prog, env=clean_env(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return judge(case, child, expected)
    spoil, bad_reply, expected = CASES[case]
    if case.startswith("port_"):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        env = clean_env({"PMI_PORT": "127.0.0.1:%d" % listener.getsockname()[1], "PMI_ID": "0"})
        child = subprocess.Popen(prog, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        listener.settimeout(20)
        try:
            ours, _ = listener.accept()
        except OSError:
            child.kill()
            print("fake_pmi: FAIL: the program never connected to PMI_PORT")
            return 1
        listener.close()
    else:
        ours, theirs = socket.socketpair()
        env = clean_env({"PMI_FD": str(theirs.fileno()), "PMI_RANK": "0", "PMI_SIZE": "2"})
        child = subprocess.Popen(prog, env=env, pass_fds=[theirs.fileno()], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        theirs.close()
    ours.settimeout(20)
    buf = b""
    try:
        while True:
            data = ours.recv(65536)
            if not data:
                break
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                fields = dict(f.split(b"=", 1) for f in line.split() if b"=" in f)
                cmd = fields.get(b"cmd", b"").decode()
                if cmd == spoil:
                    if bad_reply is None:
                        ours.close()
                        raise EOFError
                    ours.sendall(bad_reply)
                    spoil = None  # once
                elif cmd == "abort":
                    ours.close()
                    raise EOFError
                else:
                    ours.sendall(GOOD.get(cmd, b"cmd=unknown\n"))
    except (EOFError, OSError):
        pass
    return judge(case, child, expected)


if __name__ == "__main__":
    sys.exit(main())
