#!/usr/bin/env python3
"""Converts a shared ServeGen rate table into the `time,rate` CSV `ordo forecast demand` reads.

The shared traces (../shared/data/inference/servegen_rate_hourly.csv and servegen_rate_10min.csv,
described in ../shared/data/README.md, section 2.1) hold every model's series in one file, with
hours or seconds counted from the trace's day 0 instead of timestamps, so the forecaster cannot
read them as they are ("missing column `time`"). This keeps one model's rows and gives each a UTC
time: ORIGIN + hour_index hours (hourly file) or ORIGIN + window_start_s seconds (10-minute file).
The rate is the table's requests per second (mean_rate_rps or total_rate_rps), so
`--per-gpu-rate` is in requests per second too.

  scripts/servegen_rates.py ../shared/data/inference/servegen_rate_hourly.csv \
      --model m-large --origin 2026-11-16T00:00:00Z > rates.csv

Standard library only. Exit 2 with a message naming the file and the column on bad input.
"""
import argparse
import csv
import datetime as dt
import gzip
import sys

LAYOUTS = (  # (offset column, seconds per unit, rate column)
    ("hour_index", 3600, "mean_rate_rps"),
    ("window_start_s", 1, "total_rate_rps"),
)


def fail(message):
    print(f"servegen_rates.py: {message}", file=sys.stderr)
    sys.exit(2)


def parse_origin(text):
    try:
        origin = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        fail(f"--origin: not an ISO 8601 time: {text!r}")
    if origin.tzinfo is None:
        origin = origin.replace(tzinfo=dt.timezone.utc)
    return origin.astimezone(dt.timezone.utc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", help="servegen_rate_hourly.csv or servegen_rate_10min.csv (.gz too)")
    parser.add_argument("--model", required=True, help="the model column's value, e.g. m-large")
    parser.add_argument("--origin", default="2026-11-16T00:00:00Z",
                        help="UTC time of the trace's hour 0 (default: a Monday, 2026-11-16)")
    args = parser.parse_args()
    origin = parse_origin(args.origin)
    opener = gzip.open if args.table.endswith(".gz") else open
    try:
        with opener(args.table, "rt", newline="") as f:
            reader = csv.DictReader(f)
            columns = reader.fieldnames or []
            layout = next((l for l in LAYOUTS if l[0] in columns and l[2] in columns), None)
            if "model" not in columns or layout is None:
                fail(f"{args.table}: needs the columns model and hour_index + mean_rate_rps "
                     f"(hourly) or window_start_s + total_rate_rps (10-minute); has {columns}")
            offset_column, unit_s, rate_column = layout
            out = csv.writer(sys.stdout, lineterminator="\n")
            out.writerow(["time", "rate"])
            rows = 0
            models = set()
            for line, row in enumerate(reader, start=2):
                models.add(row["model"])
                if row["model"] != args.model:
                    continue
                try:
                    offset = float(row[offset_column])
                    rate = float(row[rate_column])
                except (TypeError, ValueError):
                    fail(f"{args.table}: line {line}: {offset_column} or {rate_column} is not a number")
                when = origin + dt.timedelta(seconds=offset * unit_s)
                out.writerow([when.strftime("%Y-%m-%dT%H:%M:%SZ"), f"{rate:g}"])
                rows += 1
    except OSError as e:
        fail(f"{args.table}: {e.strerror}")
    if rows == 0:
        fail(f"{args.table}: no rows for model {args.model!r} (models: {', '.join(sorted(models))})")


if __name__ == "__main__":
    main()
