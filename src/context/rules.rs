//! Every rule a patch can break, with its name and its message, in one place. The names and
//! messages are CPAT's (`cpat_reference.md` §3.5) except for the two rules frontier adds,
//! `visibility_invalid` (divergence 2) and `invalid_field` (divergence 3).

use serde::Serialize;

/// A rule of the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// An op without target ids.
    EmptyIds,
    /// A target id that is not in the store.
    UnknownId,
    /// A system prompt, budget report or open reasoning trace.
    ProtectedKind,
    /// A field of the wrong type (frontier).
    InvalidField,
    /// compact without description or content.
    CompactOutput,
    /// compact without `preserve` or `drop`.
    CompactPolicy,
    /// merge without description or content.
    MergeOutput,
    /// fold without description or content.
    FoldOutput,
    /// Collapsing a task_state block.
    ProtectedState,
    /// Collapsing the current question.
    ProtectedCurrentQuestion,
    /// Collapsing a hidden block.
    HiddenTarget,
    /// Offload without its replacement fields.
    OffloadReplacement,
    /// Offloading a block that is neither a tool result nor an assistant message.
    OffloadKind,
    /// Offloading an offloaded block.
    AlreadyOffloaded,
    /// replace or redact while disabled.
    OpDisabled,
    /// redact without fields.
    RedactFields,
    /// Redacting what is not an inline tool result.
    RedactKind,
    /// Redacting what is not a JSON object.
    RedactNotJson,
    /// set_visibility with an empty value.
    VisibilityMissing,
    /// set_visibility with a value other than model, archived, hidden (frontier).
    VisibilityInvalid,
    /// Hiding a protected block.
    ProtectedHidden,
    /// Replacing a protected original.
    ReplaceProtected,
    /// replace without content.
    ReplaceContent,
    /// Restoring what is not offloaded.
    NotOffloaded,
    /// Restoring a payload the content store does not hold.
    ArtifactMissing,
    /// merge of fewer than two ids.
    MergeArity,
    /// merge with an unknown resolution.
    MergeResolution,
    /// fold without a scope label.
    FoldScope,
    /// fold of a non-contiguous range.
    FoldRange,
    /// A patch that breaks a tool-call chain in the view.
    ChainAtomicity,
}

impl Rule {
    /// Every rule, in the order of this enum.
    pub const ALL: [Rule; 30] = [
        Rule::EmptyIds,
        Rule::UnknownId,
        Rule::ProtectedKind,
        Rule::InvalidField,
        Rule::CompactOutput,
        Rule::CompactPolicy,
        Rule::MergeOutput,
        Rule::FoldOutput,
        Rule::ProtectedState,
        Rule::ProtectedCurrentQuestion,
        Rule::HiddenTarget,
        Rule::OffloadReplacement,
        Rule::OffloadKind,
        Rule::AlreadyOffloaded,
        Rule::OpDisabled,
        Rule::RedactFields,
        Rule::RedactKind,
        Rule::RedactNotJson,
        Rule::VisibilityMissing,
        Rule::VisibilityInvalid,
        Rule::ProtectedHidden,
        Rule::ReplaceProtected,
        Rule::ReplaceContent,
        Rule::NotOffloaded,
        Rule::ArtifactMissing,
        Rule::MergeArity,
        Rule::MergeResolution,
        Rule::FoldScope,
        Rule::FoldRange,
        Rule::ChainAtomicity,
    ];

    /// The rule's stable name.
    pub fn name(self) -> &'static str {
        match self {
            Rule::EmptyIds => "empty_ids",
            Rule::UnknownId => "unknown_id",
            Rule::ProtectedKind => "protected_kind",
            Rule::InvalidField => "invalid_field",
            Rule::CompactOutput => "compact_output",
            Rule::CompactPolicy => "compact_policy",
            Rule::MergeOutput => "merge_output",
            Rule::FoldOutput => "fold_output",
            Rule::ProtectedState => "protected_state",
            Rule::ProtectedCurrentQuestion => "protected_current_question",
            Rule::HiddenTarget => "hidden_target",
            Rule::OffloadReplacement => "offload_replacement",
            Rule::OffloadKind => "offload_kind",
            Rule::AlreadyOffloaded => "already_offloaded",
            Rule::OpDisabled => "op_disabled",
            Rule::RedactFields => "redact_fields",
            Rule::RedactKind => "redact_kind",
            Rule::RedactNotJson => "redact_not_json",
            Rule::VisibilityMissing => "visibility_missing",
            Rule::VisibilityInvalid => "visibility_invalid",
            Rule::ProtectedHidden => "protected_hidden",
            Rule::ReplaceProtected => "replace_protected",
            Rule::ReplaceContent => "replace_content",
            Rule::NotOffloaded => "not_offloaded",
            Rule::ArtifactMissing => "artifact_missing",
            Rule::MergeArity => "merge_arity",
            Rule::MergeResolution => "merge_resolution",
            Rule::FoldScope => "fold_scope",
            Rule::FoldRange => "fold_range",
            Rule::ChainAtomicity => "chain_atomicity",
        }
    }
}

