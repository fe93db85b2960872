//! The native part of the `frontier-stream` Python package (`frontier_stream._native`).
//!
//! Thin wrappers over `frontier-core`, with the names and semantics of
//! `shared/spec/embedding.md`: [`vocab::Vocab`] (a shared, read-only vocabulary and the
//! grammars compiled over it), [`matcher::Matcher`] (one sequence's token-mask matcher, masks
//! written into a caller's numpy or torch array with the GIL released), [`parser::Parser`]
//! (a push parser whose events are the dicts `frontier events` prints) and
//! `fill_next_token_bitmasks` (many rows on several threads). The adapters for transformers,
//! vLLM and SGLang are pure Python, in `frontier_stream/`.
//!
//! The only `unsafe` code is in [`bitmask`]: writing into the memory a Python buffer exports.
//! No panic crosses into Python: PyO3 turns one into a `PanicException`, and the code here
//! returns every failure as an exception instead.

#![deny(unsafe_op_in_unsafe_fn)]

use pyo3::prelude::*;

mod bitmask;
mod matcher;
mod parser;
mod vocab;

/// The module `frontier_stream._native`; `frontier_stream` re-exports everything in it.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<vocab::Vocab>()?;
    m.add_class::<matcher::Matcher>()?;
    m.add_class::<parser::Parser>()?;
    m.add("ParseError", m.py().get_type::<parser::ParseError>())?;
    m.add_function(wrap_pyfunction!(matcher::fill_next_token_bitmasks, m)?)?;
    m.add_function(wrap_pyfunction!(matcher::_rust_fill_ns, m)?)?;
    m.add("DEFAULT_MAX_ROLLBACK", frontier_core::mask::DEFAULT_HISTORY)?;
    m.add("MAX_ROLLBACK", matcher::MAX_ROLLBACK)?;
    Ok(())
}
