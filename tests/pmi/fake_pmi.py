#!/usr/bin/env python3
"""fake_pmi.py: a PMI-1 server that misbehaves on purpose.

    fake_pmi.py CASE PROGRAM [ARGS...]

Starts PROGRAM as rank 0 of 2 with PMI_FD on one end of a socket pair and
answers its requests as CASE says. The program must end by itself within
the time limit, with a non-zero exit status (not a signal: a malformed
reply is a protocol error, not a crash) and the expected message."""
import os
import socket
import subprocess
import sys

GOOD = {
    "init": b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n",
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
}


def main():
    case, prog = sys.argv[1], sys.argv[2:]
    spoil, bad_reply, expected = CASES[case]
    ours, theirs = socket.socketpair()
    env = dict(os.environ, PMI_FD=str(theirs.fileno()), PMI_RANK="0", PMI_SIZE="2")
    for var in ("SHOAL_BOOT_FD", "PMIX_RANK", "PMIX_NAMESPACE"):
        env.pop(var, None)
    child = subprocess.Popen(prog, env=env, pass_fds=[theirs.fileno()], stderr=subprocess.PIPE)
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
    try:
        _, err = child.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        child.kill()
        print("fake_pmi: FAIL: the program hung after a malformed reply")
        return 1
    err = err.decode(errors="replace")
    sys.stdout.write(err)
    if child.returncode <= 0:
        print("fake_pmi: FAIL: exit status %d (expected a clean non-zero exit)" % child.returncode)
        return 1
    if expected not in err:
        print("fake_pmi: FAIL: no '%s' in the program's messages" % expected)
        return 1
    print("fake_pmi: pass (%s: exit %d)" % (case, child.returncode))
    return 0


if __name__ == "__main__":
    sys.exit(main())
