"""The README's first example runs exactly as written and prints what the README says."""

import os
import re
import subprocess
import sys

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_readme_first_example_runs(tmp_path):
    text = open(README).read()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    printed = out.stdout.splitlines()
    said = re.search(r"prints `(.*?)` and `(.*?)`", text)
    assert said, "the README says what the example prints"
    assert printed == [said.group(1), said.group(2)]
