//! Unified diff as git and GNU patch read it (being built; see issue 4).

pub mod units;
