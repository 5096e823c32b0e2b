"""Markdown table of docs/zhang2011_readings/run*.jsonl (docs/zhang2011_sampler.md, 'Digit1, g241d, COIL2')."""
import json, glob
rows, seen = [], set()
for f in sorted(glob.glob("docs/zhang2011_readings/run*.jsonl")):
    for line in open(f):
        r = json.loads(line)
        label = r["reading"] + ("" if r["prep"] == "std" else ", raw inputs")
        if r.get("wf"):
            label += f", width x{r['wf']:g}"
        if r.get("k_max", 200) != 200:
            label += f", k_max {r['k_max']}"
        key = (label, r["ds"], r["fold"])
        if key in seen:
            continue
        seen.add(key)
        rows.append((label, r))
order = {"beta_binomial": 0, "flat": 1, "bb A=30": 2, "bb A=100": 3, "bb A=1000": 4}
names = {"digit1": "Digit1", "g241d": "g241d", "coil2": "COIL2"}
rows.sort(key=lambda x: (order.get(x[0], 9), x[0], ["digit1", "g241d", "coil2"].index(x[1]["ds"]),
                         x[1]["fold"]))
print("| reading | set, partition | n_gamma max / min / most (count) | ESS (of 400) | acceptance | test error % | median g |")
print("|---|---|---|---|---|---|---|")
for label, r in rows:
    lab = label.replace("bb A=", "beta_binomial, a_alpha = ")
    print(f"| {lab} | {names[r['ds']]} {r['fold']} | {r['max']} / {r['min']} / {r['most']} ({r['freq']}) "
          f"| {r['ess']:.0f} | {' / '.join(f'{a:.2f}'.lstrip('0') for a in r['acc'])} | {r['err']:.2f} | {r['g']:.3g} |")
