#!/usr/bin/env python3
"""Writes the replay sessions of this folder. CTL needs exact byte counts, so the sessions
are generated from (tool, args) lists rather than typed by hand. Run from this folder."""
import json


def call(cid, name, *args):
    out = f"call {cid} {name}\n".encode()
    for key, value in args:
        value = value.encode() if isinstance(value, str) else value
        out += f"arg {key} {len(value)}\n".encode() + value
    return out + b"end\n"


def turn(output, finish):
    return json.dumps({"output": output.decode(), "finish": finish})


def write(name, turns):
    with open(name, "w") as f:
        for t in turns:
            f.write(t + "\n")


GREET_BUGGY = 'name="${1:-world}"\necho "Helo, $nmae!"\n'
GREET_FIXED = 'name="${1:-world}"\necho "Hello, $name!"\n'
NOTES = "greet.sh prints a greeting.\nUsage: sh greet.sh [NAME]\n"

# A small repair job: set up a buggy script, read it (three reads in parallel), rewrite it
# with the output limit hitting in the middle of the new content, continue the same stream,
# then check the result with the shell.
t2 = (call("c4", "read_file", ("path", "greet.sh"))
      + call("c5", "read_file", ("path", "NOTES.txt"))
      + call("c6", "list_dir", ("path", ".")))
w = call("c7", "write_file", ("path", "greet.sh"), ("content", GREET_FIXED))
cut = w.index(b"Hello") + 3
write("fix_greeting.jsonl", [
    turn(call("c1", "write_file", ("path", "greet.sh"), ("content", GREET_BUGGY))
         + call("c2", "write_file", ("path", "NOTES.txt"), ("content", NOTES))
         + call("c3", "shell", ("command", "sh greet.sh")), "tool_calls"),
    turn(t2 + w[:cut], "length"),
    turn(w[cut:] + call("c8", "shell", ("command", "sh greet.sh && sh greet.sh frontier")),
         "tool_calls"),
    turn(b"", "stop"),
])

# Every kind of refusal, next to harmless look-alikes that run.
write("refusals.jsonl", [
    turn(call("c1", "write_file", ("path", "keep.txt"), ("content", "keep me\n"))
         + call("c2", "delete_everything", ("path", "."))
         + call("c3", "read_file")
         + call("c4", "read_file", ("path", "keep.txt"), ("path", "keep.txt"))
         + call("c5", "read_file", ("path", "../outside.txt"))
         + call("c6", "write_file", ("path", "/tmp/frontier-escape.txt"), ("content", "x"))
         + call("c7", "read_file", ("path", "keep.txt"), ("mode", "fast"))
         + call("c8", "shell", ("command", "rm -rf /"))
         + call("c9", "shell", ("command", 'echo "rm -rf /"'))
         + call("c10", "shell", ("command", "sh -c 'rm -rf /'"))
         + call("c11", "shell", ("command", "echo ok; sudo -u root rm -rf --no-preserve-root /"))
         + call("c12", "shell", ("command", "grep -c 'mkfs' keep.txt || echo 'no mkfs here'"))
         + call("c13", "read_file", ("path", "keep.txt")), "tool_calls"),
    turn(b"", "stop"),
])

# A model that starts to chat in the middle of its stream: the call before the noise runs,
# the call in which the noise lands and every byte after it do not. The loop tells the model
# where its output stopped being CTL (`stream_error_nudge`); the next turn is a new frame whose
# call runs, then an empty turn ends the session.
good = call("c1", "write_file", ("path", "before.txt"), ("content", "written\n"))
cut_call = call("c2", "write_file", ("path", "never.txt"), ("content", "never\n"))
after = call("c3", "write_file", ("path", "after.txt"), ("content", "never\n"))
retry = call("c4", "write_file", ("path", "after.txt"), ("content", "recovered\n"))
write("noise.jsonl", [
    turn(good + cut_call[:30] + b"\nSure! Let me explain what I am doing.\n" + after, "tool_calls"),
    turn(retry, "tool_calls"),
    turn(b"", "stop"),
])

# Recovery paths: a context overflow (compact once), then an output limit hit twice in the
# same call (escalate once, then a resume nudge) before the call completes and runs.
big = call("c2", "write_file", ("path", "big.txt"), ("content", "line\n" * 40))
write("recovery.jsonl", [
    turn(call("c1", "list_dir", ("path", ".")), "tool_calls"),
    json.dumps({"error": "context_overflow"}),
    turn(big[:50], "length"),
    turn(big[50:120], "length"),
    turn(big[120:] + call("c3", "read_file", ("path", "big.txt")), "tool_calls"),
    turn(b"", "stop"),
])

