//! A generator of random apply_patch inputs: valid patches (strict grammar), their
//! truncations and random mutations. Deterministic (xorshift), no dependencies.
#![allow(dead_code)] // each test binary uses part of it

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const PIECES: &[&str] = &[
    "a",
    "src",
    "/",
    "main.rs",
    " ",
    "fn main() {",
    "}",
    "\t",
    "\r",
    "é",
    "日本",
    "😀",
    "*** End Patch",
    "*** Add File: x",
    "@@",
    "+",
    "-",
    "\u{0}",
    "\u{7f}",
    "\u{a0}",
    "\u{3000}",
    "EOF",
    "<<EOF",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
];

fn text(rng: &mut Rng, nonempty: bool) -> String {
    let mut s = String::new();
    let n = rng.below(5) + nonempty as usize;
    for _ in 0..n {
        s.push_str(rng.pick(PIECES));
    }
    s
}

/// A random sentence of the strict grammar (with `env`, possibly an environment line).
pub fn valid_patch(rng: &mut Rng, env: bool) -> Vec<u8> {
    let mut p = String::from("*** Begin Patch\n");
    if env && rng.chance(50) {
        p += &format!("*** Environment ID: {}\n", text(rng, true));
    }
    for _ in 0..rng.below(4) + 1 {
        match rng.below(3) {
            0 => {
                p += &format!("*** Add File: {}\n", text(rng, true));
                for _ in 0..rng.below(4) + 1 {
                    p += &format!("+{}\n", text(rng, false));
                }
            }
            1 => p += &format!("*** Delete File: {}\n", text(rng, true)),
            _ => {
                p += &format!("*** Update File: {}\n", text(rng, true));
                if rng.chance(30) {
                    p += &format!("*** Move to: {}\n", text(rng, true));
                }
                if rng.chance(85) {
                    let items = rng.below(6) + 1;
                    for _ in 0..items {
                        match rng.below(5) {
                            0 => p += "@@\n",
                            1 => p += &format!("@@ {}\n", text(rng, true)),
                            _ => {
                                p +=
                                    &format!("{}{}\n", rng.pick(&["+", "-", " "]), text(rng, false))
                            }
                        }
                    }
                    if rng.chance(25) {
                        p += "*** End of File\n";
                    }
                }
            }
        }
    }
    p += "*** End Patch";
    if rng.chance(60) {
        p += "\n";
    }
    p.into_bytes()
}

const BYTES: &[u8] = b"\n\r *+-@EPF:\x00\x7f\xc0\xc2\xe0\xed\xf0\xf4\xf5\xff\x80\xa0\xbf";

/// A random edit of `input`: a truncation, or a byte replaced, inserted or deleted.
pub fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    if out.is_empty() {
        return out;
    }
    let at = rng.below(out.len());
    match rng.below(4) {
        0 => out.truncate(at),
        1 => out[at] = rng.pick(BYTES),
        2 => out.insert(at, rng.pick(BYTES)),
        _ => {
            out.remove(at);
        }
    }
    out
}

const CODEX_PIECES: &[&str] = &[
    "*** Begin Patch",
    "*** End Patch",
    "*** Add File: ",
    "*** Delete File: ",
    "*** Update File: ",
    "*** Move to: ",
    "*** End of File",
    "*** Environment ID: ",
    "@@",
    "@@ ",
    "+",
    "-",
    " ",
    "  ",
    "\t",
    "\r",
    "\n",
    "\r\n",
    "\n\n",
    "a",
    "b.txt",
    "EOF",
    "<<EOF",
    "<<'EOF'",
    "\u{a0}",
    "\u{3000}",
    "é",
    "*",
    "@",
    "x y",
];

/// A random text shaped like a patch in codex mode's lenient forms (indented and padded
/// markers, CRLF, blank lines, chunks without `@@`, the heredoc wrapper), with stray lines.
pub fn codex_text(rng: &mut Rng) -> Vec<u8> {
    let mut lines: Vec<String> = Vec::new();
    let pad = |rng: &mut Rng| -> &'static str { rng.pick(&["", "", "", " ", "\t", "\u{a0}"]) };
    let heredoc = rng.chance(15);
    if heredoc {
        lines.push(
            rng.pick(&["<<EOF", "<<'EOF'", "<<\"EOF\"", "<<EOF "])
                .into(),
        );
    }
    lines.push(format!("{}*** Begin Patch{}", pad(rng), pad(rng)));
    if rng.chance(10) {
        lines.push(format!("*** Environment ID: {}", rng.pick(CODEX_PIECES)));
    }
    for _ in 0..rng.below(4) {
        match rng.below(3) {
            0 => {
                lines.push(format!(
                    "{}*** Add File: {}{}",
                    pad(rng),
                    rng.pick(&["a.txt", " b", "c d"]),
                    pad(rng)
                ));
                for _ in 0..rng.below(3) {
                    lines.push(format!("+{}", rng.pick(CODEX_PIECES)));
                }
            }
            1 => lines.push(format!(
                "{}*** Delete File: {}{}",
                pad(rng),
                rng.pick(&["a.txt", "x"]),
                pad(rng)
            )),
            _ => {
                lines.push(format!("{}*** Update File: u.txt{}", pad(rng), pad(rng)));
                if rng.chance(30) {
                    lines.push(format!(
                        "*** Move to: {}{}",
                        rng.pick(&["v.txt", "", " "]),
                        pad(rng)
                    ));
                }
                for c in 0..rng.below(3) + 1 {
                    if c > 0 || rng.chance(60) {
                        lines.push(rng.pick(&["@@", "@@ fn f()", "@@ ", "@@x"]).into());
                    }
                    for _ in 0..rng.below(4) + 1 {
                        lines.push(
                            rng.pick(&[
                                "+x",
                                "-y",
                                " z",
                                "",
                                "  ",
                                " *** End Patch",
                                "\t",
                                "+",
                                "-",
                            ])
                            .into(),
                        );
                    }
                    if rng.chance(20) {
                        lines.push("*** End of File".into());
                    }
                    if rng.chance(25) {
                        lines.push(rng.pick(&["", "\t", "  ", "\u{3000}"]).into());
                    }
                }
            }
        }
    }
    lines.push(format!("{}*** End Patch{}", pad(rng), pad(rng)));
    if heredoc {
        lines.push(rng.pick(&["EOF", "xEOF", "EOF ", "EO"]).into());
    }
    if rng.chance(20) {
        let at = rng.below(lines.len() + 1);
        lines.insert(at, rng.pick(CODEX_PIECES).into());
    }
    let mut s = String::new();
    if rng.chance(15) {
        s += rng.pick(&["\n", "  ", "\n \n"]);
    }
    let crlf = rng.chance(25);
    for (i, l) in lines.iter().enumerate() {
        s += l;
        if i + 1 < lines.len() || rng.chance(50) {
            s += if crlf || rng.chance(5) { "\r\n" } else { "\n" };
        }
    }
    if rng.chance(15) {
        s += rng.pick(&["\n\n", "  ", "\t\n"]);
    }
    s.into_bytes()
}
