//! The units a unified diff confirms, as owned values: what the application engine consumes.
//! The parser announces each unit with an event; an assembler builds these values from the
//! events. Paths and content are bytes: diffs need not be UTF-8.

/// Which side a hunk line belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LineKind {
    /// ` ` (or an empty line): both sides.
    Context,
    /// `-`: the old side only.
    Remove,
    /// `+`: the new side only.
    Add,
}

/// One body line of a hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HunkLine {
    /// Its side.
    pub kind: LineKind,
    /// Its content, without the prefix byte and without the LF (a CR before the LF stays).
    pub content: Vec<u8>,
    /// A `\ No newline at end of file` line followed it.
    pub no_newline: bool,
}

/// A hunk, confirmed whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// `a` of `-a,b`.
    pub old_start: u64,
    /// `b` of `-a,b` (the real count in recount mode).
    pub old_count: u64,
    /// `c` of `+c,d`.
    pub new_start: u64,
    /// `d` of `+c,d` (the real count in recount mode).
    pub new_count: u64,
    /// The text after the closing `@@` (the section heading), without the leading space.
    pub section: Vec<u8>,
    /// The body lines.
    pub lines: Vec<HunkLine>,
    /// The header states the ranges. `false` only in `recount` mode, for a header without
    /// them (`@@ ... @@`, `@@`): the starts are then 0 and mean nothing, and an engine places
    /// the hunk by searching (the counts are the real ones either way).
    pub ranges_stated: bool,
}

impl Default for Hunk {
    /// An empty hunk with stated ranges `-0,0 +0,0`.
    fn default() -> Hunk {
        Hunk {
            old_start: 0,
            old_count: 0,
            new_start: 0,
            new_count: 0,
            section: Vec::new(),
            lines: Vec::new(),
            ranges_stated: true,
        }
    }
}

/// One block of a `GIT binary patch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryBlock {
    /// `literal` (the whole file) or `delta` (git's delta format against the other side).
    pub kind: BinaryKind,
    /// The size stated after the keyword: the inflated size of the data.
    pub size: u64,
    /// The base85-decoded bytes: zlib-compressed.
    pub deflated: Vec<u8>,
}

/// The two forms of a binary block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryKind {
    /// `literal N`.
    Literal,
    /// `delta N`.
    Delta,
}

/// What a file patch says about binary content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binary {
    /// `Binary files A and B differ`: the change is not in the patch.
    Differ,
    /// `GIT binary patch`: the forward block and, when present, the reverse one.
    Patch {
        /// From old to new.
        forward: BinaryBlock,
        /// From new to old.
        reverse: Option<BinaryBlock>,
    },
}

/// The header of a file patch: names and git's metadata.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FileHeader {
    /// The names of `diff --git a/X b/Y`, unquoted, if that line was there.
    pub git_names: Option<(Vec<u8>, Vec<u8>)>,
    /// The name after `--- ` (unquoted, timestamp removed); `None` when absent.
    pub old_path: Option<Vec<u8>>,
    /// The name after `+++ `.
    pub new_path: Option<Vec<u8>>,
    /// `old mode`.
    pub old_mode: Option<u32>,
    /// `new mode`.
    pub new_mode: Option<u32>,
    /// `deleted file mode`.
    pub deleted_file_mode: Option<u32>,
    /// `new file mode`.
    pub new_file_mode: Option<u32>,
    /// `rename from` / `copy from`.
    pub rename_from: Option<Vec<u8>>,
    /// `rename to`.
    pub rename_to: Option<Vec<u8>>,
    /// `copy from`.
    pub copy_from: Option<Vec<u8>>,
    /// `copy to`.
    pub copy_to: Option<Vec<u8>>,
    /// `similarity index N%`.
    pub similarity: Option<u8>,
    /// `dissimilarity index N%`.
    pub dissimilarity: Option<u8>,
    /// `index OLD..NEW[ MODE]`: the two abbreviated object names and the optional mode.
    pub index: Option<(Vec<u8>, Vec<u8>, Option<u32>)>,
    /// Binary content, if the patch has any.
    pub binary: Option<Binary>,
}

impl FileHeader {
    /// Whether a side's name is `/dev/null`.
    pub fn is_dev_null(name: &[u8]) -> bool {
        name == b"/dev/null"
    }
}

/// A whole file patch: the header and its hunks.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FilePatch {
    /// Names and metadata.
    pub header: FileHeader,
    /// The hunks, in order.
    pub hunks: Vec<Hunk>,
}
