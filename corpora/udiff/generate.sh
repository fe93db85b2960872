#!/bin/sh
# Regenerates the corpus files made by real tools (git, diff). Run from anywhere; writes next
# to this script. Hand-written files (model_*.diff) are not touched.
set -eu
out=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export GIT_AUTHOR_NAME=corpus GIT_AUTHOR_EMAIL=corpus@example.com
export GIT_COMMITTER_NAME=corpus GIT_COMMITTER_EMAIL=corpus@example.com
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
git init -q repo && cd repo
git config core.quotepath true
printf 'fn main() {\n    println!("hello");\n}\n\nfn helper() -> u32 {\n    1\n}\n' > main.rs
seq 1 40 > numbers.txt
printf 'keep\nme\n' > old_name.txt
printf 'to be deleted\n' > gone.txt
printf '#!/bin/sh\necho hi\n' > run.sh
printf 'no final newline' > tail.txt
printf 'line one\r\nline two\r\nline three\r\n' > dos.txt
printf '\000\001\002binary\377' > blob.bin
printf 'x\n' > 'odd name.txt'
printf 'y\n' > "$(printf 't\303\251st.txt')"
git add -A && git commit -qm "initial"

# git_basic: edits in several hunks, section headings, an empty context line.
printf 'fn main() {\n    println!("hello, world");\n}\n\nfn helper() -> u32 {\n    2\n}\n' > main.rs
seq 1 40 | sed -e 's/^5$/five/' -e 's/^30$/thirty/' -e '/^20$/d' > numbers.txt
git diff > "$out/git_basic.diff"
git commit -qam "edits"

# git_meta: rename, copy, mode change, new, deleted and empty files.
git mv old_name.txt new_name.txt
printf 'keep\nme\ntoo\n' > new_name.txt
chmod +x run.sh
git rm -q gone.txt
printf 'brand new\n' > fresh.txt
: > empty.txt
cp main.rs main_copy.rs
git add -A
git diff --cached -M -C --find-copies-harder > "$out/git_meta.diff"
git commit -qm "meta"

# git_no_newline: a final line without newline on either side.
printf 'no final newline, changed' > tail.txt
printf 'now without newline' > fresh.txt
git diff > "$out/git_no_newline.diff"
git commit -qam "tails"

# git_binary: both forms of binary change.
printf '\000\001\002binary changed\377\376' > blob.bin
git diff > "$out/git_binary_differ.diff"
git diff --binary > "$out/git_binary_patch.diff"
git commit -qam "binary"

# crlf: CRLF content lines.
printf 'line one\r\nline 2\r\nline three\r\n' > dos.txt
git diff > "$out/git_crlf.diff"
git commit -qam "crlf"

# quoted names.
printf 'x\nx2\n' > 'odd name.txt'
printf 'y\ny2\n' > "$(printf 't\303\251st.txt')"
git diff > "$out/git_quoted.diff"
git commit -qam "quoted"

# git_log: the history as git log -p prints it (commit headers are garbage).
git log -p --stat > "$out/git_log.diff"

# GNU diff -u of two trees, with the lines diff -r adds around file patches.
mkdir -p ../a ../b
printf 'alpha\nbeta\ngamma\ndelta\n' > ../a/one.txt
printf 'alpha\nBETA\ngamma\ndelta\nepsilon\n' > ../b/one.txt
printf 'same\n' > ../a/two.txt
printf 'other\n' > ../b/two.txt
printf 'only in a\n' > ../a/three.txt
cd .. && (diff -ru a b || true) | sed -E 's/\t[0-9-]+ [0-9:.]+ [+-][0-9]+$/\t2026-01-01 00:00:00.000000000 +0000/' > "$out/gnu_diff_ru.diff"
(diff -u a/one.txt b/one.txt || true) | sed -E 's/\t[0-9-]+ [0-9:.]+ [+-][0-9]+$/\t2026-01-01 00:00:00.000000000 +0000/' > "$out/gnu_diff_u.diff"
