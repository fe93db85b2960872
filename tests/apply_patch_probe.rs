#[path = "apply_patch_support/oracle.rs"]
mod oracle;
use oracle::Oracle;

#[test]
#[ignore]
fn probe() {
    let o = Oracle::new(include_str!("../grammars/apply_patch.lark"));
    for input in [
        &b"*** Begin Patch\n*** Add File: a\n+\n"[..],
        b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch",
        b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n",
        b"*** Begin Patch\n*** Update File: a\n@@ ",
        b"*** Begin Patch\n*** Update File: a\n@@",
        b"*** Begin Patch\n*** Update File: a\n@@\n",
        b"*** Begin Patch\n*** Update File: a\n-\n",
        b"*** Begin Patch\n*** Update File: a\n",
        b"*** Begin Patch\n*** Add File: \xe0",
        b"*** Begin Patch\n*** Add File: \xf4",
        b"*** Begin Patch\n*** Add File: a\r",
    ] {
        let (tr, err) = o.trace(input);
        let last = tr.last().unwrap();
        println!(
            "{:?} err={:?} accepting={} allowed={:?}",
            String::from_utf8_lossy(input),
            err,
            last.accepting,
            last.allowed
        );
    }
}
