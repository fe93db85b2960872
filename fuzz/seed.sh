#!/usr/bin/env bash
# Seeds each fuzz target's corpus from the project's corpora.
#   fuzz/seed.sh && cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run ctl_bytes -- -max_total_time=300
set -euo pipefail
cd "$(dirname "$0")"
seed() { # target, source directories...
    local target=$1; shift
    mkdir -p "corpus/$target"
    find "$@" -type f ! -name '*.md' -exec cp {} "corpus/$target/" \;
}
seed ctl_bytes ../corpora/ctl
seed ctl_extended ../corpora/ctl
seed apply_patch_bytes ../corpora/apply_patch ../tests/conformance/codex-apply-patch
seed udiff_bytes ../corpora/udiff
