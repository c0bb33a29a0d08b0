"""Bytes to text exactly as Java's ``new String(bytes, UTF_8)`` does, for dump-log-identical output.

Python and Java both replace malformed UTF-8 with U+FFFD, but not always the same number of times: Java
replaces a surrogate-range or truncated 3-byte sequence as one unit where Python replaces byte by byte.
kafka-dump-log prints keys and values through Java's decoder, so ``kafkalog dump`` follows its rules.
"""

from __future__ import annotations

REPL = "\ufffd"


def _cont(b: int) -> bool:
    return (b & 0xC0) == 0x80


def _bad3(b1: int, b2: int) -> bool:
    return (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2)


def _bad4_2(b1: int, b2: int) -> bool:
    return (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF) or (b1 == 0xF4 and (b2 & 0xF0) != 0x80) or not _cont(b2)


def java_utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")  # well-formed input decodes the same in both
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    n, sp = len(data), 0
    while sp < n:
        b1 = data[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp < n and _cont(data[sp]):
                out.append(chr(((b1 & 0x1F) << 6) | (data[sp] & 0x3F)))
                sp += 1
            else:
                out.append(REPL)
                if sp >= n:
                    break
        elif 0xE0 <= b1 <= 0xEF:
            if sp + 1 < n:
                b2, b3 = data[sp], data[sp + 1]
                if _bad3(b1, b2) or not _cont(b3):
                    out.append(REPL)
                    sp += 0 if _bad3(b1, b2) else 1
                else:
                    sp += 2
                    c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                    out.append(REPL if 0xD800 <= c <= 0xDFFF else chr(c))
                continue
            if sp < n and _bad3(b1, data[sp]):
                out.append(REPL)
                continue
            out.append(REPL)
            break
        elif 0xF0 <= b1 <= 0xF7:
            if sp + 2 < n:
                b2, b3, b4 = data[sp], data[sp + 1], data[sp + 2]
                uc = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                if not (_cont(b2) and _cont(b3) and _cont(b4)) or not 0x10000 <= uc <= 0x10FFFF:
                    out.append(REPL)
                    sp += 0 if (b1 > 0xF4 or _bad4_2(b1, b2)) else (1 if not _cont(b3) else 2)
                else:
                    out.append(chr(uc))
                    sp += 3
                continue
            if b1 > 0xF4 or (sp < n and _bad4_2(b1, data[sp])):
                out.append(REPL)
                continue
            sp += 1
            out.append(REPL)
            if sp < n and not _cont(data[sp]):
                continue
            break
        else:
            out.append(REPL)
    return "".join(out)
