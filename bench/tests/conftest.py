"""Tests of the benchmark harness (bench/*.py): its scheduling and summaries, not gotensor."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: import bench_link, ...
