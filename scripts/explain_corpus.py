#!/usr/bin/env python3
"""Score `cuda-doctor explain` on the real-log corpus (tests/corpus, issue 17).

  scripts/explain_corpus.py [--binary build/cuda-doctor] [--show-dev] [--json]

Each tests/corpus/failures/*.log starts with '#:' header lines (thread URL, producer,
expected finding id, established cause); the rest is the excerpt from the thread. The
header is stripped and the excerpt given to `explain --no-probe --json`. Top-1 = the
first finding's id equals the expected id. tests/corpus/split.tsv assigns every thread
(URL) to dev or validation once; scores are printed per split. Misses are listed for
the development set only (--show-dev): signatures are never written against the
validation set. tests/corpus/healthy/*.log must give no error or warning finding.
"""
import argparse, hashlib, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")


def read_case(path):
    head, body = {}, []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not body and line.startswith("#: "):
                k, _, v = line[3:].partition(":")
                head[k.strip()] = v.strip()
            else:
                body.append(line)
    return head, "".join(body)


def split_rule(url):
    # The one-time split: a thread is validation when the first 32 bits of the SHA-1 of
    # its URL, mod 100, fall below 40 (about 40 %). Deterministic, so a thread never moves.
    return "val" if int(hashlib.sha1(url.encode()).hexdigest()[:8], 16) % 100 < 40 else "dev"


def load_split():
    split = {}
    path = os.path.join(CORPUS, "split.tsv")
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            url, s = line.rstrip("\n").split("\t")[:2]
            split[url] = s
    return split


def explain(binary, text):
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as t:
        t.write(text)
        name = t.name
    try:
        r = subprocess.run([binary, "explain", "--no-probe", "--json", name],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, NO_COLOR="1"))
        return json.loads(r.stdout)["findings"]
    finally:
        os.unlink(name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "cuda-doctor"))
    ap.add_argument("--show-dev", action="store_true", help="list development-set misses")
    ap.add_argument("--write-split", action="store_true",
                    help="add threads missing from split.tsv (by the split rule)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    split = load_split()
    cases = []
    fdir = os.path.join(CORPUS, "failures")
    for name in sorted(os.listdir(fdir)):
        head, body = read_case(os.path.join(fdir, name))
        cases.append((name, head, body))
    new = sorted({h["thread"] for _, h, _ in cases if h["thread"] not in split})
    if new and not a.write_split:
        sys.exit(f"{len(new)} thread(s) not in tests/corpus/split.tsv (run with --write-split)")
    if new:
        with open(os.path.join(CORPUS, "split.tsv"), "a") as f:
            for url in new:
                split[url] = split_rule(url)
                f.write(f"{url}\t{split[url]}\n")

    score = {"dev": [0, 0], "val": [0, 0]}
    misses = []
    producers = set()
    for name, head, body in cases:
        s = split[head["thread"]]
        findings = explain(a.binary, body)
        got = findings[0]["id"] if findings else "-"
        ok = got == head["expected"]
        score[s][0] += ok
        score[s][1] += 1
        producers.add(head["producer"].split(" (")[0].split(" ")[0].lower())
        if not ok and s == "dev":
            misses.append((name, head["expected"], got))

    alarms = []
    hdir = os.path.join(CORPUS, "healthy")
    healthy = sorted(os.listdir(hdir)) if os.path.isdir(hdir) else []
    for name in healthy:
        _, body = read_case(os.path.join(hdir, name))
        bad = [f["id"] for f in explain(a.binary, body) if f["severity"] in ("error", "warning")]
        if bad:
            alarms.append((name, bad))

    pct = lambda s: 100.0 * score[s][0] / max(1, score[s][1])
    if a.json:
        print(json.dumps({"dev": score["dev"], "val": score["val"], "healthy": len(healthy),
                          "false_alarms": [n for n, _ in alarms]}))
    else:
        print(f"dev        top-1 {score['dev'][0]}/{score['dev'][1]} = {pct('dev'):.1f} %")
        print(f"validation top-1 {score['val'][0]}/{score['val'][1]} = {pct('val'):.1f} %")
        print(f"healthy    false alarms {len(alarms)}/{len(healthy)}")
        print(f"threads {len(set(split))}, logs {len(cases)}, producers {len(producers)}")
        for n, bad in alarms:
            print(f"  false alarm: {n}: {' '.join(bad)}")
        if a.show_dev:
            for n, e, g in misses:
                print(f"  dev miss: {n}: expected {e}, got {g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
