//! `allowed()` is exact in the contract's sense, not only consistent with `step`: every byte
//! it allows leaves a viable prefix, one that some continuation makes a sentence. A search
//! from the state after each allowed byte (depth first, LF and the diff's own bytes first,
//! states merged by their mask key) must reach an accepting state. This found base85 digits
//! that no group could hold (`}`, `~` at a group's start).

use std::collections::HashSet;

use frontier::contract::PushParser;
use frontier::recognizer::Recognizer;
use frontier::udiff::{Limits, Mode, UdiffMachine, UdiffParser};

/// Whether some continuation makes the state accepting (`None`: the search gave up).
fn viable(m: UdiffMachine, cap: usize) -> Option<bool> {
    const PREF: &[u8] = b"\n +-@\\10,ab/d";
    let mut seen = HashSet::new();
    let mut stack = vec![m];
    seen.insert(m.mask_key(1 << 20));
    while let Some(s) = stack.pop() {
        if s.accepting() {
            return Some(true);
        }
        if seen.len() > cap {
            return None;
        }
        let allowed = s.allowed();
        let mut order: Vec<u8> = PREF
            .iter()
            .copied()
            .filter(|&b| allowed.contains(b))
            .collect();
        order.extend(allowed.iter().filter(|b| !PREF.contains(b)));
        for &b in order.iter().rev() {
            let mut t = s;
            assert!(t.try_byte(b), "allowed byte {b} refused");
            if seen.insert(t.mask_key(1 << 20)) {
                stack.push(t);
            }
        }
    }
    Some(false)
}

/// The prefixes of `input` where an allowed byte leads to a dead state (or the search gives
/// up), as `(offset, byte)`.
fn dead_ends(mode: Mode, max_line: u32, input: &[u8]) -> Vec<(usize, u8)> {
    let mut out = vec![];
    let mut m = UdiffParser::new(mode, Limits { max_line }).recognizer();
    for k in 0..=input.len() {
        let mut keys = HashSet::new();
        for b in m.allowed().iter() {
            let mut t = m;
            assert!(t.try_byte(b));
            if keys.insert(t.mask_key(1 << 20)) && viable(t, 20_000) != Some(true) {
                out.push((k, b));
            }
        }
        if k == input.len() || !m.try_byte(input[k]) {
            break;
        }
    }
    out
}

#[test]
fn every_allowed_byte_leaves_a_viable_prefix() {
    let long = "x".repeat(230);
    let inputs: Vec<Vec<u8>> = vec![
        b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@ sec\n-a\n\\ x\n b\n+c\n\\ y\n@@ -5,0 +6 @@\n+\r\n"
            .to_vec(),
        b"junk\n--- a/f\nnot plus\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n\n-- \n2.40\n".to_vec(),
        b"--- a/f\t2020-01-01\n+++ /dev/null\n@@ -1 +0,0 @@\n-\xff\n@@ -0,0 +0,0 @@\n".to_vec(),
        b"diff --git \"a/q\\tx\" b/y\nold mode 100644\nnew mode 100755\nsimilarity index 100%\n\
          rename from \"q\\tx\"\nrename to y\nindex 1234567..abcdef0 100644\n"
            .to_vec(),
        b"diff --git a/b b/b\nGIT binary patch\nliteral 4\nD|NsC0\n\ndelta 12\nH{zzzz|0000\n\n"
            .to_vec(),
        b"diff --git a/f b/f\nBinary files a/f and b/f differ\n--- \n+++ \n".to_vec(),
        b"--- a/f\n+++ b/f\n@@\n-a\n--- \n+++ \n z\n--- x\n+++ y\n@@ ... @@\n".to_vec(),
        format!("--- a/{long}\n+++ b/{long}\n@@ -1 +1 @@ {long}\n-a\n+b\n").into_bytes(),
    ];
    for input in &inputs {
        for mode in [Mode::Strict, Mode::Git, Mode::Recount] {
            for max_line in [256, 4096] {
                let dead = dead_ends(mode, max_line, input);
                assert!(
                    dead.is_empty(),
                    "{mode:?} max_line {max_line} {:?}: {dead:?}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }
}

#[test]
fn hunk_ranges_share_a_mask_key_when_only_their_starts_differ() {
    // The starts are reported, never checked: two headers with the same counts at other lines
    // are one mask-cache entry at every byte of their ranges, and take the same continuations.
    let state = |prefix: &[u8]| {
        let mut m = UdiffParser::new(Mode::Git, Limits::default()).recognizer();
        assert!(prefix.iter().all(|&b| m.try_byte(b)));
        m
    };
    let head = b"--- a/f\n+++ b/f\n@@ -".to_vec();
    // (The starts have as many digits: a number's digit count is bounded, so it is kept.)
    let (one, two): (&[u8], &[u8]) = (b"17,2 +170,3 @@", b"93,2 +452,3 @@");
    let stops = |r: &[u8]| -> Vec<usize> {
        // The points after `-N`, `,2`, ` +M`, `,3`: the same field in both.
        let comma = r.iter().position(|&b| b == b',').unwrap();
        let plus = r.iter().position(|&b| b == b'+').unwrap();
        let comma2 = plus + r[plus..].iter().position(|&b| b == b',').unwrap();
        vec![comma, comma + 2, comma2, comma2 + 2]
    };
    let continuations: [&[u8]; 6] = [
        b"\n a\n-b\n+c\n+d\n",
        b"\n a\n+c\n",
        b" @@\n a\n",
        b"5 +1 @@\n",
        b"\n-a\n-b\n",
        b",",
    ];
    assert_eq!(stops(one), stops(two));
    for (&a, &b) in stops(one).iter().zip(&stops(two)) {
        let x = state(&[&head[..], &one[..a]].concat());
        let y = state(&[&head[..], &two[..b]].concat());
        assert_eq!(x.mask_key(64), y.mask_key(64), "at {a} / {b}");
        for rest in continuations {
            let takes = |mut m: UdiffMachine| rest.iter().all(|&c| m.try_byte(c));
            assert_eq!(takes(x), takes(y), "{:?}", String::from_utf8_lossy(rest));
        }
    }
    // Counts decide: `,2` and `,3` are other keys.
    let x = state(&[&head[..], b"17,2"].concat());
    let y = state(&[&head[..], b"17,3"].concat());
    assert_ne!(x.mask_key(64), y.mask_key(64));
}
