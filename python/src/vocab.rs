//! `Vocab`: a model's vocabulary, built once, shared read-only by every matcher over it, and
//! the grammars compiled over it.
//!
//! A grammar (the token trie walk and its mask cache, `frontier_core::mask`) is compiled the
//! first time a matcher asks for its language and mode, and kept by the vocabulary: the
//! matchers of a batch share one cache, so a state one row computed is a copy for the others.
//! There are as many grammars as language and mode pairs (seven), so the list is bounded.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use frontier_core::language::ParserSpec;
use frontier_core::mask::dynamic::{self, DynGrammar};
use frontier_core::mask::vocab::TokenKind;
use frontier_core::mask::vocab::{hf, tiktoken};
use frontier_core::mask::Vocabulary;

/// A model's vocabulary: each id's bytes, its special tokens and its EOS tokens.
///
/// Build one with ``Vocab.from_tiktoken``, ``Vocab.from_tokenizer_json``,
/// ``Vocab.from_token_bytes`` or ``Vocab.from_huggingface``; it is immutable and may be
/// shared by matchers on any thread.
#[pyclass(module = "frontier_stream", name = "Vocab", frozen)]
pub struct Vocab {
    vocab: Arc<Vocabulary>,
    grammars: Mutex<Vec<(ParserSpec, Arc<dyn DynGrammar>)>>,
    /// The built-in tiktoken encoding and the EOS ids given, when that is what this is: a
    /// pickle rebuilds it by name (keeping `encode`) instead of from its table.
    builtin: Option<(String, Option<Vec<u32>>)>,
}

fn vocab_error(error: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// `ids` (Python integers, or objects with `__index__`) as token ids: one that is no `u32`
/// (negative, or 2**32 and above) is a `ValueError` of kind `id_out_of_range`, as an id past
/// the vocabulary is; a non-integer is the `TypeError` of the conversion.
fn token_ids(ids: Option<Vec<Bound<'_, PyAny>>>, what: &str) -> PyResult<Vec<u32>> {
    ids.unwrap_or_default()
        .iter()
        .map(|id| match id.extract::<u32>() {
            Ok(id) => Ok(id),
            Err(error) if error.is_instance_of::<PyOverflowError>(id.py()) => {
                Err(PyValueError::new_err(format!(
                    "id_out_of_range: {what} id {id} is not a token id (0 to 2**32 - 1)"
                )))
            }
            Err(error) => Err(error),
        })
        .collect()
}

impl Vocab {
    fn new(vocab: Vocabulary) -> Vocab {
        Vocab {
            vocab: Arc::new(vocab),
            grammars: Mutex::new(Vec::new()),
            builtin: None,
        }
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &Arc<Vocabulary> {
        &self.vocab
    }

    /// The grammar of `spec` over this vocabulary, compiled on first use.
    pub fn grammar(&self, spec: &ParserSpec) -> Arc<dyn DynGrammar> {
        let mut grammars = self.grammars.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, grammar)) = grammars.iter().find(|(known, _)| known == spec) {
            return Arc::clone(grammar);
        }
        let grammar = dynamic::compile(spec, Arc::clone(&self.vocab));
        grammars.push((*spec, Arc::clone(&grammar)));
        grammar
    }
}

