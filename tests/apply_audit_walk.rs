//! Random walks through codex mode's allowed sets: no live prefix is a dead end (an empty
//! allowed set without accepting), and every accepting prefix is one Codex's parser accepts.

#[path = "apply_patch_support/codex_ref.rs"]
mod codex_ref;
#[path = "apply_patch_support/gen.rs"]
mod gen;

use frontier::apply_patch::CodexParser;
use frontier::contract::PushParser;
use gen::Rng;

const ALPHABET: &[u8] = b"\n\n\n\n  \t\r*+-@@EOFPatchBeginUpdtAdFlMvoI:x<'\"";

#[test]
fn random_walks_never_reach_a_dead_end() {
    let mut rng = Rng(0xa11d17);
    let seeds: &[&[u8]] = &[
        b"",
        b"*** Begin Patch\n",
        b"<<EOF\n*** Begin Patch\n",
        b"*** Begin Patch\n*** Update File: a\n",
        b"*** Begin Patch\n*** Update File: a\n@@\n-x\n",
        b"*** Begin Patch\n*** Add File: a\n",
        b"*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n",
        b"  *** Begin Patch  \r\n*** Update File: a \r\n x\r\n *** End Patch\r\n",
    ];
    let mut accepted = 0;
    for walk in 0..20000 {
        let seed = seeds[walk % seeds.len()];
        let mut parser = CodexParser::new();
        parser.push(seed, &mut |_| {}).unwrap();
        let mut text = seed.to_vec();
        for _ in 0..120 {
            let allowed = parser.allowed();
            if parser.accepting() {
                let ok = std::str::from_utf8(&text)
                    .map_err(|e| e.to_string())
                    .and_then(codex_ref::parse);
                assert!(
                    ok.is_ok(),
                    "accepting but refused: {:?}",
                    String::from_utf8_lossy(&text)
                );
                accepted += 1;
            }
            assert!(
                parser.accepting() || allowed.iter().next().is_some(),
                "dead end: {:?}",
                String::from_utf8_lossy(&text)
            );
            let mut byte = None;
            for _ in 0..20 {
                let b = ALPHABET[rng.below(ALPHABET.len())];
                if allowed.contains(b) {
                    byte = Some(b);
                    break;
                }
            }
            let b = match byte {
                Some(b) => b,
                None => match allowed.iter().next() {
                    Some(b) => b,
                    None => break,
                },
            };
            parser.push(&[b], &mut |_| {}).unwrap_or_else(|e| {
                panic!(
                    "allowed {b:#04x} refused after {:?}: {e:?}",
                    String::from_utf8_lossy(&text)
                )
            });
            text.push(b);
        }
    }
    assert!(accepted > 100, "{accepted}");
    eprintln!("accepting prefixes visited: {accepted}");
}
