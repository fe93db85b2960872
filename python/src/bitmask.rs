//! A caller's bitmask array: checked once, then its rows written in place.
//!
//! A bitmask is a 2-D array of `int32`, `(rows, words)`, C-contiguous and writable, with
//! `words` at least the vocabulary's `ceil(V/32)` (a model's logits may be wider than its
//! tokenizer: the words past the vocabulary's are written as zero, since those ids are never
//! allowed). Two kinds of object are read:
//!
//! - anything exporting a buffer (numpy arrays, `array`, `memoryview`): through the buffer
//!   protocol, which gives the format, shape, strides and the writable flag, and keeps the
//!   memory exported while the [`Bitmask`] lives;
//! - a torch tensor (which exports no buffer): its `device`, `dtype`, `is_contiguous()`,
//!   `shape` and `data_ptr()`, the tensor held while the [`Bitmask`] lives.
//!
//! A wrong dtype (a non-native byte order included: numpy's `>i4` on a little-endian
//! machine), shape, device, a non-contiguous or read-only array, and a row index out of range
//! are exceptions raised before anything is written.
//!
//! This module is the package's only `unsafe` code: turning the checked pointer into row
//! slices. Rows handed out at once are distinct, so the slices never alias each other; what
//! Python code on another thread does with the same memory meanwhile is the caller's business,
//! as it is for numpy's own functions that release the GIL.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// Where the memory comes from: held, never read, so that it stays valid (and exported).
#[allow(dead_code)]
enum Source {
    Buffer(PyBuffer<i32>),
    Tensor(Py<PyAny>),
}

/// A checked bitmask array (see the module docs).
pub struct Bitmask {
    /// Keeps the memory alive and exported.
    _source: Source,
    /// The first word's address.
    base: usize,
    rows: usize,
    words: usize,
}

/// A short name for `obj`'s type, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".to_owned(), |n| n.to_string())
}

fn is_torch_tensor(obj: &Bound<'_, PyAny>) -> bool {
    obj.get_type()
        .module()
        .is_ok_and(|m| m.to_string().split('.').next() == Some("torch"))
        && obj.hasattr("data_ptr").unwrap_or(false)
}

/// Whether a buffer's struct-module `format` is in the machine's byte order: no prefix, `@`
/// or `=` (native), or the explicit order that is the machine's (`<` on little-endian, `>` or
/// `!` on big-endian). PyO3's own format check (0.27) lets a big-endian `>i` through on a
/// little-endian machine, where its words would be written in the wrong order.
fn native_byte_order(format: &std::ffi::CStr) -> bool {
    match format.to_bytes().first() {
        Some(b'<') => cfg!(target_endian = "little"),
        Some(b'>' | b'!') => cfg!(target_endian = "big"),
        _ => true,
    }
}

fn shape_of(rows: usize, words: usize, mask_words: usize) -> PyResult<(usize, usize)> {
    if words < mask_words {
        return Err(PyValueError::new_err(format!(
            "bitmask rows hold {words} words, the vocabulary needs {mask_words} (ceil(V/32))"
        )));
    }
    Ok((rows, words))
}

impl Bitmask {
    /// Checks `obj` as a bitmask for a vocabulary of `mask_words` words a row.
    pub fn of(obj: &Bound<'_, PyAny>, mask_words: usize) -> PyResult<Bitmask> {
        if is_torch_tensor(obj) {
            return Bitmask::of_tensor(obj, mask_words);
        }
        let buffer = match PyBuffer::<i32>::get(obj) {
            Ok(buffer) => buffer,
            Err(error) => {
                let dtype = obj
                    .getattr("dtype")
                    .map_or_else(|_| type_name(obj), |d| d.to_string());
                return Err(PyTypeError::new_err(format!(
                    "bitmask must be a 2-D int32 array (numpy, or a CPU torch tensor), got {dtype}: {error}"
                )));
            }
        };
        if !native_byte_order(buffer.format()) {
            return Err(PyTypeError::new_err(format!(
                "bitmask must be a 2-D int32 array in the machine's byte order, got format {:?} \
                 (numpy: {} instead of >i4; convert with .astype(np.int32))",
                buffer.format().to_string_lossy(),
                if cfg!(target_endian = "little") {
                    "<i4"
                } else {
                    ">i4"
                },
            )));
        }
        if buffer.readonly() {
            return Err(PyValueError::new_err("bitmask is read-only"));
        }
        if buffer.dimensions() != 2 {
            return Err(PyValueError::new_err(format!(
                "bitmask must have 2 dimensions (rows, words), it has {}",
                buffer.dimensions()
            )));
        }
        if !buffer.is_c_contiguous() {
            return Err(PyValueError::new_err("bitmask must be C-contiguous"));
        }
        let (rows, words) = shape_of(buffer.shape()[0], buffer.shape()[1], mask_words)?;
        if rows * words > 0 && buffer.buf_ptr().is_null() {
            return Err(PyValueError::new_err("bitmask's buffer pointer is null"));
        }
        Ok(Bitmask {
            base: buffer.buf_ptr() as usize,
            _source: Source::Buffer(buffer),
            rows,
            words,
        })
    }

