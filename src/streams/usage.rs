//! The token usage a provider reports for a turn, read from its stream and normalised into
//! the one shape the context engine reads (`cpat_reference.md` §8–§9): `prompt_tokens`
//! calibrates the engine's estimate, and `prompt_cache_hit_tokens / prompt_tokens` is the
//! cached fraction of the generational fallback's gate.
//!
//! | API | where | `prompt_tokens` | `completion_tokens` | `prompt_cache_hit_tokens` |
//! |---|---|---|---|---|
//! | Chat | the last chunk's `usage` (sent with `stream_options.include_usage`) | `prompt_tokens` | `completion_tokens` | `prompt_tokens_details.cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens` |
//! | Responses | `response.usage` of `response.completed` / `response.incomplete` | `input_tokens` | `output_tokens` | `input_tokens_details.cached_tokens` |
//! | Anthropic | `message_start`'s `message.usage`, its members replaced by those of `message_delta`'s `usage` | `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens` | `output_tokens` | `cache_read_input_tokens` |
//!
//! A usage of the wrong shape is ignored, never an error that ends the turn: it must be an
//! object whose prompt count is a whole number from 0 to [`MAX_TOKENS`], and each other count
//! read must be absent, `null`, or such a number. The counts are numbers only; the provider's
//! own object is kept beside them (the journal's `usage.provider`) only when its JSON text is
//! at most [`MAX_RAW_BYTES`].

use serde_json::{Map, Value};

use super::Api;

/// The largest token count read (2^53, the largest integer every JSON reader holds
/// exactly); a larger one makes the usage the wrong shape.
pub const MAX_TOKENS: u64 = 1 << 53;

/// The largest provider usage object kept beside the counts, as JSON text: 4 KiB (the
/// largest in `corpora/streams/`, OpenAI Chat's with its two details objects, is 259 bytes).
pub const MAX_RAW_BYTES: usize = 4096;

/// A turn's usage, normalised.
#[derive(Clone, Debug, PartialEq)]
pub struct Usage {
    /// The prompt's tokens, cached or not.
    pub prompt_tokens: u64,
    /// The output's tokens, when reported.
    pub completion_tokens: Option<u64>,
    /// The prompt's tokens served from the provider's cache, when reported.
    pub prompt_cache_hit_tokens: Option<u64>,
    /// The provider's own usage object, when at most [`MAX_RAW_BYTES`] of JSON.
    pub provider: Option<Value>,
}

impl Usage {
    /// Reads the usage object `raw` of `api` (for Anthropic, the merged object: see
    /// [`merge`]); `None` when it has the wrong shape.
    pub fn read(api: Api, raw: &Value) -> Option<Usage> {
        let object = raw.as_object()?;
        let count = |path: &[&str]| -> Result<Option<u64>, ()> {
            let mut at = Some(raw);
            for key in path {
                at = match at {
                    Some(Value::Object(o)) => o.get(*key),
                    Some(Value::Null) | None => None,
                    Some(_) => return Err(()),
                };
            }
            match at {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_u64().filter(|&n| n <= MAX_TOKENS).map(Some).ok_or(()),
            }
        };
        let (prompt, completion, cached) = match api {
            Api::OpenAiChat => {
                let details = count(&["prompt_tokens_details", "cached_tokens"]).ok()?;
                let deepseek = count(&["prompt_cache_hit_tokens"]).ok()?;
                (
                    count(&["prompt_tokens"]).ok()??,
                    count(&["completion_tokens"]).ok()?,
                    details.or(deepseek),
                )
            }
            Api::OpenAiResponses => (
                count(&["input_tokens"]).ok()??,
                count(&["output_tokens"]).ok()?,
                count(&["input_tokens_details", "cached_tokens"]).ok()?,
            ),
            Api::AnthropicMessages => {
                let input = count(&["input_tokens"]).ok()??;
                let read = count(&["cache_read_input_tokens"]).ok()?;
                let created = count(&["cache_creation_input_tokens"]).ok()?;
                let prompt = input
                    .saturating_add(read.unwrap_or(0))
                    .saturating_add(created.unwrap_or(0));
                (
                    prompt.min(MAX_TOKENS),
                    count(&["output_tokens"]).ok()?,
                    read,
                )
            }
        };
        let small = serde_json::to_string(object).map_or(0, |t| t.len()) <= MAX_RAW_BYTES;
        Some(Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            prompt_cache_hit_tokens: cached,
            provider: small.then(|| raw.clone()),
        })
    }

    /// The journal's `usage` object: the counts reported, and the provider's object under
    /// `provider` when it was kept.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("prompt_tokens".into(), self.prompt_tokens.into());
        if let Some(n) = self.completion_tokens {
            m.insert("completion_tokens".into(), n.into());
        }
        if let Some(n) = self.prompt_cache_hit_tokens {
            m.insert("prompt_cache_hit_tokens".into(), n.into());
        }
        if let Some(raw) = &self.provider {
            m.insert("provider".into(), raw.clone());
        }
        Value::Object(m)
    }
}

/// The journal's `usage` of a call: [`Usage::to_json`], or `{}` when the source reported
/// none (CPAT's record of such a call).
pub fn usage_json(usage: Option<&Usage>) -> Value {
    usage.map_or_else(|| Value::Object(Map::new()), Usage::to_json)
}

/// The members of an Anthropic usage object that [`Usage::read`] reads.
const ANTHROPIC_COUNTS: [&str; 4] = [
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
];

