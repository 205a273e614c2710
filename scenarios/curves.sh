#!/usr/bin/env bash
# Prints the real-time demand curves the scenarios use (one JSON list per line), so anyone can check
# them. r(h) is the study's example service (6 GPUs at noon, 2 at 4 AM): linear from 2 at 04:00 up to
# 6 at 12:00 (+0.5 GPU/h), then linear down to 2 at 04:00 the next day (-0.25 GPU/h). A service of
# scale k needs ceil(k * r(h)) GPUs at hour h; an evening service is r shifted by 8 hours (peak
# 20:00, trough 12:00). Step 0 is midnight.
set -euo pipefail
awk 'function r(h) { h = (h % 24 + 24) % 24; if (h >= 4 && h <= 12) return 2 + 0.5 * (h - 4);
                     d = (h > 12) ? h - 12 : h + 12; return 6 - 0.25 * d }
     function up(x) { return (x == int(x)) ? x : int(x) + 1 }
     function curve(name, k, shift,   h, line) {
       line = ""; for (h = 0; h < 24; h++) line = line (h ? "," : "") up(k * r(h - shift))
       print name ": [" line "]" }
     BEGIN { curve("R  (day, scale 1)", 1, 0); curve("H  (day, scale 1/2)", 0.5, 0)
             curve("2R (day, scale 2)", 2, 0); curve("4R (day, scale 4)", 4, 0)
             curve("E  (evening, scale 1)", 1, 8); curve("2E (evening, scale 2)", 2, 8) }'
