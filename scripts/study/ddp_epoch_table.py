#!/usr/bin/env python3
"""ddp_epoch_table.py: the epoch-time table of ddp_study.sh's CSV: per configuration, the mean of epochs 2.. of each round that started below a load, then the median, min and max over those rounds."""
import csv
import statistics
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: ddp_epoch_table.py CSV [MAX_LOAD (default 2)]")
    max_load = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    rounds = {}
    order = []
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            if row["config"] not in order:
                order.append(row["config"])
            if int(row["epoch"]) < 2 or float(row["load"]) >= max_load:
                continue
            rounds.setdefault(row["config"], {}).setdefault(row["round"], []).append(float(row["time_s"]))
    base = None
    print("| configuration | quiet rounds | epoch, median | min - max | vs DDP default |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for config in order:
        means = [sum(v) / len(v) for v in rounds.get(config, {}).values()]
        if not means:
            print(f"| {config} | 0 | | | |")
            continue
        median = statistics.median(means)
        if config == "default":
            base = median
        ratio = f"{base / median:.2f}x" if base else ""
        print(f"| {config} | {len(means)} | {median:.2f} s | {min(means):.2f} - {max(means):.2f} s | {ratio} |")


if __name__ == "__main__":
    main()