# apply_patch: the patch streams into the apply_patch parser and the engine while the call is
# written. A good patch, cut by the output limit in the middle of a chunk, completes and is
# applied once; a malformed patch is known at its bad byte, before its `end` line, and refused;
# a patch whose context is not in the file is known when its chunk is confirmed, fails, and
# writes nothing.
SRC = "def greet(name):\n    return 'Helo, ' + name\n\n\nprint(greet('world'))\n"
good = ("*** Begin Patch\n*** Update File: greet.py\n@@ def greet(name):\n"
        "-    return 'Helo, ' + name\n+    return 'Hello, ' + name + '!'\n"
        "*** Add File: CHANGES.md\n+Fixed the greeting.\n*** End Patch\n")
p1 = call("c2", "apply_patch", ("patch", good))
split = p1.index(b"+    return") + 6
bad = "*** Begin Patch\n*** Update File: greet.py\n@@\n~nonsense\n*** End Patch\n"
stale = ("*** Begin Patch\n*** Update File: greet.py\n@@\n-    return 'Bonjour, ' + name\n"
         "+    return 'Salut, ' + name\n*** End Patch\n")
write("apply_patch.jsonl", [
    turn(call("c1", "write_file", ("path", "greet.py"), ("content", SRC)) + p1[:split], "length"),
    turn(p1[split:] + call("c3", "shell", ("command", "grep -n Hello greet.py && cat CHANGES.md")),
         "tool_calls"),
    turn(call("c4", "apply_patch", ("patch", bad))
         + call("c5", "apply_patch", ("patch", stale))
         + call("c6", "read_file", ("path", "greet.py")), "tool_calls"),
    turn(b"", "stop"),
])

# Extended CTL: what a model writes without counting. The turns are typed as the model would
# type them (no byte counts anywhere but in the one counted argument), and the file's first
# line declares the mode.
EXTENDED = json.dumps({"ctl_mode": "extended"})


def text_turn(output, finish):
    return json.dumps({"output": output, "finish": finish})


# A small repair in extended CTL: inline and heredoc arguments (one value holds a line `EOF`,
# so its heredoc takes the tag `EOF1`), the rewrite cut twice by the output limit (in its body,
# then in the middle of its closing tag line) and completed by the third turn, and the one
# argument that needs a count: a value of two lines without a final newline.
rewrite = """call c4 write_file
arg path = sum.sh
arg content <<EOF
echo "$1 + $2 = $(($1 + $2))"
EOF
end
"""
first_cut = rewrite.index("$(($1") + 3
second_cut = rewrite.rindex("EOF") + 2
write("extended.jsonl", [
    EXTENDED,
    text_turn("""call c1 write_file
arg path = sum.sh
arg content <<EOF
echo "$1 + $2 = $(($1 - $2))"
EOF
end
call c2 write_file
arg path = NOTES.md
arg content <<EOF1
A heredoc ends at the first line that is exactly its tag, so this one
quotes the line below under the tag EOF1:
EOF
end
EOF1
end
call c3 shell
arg command = sh sum.sh 2 3
end
""", "tool_calls"),
    text_turn(rewrite[:first_cut], "length"),
    text_turn(rewrite[first_cut:second_cut], "length"),
    text_turn(rewrite[second_cut:] + """call c5 shell
arg command = sh sum.sh 2 3
end
call c6 write_file
arg path = pair.txt
arg content 7
x=1
y=2end
call c7 read_file
arg path = NOTES.md
end
""", "tool_calls"),
    text_turn("", "stop"),
])

# A heredoc that is never closed: the model forgot its `EOF` line, so its `end` line and the
# next call are content of the heredoc. The call before it runs; the unclosed one and
# everything after it never do (the stream ends inside a frame: stream_incomplete).
write("extended_unclosed.jsonl", [
    EXTENDED,
    text_turn("""call c1 write_file
arg path = kept.txt
arg content = kept
end
call c2 write_file
arg path = lost.txt
arg content <<EOF
this heredoc is never closed
end
call c3 shell
arg command = rm kept.txt
end
""", "stop"),
])
