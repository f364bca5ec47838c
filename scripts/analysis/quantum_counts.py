#!/usr/bin/env python3
"""Histogram of a quantum circuit's measured counts (the quantum solver's JSON result), against the exact probabilities.

usage: quantum_counts.py RESULT.json [--top N] [--out PNG]

Bars: the counts of each measured bit string (the N most frequent, default 32, in bit-string
order).  Markers: shots x the exact probability of that outcome from the state vector when the
result holds `probabilities` over as many qubits as the bit strings have bits.  Printed: shots,
outcomes, the total variation distance between the sampled and exact distributions and, with the
exact ones, the chi-square statistic (bins with expected count >= 5).  Default output:
STEM_counts.png beside the file.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="RESULT.json")
    ap.add_argument("--top", type=int, default=32, help="at most this many outcomes (the most frequent)")
    ap.add_argument("--out", "-o", help="PNG file")
    a = ap.parse_args()
    hsio.need(["numpy", "matplotlib"])
    import numpy as np
    plt = hsio.setup_matplotlib()
    if a.top < 1:  # --top 0 drew empty axes, a negative one dropped the most frequent outcomes
        hsio.die(f"--top {a.top}: give at least 1")
    try:
        with open(a.file) as f:
            r = json.load(f)
    except OSError as e:
        hsio.die(f"{a.file}: {e.strerror or e}")
    except ValueError:  # UnicodeDecodeError too: a NetCDF or HDF5 file given here
        hsio.die(f"{a.file}: not a JSON file (the quantum solver's result, output.path.json)")
    counts = r.get("counts") if isinstance(r, dict) else None
    if not isinstance(counts, dict) or not counts:
        hsio.die(f"{a.file} has no counts (a circuit run with quantum.shots > 0 writes them)")
    nb = {len(k) for k in counts}
    if len(nb) != 1 or any(set(k) - set("01") for k in counts) or \
            any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in counts.values()):
        hsio.die(f"{a.file}: counts must map bit strings of one length to whole numbers >= 0")
    shots = int(r.get("shots", sum(counts.values())))
    total = sum(counts.values())
    nbits = len(next(iter(counts)))
    probs = r.get("probabilities")
    exact = None
    if isinstance(probs, list) and len(probs) == 2 ** nbits and r.get("qubits") == nbits:
        exact = np.asarray(probs, dtype=float)
    keep = sorted(counts, key=lambda k: -counts[k])[: a.top]
    keep.sort()
    x = np.arange(len(keep))
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(keep) + 3), 4.5))
    ax.bar(x, [counts[k] for k in keep], color="tab:blue", label=f"measured ({total} shots)")
    if exact is not None:
        # the bit string's leftmost character is the highest qubit (OpenQASM's convention)
        ax.plot(x, [shots * exact[int(k, 2)] for k in keep], "o", color="tab:red", label="shots x exact probability")
    ax.set_xticks(x)
    ax.set_xticklabels(keep, rotation=90 if nbits > 4 or len(keep) > 8 else 0, family="monospace")
    ax.set_xlabel("measured bit string")
    ax.set_ylabel("count")
    ax.set_title(f"{os.path.basename(r.get('circuit', a.file))}: {len(counts)} outcomes of {2 ** nbits}")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    print(f"shots {total}, {len(counts)} distinct outcomes of {2 ** nbits}")
    if exact is not None:
        sampled = np.zeros(2 ** nbits)
        for k, c in counts.items():
            sampled[int(k, 2)] = c / total
        tvd = 0.5 * float(np.abs(sampled - exact).sum())
        e = total * exact
        m = e >= 5
        chi2 = float((((sampled * total) - e) ** 2 / np.where(m, e, 1))[m].sum())
        print(f"total variation distance to the exact distribution {tvd:.4g}; chi-square {chi2:.4g} over {int(m.sum())} bins")
    out = a.out or os.path.join(os.path.dirname(a.file), f"{hsio.stem(a.file)}_counts.png")
    hsio.save(fig, out)
    return 0


if __name__ == "__main__":
    sys.exit(hsio.run(main))