/// A broken rule with its message; the patch engine adds the op's index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub rule: Rule,
    /// What the agent reads.
    pub message: String,
}

fn v(rule: Rule, message: String) -> Violation {
    Violation { rule, message }
}

/// Why a block cannot be patched at all (`protected_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unpatchable {
    /// A system prompt.
    SystemPrompt,
    /// A budget report.
    BudgetReport,
    /// An open reasoning trace.
    ApiRequired,
}

/// `empty_ids`.
pub fn empty_ids() -> Violation {
    v(Rule::EmptyIds, "operation has no target ids".into())
}
/// `unknown_id`.
pub fn unknown_id(id: &str) -> Violation {
    v(Rule::UnknownId, format!("block \"{id}\" does not exist"))
}
/// `protected_kind`.
pub fn protected_kind(id: &str, why: Unpatchable) -> Violation {
    let reason = match why {
        Unpatchable::SystemPrompt => "system prompt is not patchable",
        Unpatchable::BudgetReport => "budget reports are runtime-owned and rotated automatically every turn \u{2014} remove this id from your operation and retry",
        Unpatchable::ApiRequired => "block is api_required (open tool-call chain); the runtime will release it",
    };
    v(Rule::ProtectedKind, format!("block \"{id}\": {reason}"))
}
/// `invalid_field` (divergence 3).
pub fn invalid_field(op: &str, field: &str, expected: &str) -> Violation {
    v(
        Rule::InvalidField,
        format!("{op}: field \"{field}\" must be {expected}"),
    )
}
/// `compact_output`.
pub fn compact_output() -> Violation {
    v(
        Rule::CompactOutput,
        "compact requires output.description and output.content".into(),
    )
}
/// `compact_policy`.
pub fn compact_policy() -> Violation {
    v(
        Rule::CompactPolicy,
        "compact must declare non-empty `preserve` and a `drop` list".into(),
    )
}
/// `merge_output`.
pub fn merge_output() -> Violation {
    v(
        Rule::MergeOutput,
        "merge requires output.description and output.content (the consolidated block)".into(),
    )
}
/// `fold_output`.
pub fn fold_output() -> Violation {
    v(
        Rule::FoldOutput,
        "fold requires output.description and output.content (the scope summary)".into(),
    )
}
/// `protected_state`.
pub fn protected_state(id: &str) -> Violation {
    v(Rule::ProtectedState, format!("block \"{id}\" is task_state and cannot be collapsed into a summary; archive or restore it instead"))
}
/// `protected_current_question`.
pub fn protected_current_question(id: &str) -> Violation {
    v(Rule::ProtectedCurrentQuestion, format!("block \"{id}\" is the current question (most recent user message) and cannot be collapsed; it must stay verbatim so you do not lose track of what you are answering"))
}
/// `hidden_target`.
pub fn hidden_target(id: &str) -> Violation {
    v(
        Rule::HiddenTarget,
        format!("block \"{id}\" is hidden; restore it first"),
    )
}
/// `offload_replacement`.
pub fn offload_replacement() -> Violation {
    v(
        Rule::OffloadReplacement,
        "payload_offload requires replace_with.{description,summary,retrieval_hint}".into(),
    )
}
/// `offload_kind`.
pub fn offload_kind(id: &str, kind: &str) -> Violation {
    v(
        Rule::OffloadKind,
        format!(
            "block \"{id}\" ({kind}) cannot be offloaded; only tool results and assistant messages"
        ),
    )
}
/// `already_offloaded`.
pub fn already_offloaded(id: &str) -> Violation {
    v(
        Rule::AlreadyOffloaded,
        format!("block \"{id}\" is already offloaded"),
    )
}
/// `op_disabled` for redact.
pub fn redact_disabled() -> Violation {
    v(
        Rule::OpDisabled,
        "redact is disabled in this MVP configuration".into(),
    )
}
/// `op_disabled` for replace.
pub fn replace_disabled() -> Violation {
    v(
        Rule::OpDisabled,
        "replace is disabled in this MVP configuration (history must not be rewritten)".into(),
    )
}
/// `redact_fields`.
pub fn redact_fields() -> Violation {
    v(Rule::RedactFields, "redact requires drop_fields".into())
}
/// `redact_kind`.
pub fn redact_kind(id: &str) -> Violation {
    v(
        Rule::RedactKind,
        format!("block \"{id}\" is not an inline tool result"),
    )
}
/// `redact_not_json`: the content does not parse.
pub fn redact_not_json(id: &str) -> Violation {
    v(
        Rule::RedactNotJson,
        format!("block \"{id}\" content is not JSON; use compact or payload_offload instead"),
    )
}
/// `redact_not_json`: the content is JSON but not an object.
pub fn redact_not_object(id: &str) -> Violation {
    v(
        Rule::RedactNotJson,
        format!("block \"{id}\" content is not a JSON object"),
    )
}
/// `visibility_missing`.
pub fn visibility_missing() -> Violation {
    v(
        Rule::VisibilityMissing,
        "set_visibility requires a visibility value".into(),
    )
}
/// `visibility_invalid` (divergence 2).
pub fn visibility_invalid(value: &str) -> Violation {
    v(
        Rule::VisibilityInvalid,
        format!(
            "set_visibility visibility must be \"model\", \"archived\" or \"hidden\", not {}",
            serde_json::Value::from(value)
        ),
    )
}
/// `protected_hidden`.
pub fn protected_hidden(id: &str) -> Violation {
    v(Rule::ProtectedHidden, format!("block \"{id}\" is protected and cannot be hidden; archive it or compact it into a summary"))
}
/// `replace_protected`.
pub fn replace_protected(id: &str) -> Violation {
    v(
        Rule::ReplaceProtected,
        format!("block \"{id}\" is a protected original and cannot be replaced"),
    )
}
/// `replace_content`.
pub fn replace_content() -> Violation {
    v(
        Rule::ReplaceContent,
        "replace requires non-empty content".into(),
    )
}
/// `not_offloaded`.
pub fn not_offloaded(id: &str) -> Violation {
    v(
        Rule::NotOffloaded,
        format!(
            "block \"{id}\" is not offloaded; restore only re-inlines payload_offloaded blocks"
        ),
    )
}
/// `artifact_missing`.
pub fn artifact_missing(id: &str) -> Violation {
    v(
        Rule::ArtifactMissing,
        format!("block \"{id}\" payload is unrecoverable (no content at its version key)"),
    )
}
/// `merge_arity`.
pub fn merge_arity() -> Violation {
    v(
        Rule::MergeArity,
        "merge needs at least 2 source ids to consolidate".into(),
    )
}
/// `merge_resolution`.
pub fn merge_resolution() -> Violation {
    v(Rule::MergeResolution, "merge requires resolution: \"update\" (combine overlapping info) or \"contradiction\" (newer info supersedes older)".into())
}
/// `fold_scope`.
pub fn fold_scope() -> Violation {
    v(
        Rule::FoldScope,
        "fold requires a scope_label naming the subtask being folded".into(),
    )
}
/// `fold_range`.
pub fn fold_range() -> Violation {
    v(Rule::FoldRange, "fold ids must be a contiguous block range (a subtask trajectory); use compact for a non-contiguous set".into())
}
/// `chain_atomicity`: `visible` stays in the view, `member` of its chain does not.
pub fn chain_atomicity(visible: &str, member: &str, chain: &str) -> Violation {
    v(Rule::ChainAtomicity, format!("tool-call chain would be broken: \"{visible}\" stays visible but its chain member \"{member}\" would not. Patch the whole chain together (e.g. compact all of: {chain})."))
}

/// `chain_atomicity`: `id` would be a message between a chain's head and its results.
pub fn chain_interposed(id: &str, head: &str, chain: &str) -> Violation {
    v(Rule::ChainAtomicity, format!("tool-call chain would be broken: \"{id}\" would stand between \"{head}\" and its results. Keep it out of the view or patch the whole chain together (e.g. compact all of: {chain})."))
}

/// `chain_atomicity` for a summary the patch creates inside a chain (its earliest source is
/// one of the chain's results, and the chain's head and a result after it stay in the view).
pub fn summary_interposed(sources: &str, head: &str, chain: &str) -> Violation {
    v(Rule::ChainAtomicity, format!("tool-call chain would be broken: the summary of {sources} would stand between \"{head}\" and its results. Keep it out of the view or patch the whole chain together (e.g. compact all of: {chain})."))
}
