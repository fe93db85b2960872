//! The units an apply_patch stream confirms, as owned values: what the application engine
//! consumes. The parser announces each unit with an event; an assembler builds these values
//! from the events.

/// One kind of line in an Update chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeLine {
    /// ` text`: a line that must be there and stays.
    Context(String),
    /// `-text`: a line that must be there and goes.
    Remove(String),
    /// `+text`: a line that comes.
    Add(String),
}

/// One chunk of an Update: an optional `@@` context, change lines, an optional end-of-file
/// marker.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Chunk {
    /// The text after `@@ `; `None` for a bare `@@` or (codex mode) an omitted one.
    pub context: Option<String>,
    /// The change lines, in order, without their prefix and line ending.
    pub lines: Vec<ChangeLine>,
    /// Whether `*** End of File` closed the chunk.
    pub end_of_file: bool,
}

impl Chunk {
    /// The lines the file has before the change (context and removed lines).
    pub fn old_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|l| match l {
            ChangeLine::Context(t) | ChangeLine::Remove(t) => Some(t.as_str()),
            ChangeLine::Add(_) => None,
        })
    }

    /// The lines the file has after the change (context and added lines).
    pub fn new_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|l| match l {
            ChangeLine::Context(t) | ChangeLine::Add(t) => Some(t.as_str()),
            ChangeLine::Remove(_) => None,
        })
    }
}

/// One file operation of a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileOperation {
    /// `*** Add File:` with the file's lines (each `+` line, without the `+`).
    Add {
        /// The path as written.
        path: String,
        /// The lines of the new file.
        lines: Vec<String>,
    },
    /// `*** Delete File:`.
    Delete {
        /// The path as written.
        path: String,
    },
    /// `*** Update File:` with an optional move and its chunks.
    Update {
        /// The path as written.
        path: String,
        /// The destination of `*** Move to:`, if any.
        move_to: Option<String>,
        /// The chunks, in order.
        chunks: Vec<Chunk>,
    },
}

impl FileOperation {
    /// The path the operation names first.
    pub fn path(&self) -> &str {
        match self {
            FileOperation::Add { path, .. }
            | FileOperation::Delete { path }
            | FileOperation::Update { path, .. } => path,
        }
    }
}
