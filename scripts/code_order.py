"""Writes and checks build/code-order.txt (see scripts/code-order).

write LIST PROFILES_DIR BINARY...: reads the callgrind profiles (named
RUN.PID, one per process of a traced terrane command), keeps the functions
defined in the binaries, and writes them sorted by which runs executed them.
The runs are taken in order of how often users run them: plans, no-op
plans, applies, destroys, then the rest, each in the order they ran. A
function comes before another when the first run that tells them apart
executed it, so each plan's code is one block, and each later run's code a
few blocks.
check LIST BINARY...: how much of the list the binaries still define.
"""

import collections
import os
import re
import subprocess
import sys

HEADER = """\
# The functions of terrane's release binaries in the order they are linked
# (build/code_order.rs). Made by scripts/code-order from the functions runs
# executed; do not edit by hand.
"""

FUNCTION = re.compile(r"^c?fn=\(\d+\)(?: (.*))?$")


def defined_functions(binaries):
    """Mangled name -> size, over the code symbols of every binary."""
    sizes = {}
    for binary in binaries:
        out = subprocess.run(
            ["nm", "-S", "--defined-only", binary],
            check=True, capture_output=True, text=True,
        ).stdout
        for line in out.splitlines():
            fields = line.split()
            if len(fields) == 4 and fields[2] in ("t", "T", "w", "W"):
                sizes[fields[3]] = int(fields[1], 16)
    return sizes


def executed(profile):
    """The names of the functions one callgrind profile records."""
    names = set()
    with open(profile, errors="replace") as f:
        for line in f:
            m = FUNCTION.match(line)
            if m and m.group(1):
                names.add(m.group(1).strip())
    return names


def rank(command):
    """How early a run's code goes: plans, no-op plans, applies, destroys."""
    args = command.split()
    if "plan" in args and "-refresh-only" not in args:
        return 1 if "-detailed-exitcode" in args else 0
    for i, word in enumerate(("apply", "destroy")):
        if word in args:
            return 2 + i
    return 4


def write(list_path, profiles, binaries):
    sizes = defined_functions(binaries)
    runs = collections.defaultdict(set)
    commands = {}
    files = os.listdir(profiles)
    for name in files:
        run = int(name.split(".")[0])
        path = os.path.join(profiles, name)
        with open(path, errors="replace") as f:
            command = next((l[4:].strip() for l in f if l.startswith("cmd:")), "")
        if os.path.basename(command.split()[0]) == "terrane":
            commands[run] = command
        runs[run].update(n for n in executed(path) if n in sizes)
    order = sorted(runs, key=lambda r: (rank(commands.get(r, "")), r))
    functions = set().union(*runs.values())
    if not functions:
        sys.exit("code-order: the profiles name no function of the binaries")
    listed = sorted(functions, key=lambda n: ([n not in runs[r] for r in order], n))
    with open(list_path, "w") as f:
        f.write(HEADER)
        f.writelines(n + "\n" for n in listed)
    size = sum(sizes[n] for n in listed)
    print(f"code-order: {len(listed)} functions ({size / 1e6:.1f} MB) from {len(files)} profiles -> {list_path}")


def check(list_path, binaries):
    sizes = defined_functions(binaries)
    with open(list_path) as f:
        listed = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    present = [n for n in listed if n in sizes]
    share = len(present) / len(listed) if listed else 0
    print(
        f"code-order: {len(present)} of {len(listed)} listed functions ({share:.0%}) are in the "
        f"release binaries; they are {sum(sizes[n] for n in present) / 1e6:.1f} MB of "
        f"{sum(sizes.values()) / 1e6:.1f} MB of code"
    )


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
