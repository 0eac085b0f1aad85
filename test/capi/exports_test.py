#!/usr/bin/python3
"""libvbx_cnn_sim.so exports exactly the functions its header declares: no fewer (a program
built for the SDK would not link) and no more (the C++ runtime's and the simulator's inline
functions stay inside), and its soname is the file name the SDK's programs link and load.

    exports_test.py LIBRARY HEADER
"""
import re
import subprocess
import sys

lib, header = sys.argv[1], sys.argv[2]
text = "\n".join(line for line in open(header).read().splitlines() if not line.lstrip().startswith("#"))
declared = set(re.findall(r"VNNX_SIM_API\s+[^;(]*?\b(\w+)\s*\(", text))
nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
exported = {line.split()[-1] for line in nm.splitlines() if line.split() and line.split()[1] in "TtWwDdBbVvRri"}
exported = {s.split("@")[0] for s in exported}
soname = re.search(r"SONAME\)\s+Library soname: \[(.*)\]",
                   subprocess.run(["readelf", "-d", lib], capture_output=True, text=True, check=True).stdout)
failed = 0
for name in sorted(declared - exported):
    print("FAILED: declared but not exported: " + name)
    failed += 1
for name in sorted(exported - declared):
    print("FAILED: exported but not declared: " + name)
    failed += 1
if not soname or soname.group(1) != "libvbx_cnn_sim.so":
    print("FAILED: soname is {}, expected libvbx_cnn_sim.so".format(soname.group(1) if soname else "missing"))
    failed += 1
if len(declared) < 30:
    print("FAILED: only {} declarations found in {}".format(len(declared), header))
    failed += 1
print("{} declared, {} exported".format(len(declared), len(exported)))
print("{} passed, {} failed".format(3 if not failed else 0, failed))
sys.exit(1 if failed else 0)
