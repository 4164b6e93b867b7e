#!/usr/bin/env python3
"""got_slots.py PID PATH...: the GOT of each module PATH as process PID has
it in memory, for the attach tests (attach-libc.sh): one line per 8-byte
slot of its .got and .got.plt sections, "PATH SECTION+OFFSET VALUE WHERE":
the value in hex, and the base name of the file mapped where it points
("-" if none: not an address, or anonymous memory).

The sections' addresses come from the ELF file's section headers, the load
bias from /proc/PID/maps (the file's mapping at offset 0, less the first
PT_LOAD's page).  Reads /proc/PID/mem: run it as a user that may trace PID.
"""
import struct
import sys


def elf_layout(path):
    """(first PT_LOAD vaddr, {section name: (addr, size)}) of a 64-bit ELF."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit(f"got_slots.py: {path}: not a 64-bit ELF file")
    (phoff, shoff) = struct.unpack_from("<QQ", data, 0x20)
    (phentsize, phnum, shentsize, shnum, shstrndx) = struct.unpack_from("<HHHHH", data, 0x36)
    first_load = None
    for i in range(phnum):
        p_type, _flags, _off, vaddr = struct.unpack_from("<IIQQ", data, phoff + i * phentsize)
        if p_type == 1 and (first_load is None or vaddr < first_load):
            first_load = vaddr
    shdrs = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = shdrs[shstrndx][4]
    sections = {}
    for name_off, _type, _flags, addr, _off, size in shdrs:
        end = data.index(b"\0", strtab_off + name_off)
        sections[data[strtab_off + name_off:end].decode()] = (addr, size)
    return first_load or 0, sections


def load_bias(pid, path, first_load):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == path and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16) - (first_load & ~0xFFF)
    raise SystemExit(f"got_slots.py: {path} is not mapped in process {pid}")


def mappings(pid):
    """[(lo, hi, base name of the file)] of the process's file mappings."""
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5].startswith("/"):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                out.append((lo, hi, fields[5].rsplit("/", 1)[-1]))
    return out


def where(maps, value):
    for lo, hi, name in maps:
        if lo <= value < hi:
            return name
    return "-"


def main():
    if len(sys.argv) < 3:
        raise SystemExit("usage: got_slots.py PID PATH...")
    pid = sys.argv[1]
    maps = mappings(pid)
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for path in sys.argv[2:]:
            first_load, sections = elf_layout(path)
            bias = load_bias(pid, path, first_load)
            for name in (".got", ".got.plt"):
                if name not in sections:
                    continue
                addr, size = sections[name]
                mem.seek(bias + addr)
                raw = mem.read(size)
                for off in range(0, size - size % 8, 8):
                    (value,) = struct.unpack_from("<Q", raw, off)
                    print(f"{path} {name}+{off:#x} {value:#x} {where(maps, value)}")


main()
