//! Strict mode against llguidance 1.9 on hand-written edge cases of the grammar (each input and
//! every prefix of it: the same allowed set, accepting flag and first refused byte).

#[path = "apply_patch_support/oracle.rs"]
mod oracle;

use frontier::apply_patch::{StrictOptions, StrictParser};
use frontier::contract::PushParser;
use oracle::Oracle;

const GRAMMAR: &str = include_str!("../grammars/apply_patch.lark");

fn agree(oracle: &Oracle, input: &[u8]) {
    let what = String::from_utf8_lossy(input);
    let (answers, refused) = oracle.trace(input);
    let mut parser = StrictParser::new(StrictOptions::default());
    for (at, answer) in answers.iter().enumerate() {
        assert_eq!(
            parser.allowed(),
            answer.allowed,
            "{what:?}: allowed after {at}"
        );
        assert_eq!(
            parser.accepting(),
            answer.accepting,
            "{what:?}: accepting after {at}"
        );
        let Some(&byte) = input.get(at) else { break };
        let pushed = parser.push(&[byte], &mut |_| {});
        if refused == Some(at) {
            assert_eq!(pushed.expect_err("refused").offset, at as u64, "{what:?}");
            return;
        }
        assert!(pushed.is_ok(), "{what:?}: refused {byte:#04x} at {at}");
    }
    assert_eq!(refused, None, "{what:?}");
}

#[test]
fn edge_cases_agree_with_llguidance() {
    let oracle = Oracle::new(GRAMMAR);
    let cases: &[&[u8]] = &[
        b"*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Move to: c\n*** End Patch\n",
        b"*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n*** End of File\n",
        b"*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n*** End Patch\n",
        b"*** Begin Patch\n*** Update File: a\n@@ x\n*** End of File\n*** End Patch",
        b"*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch\n",
        b"*** Begin Patch\n*** Add File: a\n+\xf4\x8f\xbf\xbf\n+\xed\x9f\xbf\n+\xef\xbf\xbf\n*** End Patch\n",
        b"*** Begin Patch\n*** Add File: a\n+\xf4\x90\x80\x80\n*** End Patch\n",
        b"*** Begin Patch\n*** Add File: a\n+\xed\xa0\x80\n*** End Patch\n",
        b"*** Begin Patch\n*** Add File: a\n+\xe0\x9f\xbf\n*** End Patch\n",
        b"*** Begin Patch\n*** Add File: a\n+\xf0\x8f\xbf\xbf\n*** End Patch\n",
        b"*** Begin Patch\n*** Add File: a\n+\xc1\xbf\n*** End Patch\n",
        b"*** Begin Patch\n*** Update File: *** End Patch\n-*** End Patch\n*** End Patch",
        b"*** Begin Patch\n*** Delete File: a\n*** End Patch\n\n",
        b"*** Begin Patch\n*** Delete File: a\n*** End Patch\r\n",
        b"*** Begin Patch\n*** Delete File: \r\x00\x7f\n*** End Patch",
        b"*** Begin Patch\n*** Update File: a\n@@ @@\n@@  \n@@\n+x\n*** End Patch\n",
        b"*** Begin Patch\n*** Update File: a\n@@\r\n",
        b"*** Begin Patch\n*** Update File: a\n@@ \n",
        b"*** Begin Patch\n*** Update File: a\n*** Add File: b\n+x\n*** End Patch",
        b"*** Begin Patch\n*** Update File: a\n \n-\n+\n*** Delete File: b\n*** End Patch",
        b"*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Delete File: c\n*** End Patch",
        b"*** Begin Patch\n*** Add File: a\n*** End Patch\n",
        b"*** Begin Patch\n*** End Patch\n",
        b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patc",
        b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch*",
        b"*** Begin Patch\n*** Add File:  \n+x\n*** End Patch\n",
        b"*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n",
        b"*** Begin Patch\n*** Update File: a\n*** Move to: \n",
        b"*** Begin Patch\n*** Update File: a\n-x\n*** Move to: b\n",
        b"*** Begin Patch\n*** Update File: a\n-x\n@@\n*** End Patch\n",
        b"*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n-y\n*** End Patch\n",
        b"*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n@@\n-y\n*** End Patch\n",
        b"*** Begin Patch\n*** Environment ID: e\n*** Delete File: a\n*** End Patch\n",
        b"*** Begin Patch \n",
        b"*** Begin Patch\r\n",
        b" *** Begin Patch\n",
    ];
    for input in cases {
        agree(&oracle, input);
    }
}