    fn of_tensor(tensor: &Bound<'_, PyAny>, mask_words: usize) -> PyResult<Bitmask> {
        let device: String = tensor.getattr("device")?.getattr("type")?.extract()?;
        if device != "cpu" {
            return Err(PyValueError::new_err(format!(
                "bitmask is a torch tensor on {device}: frontier fills CPU tensors (copy the rows to the device after)"
            )));
        }
        let dtype = tensor.getattr("dtype")?.to_string();
        if dtype != "torch.int32" {
            return Err(PyTypeError::new_err(format!(
                "bitmask must be a torch.int32 tensor, got {dtype}"
            )));
        }
        let shape: Vec<usize> = tensor.getattr("shape")?.extract()?;
        let [rows, words] = shape[..] else {
            return Err(PyValueError::new_err(format!(
                "bitmask must have 2 dimensions (rows, words), it has {}",
                shape.len()
            )));
        };
        if !tensor.call_method0("is_contiguous")?.extract::<bool>()? {
            return Err(PyValueError::new_err("bitmask must be contiguous"));
        }
        let (rows, words) = shape_of(rows, words, mask_words)?;
        let base: usize = tensor.call_method0("data_ptr")?.extract()?;
        if rows * words > 0 && (base == 0 || base % std::mem::align_of::<u32>() != 0) {
            return Err(PyValueError::new_err(
                "bitmask's data pointer is null or misaligned",
            ));
        }
        Ok(Bitmask {
            _source: Source::Tensor(tensor.clone().unbind()),
            base,
            rows,
            words,
        })
    }

    /// Row `index` to write, or an `IndexError`.
    pub fn row(&mut self, index: i64) -> PyResult<&mut [u32]> {
        let index = usize::try_from(index)
            .ok()
            .filter(|&i| i < self.rows)
            .ok_or_else(|| self.out_of_range(index))?;
        // SAFETY: `index < rows`; `&mut self` makes this the only slice handed out.
        Ok(unsafe { self.row_slice(index) })
    }

    /// Row `index` as a slice.
    ///
    /// # Safety
    /// `index < rows`; no other slice of that row is alive while this one is, and this one
    /// does not outlive `self` (the callers tie it to their `&mut self`).
    unsafe fn row_slice<'a>(&self, index: usize) -> &'a mut [u32] {
        if self.words == 0 {
            return &mut [];
        }
        let row = (self.base as *mut u32).wrapping_add(index * self.words);
        // SAFETY: `base` is non-null and points to `rows * words` writable, aligned,
        // C-contiguous 4-byte words (checked in `of`: the buffer's format, flags and shape,
        // or the tensor's dtype, device, contiguity, shape and pointer), kept alive by
        // `_source` while `self` lives, which the slice does not outlive; `index < rows`, so
        // the row lies inside; the caller guarantees that nothing else aliases it.
        unsafe { std::slice::from_raw_parts_mut(row, self.words) }
    }

    fn out_of_range(&self, index: impl std::fmt::Display) -> PyErr {
        PyIndexError::new_err(format!(
            "row {index} is out of range: the bitmask has {} rows",
            self.rows
        ))
    }

    /// The rows `indices` (each checked, all distinct: a repeat is a `ValueError`), in order.
    pub fn rows(&mut self, indices: &[i64]) -> PyResult<Vec<&mut [u32]>> {
        let mut seen = vec![false; self.rows];
        let mut checked = Vec::with_capacity(indices.len());
        for &index in indices {
            let slot = usize::try_from(index)
                .ok()
                .and_then(|i| seen.get_mut(i))
                .ok_or_else(|| self.out_of_range(index))?;
            if std::mem::replace(slot, true) {
                return Err(PyValueError::new_err(format!(
                    "row {index} is given twice: each matcher needs its own row"
                )));
            }
            checked.push(index as usize);
        }
        Ok(checked
            .iter()
            // SAFETY: each index is below `rows` and they are distinct (checked above), so
            // the slices are disjoint; `&mut self` keeps any other slice from existing.
            .map(|&index| unsafe { self.row_slice(index) })
            .collect())
    }
}
