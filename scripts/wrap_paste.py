#!/usr/bin/env python3
"""Re-wraps a pasted text the way it reaches bug reports when the terminal or the tracker was
narrower than the output: `--hard W` cuts every line at W columns as a terminal does (the
copied lines lose their trailing spaces), `--words W` breaks at the last space before W as an
issue tracker's or mail client's soft wrap does. Fence lines (```) and "[...]" cut marks stay.
Used for the tests/fixtures/reports/*wrapped* fixtures (SOURCES.tsv names the original):

    scripts/wrap_paste.py --hard 80 < original.txt > wrapped.txt
"""
import sys
import textwrap


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("--hard", "--words"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, width = sys.argv[1], int(sys.argv[2])
    out = []
    for line in sys.stdin.read().split("\n"):
        if line.startswith("```") or line == "[...]" or len(line.rstrip()) <= width:
            out.append(line.rstrip())
        elif mode == "--hard":
            out.extend(line[i:i + width].rstrip() for i in range(0, len(line.rstrip()), width))
        else:
            out.extend(textwrap.wrap(line.rstrip(), width, expand_tabs=False, replace_whitespace=False,
                                     break_long_words=True, break_on_hyphens=False))
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
