//! `Parser`: a push parser for one stream, its events the dicts of the JSON objects
//! `frontier events` prints (data events as the parser emits them, not merged: adjacent pieces
//! of one value share their name and fields), its errors `frontier_stream.ParseError`.

use pyo3::buffer::PyBuffer;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use frontier_core::contract::{Owed, Unclosed, Verdict};
use frontier_core::dyn_parser::{self, DynParser, ErasedError};
use frontier_core::language::ParserSpec;

create_exception!(
    frontier_stream,
    ParseError,
    pyo3::exceptions::PyValueError,
    "The input left the language: `offset` (absolute, in bytes), `byte`, `kind` (a stable \
     name such as `unexpected_byte`) and `events` (those the failing push confirmed before \
     the error)."
);

/// A push parser for ``lang`` in ``mode`` (the language's default when ``None``).
///
/// ``push`` returns the events the bytes confirm; ``finish`` ends the stream with its
/// verdict. Once ``finish`` has run, ``push`` and ``finish`` raise ``RuntimeError``.
#[pyclass(module = "frontier_stream", name = "Parser")]
pub struct Parser {
    /// `None` once `finish` has taken it.
    inner: Option<Box<dyn DynParser>>,
}

/// Collects events as dicts, through `json.loads` of their JSON text.
struct Events<'py> {
    loads: Bound<'py, PyAny>,
    list: Bound<'py, PyList>,
    failure: Option<PyErr>,
}

impl<'py> Events<'py> {
    fn new(py: Python<'py>) -> PyResult<Events<'py>> {
        Ok(Events {
            loads: py.import("json")?.getattr("loads")?,
            list: PyList::empty(py),
            failure: None,
        })
    }

    fn add(&mut self, json: &[u8]) {
        if self.failure.is_some() {
            return;
        }
        let event = self
            .loads
            .call1((PyBytes::new(self.loads.py(), json),))
            .and_then(|event| self.list.append(event));
        if let Err(e) = event {
            self.failure = Some(e);
        }
    }

    fn done(self) -> PyResult<Bound<'py, PyList>> {
        match self.failure {
            Some(e) => Err(e),
            None => Ok(self.list),
        }
    }
}

fn error_dict<'py>(py: Python<'py>, error: &ErasedError) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("offset", error.offset)?;
    dict.set_item("byte", error.byte)?;
    dict.set_item("kind", error.kind)?;
    Ok(dict)
}

fn unclosed_dict<'py>(py: Python<'py>, unclosed: &Unclosed) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("construct", unclosed.construct)?;
    dict.set_item("began_at", unclosed.began_at)?;
    match unclosed.owed {
        Some(Owed::Bytes(bytes)) => {
            let owed = PyDict::new(py);
            owed.set_item("bytes", bytes)?;
            dict.set_item("owed", owed)?;
        }
        Some(Owed::Lines { old, new }) => {
            let owed = PyDict::new(py);
            owed.set_item("old", old)?;
            owed.set_item("new", new)?;
            dict.set_item("owed", owed)?;
        }
        None => {}
    }
    Ok(dict)
}

const FINISHED: &str = "the parser was finished";

#[pymethods]
impl Parser {
    #[new]
    #[pyo3(signature = (lang, mode = None))]
    fn new(lang: &str, mode: Option<&str>) -> PyResult<Parser> {
        let spec =
            ParserSpec::parse(lang, mode).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Parser {
            inner: Some(dyn_parser::build(&spec)),
        })
    }

    /// Pushes ``data`` (``bytes`` or any bytes-like object such as ``bytearray`` and
    /// ``memoryview``, or ``str`` as UTF-8) and returns the events it confirms,
    /// as dicts. Input that leaves the language raises ``ParseError`` (its ``events``: those
    /// this push confirmed before the error); so does every later push.
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let copied: Vec<u8>;
        let bytes: &[u8] = if let Ok(text) = data.cast::<PyString>() {
            text.to_str()?.as_bytes()
        } else if let Ok(bytes) = data.cast::<PyBytes>() {
            bytes.as_bytes()
        } else if let Ok(buffer) = PyBuffer::<u8>::get(data) {
            // bytearray, memoryview, array('B'), a uint8 numpy array: any buffer of bytes,
            // copied out (it may be resized or written by Python code while the parser runs).
            copied = buffer.to_vec(py)?;
            &copied
        } else {
            return Err(PyTypeError::new_err(format!(
                "push takes bytes or str (or a bytes-like object: bytearray, memoryview), not {}",
                data.get_type().name()?
            )));
        };
        let parser = self
            .inner
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err(FINISHED))?;
        let mut events = Events::new(py)?;
        let pushed = parser.push(bytes, &mut |json| events.add(json));
        let events = events.done()?;
        match pushed {
            Ok(()) => Ok(events),
            Err(error) => {
                let exception = ParseError::new_err(error.to_string());
                let value = exception.value(py);
                value.setattr("offset", error.offset)?;
                value.setattr("byte", error.byte)?;
                value.setattr("kind", error.kind)?;
                value.setattr("events", events)?;
                Err(exception)
            }
        }
    }

    /// The bytes that may come next, as 32 bytes: bit ``b % 8`` of byte ``b // 8`` is byte
    /// ``b``. All zero after an error or after ``finish``.
    fn allowed<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let set = self.inner.as_ref().map_or([0; 32], |p| p.allowed());
        PyBytes::new(py, &set)
    }

    /// Whether the input so far is a sentence of the language (``False`` after ``finish``).
    fn accepting(&self) -> bool {
        self.inner.as_ref().is_some_and(|p| p.accepting())
    }

    /// Ends the stream: a dict with ``verdict`` (``"complete"``, ``"incomplete"`` or
    /// ``"error"``), ``consumed`` and ``confirmed`` (byte counts), ``error`` (``None`` or a
    /// dict of ``offset``, ``byte``, ``kind``), ``unclosed`` (``None`` or what an incomplete
    /// stream left open: ``construct``, ``began_at``, and ``owed`` when known) and ``events``
    /// (those only the end confirms).
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let parser = self
            .inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err(FINISHED))?;
        let mut events = Events::new(py)?;
        let outcome = parser.finish(&mut |json| events.add(json));
        let dict = PyDict::new(py);
        dict.set_item("verdict", outcome.verdict.as_str())?;
        dict.set_item("consumed", outcome.consumed)?;
        dict.set_item("confirmed", outcome.confirmed)?;
        match &outcome.verdict {
            Verdict::Error(error) => dict.set_item("error", error_dict(py, error)?)?,
            _ => dict.set_item("error", py.None())?,
        }
        match &outcome.verdict {
            Verdict::Incomplete(unclosed) => {
                dict.set_item("unclosed", unclosed_dict(py, unclosed)?)?
            }
            _ => dict.set_item("unclosed", py.None())?,
        }
        dict.set_item("events", events.done()?)?;
        Ok(dict)
    }
}