#[pymethods]
impl Vocab {
    /// A tiktoken encoding: ``"o200k_base"`` or ``"cl100k_base"``, built in (no download: the
    /// rank files are compiled in), ``<|endoftext|>`` being EOS; or a ``.tiktoken`` rank file,
    /// given by its path (a ``str`` that is no built-in name, or an ``os.PathLike``). A rank
    /// file names no special tokens: OpenAI's own ``cl100k_base.tiktoken`` or
    /// ``o200k_base.tiktoken`` is that built-in encoding; any other file gets
    /// ``<|endoftext|>`` as EOS (a rank spelling it, else the id past the ranks) and no
    /// encoder. ``eos_ids`` replace the EOS tokens (for a rank file, an id past its ranks
    /// becomes a special EOS token).
    #[staticmethod]
    #[pyo3(signature = (name, eos_ids = None))]
    fn from_tiktoken(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        eos_ids: Option<Vec<Bound<'_, PyAny>>>,
    ) -> PyResult<Vocab> {
        let given = eos_ids.is_some();
        let eos = token_ids(eos_ids, "EOS")?;
        let loaded = match name.extract::<String>() {
            Ok(name) if tiktoken::Builtin::from_name(&name).is_some() => {
                let loaded = py.detach(|| tiktoken::from_name_or_path(&name, &eos));
                return loaded.map_err(vocab_error).map(|vocab| Vocab {
                    builtin: Some((name, given.then_some(eos))),
                    ..Vocab::new(vocab)
                });
            }
            Ok(name) => py.detach(|| tiktoken::from_name_or_path(&name, &eos)),
            Err(_) => {
                let path: PathBuf = name.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "from_tiktoken takes an encoding name or a path, not a {}",
                        name.get_type().name().map_or("?".into(), |n| n.to_string())
                    ))
                })?;
                py.detach(|| tiktoken::from_path(&path, &eos))
            }
        };
        loaded.map(Vocab::new).map_err(vocab_error)
    }

    /// The vocabulary of a Hugging Face ``tokenizer.json``. EOS: the ids given, else the
    /// ``eos_token`` of a ``tokenizer_config.json`` beside the file, else none.
    #[staticmethod]
    #[pyo3(signature = (path, eos_ids = None))]
    fn from_tokenizer_json(
        py: Python<'_>,
        path: PathBuf,
        eos_ids: Option<Vec<Bound<'_, PyAny>>>,
    ) -> PyResult<Vocab> {
        let eos: Vec<hf::EosSpec> = token_ids(eos_ids, "EOS")?
            .into_iter()
            .map(hf::EosSpec::Id)
            .collect();
        py.detach(|| hf::from_file(&path, &eos))
            .map(Vocab::new)
            .map_err(|e| vocab_error(format!("{}: {e}", path.display())))
    }

    /// A vocabulary from each id's bytes: ``tokens[i]`` is id ``i``'s ``bytes`` (or any
    /// bytes-like object: ``bytearray``, ``memoryview``), or ``None``
    /// (or ``b""``) for an id with no token. ``special_ids`` are special tokens (never
    /// allowed), ``eos_ids`` the EOS tokens (allowed once the text is complete).
    #[staticmethod]
    #[pyo3(signature = (tokens, special_ids = None, eos_ids = None))]
    fn from_token_bytes(
        tokens: &Bound<'_, PyAny>,
        special_ids: Option<Vec<Bound<'_, PyAny>>>,
        eos_ids: Option<Vec<Bound<'_, PyAny>>>,
    ) -> PyResult<Vocab> {
        let special_ids = token_ids(special_ids, "special")?;
        let eos_ids = token_ids(eos_ids, "EOS")?;
        let mut table = Vec::new();
        for (id, token) in tokens.try_iter()?.enumerate() {
            let token = token?;
            if token.is_none() {
                table.push(Vec::new());
                continue;
            }
            if let Ok(bytes) = token.cast::<PyBytes>() {
                table.push(bytes.as_bytes().to_vec());
                continue;
            }
            // bytearray, memoryview: any buffer of bytes.
            let buffer = PyBuffer::<u8>::get(&token).map_err(|_| {
                PyTypeError::new_err(format!(
                    "tokens[{id}] is a {}, not bytes or None",
                    token
                        .get_type()
                        .name()
                        .map_or("?".into(), |n| n.to_string())
                ))
            })?;
            table.push(buffer.to_vec(token.py())?);
        }
        Vocabulary::from_raw(&table, &special_ids, &eos_ids)
            .map(Vocab::new)
            .map_err(vocab_error)
    }

    /// The vocabulary of a transformers fast tokenizer (``tokenizer.backend_tokenizer``),
    /// read from its ``tokenizer.json`` form. EOS: the ids given (an engine's stop tokens,
    /// such as a generation config's several EOS ids), else ``tokenizer.eos_token_id``.
    #[staticmethod]
    #[pyo3(signature = (tokenizer, eos_ids = None))]
    fn from_huggingface(
        tokenizer: &Bound<'_, PyAny>,
        eos_ids: Option<Vec<Bound<'_, PyAny>>>,
    ) -> PyResult<Vocab> {
        let backend = tokenizer.getattr("backend_tokenizer").map_err(|_| {
            PyTypeError::new_err(
                "the tokenizer has no backend_tokenizer: a transformers fast tokenizer is needed",
            )
        })?;
        let json: String = backend.call_method0("to_str")?.extract()?;
        let eos: Vec<u32> = match eos_ids {
            Some(ids) => token_ids(Some(ids), "EOS")?,
            None => tokenizer
                .getattr("eos_token_id")?
                .extract::<Option<u32>>()?
                .into_iter()
                .collect(),
        };
        let eos: Vec<hf::EosSpec> = eos.into_iter().map(hf::EosSpec::Id).collect();
        tokenizer
            .py()
            .detach(|| hf::from_json_text(&json, &eos))
            .map(Vocab::new)
            .map_err(vocab_error)
    }

    /// The number of ids, ``V``.
    #[getter]
    fn size(&self) -> u32 {
        self.vocab.size()
    }

    /// The EOS ids.
    #[getter]
    fn eos_ids(&self) -> Vec<u32> {
        self.vocab.eos().to_vec()
    }

    /// Words in one mask row: ``ceil(V / 32)``.
    #[getter]
    fn mask_words(&self) -> usize {
        self.vocab.mask_words()
    }

    /// ``text``'s token ids by the vocabulary's own tokenizer: the tiktoken encodings have one
    /// (special-token names are encoded as plain text); other vocabularies raise
    /// ``ValueError``.
    fn encode(&self, py: Python<'_>, text: &str) -> PyResult<Vec<u32>> {
        py.detach(|| self.vocab.encode(text)).map_err(vocab_error)
    }

    /// Id ``token``'s bytes (empty for a special token or a hole).
    fn token_bytes<'py>(&self, py: Python<'py>, token: u32) -> PyResult<Bound<'py, PyBytes>> {
        if token >= self.vocab.size() {
            return Err(PyValueError::new_err(format!(
                "token {token} is past the vocabulary's {} ids",
                self.vocab.size()
            )));
        }
        Ok(PyBytes::new(py, self.vocab.bytes(token)))
    }

    /// Pickling (Ray, Spark and multiprocessing send a vocabulary to their workers this way):
    /// a built-in tiktoken encoding by name, any other vocabulary as its table (each id's bytes,
    /// a special token's name, the special and EOS ids), which ``from_token_bytes`` rebuilds
    /// with the same masks. The grammars compiled over it are not sent: a worker compiles its
    /// own on first use.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let this = slf.get();
        let class = slf.get_type();
        if let Some((name, eos)) = &this.builtin {
            let args = PyTuple::new(
                py,
                [name.into_pyobject(py)?.into_any(), eos.into_pyobject(py)?],
            )?;
            return Ok((class.getattr("from_tiktoken")?, args));
        }
        let vocab = &this.vocab;
        let (mut tokens, mut special, mut eos) = (Vec::new(), Vec::new(), Vec::new());
        for id in 0..vocab.size() {
            let bytes = match vocab.kind(id) {
                Some(TokenKind::Normal) => vocab.bytes(id),
                Some(kind @ (TokenKind::Special | TokenKind::Eos)) => {
                    if kind == TokenKind::Eos {
                        eos.push(id);
                    } else {
                        special.push(id);
                    }
                    vocab.special_name(id).unwrap_or("").as_bytes()
                }
                Some(TokenKind::Hole) | None => b"",
            };
            tokens.push(PyBytes::new(py, bytes));
        }
        let args = PyTuple::new(
            py,
            [
                PyList::new(py, tokens)?.into_any(),
                special.into_pyobject(py)?,
                eos.into_pyobject(py)?,
            ],
        )?;
        Ok((class.getattr("from_token_bytes")?, args))
    }

    fn __repr__(&self) -> String {
        format!(
            "Vocab(size={}, eos_ids={:?})",
            self.vocab.size(),
            self.vocab.eos()
        )
    }
}
