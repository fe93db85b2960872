//! Parses a unified diff file (`--mode`-less: git mode) in 64 KiB chunks, N times, and prints
//! the unit counts and the throughput: a quick profiling target (`perf record`, `perf stat`).
//! With a third argument `diffy`, diffy 0.5.2 parses the whole buffer instead.

use frontier::contract::PushParser;
use frontier::udiff::{UdiffEvent, UdiffParser};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: udiff_parse FILE [REPEAT] [diffy]");
    let repeat: usize = args.next().map_or(100, |n| n.parse().expect("REPEAT"));
    let input = std::fs::read(path).expect("read");
    let start = std::time::Instant::now();
    let (mut files, mut hunks) = (0u64, 0u64);
    let diffy = args.next().is_some_and(|a| a == "diffy");
    for _ in 0..repeat {
        if diffy {
            use diffy::patch_set::{ParseOptions, PatchSet};
            for p in PatchSet::parse_bytes(&input, ParseOptions::gitdiff()) {
                let p = p.expect("diffy");
                files += 1;
                hunks += p.patch().as_text().map_or(0, |t| t.hunks().len() as u64);
            }
            continue;
        }
        let mut parser = UdiffParser::git();
        let mut on_event = |e: UdiffEvent<'_>| match e {
            UdiffEvent::FileEnd => files += 1,
            UdiffEvent::HunkEnd { .. } => hunks += 1,
            _ => {}
        };
        for piece in input.chunks(64 * 1024) {
            parser.push(piece, &mut on_event).expect("parse");
        }
        parser.finish(&mut on_event);
    }
    let secs = start.elapsed().as_secs_f64();
    let mib = (input.len() * repeat) as f64 / (1 << 20) as f64;
    println!("files={files} hunks={hunks} {:.1} MiB/s", mib / secs);
}
