//! `Matcher`: one sequence's token-mask matcher (`masks.md`), and the function that fills the
//! rows of a batch on several threads.
//!
//! A matcher wraps `frontier_core::mask::dynamic`'s erased matcher over a grammar its
//! vocabulary keeps. A mask is written into a row of the caller's array ([`Bitmask`]) with the
//! GIL released, so other Python threads (vLLM fills rows from several) run meanwhile. A
//! matcher is used by one thread at a time: PyO3's borrow flag turns a concurrent mutation
//! into a `RuntimeError`, never a race. Every refusal leaves the matcher unchanged.

use std::sync::Arc;

use pyo3::exceptions::{PyIndexError, PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use frontier_core::language::ParserSpec;
use frontier_core::mask::dynamic::{
    fill_batch, fill_row, BatchFillError, DynGrammar, DynMatcher, FillJob,
};
use frontier_core::mask::{MaskError, DEFAULT_HISTORY};

use crate::bitmask::Bitmask;
use crate::vocab::Vocab;

/// A token-mask matcher for one sequence of ``lang`` (``mode``: the language's default when
/// ``None``) over ``vocab``, keeping the last ``max_rollback`` tokens for ``rollback``.
///
/// Matchers of one vocabulary and language share one compiled grammar and its mask cache.
#[pyclass(module = "frontier_stream", name = "Matcher")]
pub struct Matcher {
    vocab: Py<Vocab>,
    grammar: Arc<dyn DynGrammar>,
    inner: Box<dyn DynMatcher>,
    max_rollback: usize,
}

fn mask_error(error: MaskError) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// `token` (any Python integer, or an object with `__index__`) as an id to ask the matcher
/// about: `None` for an integer that is no `u32` (negative, or 2**32 and above), which no
/// vocabulary has, so it is refused like any id past the vocabulary; anything else that is
/// not an integer is the `TypeError` of the conversion.
fn token_id(token: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
    match token.extract::<i64>() {
        Ok(value) => Ok(u32::try_from(value).ok()),
        Err(error) if error.is_instance_of::<PyOverflowError>(token.py()) => Ok(None),
        Err(error) => Err(error),
    }
}

/// The largest `max_rollback` a matcher takes. The core reserves the whole history when the
/// matcher is made (one state a token, up to a few hundred bytes), so a depth of, say, 10**10
/// would ask for terabytes and abort the process; 2**20 tokens is far past any speculative
/// decoding depth and a reservation that cannot fail.
pub const MAX_ROLLBACK: usize = 1 << 20;

/// `n` (any Python integer, or an object with `__index__`) as a count of tokens: a negative
/// one is a `ValueError` naming `what`; one past `usize` is `usize::MAX` (more than any
/// history, so `rollback` refuses it as past the history); a non-integer is the `TypeError`
/// of the conversion.
fn token_count(n: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    let negative =
        |n: &Bound<'_, PyAny>| PyValueError::new_err(format!("{what} must be 0 or more, not {n}"));
    match n.extract::<i64>() {
        Ok(value) => usize::try_from(value).map_err(|_| negative(n)),
        Err(error) if error.is_instance_of::<PyOverflowError>(n.py()) => {
            if n.lt(0)? {
                Err(negative(n))
            } else {
                Ok(usize::MAX)
            }
        }
        Err(error) => Err(error),
    }
}

/// `index` (any Python integer, or an object with `__index__`) as a row index: one past `i64`
/// is out of range, the `IndexError` of any row not in the bitmask; a non-integer is the
/// `TypeError` of the conversion.
pub fn row_index(index: &Bound<'_, PyAny>) -> PyResult<i64> {
    match index.extract::<i64>() {
        Ok(value) => Ok(value),
        Err(error) if error.is_instance_of::<PyOverflowError>(index.py()) => Err(
            PyIndexError::new_err(format!("row {index} is out of range of any bitmask")),
        ),
        Err(error) => Err(error),
    }
}

/// [`token_id`] of each of `tokens` (a `TypeError` for any non-integer, wherever it is).
fn token_ids(tokens: &[Bound<'_, PyAny>]) -> PyResult<Vec<Option<u32>>> {
    tokens.iter().map(token_id).collect()
}

#[pymethods]
impl Matcher {
    #[new]
    #[pyo3(signature = (vocab, lang, mode = None, max_rollback = None))]
    fn new(
        vocab: Bound<'_, Vocab>,
        lang: &str,
        mode: Option<&str>,
        max_rollback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Matcher> {
        let max_rollback = match max_rollback {
            None => DEFAULT_HISTORY,
            Some(n) => token_count(n, "max_rollback")?,
        };
        if max_rollback > MAX_ROLLBACK {
            return Err(PyValueError::new_err(format!(
                "max_rollback is at most {MAX_ROLLBACK} tokens, not {max_rollback}"
            )));
        }
        let spec =
            ParserSpec::parse(lang, mode).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let grammar = vocab.get().grammar(&spec);
        Ok(Matcher {
            inner: grammar.matcher_with_history(max_rollback),
            grammar,
            vocab: vocab.unbind(),
            max_rollback,
        })
    }

    /// Writes the next token's mask into row ``index`` of ``bitmask`` (a ``(rows, words)``
    /// int32 numpy array or contiguous CPU torch tensor, ``words >= mask_words``; the words
    /// past ``mask_words`` are zeroed). Bit ``t % 32`` of word ``t // 32`` is 1 when token
    /// ``t`` is allowed. The GIL is released while the mask is computed. A bad array or index
    /// raises and writes nothing.
    #[pyo3(signature = (bitmask, index = None))]
    fn fill_next_token_bitmask(
        &self,
        py: Python<'_>,
        bitmask: &Bound<'_, PyAny>,
        index: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let index = index.map_or(Ok(0), row_index)?;
        let mask_words = self.grammar.mask_words();
        let mut bitmask = Bitmask::of(bitmask, mask_words)?;
        let row = bitmask.row(index)?;
        let matcher = &*self.inner;
        py.detach(|| fill_row(matcher, mask_words, row))
            .map_err(mask_error)
    }

    /// Takes ``token`` if the language allows it: ``True``, or ``False`` and nothing changed.
    /// An EOS token is allowed once the text is complete and ends the sequence; after it, an
    /// EOS token is still taken (the sequence stays ended, one more token for ``rollback``)
    /// and any other is refused. Any integer is asked about: an id outside the vocabulary
    /// (negative, or ``vocab.size`` and above, however large) is refused, ``False``. A
    /// non-integer raises ``TypeError``.
    fn accept_token(&mut self, token: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(match token_id(token)? {
            Some(id) => self.inner.consume(id).is_ok(),
            None => false,
        })
    }

    /// Takes all of ``tokens`` in order: ``True``, or ``False`` and nothing changed when one
    /// of them is refused (an id outside the vocabulary included).
    fn accept_tokens(&mut self, tokens: Vec<Bound<'_, PyAny>>) -> PyResult<bool> {
        let Some(ids) = token_ids(&tokens)?
            .into_iter()
            .collect::<Option<Vec<u32>>>()
        else {
            return Ok(false);
        };
        Ok(self.inner.accept_tokens(&ids))
    }

    /// How many of ``tokens``, from the first, would be taken in turn (an id outside the
    /// vocabulary is refused, so the count stops before it); the matcher is unchanged.
    fn validate_tokens(&self, tokens: Vec<Bound<'_, PyAny>>) -> PyResult<usize> {
        let ids = token_ids(&tokens)?;
        let ids: Vec<u32> = ids.iter().map_while(|&id| id).collect();
        Ok(self.inner.validate_tokens(&ids))
    }

    /// Undoes the last ``n`` accepted tokens (EOS counts as one). More than the kept history
    /// (``max_rollback`` tokens) raises ``ValueError`` and changes nothing, as does a negative
    /// ``n``.
    fn rollback(&mut self, n: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = token_count(n, "rollback's n")?;
        self.inner.rollback(n).map_err(mask_error)
    }

    /// Back to the start of a stream, history dropped.
    fn reset(&mut self) {
        self.inner.reset();
    }

    /// Whether the text so far is a sentence of the language (EOS is allowed now).
    fn is_accepting(&self) -> bool {
        self.inner.accepting()
    }

    /// Whether an EOS token was accepted.
    fn is_terminated(&self) -> bool {
        self.inner.is_terminated()
    }

    /// Whether the sequence is stuck: not terminated and no token allowed.
    fn is_error(&self) -> bool {
        self.inner.is_error()
    }

    /// The bytes every continuation starts with (empty when the text so far is complete or
    /// after EOS): what a decoder may emit without sampling.
    fn forced_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let mut out = Vec::new();
        self.inner.forced_bytes(&mut out);
        PyBytes::new(py, &out)
    }

    /// A fresh, independent matcher in the same state (history included).
    fn copy(&self, py: Python<'_>) -> Matcher {
        Matcher {
            vocab: self.vocab.clone_ref(py),
            grammar: Arc::clone(&self.grammar),
            inner: self.inner.clone_box(),
            max_rollback: self.max_rollback,
        }
    }

    fn __copy__(&self, py: Python<'_>) -> Matcher {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> Matcher {
        self.copy(py)
    }

    /// Words in one mask row: ``ceil(V / 32)``.
    #[getter]
    fn mask_words(&self) -> usize {
        self.grammar.mask_words()
    }

    /// The vocabulary.
    #[getter]
    fn vocab(&self, py: Python<'_>) -> Py<Vocab> {
        self.vocab.clone_ref(py)
    }

    /// The rollback depth kept.
    #[getter]
    fn max_rollback(&self) -> usize {
        self.max_rollback
    }
}

/// Fills row ``indices[i]`` of ``bitmask`` with ``matchers[i]``'s mask, for every ``i``, on up
/// to ``threads`` threads (default: the machine's cores) with the GIL released. ``indices``
/// defaults to ``0 .. len(matchers)``; repeated or out-of-range rows raise before anything is
/// written.
#[pyfunction]
#[pyo3(signature = (matchers, bitmask, indices = None, threads = None))]
pub fn fill_next_token_bitmasks(
    py: Python<'_>,
    matchers: Vec<PyRef<'_, Matcher>>,
    bitmask: &Bound<'_, PyAny>,
    indices: Option<Vec<Bound<'_, PyAny>>>,
    threads: Option<usize>,
) -> PyResult<()> {
    let indices = match indices {
        Some(indices) => indices
            .iter()
            .map(row_index)
            .collect::<PyResult<Vec<i64>>>()?,
        None => (0..matchers.len() as i64).collect(),
    };
    if indices.len() != matchers.len() {
        return Err(PyValueError::new_err(format!(
            "{} matchers and {} indices: one row for each matcher",
            matchers.len(),
            indices.len()
        )));
    }
    let widest = matchers.iter().map(|m| m.grammar.mask_words()).max();
    let mut bitmask = Bitmask::of(bitmask, widest.unwrap_or(0))?;
    let rows = bitmask.rows(&indices)?;
    let jobs: Vec<FillJob<'_>> = matchers
        .iter()
        .zip(rows)
        .map(|(m, row)| (&*m.inner, m.grammar.mask_words(), row))
        .collect();
    let threads = match threads {
        Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    py.detach(|| fill_batch(jobs, threads))
        .map_err(|e| match e {
            BatchFillError::Mask(e) => mask_error(e),
            BatchFillError::Panic => PyRuntimeError::new_err("a mask thread panicked"),
        })
}

/// For `python/bench`: the mean time in nanoseconds of `reps` calls of the Rust matcher's
/// `fill_mask` into row `index` of `bitmask`, with no Python between them: what
/// `fill_next_token_bitmask` costs without the binding.
#[pyfunction]
#[pyo3(signature = (matcher, bitmask, index, reps))]
pub fn _rust_fill_ns(
    py: Python<'_>,
    matcher: PyRef<'_, Matcher>,
    bitmask: &Bound<'_, PyAny>,
    index: i64,
    reps: u32,
) -> PyResult<f64> {
    let mask_words = matcher.grammar.mask_words();
    let mut bitmask = Bitmask::of(bitmask, mask_words)?;
    let row = bitmask.row(index)?;
    let inner = &*matcher.inner;
    let elapsed = py.detach(|| {
        let start = std::time::Instant::now();
        for _ in 0..reps {
            fill_row(inner, mask_words, std::hint::black_box(&mut *row))?;
        }
        Ok(start.elapsed())
    });
    let elapsed = elapsed.map_err(mask_error)?;
    Ok(elapsed.as_nanos() as f64 / f64::from(reps.max(1)))
}