/// Anthropic's usage so far, updated by a later `usage` object: each member of `update`
/// replaces the member of that name (`message_delta` repeats the counts that changed). An
/// update that is not an object is ignored; so is a base that is not one. The held object
/// stays within [`MAX_RAW_BYTES`] of JSON: over it, only the counts read are kept, and the
/// result is `false` (the provider's object is then no longer whole).
pub fn merge(base: &mut Option<Value>, update: &Value) -> bool {
    let Value::Object(more) = update else {
        return true;
    };
    let held = match base {
        Some(Value::Object(held)) => held,
        _ => base
            .insert(Value::Object(Map::new()))
            .as_object_mut()
            .expect("an object"),
    };
    for (key, value) in more {
        held.insert(key.clone(), value.clone());
    }
    if serde_json::to_string(held).map_or(0, |t| t.len()) <= MAX_RAW_BYTES {
        return true;
    }
    held.retain(|key, _| ANTHROPIC_COUNTS.contains(&key.as_str()));
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_api_is_normalised_into_the_one_shape() {
        let chat = json!({"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127,
                          "prompt_tokens_details": {"cached_tokens": 64}});
        let usage = Usage::read(Api::OpenAiChat, &chat).unwrap();
        assert_eq!(
            usage.to_json(),
            json!({"prompt_tokens": 120, "completion_tokens": 7,
                   "prompt_cache_hit_tokens": 64, "provider": chat})
        );
        // DeepSeek names the cached tokens at the top.
        let deepseek = json!({"prompt_tokens": 100, "completion_tokens": 2,
                              "prompt_cache_hit_tokens": 90, "prompt_cache_miss_tokens": 10});
        let usage = Usage::read(Api::OpenAiChat, &deepseek).unwrap();
        assert_eq!(usage.prompt_cache_hit_tokens, Some(90));
        let responses = json!({"input_tokens": 300, "output_tokens": 20,
                               "input_tokens_details": {"cached_tokens": 256},
                               "output_tokens_details": {"reasoning_tokens": 0},
                               "total_tokens": 320});
        let usage = Usage::read(Api::OpenAiResponses, &responses).unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.prompt_cache_hit_tokens
            ),
            (300, Some(20), Some(256))
        );
        let anthropic = json!({"input_tokens": 10, "cache_read_input_tokens": 900,
                               "cache_creation_input_tokens": 90, "output_tokens": 33});
        let usage = Usage::read(Api::AnthropicMessages, &anthropic).unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.prompt_cache_hit_tokens
            ),
            (1000, Some(33), Some(900))
        );
        // No cache reported: no count of it.
        let plain = Usage::read(Api::OpenAiChat, &json!({"prompt_tokens": 5})).unwrap();
        assert_eq!(
            plain.to_json(),
            json!({"prompt_tokens": 5, "provider": {"prompt_tokens": 5}})
        );
    }

    #[test]
    fn a_usage_of_the_wrong_shape_is_none() {
        for (api, raw) in [
            (Api::OpenAiChat, json!("120")),
            (Api::OpenAiChat, json!([])),
            (Api::OpenAiChat, json!({})),
            (Api::OpenAiChat, json!({"completion_tokens": 3})),
            (Api::OpenAiChat, json!({"prompt_tokens": -1})),
            (Api::OpenAiChat, json!({"prompt_tokens": 1.5})),
            (Api::OpenAiChat, json!({"prompt_tokens": "12"})),
            (Api::OpenAiChat, json!({"prompt_tokens": 1e300})),
            (Api::OpenAiChat, json!({"prompt_tokens": MAX_TOKENS + 1})),
            (
                Api::OpenAiChat,
                json!({"prompt_tokens": 1, "completion_tokens": "x"}),
            ),
            (
                Api::OpenAiChat,
                json!({"prompt_tokens": 1, "prompt_tokens_details": 4}),
            ),
            (Api::OpenAiResponses, json!({"prompt_tokens": 1})),
            (Api::AnthropicMessages, json!({"output_tokens": 9})),
            (
                Api::AnthropicMessages,
                json!({"input_tokens": 1, "cache_read_input_tokens": {}}),
            ),
        ] {
            assert_eq!(Usage::read(api, &raw), None, "{raw}");
        }
        // Nulls are absent counts.
        let nulls = json!({"prompt_tokens": 3, "completion_tokens": null,
                           "prompt_tokens_details": null});
        assert!(Usage::read(Api::OpenAiChat, &nulls).is_some());
        assert_eq!(usage_json(None), json!({}));
    }

    #[test]
    fn a_large_provider_object_is_not_kept_but_its_counts_are() {
        let big = json!({"prompt_tokens": 8, "note": "x".repeat(MAX_RAW_BYTES)});
        let usage = Usage::read(Api::OpenAiChat, &big).unwrap();
        assert_eq!(usage.provider, None);
        assert_eq!(usage.to_json(), json!({"prompt_tokens": 8}));
    }

    #[test]
    fn anthropic_usage_is_updated_member_by_member() {
        let mut held = None;
        assert!(merge(
            &mut held,
            &json!({"input_tokens": 50, "output_tokens": 1,
                                         "cache_read_input_tokens": 40})
        ));
        assert!(merge(&mut held, &json!("not an object")));
        assert!(merge(&mut held, &json!({"output_tokens": 61})));
        assert_eq!(
            held,
            Some(json!({"input_tokens": 50, "output_tokens": 61, "cache_read_input_tokens": 40}))
        );
        let usage = Usage::read(Api::AnthropicMessages, held.as_ref().unwrap()).unwrap();
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens),
            (90, Some(61))
        );
        // Over the bound only the counts stay.
        let big = json!({"note": "x".repeat(MAX_RAW_BYTES), "output_tokens": 70});
        assert!(!merge(&mut held, &big));
        assert_eq!(
            held,
            Some(json!({"input_tokens": 50, "output_tokens": 70, "cache_read_input_tokens": 40}))
        );
    }
}
