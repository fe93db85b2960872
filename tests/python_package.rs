//! The Python package's tests (`python/tests`, pytest), run against this build's `frontier`
//! binary: `$FRONTIER_PYTHON -m pytest python/tests`, where `FRONTIER_PYTHON` is a Python with
//! `frontier-stream` (built from `python/` of this checkout), numpy and pytest installed.
//! `.ci/run` makes one in `target/py-venv` and sets the variable; without it this test fails
//! and says how to get one.

use std::path::Path;
use std::process::Command;

#[test]
fn the_python_package_passes_its_tests() {
    let Some(python) = std::env::var_os("FRONTIER_PYTHON") else {
        panic!(
            "FRONTIER_PYTHON is not set: it names a Python with frontier-stream, numpy and pytest \
             installed. `.ci/run` makes one (target/py-venv) and sets it; by hand: \
             `python3 -m venv target/py-venv && target/py-venv/bin/pip install ./python numpy pytest` \
             then `FRONTIER_PYTHON=target/py-venv/bin/python cargo test --test python_package`"
        );
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "python/tests",
        ])
        .current_dir(root)
        .env("FRONTIER_BIN", env!("CARGO_BIN_EXE_frontier"))
        .status()
        .unwrap_or_else(|e| panic!("{}: {e}", Path::new(&python).display()));
    // pytest's exit status is 0 only when tests ran and all passed (5: none were collected).
    assert!(
        status.success(),
        "python/tests failed ({status}); the output above says which"
    );
}
