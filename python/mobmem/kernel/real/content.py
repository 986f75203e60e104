"""Page content of a real replay: the child program (stdlib only) and the template pages it writes, with the compressibility a trace asks for."""

from __future__ import annotations

import math

PAGE = 4096


BANK_PAGES = 256


DEFAULT_RATIO = 3.0  # estimate: lz4 on Android heap pages is ~2.5-3:1


FILE_RATIO = 2.0


LZ4_OVERHEAD = 32  # bytes lz4 adds to a (random prefix + zero run) page, measured on zram


CONTENT_SEED = 0x6D6F626D  # "mobm"


VMA_SALT = 37


# ----------------------------------------------------------------------------------------
# Page content
# ----------------------------------------------------------------------------------------
# The child program. Stdlib only, so it starts in ~20 ms and its interpreter is small; it is
# also exec'd here (``_child_namespace``) so that the coordinator builds identical content.
_CHILD_SRC = r"""
import os, sys, struct, mmap, random

PAGE = 4096

def make_bank(ratio, seed, n, overhead):
    rnd = random.Random(seed)
    k = max(1.0, PAGE / ratio - overhead)
    out = bytearray(n * PAGE)
    for i in range(n):
        ki = min(PAGE, max(1, round(k * rnd.uniform(0.8, 1.2))))
        out[i * PAGE:i * PAGE + ki] = rnd.randbytes(ki)
    return out

def child_main():
    rd = sys.stdin.buffer
    wr = sys.stdout.buffer
    def send(kind, payload=b""):
        wr.write(struct.pack("<cI", kind, len(payload)) + payload)
        wr.flush()
    def read_exact(mv):
        got = 0
        while got < len(mv):
            r = rd.readinto(mv[got:])
            if not r:
                os._exit(0)  # coordinator gone
            got += r
    hdr = bytearray(5)
    hmv = memoryview(hdr)
    read_exact(hmv)
    kind, n = struct.unpack("<cI", hdr)
    import ast
    cfg = ast.literal_eval(bytes(rd.read(n)).decode())  # a dict literal written by the coordinator
    nbank = cfg["bank_pages"]
    bank = make_bank(cfg["ratio"], cfg["seed"], nbank, cfg["overhead"])
    fbank = make_bank(cfg["file_ratio"], cfg["file_seed"], nbank, cfg["overhead"])
    bankmv = memoryview(bank)
    fbankmv = memoryview(fbank)
    buf = bytearray(cfg["max_batch"] * 24)
    bmv = memoryview(buf)
    unpack = struct.Struct("<BBxxiqq").iter_unpack
    madv = cfg["madv"]
    vmas = cfg["vmas"]  # index -> (kind, pages, path, exec)
    maps = {}
    sink = 0
    send(b"R", str(os.getpid()).encode())
    while True:
        read_exact(hmv)
        kind, n = struct.unpack("<cI", hdr)
        if kind == b"Q":
            os._exit(0)
        read_exact(bmv[:n])
        i = -1
        try:
            for i, (op, flag, vma, a, b) in enumerate(unpack(bmv[:n])):
                if op == 2:  # touch
                    m = maps[vma]
                    if flag:
                        mv, src, salt = m[0], m[2], m[3]
                        p = a
                        end = a + b
                        while p < end:
                            q = (p + salt) % nbank
                            c = min(end - p, nbank - q)
                            mv[p * PAGE:(p + c) * PAGE] = src[q * PAGE:(q + c) * PAGE]
                            p += c
                    else:
                        w = m[1]
                        if b == 1:
                            sink ^= w[a * 512]
                        else:
                            for x in w[a * 512:(a + b) * 512:512]:
                                sink ^= x
                elif op == 1:  # map
                    kind_, pages, path, ex = vmas[vma]
                    size = pages * PAGE
                    if kind_ == "anon":
                        mm = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                                       prot=mmap.PROT_READ | mmap.PROT_WRITE)
                        src = bankmv
                    else:
                        fd = os.open(path, os.O_RDWR)
                        prot = mmap.PROT_READ | mmap.PROT_WRITE | (mmap.PROT_EXEC if ex else 0)
                        mm = mmap.mmap(fd, size, flags=mmap.MAP_SHARED, prot=prot)
                        os.close(fd)
                        if cfg["file_advice"]:
                            mm.madvise(cfg["file_advice"])  # MADV_RANDOM / MADV_SEQUENTIAL
                        src = fbankmv
                    mv = memoryview(mm)
                    maps[vma] = (mv, mv.cast("Q"), src, (vma * 37) % nbank, mm)
                elif op == 3:  # madvise
                    maps[vma][4].madvise(madv[flag], a * PAGE, b * PAGE)
        except BaseException as e:  # report which op failed, then wait for the coordinator
            msg = "%d\t%s: %s" % (i, type(e).__name__, e)
            send(b"E", msg.encode())
            continue
        send(b"K")

if __name__ == "__main__":
    child_main()
"""


def _child_namespace() -> dict:
    ns: dict = {"__name__": "mobmem_real_child"}
    exec(compile(_CHILD_SRC, "<mobmem-real-child>", "exec"), ns)
    return ns


def make_bank(ratio: float, seed: int = CONTENT_SEED, n: int = BANK_PAGES) -> bytearray:
    """The template pages written for a trace of compression ``ratio`` (see module doc)."""
    return _child_namespace()["make_bank"](float(ratio), seed, n, LZ4_OVERHEAD)


def content_sigma(ratio: float) -> float:
    """Log-normal sigma with the same coefficient of variation as the written pages' compressed
    sizes (uniform on [0.8k, 1.2k] + overhead, k = 4096/ratio − overhead)."""
    k = max(1.0, PAGE / ratio - LZ4_OVERHEAD)
    lo, hi = min(PAGE, 0.8 * k) + LZ4_OVERHEAD, min(PAGE, 1.2 * k) + LZ4_OVERHEAD
    mean, sd = (lo + hi) / 2, (hi - lo) / math.sqrt(12)
    return math.sqrt(math.log(1 + (sd / mean) ** 2))


def content_description(ratio: float) -> dict:
    k = max(1.0, PAGE / ratio - LZ4_OVERHEAD)
    return {
        "template_pages": BANK_PAGES,
        "page_of_template": f"(page + {VMA_SALT}*vma_index) mod {BANK_PAGES}",
        "template": "k random bytes (seeded PRNG) then zeros; k = round(U(0.8,1.2) * max(1, 4096/ratio - 32)) in [1, 4096]",
        "ratio_target": ratio,
        "random_prefix_mean_bytes": round(min(PAGE, k), 1),
        "expected_compressed_bytes": f"~k+{LZ4_OVERHEAD}, uniform on about [{round(0.8 * k + LZ4_OVERHEAD)}, {round(min(PAGE, 1.2 * k) + LZ4_OVERHEAD)}]",
        "file_ratio": FILE_RATIO,
        "lognormal_sigma_equivalent": round(content_sigma(ratio), 4),
        "read_touch": "reads one 8-byte word of each page",
        "write_touch": "writes the whole 4096-byte page with its template",
    }
