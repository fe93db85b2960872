//! apply_patch: the patch language of OpenAI Codex (being built; see issue 3).

pub mod units;
