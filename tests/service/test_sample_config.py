#!/usr/bin/env python3
"""The sample config (systemd/mtraced.conf, installed as /etc/mtrace/mtraced.conf)
documents every setting of struct mtraced_config (daemon/config.h) exactly once, as a
commented-out "#key = value" line, and that value is the daemon's real default: each
line, made live, goes through the daemon's own parser (config-default) and must leave
the defaults unchanged.  A changed default is also detected (a test of the test).
mtraced(8) lists every key as well."""
import os
import re
import subprocess
import sys

import svc
from svc import Env, fail, log

env = Env()
check = sys.argv[1]
header = open(os.path.join(svc.SOURCE, "daemon", "config.h")).read()
body = re.search(r"struct mtraced_config \{(.*?)\n\};", header, re.S).group(1)
body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
fields = re.findall(r"^\s*[a-z_ ]+?\s+\*?([a-z_]+)(?:\[[^]]*\])?;", body, re.M)
fields = [f for f in fields if f != "config_path"]	# that is -c, not a key
if len(fields) < 10:
    fail("could not read the fields of struct mtraced_config: %r" % fields)

sample = open(os.path.join(svc.SOURCE, "systemd", "mtraced.conf")).read()
lines = re.findall(r"^#([a-z_]+) =(.*)$", sample, re.M)
keys = [k for k, _ in lines]
missing = [f for f in fields if f not in keys]
unknown = [k for k in keys if k not in fields]
dups = sorted({k for k in keys if keys.count(k) > 1})
if missing or unknown or dups:
    fail("sample config: undocumented %s, unknown %s, repeated %s" % (missing, unknown, dups))


# mtraced(8) documents every key too.
man = open(os.path.join(svc.SOURCE, "docs", "man", "mtraced.8")).read()
man_keys = set(re.findall(r"^\.It Cm ([a-z_]+(?: , [a-z_]+)*)", man, re.M))
man_keys = {k for item in man_keys for k in item.split(" , ")}
if [f for f in fields if f not in man_keys]:
    fail("mtraced(8) does not document %s" % [f for f in fields if f not in man_keys])


def run(text):
    path = env.path("one.conf")
    with open(path, "w") as f:
        f.write(text + "\n")
    r = subprocess.run([check, path], capture_output=True, timeout=10)
    return r.returncode, r.stderr.decode(errors="replace").strip()


for k, v in lines:
    rc, err = run("%s =%s" % (k, v))
    if rc != 0:
        fail("sample config line \"#%s =%s\" is not the default: %s" % (k, v, err))

# The checker itself must notice a value that is not the default.
rc, _ = run("max_clients = 3")
if rc != 1:
    fail("config-default did not notice a changed setting (exit %d)" % rc)
log("sample config: %d settings, each documented once with its real default" % len(fields))
print("ok")
