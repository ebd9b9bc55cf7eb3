#!/usr/bin/env python3
"""Checks that every line of a log file is a log line of --log.format FORMAT.

usage: log_lines.py FORMAT FILE [MSGS]

FORMAT is logfmt or json. Each line must hold exactly ts, level and msg, in
that order: ts in RFC 3339, UTC, with milliseconds
(2026-12-01T20:00:00.000Z), level one of the agent's four. logfmt is read as
go-logfmt reads it (values bare, or quoted with JSON's escapes), JSON as one
object per line. No line may carry a raw control byte. Prints one line per
problem and exits 1 if there is any; with MSGS, writes each line's decoded
level and msg there ("level<TAB>msg"), for the caller to grep.
"""
import datetime
import json
import re
import sys

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
LEVELS = {"error", "warn", "info", "debug"}
KEY = re.compile(r"[^ =\"\x00-\x20\x7f]+")
ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f",
           "n": "\n", "r": "\r", "t": "\t"}


def logfmt_pairs(line):
    """The key/value pairs of a logfmt line, or raises ValueError."""
    pairs, i = [], 0
    while i < len(line):
        m = KEY.match(line, i)
        if not m or m.end() >= len(line) or line[m.end()] != "=":
            raise ValueError(f"no key=value at column {i}")
        key, i = m.group(), m.end() + 1
        if i < len(line) and line[i] == '"':
            i += 1
            value = []
            while True:
                if i >= len(line):
                    raise ValueError(f"unterminated quoted value of {key}")
                c = line[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\":
                    e = line[i + 1:i + 2]
                    if e in ESCAPES:
                        value.append(ESCAPES[e])
                        i += 2
                    elif e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", line[i + 2:i + 6]):
                        value.append(chr(int(line[i + 2:i + 6], 16)))
                        i += 6
                    else:
                        raise ValueError(f"bad escape \\{e} in {key}")
                    continue
                value.append(c)
                i += 1
            value = "".join(value)
        else:
            m = re.compile(r"[^ \"=]*").match(line, i)
            value, i = m.group(), m.end()
        pairs.append((key, value))
        if i < len(line):
            if line[i] != " ":
                raise ValueError(f"no space after {key}'s value at column {i}")
            i += 1
    return pairs


def check(fmt, line):
    """(level, msg) of one line, or raises ValueError."""
    if re.search(r"[\x00-\x1f\x7f]", line):
        raise ValueError("a raw control byte")
    if fmt == "logfmt":
        pairs = logfmt_pairs(line)
        if [k for k, _ in pairs] != ["ts", "level", "msg"]:
            raise ValueError(f"keys {[k for k, _ in pairs]}, want ts level msg")
        fields = dict(pairs)
    else:
        try:
            fields = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"not JSON: {e}")
        if not isinstance(fields, dict) or list(fields) != ["ts", "level", "msg"]:
            raise ValueError("not an object of ts, level, msg")
        if not all(isinstance(v, str) for v in fields.values()):
            raise ValueError("a member is not a string")
    if not TS.match(fields["ts"]):
        raise ValueError(f"ts {fields['ts']!r} is not RFC 3339 UTC with ms")
    datetime.datetime.strptime(fields["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
    if fields["level"] not in LEVELS:
        raise ValueError(f"level {fields['level']!r}")
    return fields["level"], fields["msg"]


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        raw = f.read()
    problems, decoded = [], []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print(f"{path}: not UTF-8: {e}")
        return 1
    for n, line in enumerate(text.split("\n"), 1):
        if line == "" and n == len(text.split("\n")):
            break  # after the last newline
        try:
            level, msg = check(fmt, line)
            decoded.append(f"{level}\t{msg}")
        except ValueError as e:
            problems.append(f"{path}:{n}: {e}: {line!r}")
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as f:
            f.write("".join(d + "\n" for d in decoded))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
