//! A reference model of Codex's lenient `parse_patch`, written over whole strings the way
//! Codex does it (trim, `lines()`, boundary checks, then hunks line by line), for comparing
//! with the streaming codex mode. It returns frontier's unit types.

use frontier::apply_patch::units::{ChangeLine, Chunk, FileOperation};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";

fn body<'a>(lines: &'a [&'a str]) -> Result<&'a [&'a str], String> {
    let direct = |ls: &'a [&'a str]| -> Option<&'a [&'a str]> {
        let (first, last) = (ls.first()?, ls.last()?);
        (ls.len() >= 2 && first.trim() == BEGIN && last.trim() == END).then(|| &ls[1..ls.len() - 1])
    };
    if let Some(b) = direct(lines) {
        return Ok(b);
    }
    match lines {
        [first, .., last]
            if matches!(*first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
                && last.ends_with("EOF")
                && lines.len() >= 4 =>
        {
            direct(&lines[1..lines.len() - 1]).ok_or_else(|| "bad heredoc body".into())
        }
        _ => Err("bad boundaries".into()),
    }
}

pub fn parse(text: &str) -> Result<Vec<FileOperation>, String> {
    let lines: Vec<&str> = text.trim().lines().collect();
    let mut rest = body(&lines)?;
    if let Some(first) = rest.first() {
        if first.trim().starts_with("*** Environment ID: ") {
            rest = &rest[1..];
        }
    }
    let mut ops = Vec::new();
    while !rest.is_empty() {
        let (op, used) = hunk(rest)?;
        ops.push(op);
        rest = &rest[used..];
    }
    Ok(ops)
}

fn hunk(lines: &[&str]) -> Result<(FileOperation, usize), String> {
    let first = lines[0].trim();
    if let Some(path) = first.strip_prefix("*** Add File: ") {
        let mut out = Vec::new();
        for l in &lines[1..] {
            match l.strip_prefix('+') {
                Some(t) => out.push(t.to_string()),
                None => break,
            }
        }
        let n = out.len() + 1;
        return Ok((
            FileOperation::Add {
                path: path.into(),
                lines: out,
            },
            n,
        ));
    }
    if let Some(path) = first.strip_prefix("*** Delete File: ") {
        return Ok((FileOperation::Delete { path: path.into() }, 1));
    }
    let Some(path) = first.strip_prefix("*** Update File: ") else {
        return Err(format!("bad header {first:?}"));
    };
    let mut used = 1;
    let mut rest = &lines[1..];
    let move_to = rest
        .first()
        .and_then(|l| l.strip_prefix("*** Move to: "))
        .map(|p| p.trim_end().to_string());
    if move_to.is_some() {
        rest = &rest[1..];
        used += 1;
    }
    let mut chunks = Vec::new();
    while !rest.is_empty() {
        if rest[0].trim().is_empty() {
            rest = &rest[1..];
            used += 1;
            continue;
        }
        if rest[0].starts_with('*') {
            break;
        }
        let (c, n) = chunk(rest, chunks.is_empty())?;
        chunks.push(c);
        rest = &rest[n..];
        used += n;
    }
    if chunks.is_empty() {
        return Err("empty update".into());
    }
    Ok((
        FileOperation::Update {
            path: path.into(),
            move_to,
            chunks,
        },
        used,
    ))
}

fn chunk(lines: &[&str], first: bool) -> Result<(Chunk, usize), String> {
    let mut c = Chunk::default();
    let start = if lines[0] == "@@" {
        1
    } else if let Some(ctx) = lines[0].strip_prefix("@@ ") {
        c.context = Some(ctx.to_string());
        1
    } else if first {
        0
    } else {
        return Err("expected @@".into());
    };
    if start >= lines.len() {
        return Err("no lines".into());
    }
    let mut n = 0;
    for l in &lines[start..] {
        if *l == "*** End of File" {
            if n == 0 {
                return Err("no lines".into());
            }
            c.end_of_file = true;
            n += 1;
            break;
        }
        match l.chars().next() {
            None => c.lines.push(ChangeLine::Context(String::new())),
            Some(' ') => c.lines.push(ChangeLine::Context(l[1..].into())),
            Some('+') => c.lines.push(ChangeLine::Add(l[1..].into())),
            Some('-') => c.lines.push(ChangeLine::Remove(l[1..].into())),
            _ if n == 0 => return Err(format!("unexpected line {l:?}")),
            _ => break,
        }
        n += 1;
    }
    Ok((c, n + start))
}
