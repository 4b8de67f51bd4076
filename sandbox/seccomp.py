"""A seccomp filter for submissions: a deny list of system calls no grading needs.

Denied calls fail with EPERM (ENOSYS for clone3, so that libc falls back to clone, whose
namespace flags the filter can inspect). A foreign syscall ABI (i386, x32) is refused.
Only x86_64 has a table; elsewhere `install()` returns False and the caller says so.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000

LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
# clone flags that create namespaces (CLONE_NEWNS .. CLONE_NEWNET, CLONE_NEWCGROUP, CLONE_NEWTIME).
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80

X86_64_DENIED = {
    "ptrace": 101, "syslog": 103, "uselib": 134, "vhangup": 153, "pivot_root": 155, "_sysctl": 156,
    "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
    "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171,
    "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179,
    "lookup_dcookie": 212, "clock_settime": 227, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
    "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313, "kexec_file_load": 320,
    "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "pidfd_getfd": 438, "mount_setattr": 442,
}
X86_64_CLONE = 56
X86_64_CLONE3 = 435


def _insn(code: int, jt: int = 0, jf: int = 0, k: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def build_x86_64() -> bytes:
    """The BPF program, as the bytes of a `struct sock_filter[]`."""
    eperm = RET_ERRNO | errno.EPERM
    prog = [
        _insn(LD_W_ABS, k=4),                       # arch
        _insn(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _insn(RET_K, k=RET_KILL_PROCESS),
        _insn(LD_W_ABS, k=0),                       # syscall number
        _insn(JGE_K, 0, 1, X32_SYSCALL_BIT),
        _insn(RET_K, k=eperm),
        _insn(JEQ_K, 0, 1, X86_64_CLONE3),
        _insn(RET_K, k=RET_ERRNO | errno.ENOSYS),
        _insn(JEQ_K, 0, 3, X86_64_CLONE),
        _insn(LD_W_ABS, k=16),                      # clone's flags (low word of args[0])
        _insn(JSET_K, 0, len(X86_64_DENIED) * 2 + 1, NAMESPACE_FLAGS),
        _insn(RET_K, k=eperm),
    ]
    for nr in sorted(X86_64_DENIED.values()):
        prog += [_insn(JEQ_K, 0, 1, nr), _insn(RET_K, k=eperm)]
    prog.append(_insn(RET_K, k=RET_ALLOW))
    return b"".join(prog)


def supported() -> bool:
    return platform.machine() in ("x86_64", "AMD64")


def install() -> bool:
    """Set no_new_privs and install the filter on the calling thread; False where unsupported."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if not supported():
        return False
    code = build_x86_64()
    buf = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return True
