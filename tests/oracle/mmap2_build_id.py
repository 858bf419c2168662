#!/usr/bin/env python3
"""Issue #14 item 3, an experiment: does perf report resolve a file from the build-id
cache when its build-id travels in the MMAP2 record (PERF_RECORD_MISC_MMAP_BUILD_ID)
instead of the build-id table?  Rewrites a little-endian file-mode perf.data written by
jitanon-inject: every MMAP2 naming a jitted file gets the file's build-id from the table
(mode 'mmap'), and the table's entries for those files are renamed so that they no
longer match ('mmap' and 'none', the control).

    mmap2_build_id.py IN OUT mmap|none
"""
import struct
import sys

MISC_MMAP_BUILD_ID = 1 << 14
RECORD_MMAP2 = 10
FEAT_BUILD_ID = 2


def main():
    src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    d = bytearray(open(src, 'rb').read())
    data_off, data_size = struct.unpack_from('<QQ', d, 40)
    bitmap = struct.unpack_from('<4Q', d, 72)
    bits = [b for b in range(256) if bitmap[b // 64] >> (b % 64) & 1]
    sec_off, sec_size = struct.unpack_from('<QQ', d, data_off + data_size + 16 * bits.index(FEAT_BUILD_ID))
    ids = {}
    p = sec_off
    while p < sec_off + sec_size:  # header, pid, build-id[20], size, pad[3], name
        size = struct.unpack_from('<H', d, p + 6)[0]
        name = bytes(d[p + 36:p + size]).split(b'\0')[0]
        if b'/jitted-' in name:
            ids[name] = bytes(d[p + 12:p + 32])
            d[p + 36] = ord('X')
        p += size
    p, moved = data_off, 0
    while p < data_off + data_size:
        rtype, misc, size = struct.unpack_from('<IHH', d, p)
        if rtype == RECORD_MMAP2 and mode == 'mmap':
            name = bytes(d[p + 72:p + size]).split(b'\0')[0]
            if name in ids:  # maj..ino_generation (24 bytes at 40) become size, pad, build-id
                struct.pack_into('<H', d, p + 4, misc | MISC_MMAP_BUILD_ID)
                d[p + 40:p + 44] = bytes([20, 0, 0, 0])
                d[p + 44:p + 64] = ids[name]
                moved += 1
        p += size
    open(dst, 'wb').write(d)
    print(moved, len(ids))


if __name__ == '__main__':
    main()
