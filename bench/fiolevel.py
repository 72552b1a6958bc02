"""Which fio a benchmark measures against, and a warning where it is one
whose figures mislead: fio before 3.34 sampled the clock on every I/O in
jobs without rate options, which cost up to half of its IOPS (fio#1501,
commit 2f5102a5), so a ratio against it flatters whoever is compared."""
import re, subprocess, sys


def describe(fio):
    """fio's version line (fio-3.42), warning on stderr below 3.34."""
    version = subprocess.run([fio, "--version"], capture_output=True, text=True).stdout.strip()
    m = re.match(r"fio-(\d+)\.(\d+)", version)
    if m is None or (int(m.group(1)), int(m.group(2))) < (3, 34):
        print(f"warning: {fio} is {version or 'of no known version'}: fio before 3.34 "
              "spends up to half its IOPS sampling the clock; measure against fio 3.42 "
              "built from its source (FIO=path)", file=sys.stderr)
    return version
